package plots

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SweepLine is one curve of a sweep chart: a metric at each swept value,
// typically one variant's.
type SweepLine struct {
	Label string
	X     []string  // the swept values as the experiment writes them ("8", "150ms", "wcf4")
	Y     []float64 // the metric at each value
	Err   []float64 // confidence half-widths, drawn as error bars; nil for none
	// Dashed draws the line dashed with triangles, in the colour of the
	// solid line before it: a second metric of the same variant.
	Dashed bool
	// Max is the largest value the metric can take (100 for a percentage):
	// error bars stop there. Zero means no upper limit. Below, error bars
	// stop at zero unless the line itself goes negative.
	Max float64
}

// errRange is the error bar of point k: how far it reaches below and above
// Y, within the metric's valid range.
func (l SweepLine) errRange(k int) (low, high float64) {
	if l.Err == nil {
		return 0, 0
	}
	y, e := l.Y[k], math.Abs(l.Err[k])
	low, high = e, e
	if y >= 0 {
		low = min(low, y)
	}
	if l.Max > 0 && y <= l.Max {
		high = min(high, l.Max-y)
	}
	return low, high
}

// Sweep draws a metric against a swept parameter, one line per SweepLine,
// with error bars where Err is given. The swept values are placed on a
// numeric axis when they all parse as numbers or all as durations (in
// seconds), on a logarithmic one when they are positive and span a factor of
// 20 or more, and otherwise as evenly spaced categories in order of first
// appearance.
func Sweep(title, param, metric string, lines []SweepLine) (*Figure, error) {
	if len(lines) == 0 {
		return nil, errNoData
	}
	var all []string
	for _, l := range lines {
		if len(l.X) == 0 {
			return nil, fmt.Errorf("plots: sweep: line %q has no points", l.Label)
		}
		if len(l.Y) != len(l.X) || (l.Err != nil && len(l.Err) != len(l.X)) {
			return nil, fmt.Errorf("plots: sweep: line %q has %d values, %d metrics and %d errors", l.Label, len(l.X), len(l.Y), len(l.Err))
		}
		if err := checkFinite(fmt.Sprintf("sweep: line %q: %s", l.Label, metric), l.Y...); err != nil {
			return nil, err
		}
		if err := checkFinite(fmt.Sprintf("sweep: line %q: error bar", l.Label), l.Err...); err != nil {
			return nil, err
		}
		all = append(all, l.X...)
	}
	pos, xlabel, ticks, logX := sweepAxis(param, all)

	var ymin, ymax float64
	for _, l := range lines {
		for k, y := range l.Y {
			low, high := l.errRange(k)
			ymax = max(ymax, y+high)
			ymin = min(ymin, y-low)
		}
	}
	p := newPlot("", xlabel, metric)
	ci := -1
	for _, l := range lines {
		if !l.Dashed || ci < 0 {
			ci++
		}
		col := colour(ci)
		xy := make(plotter.XYs, len(l.X))
		for k := range l.X {
			xy[k] = plotter.XY{X: pos[l.X[k]], Y: l.Y[k]}
		}
		ln, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		ln.LineStyle = draw.LineStyle{Color: col, Width: px(2)}
		round := ci / len(palette)
		pts.GlyphStyle = draw.GlyphStyle{Color: col, Radius: px(4), Shape: solidGlyphs[round%len(solidGlyphs)]}
		if l.Dashed {
			ln.LineStyle.Dashes = []vg.Length{px(8), px(5)}
			pts.GlyphStyle.Shape = dashedGlyphs[round%len(dashedGlyphs)]
			pts.GlyphStyle.Radius = px(4.5)
		}
		p.Add(ln, pts)
		if l.Err != nil {
			eb, err := plotter.NewYErrorBars(errXY{xy, l})
			if err != nil {
				return nil, err
			}
			eb.LineStyle = draw.LineStyle{Color: col, Width: px(1.5)}
			eb.CapWidth = px(10)
			p.Add(eb)
		}
		p.Legend.Add(l.Label, ln, pts)
	}
	p.Y.Min, p.Y.Max = min(0, ymin*1.08), niceMax(ymax)
	if ticks != nil {
		p.X.Tick.Marker = ticks
	}
	if logX {
		p.X.Scale = plot.LogScale{}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range pos {
		lo, hi = min(lo, v), max(hi, v)
	}
	switch {
	case logX:
		p.X.Min, p.X.Max = lo/1.25, hi*1.25
	case lo == hi:
		p.X.Min, p.X.Max = lo-1, hi+1
	default:
		padx := (hi - lo) * 0.04
		if ticks != nil && !logX { // categories
			padx = 0.4
		}
		p.X.Min, p.X.Max = lo-padx, hi+padx
	}

	// The legend goes into the corner with the fewest points.
	var labels []string
	var pts [][2]float64
	for _, l := range lines {
		labels = append(labels, l.Label)
		for k, x := range l.X {
			pts = append(pts, [2]float64{p.X.Scale.Normalize(p.X.Min, p.X.Max, pos[x]), p.Y.Scale.Normalize(p.Y.Min, p.Y.Max, l.Y[k])})
		}
	}
	p.Legend.Top, p.Legend.Left = legendCorner(pts, 0.35, 0.06*float64(len(lines)+1))
	p.Legend.XOffs, p.Legend.YOffs = px(12), -px(12)
	if !p.Legend.Left {
		p.Legend.XOffs = -px(12)
	}
	if !p.Legend.Top {
		p.Legend.YOffs = px(12)
	}
	p.Add(legendBackdrop{labels})

	f := &Figure{Width: px(1200), Height: px(800), title: title}
	f.draw = func(c draw.Canvas) {
		drawGrid(c, [][]*plot.Plot{{p}}, []float64{1}, 0, 0)
	}
	return f, nil
}

// sweepAxis places swept values on an axis. It returns each value's
// position, the axis label, the ticks (nil for the default ticker) and
// whether the axis is logarithmic.
func sweepAxis(param string, vals []string) (pos map[string]float64, label string, ticks plot.Ticker, logX bool) {
	pos = map[string]float64{}
	num := true
	for _, v := range vals {
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			num = false
			break
		}
	}
	dur := !num
	if dur {
		for _, v := range vals {
			if _, err := time.ParseDuration(strings.TrimSpace(v)); err != nil {
				dur = false
				break
			}
		}
	}
	switch {
	case num || dur:
		label = param
		if dur {
			label += " (s)"
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range vals {
			var x float64
			if num {
				x, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
			} else {
				d, _ := time.ParseDuration(strings.TrimSpace(v))
				x = d.Seconds()
			}
			pos[v] = x
			lo, hi = min(lo, x), max(hi, x)
		}
		if lo > 0 && hi/lo >= 20 {
			label += ", log scale"
			if dur {
				label = param + " (s, log scale)"
			}
			return pos, label, logTicks125{}, true
		}
		return pos, label, nil, false
	default:
		var ts plot.ConstantTicks
		for _, v := range vals {
			if _, ok := pos[v]; !ok {
				pos[v] = float64(len(ts))
				ts = append(ts, plot.Tick{Value: float64(len(ts)), Label: v})
			}
		}
		return pos, param, ts, false
	}
}

// errXY feeds error bars.
type errXY struct {
	plotter.XYs
	line SweepLine
}

func (e errXY) YError(i int) (float64, float64) { return e.line.errRange(i) }

// solidGlyphs and dashedGlyphs mark the points of solid and dashed sweep
// lines in the 1st, 2nd, ... round of the palette's colours.
var (
	solidGlyphs  = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.RingGlyph{}, draw.SquareGlyph{}}
	dashedGlyphs = []draw.GlyphDrawer{draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}
)

// logTicks125 labels a logarithmic axis at 1, 2 and 5 times powers of ten,
// with minor ticks at the other integers.
type logTicks125 struct{}

func (logTicks125) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= lo {
		return nil
	}
	var ts []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		base := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * base
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// legendCorner picks the corner of the unit square, among top left, top
// right, bottom right and bottom left, whose w×h box holds the fewest of
// the normalised points.
func legendCorner(pts [][2]float64, w, h float64) (top, left bool) {
	best := -1
	for _, c := range []struct{ top, left bool }{{true, true}, {true, false}, {false, false}, {false, true}} {
		n := 0
		for _, p := range pts {
			inX := p[0] <= w
			if !c.left {
				inX = p[0] >= 1-w
			}
			inY := p[1] >= 1-h
			if !c.top {
				inY = p[1] <= h
			}
			if inX && inY {
				n++
			}
		}
		if best < 0 || n < best {
			best, top, left = n, c.top, c.left
		}
	}
	return top, left
}
