package plots

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LatencyCDF draws the distribution of client latency of completed requests
// of each run (results.Run.Quantiles) as cumulative curves, one colour per
// run, with guides at the 50th, 90th and 99th percentiles. The latency axis
// is logarithmic when the latencies span more than a factor of 30.
func LatencyCDF(title string, runs []Run) (*Figure, error) {
	if len(runs) == 0 {
		return nil, errNoData
	}
	lo, hi := 0.0, 0.0
	for _, r := range runs {
		if r.Run == nil || len(r.Run.Quantiles) == 0 {
			return nil, fmt.Errorf("plots: latency-cdf: run %q has no latency quantiles (no request completed)", r.Label)
		}
		if err := checkFinite(fmt.Sprintf("latency-cdf: run %q: quantile", r.Label), r.Run.Quantiles...); err != nil {
			return nil, err
		}
		for _, v := range r.Run.Quantiles {
			if v > 0 && (lo == 0 || v < lo) {
				lo = v
			}
			hi = max(hi, v)
		}
	}
	if hi <= 0 {
		return nil, fmt.Errorf("plots: latency-cdf: every latency is zero")
	}
	logX := lo > 0 && hi/lo > 30

	xlabel := "client latency (s)"
	if logX {
		xlabel = "client latency (s, log scale)"
	}
	p := newPlot("", xlabel, "fraction of completed requests at or below")
	for _, g := range []struct {
		q     float64
		label string
	}{{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}} {
		p.Add(hline{y: g.q, label: g.label})
	}
	var labels []string
	for i, r := range runs {
		labels = append(labels, r.Label)
		n := len(r.Run.Quantiles)
		xy := make(plotter.XYs, 0, n)
		for k, v := range r.Run.Quantiles {
			if logX && v <= 0 {
				continue
			}
			xy = append(xy, plotter.XY{X: v, Y: float64(k+1) / float64(n+1)})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.LineStyle = draw.LineStyle{Color: colour(i), Width: px(2.2)}
		p.Add(l)
		p.Legend.Add(r.Label, l)
	}
	// Top left is the empty corner of a distribution function.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = px(12), -px(12)
	p.Add(legendBackdrop{labels})
	p.Y.Min, p.Y.Max = 0, 1
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks125{}
		p.X.Min, p.X.Max = lo, hi*1.2
	} else {
		p.X.Min, p.X.Max = 0, hi*1.05
	}

	f := &Figure{Width: px(1200), Height: px(800), title: title}
	f.draw = func(c draw.Canvas) {
		drawGrid(c, [][]*plot.Plot{{p}}, []float64{1}, 0, 0)
	}
	return f, nil
}

// hline is a dotted horizontal guide with a label at the right end.
type hline struct {
	y     float64
	label string
}

func (h hline) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	y := trY(h.y)
	c.StrokeLine2(draw.LineStyle{Color: grey, Width: px(0.8), Dashes: []vg.Length{px(2), px(3)}}, c.Min.X, y, c.Max.X, y)
	sty := textStyle(9, draw.XRight)
	sty.Color = grey
	c.FillText(sty, vg.Point{X: c.Max.X - px(4), Y: y + px(7)}, h.label)
}
