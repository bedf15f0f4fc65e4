package plots

import (
	"encoding/binary"
	"image"
	"image/color"
	imagedraw "image/draw"
	"math"
	"sync"

	"git.sr.ht/~sbinet/gg"
	"golang.org/x/image/font"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
	plotfont "gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// rgbaCanvas is vgimg's canvas on an *image.RGBA with faster ways for what
// tsim's pictures draw most: strokes and fills of straight lines and arcs
// are rasterised by golang.org/x/image/vector on a raster the size of the
// shape (vgimg's gg strokes with freetype's rasteriser, whose cost grows
// with the cells a path touches per row), and upright text is drawn glyph
// by glyph with image/draw from glyphs kept for the picture (gg scales
// every glyph with a bilinear transform and a fresh font face per
// string). What these do not cover (curves, rotated text, images, a
// scaled canvas) goes to vgimg. The pixels differ from vgimg's only in the
// anti-aliasing of edges.
type rgbaCanvas struct {
	*vgimg.Canvas
	img *image.RGBA
	ctx *gg.Context

	vgWidth vg.Length     // as vgimg keeps it (not restored by Pop)
	st      strokeState   // as gg keeps it
	stack   []strokeState // saved by Push
	z       vector.Rasterizer
	mask    image.Alpha // a shape's coverage
	shapes  shapes      // a stroke's outline
	faces   map[faceKey]font.Face
	glyphs  map[glyphKey]*glyph
	stamps  map[stampKey]*image.Alpha
	polys   [][]point
	pts     []point
}

// strokeState is what Push saves and Pop restores.
type strokeState struct {
	width    float64 // pixels
	dashes   []float64
	dashOffs float64
	color    color.Color
}

// point is a position on the image, in pixels, y down.
type point struct{ x, y float64 }

// newRGBACanvas returns a canvas on img, cleared to white.
func newRGBACanvas(img *image.RGBA) *rgbaCanvas {
	// As vgimg.NewWith sets up its own context (which would copy img).
	ctx := gg.NewContextForRGBA(img)
	ctx.SetLineCapButt()
	ctx.InvertY()
	c := &rgbaCanvas{
		Canvas: vgimg.NewWith(vgimg.UseImageWithContext(img, ctx), vgimg.UseDPI(dpi)),
		img:    img,
		ctx:    ctx,
		faces:  map[faceKey]font.Face{},
		glyphs: map[glyphKey]*glyph{},
		stamps: map[stampKey]*image.Alpha{},
	}
	vg.Initialize(c)
	return c
}

func (c *rgbaCanvas) SetLineWidth(w vg.Length) {
	c.vgWidth = w
	c.st.width = w.Dots(dpi)
	c.Canvas.SetLineWidth(w)
}

func (c *rgbaCanvas) SetLineDash(ds []vg.Length, offs vg.Length) {
	c.st.dashes = make([]float64, len(ds))
	for i, d := range ds {
		c.st.dashes[i] = d.Dots(dpi)
	}
	c.st.dashOffs = offs.Dots(dpi)
	c.Canvas.SetLineDash(ds, offs)
}

func (c *rgbaCanvas) SetColor(clr color.Color) {
	if clr == nil {
		clr = color.Black
	}
	c.st.color = clr
	c.Canvas.SetColor(clr)
}

func (c *rgbaCanvas) Push() {
	c.stack = append(c.stack, c.st)
	c.Canvas.Push()
}

func (c *rgbaCanvas) Pop() {
	c.st = c.stack[len(c.stack)-1]
	c.stack = c.stack[:len(c.stack)-1]
	c.Canvas.Pop()
}

// transform returns how the context maps a position in dots to the
// image: x' = a·x + b·y + e, y' = c·x + d·y + f.
func (c *rgbaCanvas) transform() (a, b, cc, d, e, f float64) {
	e, f = c.ctx.TransformPoint(0, 0)
	x1, y1 := c.ctx.TransformPoint(1, 0)
	x2, y2 := c.ctx.TransformPoint(0, 1)
	return x1 - e, x2 - e, y1 - f, y2 - f, e, f
}

// rigid reports whether the context only moves, turns and mirrors (lengths
// stay): then a stroke's width is the same on the image.
func (c *rgbaCanvas) rigid() bool {
	a, b, cc, d, _, _ := c.transform()
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return near(a*a+cc*cc, 1) && near(b*b+d*d, 1) && near(a*b+cc*d, 0)
}

// flatten appends to c.polys the sub-paths of p as polylines on the image,
// each with whether it is closed; false if p has a curve (which vgimg
// draws).
func (c *rgbaCanvas) flatten(p vg.Path) (closed []bool, ok bool) {
	a, b, cc, d, e, f := c.transform()
	at := func(x, y float64) point { return point{a*x + b*y + e, cc*x + d*y + f} }
	c.polys = c.polys[:0]
	cur := -1
	for _, comp := range p {
		switch comp.Type {
		case vg.MoveComp:
			c.polys = append(c.polys, []point{at(comp.Pos.X.Dots(dpi), comp.Pos.Y.Dots(dpi))})
			closed = append(closed, false)
			cur = len(c.polys) - 1
		case vg.LineComp:
			q := at(comp.Pos.X.Dots(dpi), comp.Pos.Y.Dots(dpi))
			if cur < 0 {
				c.polys = append(c.polys, nil)
				closed = append(closed, false)
				cur = len(c.polys) - 1
			}
			c.polys[cur] = append(c.polys[cur], q)
		case vg.ArcComp:
			x, y, r := comp.Pos.X.Dots(dpi), comp.Pos.Y.Dots(dpi), comp.Radius.Dots(dpi)
			n := arcSegments(r, comp.Angle)
			if cur < 0 {
				c.polys = append(c.polys, nil)
				closed = append(closed, false)
				cur = len(c.polys) - 1
			}
			for i := 0; i <= n; i++ {
				t := comp.Start + comp.Angle*float64(i)/float64(n)
				c.polys[cur] = append(c.polys[cur], at(x+r*math.Cos(t), y+r*math.Sin(t)))
			}
		case vg.CloseComp:
			if cur >= 0 {
				closed[cur] = true
				// A path goes on from where it was closed.
				start := c.polys[cur][0]
				c.polys = append(c.polys, []point{start})
				closed = append(closed, false)
				cur = len(c.polys) - 1
			}
		default:
			return nil, false
		}
	}
	return closed, true
}

// arcSegments is how many chords draw an arc of radius r pixels and sweep
// angle radians within a twentieth of a pixel of the circle.
func arcSegments(r, angle float64) int {
	if r <= 0.05 {
		return 1
	}
	step := 2 * math.Acos(1-0.05/r)
	return max(1, min(256, int(math.Ceil(math.Abs(angle)/step))))
}

func (c *rgbaCanvas) Fill(p vg.Path) {
	if _, ok := c.flatten(p); !ok {
		c.Canvas.Fill(p)
		return
	}
	c.fillPolys(c.polys)
}

func (c *rgbaCanvas) Stroke(p vg.Path) {
	if c.vgWidth <= 0 {
		return
	}
	closed, ok := c.flatten(p)
	if !ok || !c.rigid() {
		c.Canvas.Stroke(p)
		return
	}
	w := c.st.width / 2
	sh := &c.shapes
	sh.pts, sh.ends = sh.pts[:0], sh.ends[:0]
	for i, pl := range c.polys {
		pl = dropRepeats(pl)
		if len(pl) < 2 {
			continue
		}
		if closed[i] {
			pl = append(pl, pl[0]) // the closing segment; its join is drawn as the last
		}
		for _, piece := range dash(pl, c.st.dashes, c.st.dashOffs) {
			sh.strokeOutline(piece, w, closed[i] && len(c.st.dashes) == 0)
		}
	}
	c.fill(sh)
}

// dropRepeats removes consecutive repeated points.
func dropRepeats(pl []point) []point {
	out := pl[:1]
	for _, q := range pl[1:] {
		if q != out[len(out)-1] {
			out = append(out, q)
		}
	}
	return out
}

// dash cuts a polyline into the pieces that a dash pattern (lengths of
// dashes and gaps, starting offs into the pattern) draws, as gg does; with
// no pattern the polyline is its one piece.
func dash(pl []point, pattern []float64, offs float64) [][]point {
	var total float64
	for _, d := range pattern {
		total += d
	}
	if len(pattern) == 0 || !(total > 0) {
		return [][]point{pl}
	}
	// Where in the pattern the line starts.
	k, left := 0, pattern[0]
	for o := math.Mod(offs, total); o > 0; {
		if o < left {
			left -= o
			break
		}
		o -= left
		k = (k + 1) % len(pattern)
		left = pattern[k]
	}
	var pieces [][]point
	var cur []point
	on := k%2 == 0
	if on {
		cur = []point{pl[0]}
	}
	for i := 1; i < len(pl); i++ {
		p, q := pl[i-1], pl[i]
		seg := math.Hypot(q.x-p.x, q.y-p.y)
		pos := 0.0
		for seg-pos > left {
			pos += left
			t := pos / seg
			m := point{p.x + (q.x-p.x)*t, p.y + (q.y-p.y)*t}
			if on {
				pieces = append(pieces, append(cur, m))
				cur = nil
			} else {
				cur = []point{m}
			}
			on = !on
			k = (k + 1) % len(pattern)
			left = pattern[k]
		}
		left -= seg - pos
		if on {
			cur = append(cur, q)
		}
	}
	if on && len(cur) > 1 {
		pieces = append(pieces, cur)
	}
	return pieces
}

// shapes are polygons, one after the other in pts; ends[i] is where
// polygon i ends.
type shapes struct {
	pts  []point
	ends []int
}

func (sh *shapes) add(pts ...point) {
	sh.pts = append(sh.pts, pts...)
	sh.ends = append(sh.ends, len(sh.pts))
}

// strokeOutline adds the shapes whose union is the stroke of a polyline of
// half-width w with butt caps and round joins: a rectangle for each
// segment and, at each join (and, closed, at the first point too), the
// wedge of a disc that rounds the outer side of the turn. Shapes that meet
// along an edge share it exactly, so that x/image/vector, which adds up
// coverage, draws edges as sharp as one shape's: a whole disc at each join
// would run its edge beside the rectangles' and make a line of short
// segments look bold.
func (sh *shapes) strokeOutline(pl []point, w float64, closed bool) {
	var prev point // the previous segment's unit direction
	for i := 1; i < len(pl); i++ {
		p, q := pl[i-1], pl[i]
		dx, dy := q.x-p.x, q.y-p.y
		l := math.Hypot(dx, dy)
		if l == 0 {
			continue
		}
		ux, uy := dx/l, dy/l
		nx, ny := -uy*w, ux*w
		sh.add(point{p.x + nx, p.y + ny}, point{p.x - nx, p.y - ny}, point{q.x - nx, q.y - ny}, point{q.x + nx, q.y + ny})
		if i > 1 {
			sh.join(p, prev, point{ux, uy}, w)
		}
		prev = point{ux, uy}
	}
	if closed && len(pl) > 2 {
		// The join at the first point, between the last segment and the first.
		p, q := pl[0], pl[1]
		if l := math.Hypot(q.x-p.x, q.y-p.y); l > 0 {
			sh.join(p, prev, point{(q.x - p.x) / l, (q.y - p.y) / l}, w)
		}
	}
}

// join adds the round join at q of a segment in unit direction a and the
// next in unit direction b: the wedge of the disc of radius w on the outer
// side of the turn.
func (sh *shapes) join(q, a, b point, w float64) {
	cross := a.x*b.y - a.y*b.x
	dot := a.x*b.x + a.y*b.y
	if math.Abs(cross) < 1e-9 && dot > 0 {
		return // straight on
	}
	// The outer side: the normal (−a.y, a.x) turns away from the turn.
	// The wedge turns with the segment, from this normal to the next's
	// (back the way it came: the half disc ahead of the segment).
	s := 1.0
	if cross > 0 {
		s = -1
	}
	vx, vy := -s*a.y*w, s*a.x*w
	sweep := math.Atan2(cross, dot)
	if math.Abs(cross) < 1e-9 {
		sweep = -s * math.Pi
	}
	n := arcSegments(w, sweep)
	sin, cos := math.Sincos(sweep / float64(n))
	sh.pts = append(sh.pts, q)
	for j := 0; j <= n; j++ {
		sh.pts = append(sh.pts, point{q.x + vx, q.y + vy})
		vx, vy = vx*cos-vy*sin, vx*sin+vy*cos
	}
	sh.ends = append(sh.ends, len(sh.pts))
}

// fillPolys fills the union of polygons (see fill).
func (c *rgbaCanvas) fillPolys(polys [][]point) {
	sh := &c.shapes
	sh.pts, sh.ends = sh.pts[:0], sh.ends[:0]
	for _, pl := range polys {
		sh.add(pl...)
	}
	c.fill(sh)
}

// fill fills the union of sh's polygons with the current colour (nonzero
// winding: each is turned to wind the same way), on a raster the size of
// their bounds.
func (c *rgbaCanvas) fill(sh *shapes) {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, q := range sh.pts {
		x0, y0, x1, y1 = min(x0, q.x), min(y0, q.y), max(x1, q.x), max(y1, q.y)
	}
	b := c.img.Bounds()
	r := image.Rect(int(math.Floor(max(x0, -1))), int(math.Floor(max(y0, -1))), int(math.Ceil(min(x1, float64(b.Max.X)+1))), int(math.Ceil(min(y1, float64(b.Max.Y)+1)))).Intersect(b)
	if r.Empty() {
		return
	}
	z := &c.z
	z.Reset(r.Dx(), r.Dy())
	z.DrawOp = imagedraw.Src
	ox, oy := float64(r.Min.X), float64(r.Min.Y)
	start := 0
	for _, end := range sh.ends {
		pl := sh.pts[start:end]
		start = end
		if len(pl) < 3 {
			continue
		}
		if signedArea(pl) < 0 {
			z.MoveTo(float32(pl[len(pl)-1].x-ox), float32(pl[len(pl)-1].y-oy))
			for i := len(pl) - 2; i >= 0; i-- {
				z.LineTo(float32(pl[i].x-ox), float32(pl[i].y-oy))
			}
		} else {
			z.MoveTo(float32(pl[0].x-ox), float32(pl[0].y-oy))
			for _, q := range pl[1:] {
				z.LineTo(float32(q.x-ox), float32(q.y-oy))
			}
		}
		z.ClosePath()
	}
	// The coverage, then the colour through it: image/draw skips the
	// pixels a shape does not touch, most of a thin line's bounds.
	n := r.Dx() * r.Dy()
	if cap(c.mask.Pix) < n {
		c.mask.Pix = make([]uint8, n)
	}
	c.mask.Pix, c.mask.Stride, c.mask.Rect = c.mask.Pix[:n], r.Dx(), image.Rect(0, 0, r.Dx(), r.Dy())
	z.Draw(&c.mask, c.mask.Rect, image.Opaque, image.Point{})
	maskOver(c.img, r, c.st.color, &c.mask, image.Point{})
}

// maskOver draws colour clr through mask (from mp) over r of dst, as
// image/draw's DrawMask with a uniform source and the Over operator does,
// to the same bits, faster where most of the mask is empty or full (a
// shape's bounds, a glyph): eight bytes of the mask at a time skip where
// it is empty and, for an opaque colour, set the colour where it is full.
func maskOver(dst *image.RGBA, r image.Rectangle, clr color.Color, mask *image.Alpha, mp image.Point) {
	orig := r.Min
	r = r.Intersect(dst.Rect).Intersect(mask.Rect.Add(orig.Sub(mp)))
	if r.Empty() {
		return
	}
	mp = mp.Add(r.Min.Sub(orig))
	const m = 1<<16 - 1
	sr, sg, sb, sa := clr.RGBA()
	opaque := sa == m
	px := [4]uint8{uint8(sr >> 8), uint8(sg >> 8), uint8(sb >> 8), uint8(sa >> 8)}
	pxw := binary.LittleEndian.Uint32(px[:])
	w := r.Dx()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		mo := mask.PixOffset(mp.X, mp.Y+y-r.Min.Y)
		mrow := mask.Pix[mo : mo+w : mo+w]
		do := dst.PixOffset(r.Min.X, y)
		drow := dst.Pix[do : do+4*w : do+4*w]
		for x := 0; x < w; x++ {
			if x&7 == 0 && x+8 <= w {
				word := binary.LittleEndian.Uint64(mrow[x:])
				if word == 0 {
					x += 7
					continue
				}
				if word == ^uint64(0) && opaque {
					d := drow[4*x : 4*x+32 : 4*x+32]
					for k := 0; k < 32; k += 4 {
						binary.LittleEndian.PutUint32(d[k:], pxw)
					}
					x += 7
					continue
				}
			}
			ma := uint32(mrow[x])
			switch {
			case ma == 0:
			case ma == 0xff && opaque:
				binary.LittleEndian.PutUint32(drow[4*x:], pxw)
			default:
				// As image/draw's drawGlyphOver, to the bit.
				ma |= ma << 8
				a := (m - (sa * ma / m)) * 0x101
				d := drow[4*x : 4*x+4 : 4*x+4]
				d[0] = uint8((uint32(d[0])*a + sr*ma) / m >> 8)
				d[1] = uint8((uint32(d[1])*a + sg*ma) / m >> 8)
				d[2] = uint8((uint32(d[2])*a + sb*ma) / m >> 8)
				d[3] = uint8((uint32(d[3])*a + sa*ma) / m >> 8)
			}
		}
	}
}

