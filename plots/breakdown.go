package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tsim-dev/tsim/results"
)

// BreakdownBar is one bar of a breakdown chart: where the average completed
// request of one run (a variant) spent its response time.
type BreakdownBar struct {
	Label     string
	Breakdown results.Breakdown
}

// breakdownPart is one category of results.Breakdown, bottom of a bar
// first: the waits for a limit, then the work, then what lies outside the
// model. Waits are warm colours, work cool ones.
var breakdownParts = []struct {
	label string
	col   color.Color
	get   func(b results.Breakdown) float64
}{
	{"waiting for a connection", color.RGBA{0xD5, 0x5E, 0x00, 0xff}, func(b results.Breakdown) float64 { return b.ConnWait }},
	{"waiting for a thread", color.RGBA{0xE6, 0x9F, 0x00, 0xff}, func(b results.Breakdown) float64 { return b.ThreadWait }},
	{"waiting for admission", color.RGBA{0xCC, 0x79, 0xA7, 0xff}, func(b results.Breakdown) float64 { return b.AdmissionWait }},
	{"waiting for a throttle slot", color.RGBA{0xF0, 0xE4, 0x42, 0xff}, func(b results.Breakdown) float64 { return b.ThrottleWait }},
	{"waiting for a lock", color.RGBA{0x8C, 0x3B, 0x1E, 0xff}, func(b results.Breakdown) float64 { return b.LockWait }},
	{"waiting for a core", color.RGBA{0x56, 0xB4, 0xE9, 0xff}, func(b results.Breakdown) float64 { return b.CPUWait }},
	{"working (CPU)", color.RGBA{0x00, 0x72, 0xB2, 0xff}, func(b results.Breakdown) float64 { return b.CPU }},
	{"external waits", color.RGBA{0x00, 0x9E, 0x73, 0xff}, func(b results.Breakdown) float64 { return b.ExternalWait }},
	{"network", color.RGBA{0x99, 0x99, 0x99, 0xff}, func(b results.Breakdown) float64 { return b.Network }},
	{"other", color.RGBA{0xC8, 0xC8, 0xC8, 0xff}, func(b results.Breakdown) float64 { return b.Other }},
}

// Breakdown draws one stacked bar per run: the seconds the average
// completed request spent waiting for a connection, a thread, admission, a
// throttle slot, a lock or a core, working, in external waits and on the
// network. Segments large enough to hold it are labelled with their share of
// the bar, and each bar with its total. Only the categories that occur are
// in the legend.
func Breakdown(title string, bars []BreakdownBar) (*Figure, error) {
	if len(bars) == 0 {
		return nil, errNoData
	}
	var top float64
	used := make([]bool, len(breakdownParts))
	for _, b := range bars {
		var sum float64
		for i, part := range breakdownParts {
			v := part.get(b.Breakdown)
			if err := checkFinite(fmt.Sprintf("breakdown: bar %q: %s", b.Label, part.label), v); err != nil {
				return nil, err
			}
			if v < 0 {
				return nil, fmt.Errorf("plots: breakdown: bar %q: %s is negative (%v)", b.Label, part.label, v)
			}
			if v > 0 {
				used[i] = true
			}
			sum += v
		}
		top = max(top, sum)
	}
	if top <= 0 {
		return nil, fmt.Errorf("plots: breakdown: every bar is empty (no request completed)")
	}

	p := newPlot("", "", "seconds per completed request")
	p.Y.Min, p.Y.Max = 0, top*1.1
	p.X.Min, p.X.Max = -0.6, float64(len(bars))-0.4
	var ticks plot.ConstantTicks
	for i, b := range bars {
		ticks = append(ticks, plot.Tick{Value: float64(i), Label: b.Label})
	}
	p.X.Tick.Marker = ticks
	p.X.Tick.Label.Font.Size = 12
	p.Add(stackedBars{bars: bars})

	var legend []legendEntry
	for i, part := range breakdownParts {
		if used[i] {
			legend = append(legend, legendEntry{part.label, swatch{part.col}})
		}
	}
	f := &Figure{Width: px(1200), Height: px(800), title: title}
	f.draw = func(c draw.Canvas) {
		// The legend goes under the title, in as many rows as it needs.
		rows := legendRows(c, legend)
		for _, row := range rows {
			drawLegendRow(c, c.Max.Y-px(8), row)
			c.Max.Y -= px(22)
		}
		c.Max.Y -= px(6)
		drawGrid(c, [][]*plot.Plot{{p}}, []float64{1}, 0, 0)
	}
	return f, nil
}

