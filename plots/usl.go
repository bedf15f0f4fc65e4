package plots

import (
	"fmt"
	"image/color"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tsim-dev/tsim/results"
)

// USL draws the Universal Scalability Law fitted to measured throughput
// (usl.png): the measured points with their confidence bars, the fitted
// curve X(N) = λN / (1 + σ(N−1) + κN(N−1)), the line of linear scaling λN
// it falls away from, and the concurrency of peak throughput N* as a
// dashed line over its confidence interval, shaded, with the peak X*
// marked. The subtitle gives σ, κ and λ with their intervals and R².
func USL(title string, u *results.USL) (*Figure, error) {
	if u == nil || len(u.Points) == 0 {
		return nil, errNoData
	}
	for i, pt := range u.Points {
		if err := checkFinite(fmt.Sprintf("usl: point %d", i+1), pt.X, pt.Y, pt.YLo, pt.YHi); err != nil {
			return nil, err
		}
		if pt.X < 0 || !(pt.YLo <= pt.Y && pt.Y <= pt.YHi) {
			return nil, fmt.Errorf("plots: usl: point %d: throughput %g at %g with interval %g to %g: want a concurrency ≥ 0 and the throughput within its interval", i+1, pt.Y, pt.X, pt.YLo, pt.YHi)
		}
	}
	if err := checkFinite("usl: a parameter", u.Sigma, u.Kappa, u.Lambda, u.NStar, u.XStar, u.R2,
		u.SigmaCI.Lo, u.SigmaCI.Hi, u.KappaCI.Lo, u.KappaCI.Hi, u.LambdaCI.Lo, u.LambdaCI.Hi,
		u.NStarCI.Lo, u.NStarCI.Hi, u.XStarCI.Lo, u.XStarCI.Hi); err != nil {
		return nil, err
	}
	xLabel, yLabel := u.XLabel, u.YLabel
	if xLabel == "" {
		xLabel = "concurrency N"
	}
	if yLabel == "" {
		yLabel = "throughput (per second)"
	}
	p := newPlot("", xLabel, yLabel)

	// The axes: every point, bar, the peak and its interval, and room
	// past the last.
	var xmax, ymax float64
	for _, pt := range u.Points {
		xmax, ymax = max(xmax, pt.X), max(ymax, pt.YHi)
	}
	peak := u.NStar > 0
	if peak {
		xmax = max(xmax, u.NStar, u.NStarCI.Hi)
		ymax = max(ymax, u.XStar, u.XStarCI.Hi)
	}
	xmax *= 1.1
	if xmax <= 0 {
		xmax = 1
	}
	curve := make(plotter.XYs, 301)
	for i := range curve {
		n := xmax * float64(i) / float64(len(curve)-1)
		y := 0.0
		if n > 0 {
			y = u.At(n)
		}
		if !finite(y) {
			return nil, checkFinite(fmt.Sprintf("usl: the law at N = %g", n), y)
		}
		curve[i] = plotter.XY{X: n, Y: y}
		ymax = max(ymax, y)
	}
	p.X.Min, p.X.Max = 0, xmax
	p.Y.Min, p.Y.Max = 0, niceMax(ymax)

	fitCol, measured := palette[0], palette[5]
	if peak && !u.NStarCI.None() {
		p.Add(band{lo: u.NStarCI.Lo, hi: u.NStarCI.Hi, col: color.RGBA{0xE6, 0xF0, 0xF8, 0xff}})
	}
	linear := plotter.XYs{{X: 0, Y: 0}, {X: xmax, Y: u.Lambda * xmax}}
	lin := &clippedLine{xy: linear, style: draw.LineStyle{Color: grey, Width: px(1.2), Dashes: []vg.Length{px(2), px(4)}}}
	fit := &clippedLine{xy: curve, style: draw.LineStyle{Color: fitCol, Width: px(2.5)}}
	p.Add(lin, fit)
	if peak {
		p.Add(vline{x: u.NStar, label: ""})
	}
	var xy plotter.XYs
	for _, pt := range u.Points {
		xy = append(xy, plotter.XY{X: pt.X, Y: pt.Y})
	}
	bars, err := plotter.NewYErrorBars(uslErrors{xy, u.Points})
	if err != nil {
		return nil, err
	}
	bars.LineStyle = draw.LineStyle{Color: measured, Width: px(1.5)}
	bars.CapWidth = px(10)
	dots, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	dots.GlyphStyle = draw.GlyphStyle{Color: measured, Radius: px(4.5), Shape: draw.CircleGlyph{}}
	p.Add(bars, dots)
	peakGlyph := draw.GlyphStyle{Color: fitCol, Radius: px(7), Shape: draw.PyramidGlyph{}}
	labels := []string{"measured, with its " + level(u.Level) + " interval", "USL fit", "linear scaling λN"}
	p.Legend.Add(labels[0], dots, errBarThumb{measured})
	p.Legend.Add(labels[1], fit)
	p.Legend.Add(labels[2], lin)
	if peak {
		top, err := plotter.NewScatter(plotter.XYs{{X: u.NStar, Y: u.XStar}})
		if err != nil {
			return nil, err
		}
		top.GlyphStyle = peakGlyph
		p.Add(top)
		l := "peak: N* = " + sig(u.NStar) + interval(u.NStarCI) + ", X* = " + sig(u.XStar) + interval(u.XStarCI)
		labels = append(labels, l)
		p.Legend.Add(l, top)
	}
	// The legend goes into the corner with the fewest points.
	var pts [][2]float64
	for _, v := range append(xy, curve...) {
		pts = append(pts, [2]float64{p.X.Norm(v.X), p.Y.Norm(v.Y)})
	}
	p.Legend.Top, p.Legend.Left = legendCorner(pts, 0.4, 0.07*float64(len(labels)+1))
	p.Legend.XOffs, p.Legend.YOffs = px(12), -px(12)
	if !p.Legend.Left {
		p.Legend.XOffs = -px(12)
	}
	if !p.Legend.Top {
		p.Legend.YOffs = px(12)
	}
	p.Add(legendBackdrop{labels})

	sub := "σ = " + sig(u.Sigma) + interval(u.SigmaCI) + " (contention), κ = " + sig(u.Kappa) + interval(u.KappaCI) +
		" (coherency), λ = " + sig(u.Lambda) + interval(u.LambdaCI) + " (throughput of one), R² = " + strconv.FormatFloat(u.R2, 'f', 3, 64)
	if !u.SigmaCI.None() || !u.KappaCI.None() || !u.LambdaCI.None() || !u.NStarCI.None() {
		sub += "; " + level(u.Level) + " intervals in brackets"
	}
	f := &Figure{Width: px(1200), Height: px(800), title: title, subtitle: sub}
	f.draw = func(c draw.Canvas) {
		drawGrid(c, [][]*plot.Plot{{p}}, []float64{1}, 0, 0)
	}
	return f, nil
}

