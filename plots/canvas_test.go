package plots

import (
	"bytes"
	"image"
	"image/color"
	imagedraw "image/draw"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// drawShapes draws what tsim's pictures draw most on c: a long zigzag, a
// dashed line, a closed outline, dots, upright and rotated text.
func drawShapes(c vg.CanvasSizer) {
	dc := draw.New(c)
	var zig []vg.Point
	for i := range 400 {
		zig = append(zig, vg.Point{X: px(20 + float64(i)), Y: px(150 + 40*math.Sin(float64(i)/3) + float64(i%7))})
	}
	dc.StrokeLines(draw.LineStyle{Color: palette[0], Width: px(3)}, zig)
	dc.StrokeLine2(draw.LineStyle{Color: palette[5], Width: px(1.4), Dashes: dashes(5, 3)}, px(20), px(60), px(420), px(90))
	dc.StrokeLines(draw.LineStyle{Color: color.Black, Width: px(1)}, []vg.Point{{X: px(30), Y: px(20)}, {X: px(200), Y: px(20)}, {X: px(200), Y: px(50)}, {X: px(30), Y: px(50)}, {X: px(30), Y: px(20)}})
	for i := range 50 {
		dc.DrawGlyph(draw.GlyphStyle{Color: color.NRGBA{0, 0x72, 0xb2, 0xa0}, Radius: px(2), Shape: draw.CircleGlyph{}}, vg.Point{X: px(230 + 3.3*float64(i)), Y: px(35)})
	}
	sty := draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 12), Handler: plot.DefaultTextHandler}
	dc.FillText(sty, vg.Point{X: px(20), Y: px(230)}, "Requests Executing 0123456789")
	sty.Rotation = math.Pi / 2
	dc.FillText(sty, vg.Point{X: px(440), Y: px(120)}, "count")
}

