package plots

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// LatencyCDF draws, for each run, the share of its requests that completed
// within each latency, from the latency quantiles of its completed requests
// (results.Run.Quantiles), as cumulative curves with guides at the 50th,
// 90th and 99th percentiles. Timed-out, rejected and failed requests never
// complete, so a curve tops out at its run's completed share
// (Run.CompletedShare)
// and runs flat from its slowest completion on; 18% timeouts show as a
// curve that never rises above 82%. The latency axis is logarithmic when the
// latencies span more than a factor of 30. After nine curves the colours
// come round again with another dash pattern.
func LatencyCDF(title string, runs []Run) (*Figure, error) {
	if len(runs) == 0 {
		return nil, errNoData
	}
	lo, hi := 0.0, 0.0
	shares := make([]float64, len(runs))
	partial := false
	for i, r := range runs {
		if r.Run == nil || len(r.Run.Quantiles) == 0 {
			return nil, fmt.Errorf("plots: latency-cdf: run %q has no latency quantiles (no request completed)", r.Label)
		}
		if err := checkFinite(fmt.Sprintf("latency-cdf: run %q: quantile", r.Label), r.Run.Quantiles...); err != nil {
			return nil, err
		}
		share, err := r.completed()
		if err != nil {
			return nil, err
		}
		shares[i] = share
		partial = partial || share < 1
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
	xmin, xmax := 0.0, hi*1.05
	if logX {
		xmin, xmax = lo, hi*1.2
	}

	xlabel := "client latency (s)"
	if logX {
		xlabel = "client latency (s, log scale)"
	}
	ylabel, subtitle := "fraction of completed requests at or below", ""
	if partial {
		ylabel = "fraction of requests completed within"
		subtitle = "timed-out, rejected and failed requests never complete: each curve tops out at the share of requests that completed"
	}
	p := newPlot("", xlabel, ylabel)
	for _, g := range []struct {
		q     float64
		label string
	}{{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}} {
		p.Add(hline{y: g.q, label: g.label})
	}
	var labels []string
	for i, r := range runs {
		label := r.Label
		if shares[i] < 1 {
			label += fmt.Sprintf(" (%s completed)", percent(shares[i]))
		}
		labels = append(labels, label)
		n := len(r.Run.Quantiles)
		xy := make(plotter.XYs, 0, n+1)
		for k, v := range r.Run.Quantiles {
			if logX && v <= 0 {
				continue
			}
			xy = append(xy, plotter.XY{X: v, Y: shares[i] * float64(k+1) / float64(n+1)})
		}
		if shares[i] < 1 && len(xy) > 0 {
			// No request completes later: the curve stays at its top.
			xy = append(xy, plotter.XY{X: xmax, Y: xy[len(xy)-1].Y})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.LineStyle = curveStyle(i)
		p.Add(l)
		p.Legend.Add(label, l)
	}
	// Top left is the empty corner of a distribution function.
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = px(12), -px(12)
	p.Add(legendBackdrop{labels})
	p.Y.Min, p.Y.Max = 0, 1
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = logTicks125{}
	}
	p.X.Min, p.X.Max = xmin, xmax

	f := &Figure{Width: px(1200), Height: px(800), title: title, subtitle: subtitle}
	f.draw = func(c draw.Canvas) {
		drawGrid(c, [][]*plot.Plot{{p}}, []float64{1}, 0, 0)
	}
	return f, nil
}

// completed is the share of the run's requests that completed, for
// LatencyCDF: CompletedShare, or else what timeouts and rejections leave.
func (r Run) completed() (float64, error) {
	if s := r.CompletedShare; s != 0 {
		if !(s > 0 && s <= 1) {
			return 0, fmt.Errorf("plots: latency-cdf: run %q: completed share %v is not in (0, 1]", r.Label, s)
		}
		return s, nil
	}
	if err := checkFinite(fmt.Sprintf("latency-cdf: run %q: timeout and reject rates", r.Label), r.Run.TimeoutRate, r.Run.RejectRate); err != nil {
		return 0, err
	}
	if r.Run.TimeoutRate < 0 || r.Run.RejectRate < 0 {
		return 0, fmt.Errorf("plots: latency-cdf: run %q: negative timeout or reject rate (%v, %v)", r.Label, r.Run.TimeoutRate, r.Run.RejectRate)
	}
	// Rates averaged over replications may not leave room for the
	// completions that averaged quantiles come from; keep a sliver.
	return min(1, max(1-r.Run.TimeoutRate-r.Run.RejectRate, 0.001)), nil
}

// curveDashes are the dash patterns of the 1st, 2nd, ... round of the
// palette's colours: solid, dashed, dotted, dash-dotted.
var curveDashes = [][]vg.Length{nil, {px(10), px(4)}, {px(2.5), px(3)}, {px(10), px(3), px(2.5), px(3)}}

// curveStyle is the line of the i-th curve of a chart of curves: the
// palette's colours in order, then again with the next dash pattern.
func curveStyle(i int) draw.LineStyle {
	round := i / len(palette)
	return draw.LineStyle{Color: colour(i), Width: px(2.2), Dashes: curveDashes[round%len(curveDashes)]}
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
