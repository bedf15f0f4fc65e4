package plots

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A run's time series and latency points can hold far more values than a
// picture has columns of pixels, and the raster backend (freetype's
// rasteriser, under vgimg) slows down with the length of a stroked path:
// for each row of pixels it keeps a list of the cells the path touched and
// walks it for every new cell. So a series is first reduced to what the
// pixels can show (decimate), then stroked in short pieces (strokeLong);
// point clouds keep a few points per pixel (thinPoints). Drawing then costs
// about the same whatever the number of samples.

// decimate reduces xy to at most four points for each run of consecutive
// points that fall into the same column (column(x)): its first, lowest,
// highest and last point, in their order in xy. A line through them covers
// the same column's range and joins its neighbours at the same heights as
// a line through every point, so a spike of a single sample survives.
func decimate(xy plotter.XYs, column func(x float64) int) plotter.XYs {
	out := make(plotter.XYs, 0, min(len(xy), 1024))
	for i := 0; i < len(xy); {
		c := column(xy[i].X)
		lo, hi, j := i, i, i+1
		for ; j < len(xy) && column(xy[j].X) == c; j++ {
			if xy[j].Y < xy[lo].Y {
				lo = j
			}
			if xy[j].Y > xy[hi].Y {
				hi = j
			}
		}
		prev := -1
		for _, k := range [4]int{i, min(lo, hi), max(lo, hi), j - 1} {
			if k != prev {
				out = append(out, xy[k])
				prev = k
			}
		}
		i = j
	}
	return out
}

// pixelOf is the index of the pixel that holds canvas position x (or y,
// counted from the bottom).
func pixelOf(x vg.Length) int { return int(math.Floor(float64(x / px(1)))) }

// strokePiece is how many segments of a polyline are stroked at once (see
// the comment at the top of this file).
const strokePiece = 64

// strokeLong strokes a polyline in pieces of strokePiece segments. Each
// piece after the first starts one segment back, so that every join is
// drawn whole (the segment drawn twice is in an opaque colour, so it looks
// the same), and carries the dash pattern on from where the line is.
func strokeLong(c draw.Canvas, sty draw.LineStyle, pts []vg.Point) {
	if len(pts) <= strokePiece+1 {
		c.StrokeLines(sty, pts)
		return
	}
	offs := sty.DashOffs
	for a := 0; ; {
		b := min(a+strokePiece, len(pts)-1)
		s := sty
		s.DashOffs = offs
		c.StrokeLines(s, pts[a:b+1])
		if b == len(pts)-1 {
			return
		}
		for k := a; k < b-1; k++ {
			offs += vg.Length(math.Hypot(float64(pts[k+1].X-pts[k].X), float64(pts[k+1].Y-pts[k].Y)))
		}
		a = b - 1
	}
}

// seriesLine is a time series drawn as a line, decimated to the pixel
// columns of the canvas it is drawn on and stroked in pieces. It pads the
// data area as plotter.Line does (by half its width around every point).
type seriesLine struct {
	xy    plotter.XYs
	style draw.LineStyle
	ext   [4]int
}

func newSeriesLine(xy plotter.XYs, style draw.LineStyle) seriesLine {
	return seriesLine{xy, style, extremes(xy)}
}

func (l seriesLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	xy := decimate(l.xy, func(x float64) int { return pixelOf(trX(x)) })
	pts := make([]vg.Point, len(xy))
	for i, v := range xy {
		pts[i] = vg.Point{X: trX(v.X), Y: trY(v.Y)}
	}
	for _, ln := range c.ClipLinesXY(pts) {
		strokeLong(c, l.style, ln)
	}
}

func (l seriesLine) DataRange() (xmin, xmax, ymin, ymax float64) { return extremeRange(l.xy, l.ext) }

// extremeRange is the range of xy, whose extremes are ext.
func extremeRange(xy plotter.XYs, ext [4]int) (xmin, xmax, ymin, ymax float64) {
	if ext[0] < 0 {
		return math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1) // as plotter.XYRange
	}
	return xy[ext[0]].X, xy[ext[1]].X, xy[ext[2]].Y, xy[ext[3]].Y
}

func (l seriesLine) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	r := l.style.Width / 2
	return extremeBoxes(p, l.xy, l.ext, vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: r, Y: r}})
}

