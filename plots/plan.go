package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlanPanel is one goal of a capacity plan: a metric at each value the
// search evaluated, and the goal's threshold.
type PlanPanel struct {
	Metric    string  // the y-axis label: "p99 latency (s)"
	Goal      float64 // the threshold, in the metric's unit
	GoalLabel string  // "goal: p99 < 2 s"
	Series    []PlanSeries
}

// PlanSeries is one line of evaluated points, typically all of them, or
// one per value of a second searched key.
type PlanSeries struct {
	Label string    // legend label; "" for a single unlabelled series
	X     []float64 // the searched value
	Y     []float64 // the metric's mean across replications
	// Bound is the confidence bound the goal is judged on (Y when there is
	// no confidence interval); it is drawn as a bar from Y.
	Bound []float64
	OK    []bool // whether the point met the whole goal
}

var (
	feasibleGlyph   = draw.GlyphStyle{Color: color.RGBA{0x00, 0x9E, 0x73, 0xff}, Radius: px(5), Shape: draw.CircleGlyph{}}
	infeasibleGlyph = draw.GlyphStyle{Color: red, Radius: px(6), Shape: boldCross{}}
)

// Plan draws the evidence of a capacity plan: one panel per goal, stacked,
// with the metric against the searched value, each evaluated point marked
// as meeting the whole goal (green dot) or not (red cross), a bar from the
// mean to the confidence bound, the goal's threshold as a dashed line and
// the answer, if there is one, as a vertical line. The x axis is
// logarithmic when logX is true.
func Plan(title, xLabel string, logX bool, panels []PlanPanel, answer float64, answerLabel string) (*Figure, error) {
	if len(panels) == 0 {
		return nil, errNoData
	}
	xlo, xhi := math.Inf(1), math.Inf(-1)
	for _, pn := range panels {
		if err := checkFinite("plan: "+pn.Metric+": goal", pn.Goal); err != nil {
			return nil, err
		}
		n := 0
		for _, s := range pn.Series {
			if len(s.Y) != len(s.X) || len(s.Bound) != len(s.X) || len(s.OK) != len(s.X) {
				return nil, fmt.Errorf("plots: plan: %s: series %q has %d values, %d means, %d bounds and %d verdicts", pn.Metric, s.Label, len(s.X), len(s.Y), len(s.Bound), len(s.OK))
			}
			for k := range s.X {
				if err := checkFinite(fmt.Sprintf("plan: %s: series %q: point %d", pn.Metric, s.Label, k), s.X[k], s.Y[k], s.Bound[k]); err != nil {
					return nil, err
				}
				if logX && s.X[k] <= 0 {
					return nil, fmt.Errorf("plots: plan: %s: %v on a logarithmic axis", pn.Metric, s.X[k])
				}
				xlo, xhi = min(xlo, s.X[k]), max(xhi, s.X[k])
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("plots: plan: %s: no points", pn.Metric)
		}
	}
	hasAnswer := !math.IsNaN(answer) && !math.IsInf(answer, 0)
	if hasAnswer {
		xlo, xhi = min(xlo, answer), max(xhi, answer)
	}

	rows := make([][]*plot.Plot, len(panels))
	weights := make([]float64, len(panels))
	labelled := false
	for i, pn := range panels {
		xl := ""
		if i == len(panels)-1 {
			xl = xLabel
			if logX {
				xl += " (log scale)"
			}
		}
		p := newPlot("", xl, pn.Metric)
		ymax := pn.Goal
		for _, s := range pn.Series {
			for k := range s.X {
				ymax = max(ymax, s.Y[k], s.Bound[k])
			}
		}
		p.Y.Min, p.Y.Max = 0, niceMax(ymax)*1.05
		if logX {
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = logTicks125{}
			p.X.Min, p.X.Max = xlo/1.25, xhi*1.25
		} else {
			padx := (xhi - xlo) * 0.04
			if padx == 0 {
				padx = 1
			}
			p.X.Min, p.X.Max = xlo-padx, xhi+padx
		}
		p.Add(hline{y: pn.Goal, label: pn.GoalLabel})
		if hasAnswer {
			p.Add(vline{x: answer, label: answerLabel})
		}
		for si, s := range pn.Series {
			col := colour(si)
			order := make([]int, len(s.X))
			for k := range order {
				order[k] = k
			}
			sortStable(order, func(a, b int) bool { return s.X[a] < s.X[b] })
			xy := make(plotter.XYs, len(order))
			for j, k := range order {
				xy[j] = plotter.XY{X: s.X[k], Y: s.Y[k]}
			}
			ln, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			ln.LineStyle = draw.LineStyle{Color: col, Width: px(1.2), Dashes: []vg.Length{px(3), px(3)}}
			p.Add(ln, planBars{s: s, col: col})
			if s.Label != "" && i == 0 {
				p.Legend.Add(s.Label, ln)
				labelled = true
			}
			var ok, bad plotter.XYs
			for k := range s.X {
				if s.OK[k] {
					ok = append(ok, plotter.XY{X: s.X[k], Y: s.Y[k]})
				} else {
					bad = append(bad, plotter.XY{X: s.X[k], Y: s.Y[k]})
				}
			}
			for _, g := range []struct {
				xy  plotter.XYs
				sty draw.GlyphStyle
			}{{ok, feasibleGlyph}, {bad, infeasibleGlyph}} {
				if len(g.xy) == 0 {
					continue
				}
				sc, err := plotter.NewScatter(g.xy)
				if err != nil {
					return nil, err
				}
				sc.GlyphStyle = g.sty
				p.Add(sc)
			}
		}
		if labelled && i == 0 {
			// The legend goes into the corner with the fewest points.
			var labels []string
			var pts [][2]float64
			for _, s := range pn.Series {
				labels = append(labels, s.Label)
				for k := range s.X {
					pts = append(pts, [2]float64{p.X.Scale.Normalize(p.X.Min, p.X.Max, s.X[k]), p.Y.Scale.Normalize(p.Y.Min, p.Y.Max, s.Y[k])})
				}
			}
			p.Legend.Top, p.Legend.Left = legendCorner(pts, 0.3, 0.07*float64(len(labels)+1))
			p.Legend.XOffs, p.Legend.YOffs = px(12), -px(12)
			if !p.Legend.Left {
				p.Legend.XOffs = -px(12)
			}
			if !p.Legend.Top {
				p.Legend.YOffs = px(12)
			}
			p.Add(legendBackdrop{labels})
		}
		rows[i] = []*plot.Plot{p}
		weights[i] = 1
	}
	legend := []legendEntry{
		{"meets the whole goal", glyphThumb(feasibleGlyph)},
		{"misses it", glyphThumb(infeasibleGlyph)},
		{"mean, with a bar to the confidence bound the goal is judged on", barThumb{}},
	}
	f := &Figure{Width: px(1200), Height: px(800), title: title}
	f.draw = func(c draw.Canvas) {
		drawLegendRow(c, c.Max.Y-px(8), legend)
		c.Max.Y -= px(28)
		drawGrid(c, rows, weights, 0, px(14))
	}
	return f, nil
}

// planBars draws, for each point, a bar from the mean to the bound.
type planBars struct {
	s   PlanSeries
	col color.Color
}

func (b planBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: b.col, Width: px(1.5)}
	for k := range b.s.X {
		if b.s.Bound[k] == b.s.Y[k] {
			continue
		}
		x := trX(b.s.X[k])
		y0, y1 := trY(b.s.Y[k]), trY(b.s.Bound[k])
		c.StrokeLine2(sty, x, y0, x, y1)
		c.StrokeLine2(sty, x-px(5), y1, x+px(5), y1)
	}
}

// barThumb is the legend thumbnail of a confidence bar.
type barThumb struct{}

func (barThumb) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	sty := draw.LineStyle{Color: palette[0], Width: px(1.5)}
	c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
	c.StrokeLine2(sty, x-px(5), c.Max.Y, x+px(5), c.Max.Y)
}

func sortStable[T any](xs []T, less func(a, b T) bool) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && less(xs[j], xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}