// uslErrors are the points' confidence bars, as plotter.YErrorBars reads
// them.
type uslErrors struct {
	plotter.XYs
	pts []results.USLPoint
}

func (e uslErrors) YError(i int) (float64, float64) {
	return e.pts[i].Y - e.pts[i].YLo, e.pts[i].YHi - e.pts[i].Y
}

// sig writes v to three significant digits.
func sig(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

// interval writes a confidence interval as " [lo, hi]", none as "".
func interval(i results.Interval) string {
	if i.None() {
		return ""
	}
	return " [" + sig(i.Lo) + ", " + sig(i.Hi) + "]"
}

// level names a confidence level: "95%"; "confidence" when not given.
func level(l float64) string {
	if !(l > 0 && l < 1) {
		return "confidence"
	}
	return strconv.FormatFloat(100*l, 'g', 3, 64) + "%"
}

// band shades the data area from x = lo to x = hi.
type band struct {
	lo, hi float64
	col    color.Color
}

func (b band) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := max(c.Min.X, trX(b.lo)), min(c.Max.X, trX(b.hi))
	if x1 <= x0 {
		return
	}
	c.FillPolygon(b.col, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}

// clippedLine is a line drawn within the data area, whatever the range of
// its points (the linear scaling line leaves through the top); it does
// not widen the axes.
type clippedLine struct {
	xy    plotter.XYs
	style draw.LineStyle
}

func (l *clippedLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	pts := make([]vg.Point, len(l.xy))
	for i, v := range l.xy {
		pts[i] = vg.Point{X: trX(v.X), Y: trY(v.Y)}
	}
	for _, ln := range c.ClipLinesXY(pts) {
		c.StrokeLines(l.style, ln)
	}
}

func (l *clippedLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.style, c.Min.X, y, c.Max.X, y)
}

// errBarThumb is the legend thumbnail of a confidence bar across the
// middle, capped at both ends.
type errBarThumb struct{ col color.Color }

func (b errBarThumb) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	sty := draw.LineStyle{Color: b.col, Width: px(1.5)}
	c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
	for _, y := range []vg.Length{c.Min.Y, c.Max.Y} {
		c.StrokeLine2(sty, x-px(5), y, x+px(5), y)
	}
}
