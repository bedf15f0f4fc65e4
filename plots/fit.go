package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// FitRow is one target of a fit: its figure, and the model's value with
// its 95% interval, all in units of the figure's tolerance away from the
// figure (0 is the figure, ±1 its tolerance).
type FitRow struct {
	Label  string
	Fitted bool    // used to set the inputs; otherwise predicted
	Model  float64 // (model − figure) / tolerance
	Lo, Hi float64 // the interval's ends, likewise; may be infinite
}

// fitLimit is the farthest a row is drawn from its figure, in tolerances;
// a value beyond is drawn at the edge with an arrow.
const fitLimit = 10

var (
	fittedGlyph    = draw.GlyphStyle{Color: palette[0], Radius: px(5), Shape: draw.CircleGlyph{}}
	predictedGlyph = draw.GlyphStyle{Color: palette[5], Radius: px(6), Shape: draw.PyramidGlyph{}}
)

// Fit draws a fit's targets against the model, one row each, the fitted
// targets first: the figure's tolerance as a grey band around 0, the model
// as a dot (blue for a fitted target, a vermillion triangle for a
// predicted one) with its 95% interval as a bar. The x axis is the
// distance from the figure in tolerances, so that every target reads the
// same way.
func Fit(title, subtitle string, rows []FitRow) (*Figure, error) {
	if len(rows) == 0 {
		return nil, errNoData
	}
	span := 3.0
	for _, r := range rows {
		if math.IsNaN(r.Model) || math.IsNaN(r.Lo) || math.IsNaN(r.Hi) {
			return nil, fmt.Errorf("plots: fit: row %q is NaN", r.Label)
		}
		for _, v := range []float64{r.Model, r.Lo, r.Hi} {
			if !math.IsInf(v, 0) {
				span = max(span, math.Min(math.Abs(v), fitLimit))
			}
		}
	}
	span = math.Ceil(span * 1.1)
	p := newPlot("", "model − figure, in the figure's tolerances (0: the figure; grey: within its tolerance)", "")
	p.X.Min, p.X.Max = -span, span
	n := float64(len(rows))
	p.Y.Min, p.Y.Max = -0.6, n-0.4
	var ticks plot.ConstantTicks
	for i, r := range rows {
		ticks = append(ticks, plot.Tick{Value: n - 1 - float64(i), Label: r.Label})
	}
	p.Y.Tick.Marker = ticks
	p.Y.Tick.Label.Font.Size = 10
	p.Add(fitRows{rows: rows})
	legend := []legendEntry{
		{"fitted: used to set the inputs", glyphThumb(fittedGlyph)},
		{"predicted: not used", glyphThumb(predictedGlyph)},
		{"95% interval", barThumb{}},
	}
	h := math.Max(400, 120+34*n)
	f := &Figure{Width: px(1200), Height: px(h), title: title, subtitle: subtitle}
	f.draw = func(c draw.Canvas) {
		drawLegendRow(c, c.Max.Y-px(8), legend)
		c.Max.Y -= px(28)
		drawGrid(c, [][]*plot.Plot{{p}}, []float64{1}, 0, 0)
	}
	return f, nil
}

// fitRows draws the band, the rows' bars and their dots.
type fitRows struct{ rows []FitRow }

func (f fitRows) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	band := color.RGBA{0xD8, 0xD8, 0xD8, 0xff}
	x0, x1 := trX(-1), trX(1)
	c.FillPolygon(band, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
	c.StrokeLine2(draw.LineStyle{Color: grey, Width: px(1)}, trX(0), c.Min.Y, trX(0), c.Max.Y)
	clip := func(v float64) float64 { return math.Max(p.X.Min, math.Min(p.X.Max, v)) }
	n := float64(len(f.rows))
	for i, r := range f.rows {
		y := trY(n - 1 - float64(i))
		g := predictedGlyph
		if r.Fitted {
			g = fittedGlyph
		}
		sty := draw.LineStyle{Color: g.Color, Width: px(1.5)}
		lo, hi := trX(clip(r.Lo)), trX(clip(r.Hi))
		c.StrokeLine2(sty, lo, y, hi, y)
		if !math.IsInf(r.Lo, 0) && r.Lo >= p.X.Min {
			c.StrokeLine2(sty, lo, y-px(5), lo, y+px(5))
		}
		if !math.IsInf(r.Hi, 0) && r.Hi <= p.X.Max {
			c.StrokeLine2(sty, hi, y-px(5), hi, y+px(5))
		}
		x := trX(clip(r.Model))
		c.DrawGlyph(g, vg.Point{X: x, Y: y})
		if r.Model < p.X.Min || r.Model > p.X.Max {
			lbl := textStyle(9, draw.XLeft)
			at := x + px(8)
			if r.Model < p.X.Min {
				lbl.XAlign = draw.XLeft
			} else {
				lbl.XAlign = draw.XRight
				at = x - px(8)
			}
			c.FillText(lbl, vg.Point{X: at, Y: y + px(10)}, fmt.Sprintf("%+.3g", r.Model))
		}
	}
}
