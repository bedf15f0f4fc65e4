package plots

import (
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tsim-dev/tsim/results"
)

// outcomeGlyphs says how each outcome is marked: completed requests as small
// translucent dots, timeouts as red crosses at their timeout latency,
// rejections and failures as orange triangles and grey squares.
var outcomeGlyphs = [...]struct {
	label string
	style draw.GlyphStyle
}{
	results.Completed: {"completed", draw.GlyphStyle{Color: color.NRGBA{0x00, 0x72, 0xB2, 0xa0}, Radius: px(1.4), Shape: draw.CircleGlyph{}}},
	results.TimedOut:  {"timed out (TimeoutException)", draw.GlyphStyle{Color: red, Radius: px(5), Shape: boldCross{}}},
	results.Rejected:  {"rejected (503)", draw.GlyphStyle{Color: palette[1], Radius: px(3), Shape: draw.TriangleGlyph{}}},
	results.Failed:    {"failed", draw.GlyphStyle{Color: grey, Radius: px(2.5), Shape: draw.BoxGlyph{}}},
}

// Latency draws, for each run, the latency its clients saw for each request
// against the time the request ended: one panel per run, stacked, on common
// scales. It is the picture of "fine for 90 s, then 4–12 s and
// TimeoutExceptions". A dashed line marks the end of the warm-up.
func Latency(title string, runs []Run) (*Figure, error) {
	if len(runs) == 0 {
		return nil, errNoData
	}
	var tmax, ymax float64
	var present [len(outcomeGlyphs)]bool
	for _, r := range runs {
		if r.Run == nil || len(r.Run.Points) == 0 {
			return nil, fmt.Errorf("plots: latency: run %q has no request outcomes", r.Label)
		}
		if err := checkFinite(fmt.Sprintf("latency: run %q: duration", r.Label), r.Run.Duration, r.Run.Warmup); err != nil {
			return nil, err
		}
		tmax = max(tmax, r.Run.Duration)
		for _, p := range r.Run.Points {
			if !finite(p.T) || !finite(p.Latency) {
				return nil, checkFinite(fmt.Sprintf("latency: run %q: point", r.Label), p.T, p.Latency)
			}
			if int(p.Outcome) >= len(outcomeGlyphs) {
				return nil, fmt.Errorf("plots: latency: run %q: unknown outcome %d", r.Label, p.Outcome)
			}
			present[p.Outcome] = true
			tmax = max(tmax, p.T)
			ymax = max(ymax, p.Latency)
		}
	}
	if tmax <= 0 {
		tmax = 1
	}

	panels := make([][]*plot.Plot, len(runs))
	weights := make([]float64, len(runs))
	for i, r := range runs {
		xlabel := ""
		if i == len(runs)-1 {
			xlabel = "time the request ended (s)"
		}
		p := newPlot(latencyHead(r), xlabel, "client latency (s)")
		if r.Run.Warmup > 0 {
			p.Add(vline{x: r.Run.Warmup, label: "warm-up"})
		}
		// Draw completions first so that the rarer marks stay on top.
		for o := range outcomeGlyphs {
			var xy plotter.XYs
			for _, pt := range r.Run.Points {
				if int(pt.Outcome) == o {
					xy = append(xy, plotter.XY{X: pt.T, Y: pt.Latency})
				}
			}
			if len(xy) == 0 {
				continue
			}
			p.Add(newPointCloud(xy, outcomeGlyphs[o].style))
		}
		p.X.Min, p.X.Max = 0, tmax
		p.Y.Min, p.Y.Max = 0, niceMax(ymax)
		panels[i] = []*plot.Plot{p}
		weights[i] = 1
	}

	h := max(800, 110+330*float64(len(runs)))
	f := &Figure{Width: px(1200), Height: px(h), title: title}
	f.draw = func(c draw.Canvas) {
		var entries []legendEntry
		for o, g := range outcomeGlyphs {
			if present[o] || o == int(results.Completed) {
				entries = append(entries, legendEntry{g.label, glyphThumb(g.style)})
			}
		}
		drawLegendRow(c, c.Max.Y-px(10), entries)
		c.Max.Y -= px(30)
		drawGrid(c, panels, weights, 0, px(12))
	}
	return f, nil
}

// latencyHead is a panel title: the run's label and how its requests ended.
func latencyHead(r Run) string {
	c := r.Run.Requests
	parts := []string{fmt.Sprintf("%s completed", thousands(c.Completed))}
	to := fmt.Sprintf("%s timed out", thousands(c.TimedOut))
	if r.Run.FirstTimeout >= 0 && c.TimedOut > 0 {
		to += fmt.Sprintf(" (first at %.0f s)", r.Run.FirstTimeout)
	}
	parts = append(parts, to)
	if c.Rejected > 0 {
		parts = append(parts, fmt.Sprintf("%s rejected", thousands(c.Rejected)))
	}
	if c.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%s failed", thousands(c.Failed)))
	}
	s := strings.Join(parts, ", ")
	if r.Label != "" {
		s = r.Label + ": " + s
	}
	return s
}

// thousands formats n with thin separators: 12,345.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// glyphThumb is a legend thumbnail showing one glyph.
type glyphThumb draw.GlyphStyle

func (g glyphThumb) Thumbnail(c *draw.Canvas) {
	sty := draw.GlyphStyle(g)
	if sty.Radius < px(3) {
		sty.Radius = px(3)
	}
	c.DrawGlyphNoClip(sty, c.Center())
}

// vline is a dashed vertical marker with a small label at the top.
type vline struct {
	x     float64
	label string
}

func (v vline) Plot(c draw.Canvas, p *plot.Plot) {
	if v.x < p.X.Min || v.x > p.X.Max {
		return
	}
	trX, _ := p.Transforms(&c)
	x := trX(v.x)
	c.StrokeLine2(draw.LineStyle{Color: grey, Width: px(1), Dashes: []vg.Length{px(4), px(3)}}, x, c.Min.Y, x, c.Max.Y)
	sty := textStyle(8, draw.XLeft)
	sty.Color = grey
	c.FillText(sty, vg.Point{X: x + px(3), Y: c.Max.Y - px(7)}, v.label)
}

// boldCross is an × drawn with strokes thick enough to stand out among
// thousands of dots.
type boldCross struct{}

func (boldCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: px(1.8)})
	r := sty.Radius * 0.7071
	for _, d := range []vg.Length{r, -r} {
		var p vg.Path
		p.Move(vg.Point{X: pt.X - r, Y: pt.Y - d})
		p.Line(vg.Point{X: pt.X + r, Y: pt.Y + d})
		c.Stroke(p)
	}
}
