package plots

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tsim-dev/tsim/results"
)

// Run is one run to draw and the label it is drawn under (a variant name).
type Run struct {
	Label string
	Run   *results.Run
	// CompletedShare is the share, above 0 and at most 1, of the run's
	// requests ended after warm-up that completed: the height LatencyCDF's
	// curve of the completed requests' latencies tops out at. Zero means
	// what Run.TimeoutRate and Run.RejectRate leave (all of them when both
	// are zero); set it when failed requests count too.
	CompletedShare float64
}

// dpi is the resolution of every PNG: sizes are chosen in pixels at this
// resolution, fonts in points.
const dpi = 96

// px is a length of n pixels.
func px(n float64) vg.Length { return vg.Length(n) * vg.Inch / dpi }

// Figure is a picture ready to be rendered: its size and what it draws.
type Figure struct {
	Width, Height vg.Length
	// Partial marks a picture of a run that did not finish (interrupted):
	// its title then ends in "(partial: interrupted)". The zero value draws
	// the title as given.
	Partial bool

	title, subtitle string
	// draw draws everything below the title and subtitle.
	draw func(c draw.Canvas)
}

// partialNote ends the title of a Partial figure.
const partialNote = " (partial: interrupted)"

// heading is the title drawn at the top.
func (f *Figure) heading() string {
	if f.Partial {
		return f.title + partialNote
	}
	return f.title
}

// Pixels returns the size of the PNG that WritePNG writes.
func (f *Figure) Pixels() (w, h int) {
	return int(math.Round(float64(f.Width / vg.Inch * dpi))), int(math.Round(float64(f.Height / vg.Inch * dpi)))
}

// WritePNG renders the figure as a PNG image.
func (f *Figure) WritePNG(w io.Writer) error {
	w0, h0 := f.Pixels()
	img := pooledRGBA(w0, h0)
	defer keepPixels(img.Pix)
	f.draw(drawHeader(pad(draw.New(newRGBACanvas(img)), 8), f.heading(), f.subtitle))
	return encodePNG(w, img)
}

// pixels keeps the pixels of pictures written for the next, up to
// keptPixels bytes: a picture is megabytes, which a fresh image would
// have the runtime clear and the system map page by page, only for the
// canvas to paint them white (newRGBACanvas paints every pixel, whatever
// was there). A sync.Pool would lose them at every collection.
var pixels struct {
	sync.Mutex
	free  [][]uint8
	bytes int
}

// keptPixels bounds the bytes of pixels kept: the pictures of an
// experiment, drawn at once.
const keptPixels = 64 << 20