// legendRows splits legend entries into rows that fit the canvas's width.
func legendRows(c draw.Canvas, entries []legendEntry) [][]legendEntry {
	sty := textStyle(10, draw.XLeft)
	width := c.Max.X - c.Min.X - px(40)
	var rows [][]legendEntry
	var row []legendEntry
	var w vg.Length
	for _, e := range entries {
		ew := px(26) + px(6) + sty.Width(e.label) + px(22)
		if len(row) > 0 && w+ew > width {
			rows = append(rows, row)
			row, w = nil, 0
		}
		row = append(row, e)
		w += ew
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// swatch is a legend thumbnail: a filled square.
type swatch struct{ col color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	h := c.Max.Y - c.Min.Y
	x := (c.Min.X + c.Max.X) / 2
	c.FillPolygon(s.col, []vg.Point{{X: x - h/2, Y: c.Min.Y}, {X: x + h/2, Y: c.Min.Y}, {X: x + h/2, Y: c.Max.Y}, {X: x - h/2, Y: c.Max.Y}})
}

// stackedBars draws the bars of a breakdown chart.
type stackedBars struct{ bars []BreakdownBar }

func (s stackedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	unit := trX(1) - trX(0)
	half := unit * 0.28
	label := textStyle(10, draw.XCenter)
	label.Color = color.White
	total := textStyle(11, draw.XCenter)
	for i, b := range s.bars {
		x := trX(float64(i))
		var sum float64
		for _, part := range breakdownParts {
			sum += part.get(b.Breakdown)
		}
		var base float64
		for _, part := range breakdownParts {
			v := part.get(b.Breakdown)
			if v <= 0 {
				continue
			}
			y0, y1 := trY(base), trY(base+v)
			c.FillPolygon(part.col, []vg.Point{{X: x - half, Y: y0}, {X: x + half, Y: y0}, {X: x + half, Y: y1}, {X: x - half, Y: y1}})
			c.StrokeLines(draw.LineStyle{Color: color.White, Width: px(1)}, []vg.Point{{X: x - half, Y: y1}, {X: x + half, Y: y1}})
			if y1-y0 >= px(18) {
				sty := label
				if luminance(part.col) > 0.6 {
					sty.Color = color.Black
				}
				c.FillText(sty, vg.Point{X: x, Y: (y0 + y1) / 2}, fmt.Sprintf("%s (%s)", results.FmtLatency(v), percent(v/sum)))
			}
			base += v
		}
		txt := results.FmtLatency(sum) + " per request"
		tw, ty := total.Width(txt)/2+px(4), trY(sum)+px(12)
		c.FillPolygon(color.White, []vg.Point{{X: x - tw, Y: ty - px(8)}, {X: x + tw, Y: ty - px(8)}, {X: x + tw, Y: ty + px(8)}, {X: x - tw, Y: ty + px(8)}})
		c.FillText(total, vg.Point{X: x, Y: ty}, txt)
	}
}

// luminance is a colour's relative brightness, 0 to 1.
func luminance(col color.Color) float64 {
	r, g, b, _ := col.RGBA()
	return (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
}

func percent(f float64) string {
	p := 100 * f
	if p >= 10 || p == math.Trunc(p) {
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}