// signedArea is twice the signed area of a polygon.
func signedArea(pl []point) float64 {
	var s float64
	for i, p := range pl {
		q := pl[(i+1)%len(pl)]
		s += p.x*q.y - q.x*p.y
	}
	return s
}

// faceKey names a font face at a size.
type faceKey struct {
	font *opentype.Font
	size vg.Length
}

// glyphKey names a glyph of a font at a size drawn at a sub-pixel
// position.
type glyphKey struct {
	face   faceKey
	r      rune
	fx, fy fixed.Int26_6 // the position's fraction of a pixel
}

// glyphs keeps the glyphs rasterised for every picture (a glyph is the
// same whichever face of its font and size rasterised it), up to
// maxGlyphs of them; past that, a canvas keeps its own. Pictures are drawn
// at once on several goroutines.
var glyphs struct {
	sync.Mutex
	m map[glyphKey]*glyph
}

// maxGlyphs bounds the glyphs kept for every picture: tens of thousands
// of glyphs of a hundred or so bytes each.
const maxGlyphs = 1 << 16

// glyph is a rasterised glyph: its mask, where the mask goes relative to
// the whole pixel of the position, and the advance.
type glyph struct {
	ok      bool
	dr      image.Rectangle
	mask    *image.Alpha
	advance fixed.Int26_6
}