// pooledRGBA is an image of w×h pixels, on kept pixels if some are large
// enough (their values left as they were).
func pooledRGBA(w, h int) *image.RGBA {
	n := 4 * w * h
	var pix []uint8
	pixels.Lock()
	best := -1
	for i, p := range pixels.free {
		if cap(p) >= n && (best < 0 || cap(p) < cap(pixels.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		pix = pixels.free[best]
		pixels.bytes -= cap(pix)
		pixels.free = slices.Delete(pixels.free, best, best+1)
	}
	pixels.Unlock()
	if pix == nil {
		pix = make([]uint8, n)
	}
	return &image.RGBA{Pix: pix[:n], Stride: 4 * w, Rect: image.Rect(0, 0, w, h)}
}

// keepPixels keeps pix for the next picture, if there is room.
func keepPixels(pix []uint8) {
	pixels.Lock()
	defer pixels.Unlock()
	if pixels.bytes+cap(pix) <= keptPixels {
		pixels.free = append(pixels.free, pix)
		pixels.bytes += cap(pix)
	}
}

// Okabe–Ito colours: distinguishable with the common colour-vision
// deficiencies, in a fixed order so that a variant keeps its colour across
// the pictures of one experiment.
var palette = []color.Color{
	color.RGBA{0x00, 0x72, 0xB2, 0xff}, // blue
	color.RGBA{0xE6, 0x9F, 0x00, 0xff}, // orange
	color.RGBA{0x00, 0x9E, 0x73, 0xff}, // bluish green
	color.RGBA{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	color.RGBA{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	color.RGBA{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	color.RGBA{0x99, 0x99, 0x99, 0xff}, // grey
	color.RGBA{0x00, 0x00, 0x00, 0xff}, // black
	color.RGBA{0xF0, 0xE4, 0x42, 0xff}, // yellow
}

func colour(i int) color.Color { return palette[i%len(palette)] }

var (
	errNoData = errors.New("plots: no data")
	red       = color.RGBA{0xD0, 0x10, 0x10, 0xff}
	grey      = color.RGBA{0x80, 0x80, 0x80, 0xff}
	lightGrey = color.RGBA{0xE4, 0xE4, 0xE4, 0xff}
)

func textStyle(size float64, align text.XAlignment) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(plot.DefaultFont, vg.Length(size)),
		XAlign:  align,
		YAlign:  draw.YCenter,
		Handler: textHandler,
	}
}

// textHandler is plot.DefaultTextHandler with the boxes of texts kept for
// every picture: gonum measures a label many times over for each panel
// (padding, glyph boxes, alignment), each time through a fresh font face
// (a tenth of what drawing a picture allocated), and a text's box in a
// font is the same every time.
var textHandler text.Handler = textBoxes{plot.DefaultTextHandler}

type textBoxes struct{ text.Handler }

type boxKey struct {
	txt string
	fnt font.Font
}

type box struct{ width, height, depth vg.Length }

// boxes keeps up to maxBoxes boxes of texts.
var boxes struct {
	sync.Mutex
	m map[boxKey]box
}

const maxBoxes = 1 << 16

func (h textBoxes) Box(txt string, fnt font.Font) (width, height, depth vg.Length) {
	k := boxKey{txt, fnt}
	boxes.Lock()
	b, ok := boxes.m[k]
	boxes.Unlock()
	if !ok {
		b.width, b.height, b.depth = h.Handler.Box(txt, fnt)
		boxes.Lock()
		if boxes.m == nil {
			boxes.m = map[boxKey]box{}
		}
		if len(boxes.m) < maxBoxes {
			boxes.m[k] = b
		}
		boxes.Unlock()
	}
	return b.width, b.height, b.depth
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// checkFinite returns an error naming what is not a finite number.
func checkFinite(what string, xs ...float64) error {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("plots: %s is %v", what, x)
		}
	}
	return nil
}

// newPlot returns a plot with tsim's fonts and a light grid.
func newPlot(title, xLabel, yLabel string) *plot.Plot {
	p := plot.New()
	p.TextHandler = textHandler
	for _, sty := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.X.Tick.Label, &p.Y.Label.TextStyle, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		sty.Handler = textHandler
	}
	// Every picture is drawn on white: a plot that filled its area white
	// again would cost a fill of every panel's pixels and show nothing.
	p.BackgroundColor = nil
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 11
	p.Title.Padding = px(4)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 10
		a.Tick.Label.Font.Size = 9
		a.Tick.Marker = niceTicks{}
	}
	p.Legend.TextStyle.Font.Size = 12
	p.Legend.Padding = px(5)
	p.Legend.ThumbnailWidth = px(34)
	p.Add(newGrid())
	return p
}

// grid draws light horizontal and vertical lines at the major ticks.
func newGrid() plot.Plotter {
	g := &gridLines{}
	return g
}

type gridLines struct{}

func (gridLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: lightGrey, Width: vg.Points(0.6)}
	for _, t := range majorTicks(p.X.Tick.Marker).Ticks(p.X.Min, p.X.Max) {
		if t.IsMinor() || t.Value < p.X.Min || t.Value > p.X.Max {
			continue
		}
		x := trX(t.Value)
		c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
	}
	for _, t := range majorTicks(p.Y.Tick.Marker).Ticks(p.Y.Min, p.Y.Max) {
		if t.IsMinor() || t.Value < p.Y.Min || t.Value > p.Y.Max {
			continue
		}
		y := trY(t.Value)
		c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
	}
}

// majorTicks is the ticker whose labelled ticks the grid lines follow:
// the wrapped one of an unlabelled axis.
func majorTicks(m plot.Ticker) plot.Ticker {
	if u, ok := m.(unlabelled); ok {
		return u.Ticker
	}
	return m
}

// drawGrid lays panels out in rows and columns, top row first, so that
// their data areas line up: every panel of a column gets the same left and
// right margins and every panel of a row the same top and bottom margins.
// weights are the rows' relative heights; nil panels leave a gap. It
// returns the top of each row's data areas (a row of gaps: its top).
func drawGrid(c draw.Canvas, panels [][]*plot.Plot, weights []float64, padX, padY vg.Length) []vg.Length {
	rows := len(panels)
	if rows == 0 {
		return nil
	}
	cols := len(panels[0])
	var wsum float64
	for _, w := range weights {
		wsum += w
	}
	W := c.Max.X - c.Min.X
	H := c.Max.Y - c.Min.Y
	colW := (W - padX*vg.Length(cols-1)) / vg.Length(cols)
	avail := H - padY*vg.Length(rows-1)
	cells := make([][]draw.Canvas, rows)
	top := c.Max.Y
	for j := range rows {
		h := avail * vg.Length(weights[j]/wsum)
		cells[j] = make([]draw.Canvas, cols)
		for i := range cols {
			x0 := c.Min.X + vg.Length(i)*(colW+padX)
			cells[j][i] = draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x0, Y: top - h},
				Max: vg.Point{X: x0 + colW, Y: top},
			}}
		}
		top -= h + padY
	}
	left := make([]vg.Length, cols)
	right := make([]vg.Length, cols)
	bottom := make([]vg.Length, rows)
	upper := make([]vg.Length, rows)
	type margins struct{ l, r, b, t vg.Length }
	own := make([][]margins, rows)
	for j, row := range panels {
		own[j] = make([]margins, cols)
		for i, p := range row {
			if p == nil {
				continue
			}
			cc := cells[j][i]
			d := p.DataCanvas(cc)
			m := margins{d.Min.X - cc.Min.X, cc.Max.X - d.Max.X, d.Min.Y - cc.Min.Y, cc.Max.Y - d.Max.Y}
			own[j][i] = m
			left[i] = max(left[i], m.l)
			right[i] = max(right[i], m.r)
			bottom[j] = max(bottom[j], m.b)
			upper[j] = max(upper[j], m.t)
		}
	}
	tops := make([]vg.Length, rows)
	for j, row := range panels {
		tops[j] = cells[j][0].Max.Y - upper[j]
		for i, p := range row {
			if p == nil {
				continue
			}
			m := own[j][i]
			cc := draw.Crop(cells[j][i], left[i]-m.l, -(right[i] - m.r), bottom[j]-m.b, -(upper[j] - m.t))
			p.Draw(cc)
		}
	}
	return tops
}