// The fast canvas draws what vgimg's draws: every shape is there, as heavy
// (ink within 3%), and pixels differ only at anti-aliased edges.
func TestRGBACanvasDrawsAsVgimg(t *testing.T) {
	const w, h = 460, 250
	fast := image.NewRGBA(image.Rect(0, 0, w, h))
	drawShapes(newRGBACanvas(fast))
	ref := vgimg.NewWith(vgimg.UseWH(px(w), px(h)), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
	drawShapes(ref)
	slow := ref.Image().(*image.RGBA)
	ink := func(m *image.RGBA) (sum float64) {
		for i := 0; i < len(m.Pix); i += 4 {
			sum += float64(3*255-int(m.Pix[i])-int(m.Pix[i+1])-int(m.Pix[i+2])) / (3 * 255)
		}
		return sum
	}
	a, b := ink(fast), ink(slow)
	if math.Abs(a-b) > 0.03*b {
		t.Errorf("ink %.0f, vgimg's %.0f: more than 3%% apart", a, b)
	}
	var far, diff int
	for i := 0; i < len(fast.Pix); i += 4 {
		d := 0
		for k := range 3 {
			d = max(d, int(math.Abs(float64(fast.Pix[i+k])-float64(slow.Pix[i+k]))))
		}
		if d > 0 {
			diff++
		}
		if d > 128 {
			far++
		}
	}
	t.Logf("ink %.0f vs %.0f; %d pixels differ, %d by more than half", a, b, diff, far)
	if far > w*h/500 {
		t.Errorf("%d pixels differ by more than half from vgimg's (of %d)", far, w*h)
	}
}

// A stamped glyph is the glyph DrawGlyph draws, moved at most an eighth of
// a pixel: the same ink, and no pixel far off.
func TestStampGlyphDrawsTheGlyph(t *testing.T) {
	const w, h = 300, 80
	direct, stamped := image.NewRGBA(image.Rect(0, 0, w, h)), image.NewRGBA(image.Rect(0, 0, w, h))
	a, b := draw.New(newRGBACanvas(direct)), draw.New(newRGBACanvas(stamped))
	rc := rgbaCanvasOf(b)
	styles := []draw.GlyphStyle{
		{Color: color.NRGBA{0, 0x72, 0xb2, 0xa0}, Radius: px(2), Shape: draw.CircleGlyph{}},
		{Color: red, Radius: px(4), Shape: draw.CrossGlyph{}},
	}
	for i := range 120 {
		sty := styles[i%2]
		pt := vg.Point{X: px(10 + 2.37*float64(i)), Y: px(20 + 40*float64(i%2) + 0.31*float64(i%7))}
		a.DrawGlyph(sty, pt)
		if !rc.stampGlyph(sty, pt) {
			t.Fatal("stampGlyph declined an upright canvas")
		}
	}
	var inkA, inkB float64
	far := 0
	for i := 0; i < len(direct.Pix); i += 4 {
		inkA += float64(3*255 - int(direct.Pix[i]) - int(direct.Pix[i+1]) - int(direct.Pix[i+2]))
		inkB += float64(3*255 - int(stamped.Pix[i]) - int(stamped.Pix[i+1]) - int(stamped.Pix[i+2]))
		for k := range 3 {
			if math.Abs(float64(direct.Pix[i+k])-float64(stamped.Pix[i+k])) > 128 {
				far++
				break
			}
		}
	}
	if math.Abs(inkA-inkB) > 0.03*inkA || far > 0 {
		t.Errorf("stamped ink %.0f, drawn %.0f; %d pixels far off", inkB, inkA, far)
	}
}

// maskOver sets the bits image/draw's DrawMask (uniform colour, Over)
// sets: masks empty, full and in between, in runs longer and shorter than
// a word, colours opaque and translucent, clipped at every edge.
func TestMaskOverIsDrawMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const w, h = 61, 47
	for round := range 300 {
		base := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range base.Pix {
			base.Pix[i] = uint8(rng.IntN(256))
		}
		for i := 3; i < len(base.Pix); i += 4 {
			if round%2 == 0 {
				base.Pix[i] = 0xff
			}
			for k := 1; k <= 3; k++ { // premultiplied: no channel above alpha
				base.Pix[i-k] = min(base.Pix[i-k], base.Pix[i])
			}
		}
		mask := image.NewAlpha(image.Rect(0, 0, 5+rng.IntN(40), 5+rng.IntN(30)))
		for i := 0; i < len(mask.Pix); {
			v := [...]uint8{0, 0xff, uint8(rng.IntN(256))}[rng.IntN(3)]
			for n := rng.IntN(20); n > 0 && i < len(mask.Pix); n-- {
				mask.Pix[i] = v
				i++
			}
		}
		var clr color.Color = color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 0xff}
		if round%3 == 0 {
			clr = color.NRGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256))}
		}
		at := image.Pt(rng.IntN(w+20)-20, rng.IntN(h+20)-20)
		r := mask.Rect.Add(at)
		mp := image.Point{}
		if round%5 == 0 { // a part of the mask
			mp = image.Pt(rng.IntN(4), rng.IntN(4))
		}
		want := image.NewRGBA(base.Rect)
		copy(want.Pix, base.Pix)
		imagedraw.DrawMask(want, r, image.NewUniform(clr), image.Point{}, mask, mp, imagedraw.Over)
		got := image.NewRGBA(base.Rect)
		copy(got.Pix, base.Pix)
		maskOver(got, r, clr, mask, mp)
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Fatalf("round %d: colour %v, mask %v at %v from %v: pixels differ from DrawMask's", round, clr, mask.Rect, at, mp)
		}
	}
}

// textHandler's boxes, kept or not, are plot.DefaultTextHandler's.
func TestTextBoxesKept(t *testing.T) {
	for _, size := range []vg.Length{9, 12} {
		fnt := font.From(plot.DefaultFont, size)
		for _, txt := range []string{"", "0", "Requests Executing", "1.5k", "Requests Executing"} {
			for range 2 { // measured, then kept
				w, h, d := textHandler.Box(txt, fnt)
				w0, h0, d0 := plot.DefaultTextHandler.Box(txt, fnt)
				if w != w0 || h != h0 || d != d0 {
					t.Fatalf("%q at %v: box %v %v %v, want %v %v %v", txt, size, w, h, d, w0, h0, d0)
				}
			}
		}
	}
}