// FillString draws text as vgimg's canvas does (gg's DrawString), glyph
// by glyph, when the canvas is upright; otherwise through vgimg.
func (c *rgbaCanvas) FillString(f plotfont.Face, pt vg.Point, str string) {
	if f.Font.Size == 0 {
		return
	}
	// vgimg inverts y once more for text: the glyphs go on the image
	// through the context's transform and that inversion.
	a, b, cc, d, e, ff := c.transform()
	h := float64(c.img.Bounds().Dy()) // gg's InvertY
	// The transform composed with InvertY: x' = a·x − b·y + (b·h + e), ...
	ia, ib, ic, id, ie, iff := a, -b, cc, -d, b*h+e, d*h+ff
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	if !near(ia, 1) || !near(ib, 0) || !near(ic, 0) || !near(id, 1) || !near(ie, 0) || !near(iff, 0) {
		c.Canvas.FillString(f, pt, str)
		return
	}
	key := faceKey{f.Face, f.Font.Size}
	face, ok := c.faces[key]
	if !ok {
		face = f.FontFace(dpi)
		c.faces[key] = face
	}
	_, ch := c.Canvas.Size()
	x := pt.X.Dots(dpi)
	y := ch.Dots(dpi) - pt.Y.Dots(dpi)
	dot := fixed.Point26_6{X: fixed.Int26_6(math.Round(x * 64)), Y: fixed.Int26_6(math.Round(y * 64))}
	prev := rune(-1)
	for _, r := range str {
		if prev >= 0 {
			dot.X += face.Kern(prev, r)
		}
		g := c.glyph(key, face, r, dot)
		if g.ok {
			whole := image.Point{X: dot.X.Floor(), Y: dot.Y.Floor()}
			dr := g.dr.Add(whole)
			maskOver(c.img, dr, c.st.color, g.mask, image.Point{})
			dot.X += g.advance
			prev = r
		}
	}
}