// legendEntry is one item of a horizontal legend.
type legendEntry struct {
	label string
	thumb plot.Thumbnailer
}

// drawLegendRow draws entries side by side, centred on the line at y.
func drawLegendRow(c draw.Canvas, y vg.Length, entries []legendEntry) {
	sty := textStyle(10, draw.XLeft)
	thumbW, gap, sep := px(26), px(6), px(22)
	var total vg.Length
	for i, e := range entries {
		total += thumbW + gap + sty.Width(e.label)
		if i > 0 {
			total += sep
		}
	}
	x := (c.Min.X+c.Max.X)/2 - total/2
	h := sty.FontExtents().Height
	for _, e := range entries {
		tc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x, Y: y - h/2},
			Max: vg.Point{X: x + thumbW, Y: y + h/2},
		}}
		e.thumb.Thumbnail(&tc)
		x += thumbW + gap
		c.FillText(sty, vg.Point{X: x, Y: y}, e.label)
		x += sty.Width(e.label) + sep
	}
}

// drawHeader draws a figure title and, below it, an optional subtitle; it
// returns the canvas left below them.
func drawHeader(c draw.Canvas, title, subtitle string) draw.Canvas {
	y := c.Max.Y - px(20)
	c.FillText(textStyle(15, draw.XCenter), vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: y}, title)
	used := px(36)
	if subtitle != "" {
		c.FillText(textStyle(10, draw.XCenter), vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: y - px(22)}, subtitle)
		used += px(20)
	}
	c.Max.Y -= used
	return c
}

// pad returns c shrunk by n pixels on every side.
func pad(c draw.Canvas, n float64) draw.Canvas {
	return draw.Crop(c, px(n), -px(n), px(n), -px(n))
}

// niceTicks labels a linear axis at 1, 2, 2.5 or 5 times a power of ten,
// aiming at five to ten labels, with one minor tick between labels.
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	raw := (hi - lo) / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ts []plot.Tick
	for k := math.Ceil(lo / step * 2); k*step/2 <= hi*(1+1e-12); k++ {
		v := k * step / 2
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		t := plot.Tick{Value: v}
		if int64(k)%2 == 0 {
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
			if len(t.Label) > 8 {
				t.Label = strconv.FormatFloat(v, 'g', 4, 64)
			}
		}
		ts = append(ts, t)
	}
	return ts
}

// legendBackdrop, added as a plot's last plotter, clears the area under the
// plot's legend so that grid and guide lines do not run through its text.
type legendBackdrop struct{ labels []string }

func (b legendBackdrop) Plot(c draw.Canvas, p *plot.Plot) {
	l := p.Legend
	sty := l.TextStyle
	var w, eh vg.Length
	for _, s := range b.labels {
		w = max(w, sty.Width(" "+s))
		eh = max(eh, sty.Rectangle(s).Max.Y) // as Legend.Draw spaces its entries
	}
	w += l.ThumbnailWidth + sty.Width(" ")
	n := vg.Length(len(b.labels))
	h := n*eh + (n-1)*l.Padding
	m := px(5)
	var x0, x1, y0, y1 vg.Length
	if l.Left {
		x0 = c.Min.X + l.XOffs - m
		x1 = x0 + w + 2*m
	} else {
		x1 = c.Max.X + l.XOffs + m
		x0 = x1 - w - 2*m
	}
	if l.Top {
		y1 = c.Max.Y + l.YOffs + m
		y0 = y1 - h - 2*m
	} else {
		y0 = c.Min.Y + l.YOffs - m
		y1 = y0 + h + 2*m
	}
	c.FillPolygon(color.White, []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}})
}