// extremes are the indexes of the leftmost, rightmost, lowest and highest
// of xy's points whose y is not NaN (a gap in a counter's line; all -1
// when there are none).
func extremes(xy plotter.XYs) [4]int {
	e := [4]int{-1, -1, -1, -1}
	for i, v := range xy {
		switch {
		case math.IsNaN(v.Y):
		case e[0] < 0:
			e = [4]int{i, i, i, i}
		default:
			if v.X < xy[e[0]].X {
				e[0] = i
			}
			if v.X > xy[e[1]].X {
				e[1] = i
			}
			if v.Y < xy[e[2]].Y {
				e[2] = i
			}
			if v.Y > xy[e[3]].Y {
				e[3] = i
			}
		}
	}
	return e
}

// extremeBoxes returns glyph boxes of rect around the leftmost, rightmost,
// lowest and highest of the points inside the axes: the only ones the
// plot's padding looks at among the boxes around every point that gonum's
// Line and Scatter return. ext are xy's extremes; when they are all inside
// the axes, so is every point and they are the answer.
func extremeBoxes(p *plot.Plot, xy plotter.XYs, ext [4]int, rect vg.Rectangle) []plot.GlyphBox {
	if ext[0] < 0 {
		return nil
	}
	in := func(x, y float64) bool { return x >= 0 && x <= 1 && y >= 0 && y <= 1 }
	var nx, ny [4]float64 // left, right, bottom, top
	all := true
	for k, i := range ext {
		nx[k], ny[k] = p.X.Norm(xy[i].X), p.Y.Norm(xy[i].Y)
		all = all && in(nx[k], ny[k])
	}
	if !all {
		found := false
		for _, v := range xy {
			x, y := p.X.Norm(v.X), p.Y.Norm(v.Y)
			switch {
			case !in(x, y):
			case !found:
				nx, ny, found = [4]float64{x, x, x, x}, [4]float64{y, y, y, y}, true
			default:
				if x < nx[0] {
					nx[0], ny[0] = x, y
				}
				if x > nx[1] {
					nx[1], ny[1] = x, y
				}
				if y < ny[2] {
					nx[2], ny[2] = x, y
				}
				if y > ny[3] {
					nx[3], ny[3] = x, y
				}
			}
		}
		if !found {
			return nil
		}
	}
	boxes := make([]plot.GlyphBox, len(nx))
	for k := range nx {
		boxes[k] = plot.GlyphBox{X: nx[k], Y: ny[k], Rectangle: rect}
	}
	return boxes
}

// thinPoints keeps, in order, at most perCell of the points that fall into
// each cell of pixels (cell(p)). A dot drawn over perCell others in the
// same pixel no longer changes what the pixel shows.
func thinPoints(xy plotter.XYs, perCell int, cell func(plotter.XY) [2]int) plotter.XYs {
	seen := make(map[[2]int]int, min(len(xy), 1<<16))
	out := make(plotter.XYs, 0, min(len(xy), 1<<16))
	for _, v := range xy {
		k := cell(v)
		if seen[k] < perCell {
			seen[k]++
			out = append(out, v)
		}
	}
	return out
}

// dotsPerPixel is how many glyphs of one kind a scatter draws in one pixel:
// four of the translucent dots of completed requests already cover it
// (alpha 0.63 each: 98%).
const dotsPerPixel = 4

// pointCloud is a scatter of one glyph style that draws at most
// dotsPerPixel glyphs per pixel. It pads the data area as plotter.Scatter
// does.
type pointCloud struct {
	xy    plotter.XYs
	style draw.GlyphStyle
	ext   [4]int
}

func newPointCloud(xy plotter.XYs, style draw.GlyphStyle) pointCloud {
	return pointCloud{xy, style, extremes(xy)}
}

func (s pointCloud) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	cell := func(v plotter.XY) [2]int { return [2]int{pixelOf(trX(v.X)), pixelOf(trY(v.Y))} }
	rc := rgbaCanvasOf(c.Canvas)
	for _, v := range thinPoints(s.xy, dotsPerPixel, cell) {
		pt := vg.Point{X: trX(v.X), Y: trY(v.Y)}
		if !c.Contains(pt) || rc == nil || !rc.stampGlyph(s.style, pt) {
			c.DrawGlyph(s.style, pt)
		}
	}
}

func (s pointCloud) DataRange() (xmin, xmax, ymin, ymax float64) { return extremeRange(s.xy, s.ext) }

func (s pointCloud) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	return extremeBoxes(p, s.xy, s.ext, s.style.Rectangle())
}