// glyph returns r of face (named fk) rasterised at dot's fraction of a
// pixel.
func (c *rgbaCanvas) glyph(fk faceKey, face font.Face, r rune, dot fixed.Point26_6) *glyph {
	k := glyphKey{fk, r, dot.X & 63, dot.Y & 63}
	if g, ok := c.glyphs[k]; ok {
		return g
	}
	glyphs.Lock()
	g, ok := glyphs.m[k]
	glyphs.Unlock()
	if ok {
		c.glyphs[k] = g
		return g
	}
	g = &glyph{}
	at := fixed.Point26_6{X: k.fx, Y: k.fy}
	dr, mask, maskp, advance, ok := face.Glyph(at, r)
	if ok {
		m := image.NewAlpha(image.Rect(0, 0, dr.Dx(), dr.Dy()))
		imagedraw.Draw(m, m.Rect, mask, maskp, imagedraw.Src)
		g.ok, g.dr, g.mask, g.advance = true, dr, m, advance
	}
	c.glyphs[k] = g
	glyphs.Lock()
	if glyphs.m == nil {
		glyphs.m = map[glyphKey]*glyph{}
	}
	if len(glyphs.m) < maxGlyphs {
		glyphs.m[k] = g
	}
	glyphs.Unlock()
	return g
}

// rgbaCanvasOf is the rgbaCanvas under c, or nil.
func rgbaCanvasOf(c vg.Canvas) *rgbaCanvas {
	for {
		switch x := c.(type) {
		case *rgbaCanvas:
			return x
		case draw.Canvas:
			c = x.Canvas
		case *draw.Canvas:
			c = x.Canvas
		default:
			return nil
		}
	}
}

// stampSteps is the fraction of a pixel to which a stamped glyph's
// position is rounded: an eighth of a pixel at most, which no one sees.
const stampSteps = 4

// stampKey names a glyph's coverage at a fraction of a pixel.
type stampKey struct {
	shape  draw.GlyphDrawer
	radius vg.Length
	fx, fy int // in stampSteps
}

// stampSize is the side in pixels of the square a glyph of radius r is
// drawn in, centred.
func stampSize(r vg.Length) int { return 2*int(math.Ceil(float64(r/px(1)))) + 8 }

// stampGlyph draws a glyph as DrawGlyph does, from its coverage drawn
// once for the picture at each of a few positions within a pixel: a
// scatter draws thousands of the same glyph. It reports false when the
// canvas is not upright (the caller draws the glyph itself).
func (c *rgbaCanvas) stampGlyph(sty draw.GlyphStyle, pt vg.Point) bool {
	if sty.Shape == nil {
		return true // DrawGlyph draws nothing
	}
	a, b, cc, d, e, f := c.transform()
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	if !near(a, 1) || !near(b, 0) || !near(cc, 0) || !near(d, -1) {
		return false
	}
	x, y := pt.X.Dots(dpi)+e, -pt.Y.Dots(dpi)+f
	xi, yi := math.Floor(x), math.Floor(y)
	fx, fy := int(math.Round((x-xi)*stampSteps)), int(math.Round((y-yi)*stampSteps))
	k := stampKey{sty.Shape, sty.Radius, fx, fy}
	m, ok := c.stamps[k]
	if !ok {
		m = drawStamp(sty, float64(fx)/stampSteps, float64(fy)/stampSteps)
		c.stamps[k] = m
	}
	s := m.Rect.Dx()
	at := image.Pt(int(xi)-s/2, int(yi)-s/2)
	maskOver(c.img, m.Rect.Add(at), sty.Color, m, image.Point{})
	return true
}

// drawStamp returns the coverage of a glyph centred (fx, fy) pixels past
// the centre of its square, drawn black on white on an rgbaCanvas.
func drawStamp(sty draw.GlyphStyle, fx, fy float64) *image.Alpha {
	s := stampSize(sty.Radius)
	img := image.NewRGBA(image.Rect(0, 0, s, s))
	sty.Color = color.Black
	centre := vg.Point{X: px(float64(s/2) + fx), Y: px(float64(s) - float64(s/2) - fy)}
	dc := draw.New(newRGBACanvas(img))
	dc.DrawGlyph(sty, centre)
	m := image.NewAlpha(img.Rect)
	for i := range m.Pix {
		m.Pix[i] = 255 - img.Pix[4*i]
	}
	return m
}
