package plots

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"
)

// encodePNG writes a PNG that decodes to the image it was given, opaque
// or not.
func TestEncodePNGRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, alpha := range []bool{false, true} {
		m := image.NewRGBA(image.Rect(0, 0, 301, 97))
		for i := range m.Pix {
			m.Pix[i] = 0xff
		}
		for range 5000 {
			c := color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 0xff}
			if alpha {
				c = color.RGBA{c.R / 2, c.G / 2, c.B / 2, 0x80}
			}
			m.SetRGBA(rng.IntN(301), rng.IntN(97), c)
		}
		var buf bytes.Buffer
		if err := encodePNG(&buf, m); err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("alpha %v: %v", alpha, err)
		}
		// A translucent pixel goes through image/png, whose round trip
		// rounds: compare with its.
		var want image.Image = m
		if alpha {
			var ref bytes.Buffer
			png.Encode(&ref, m)
			want, _ = png.Decode(&ref)
		}
		for y := range 97 {
			for x := range 301 {
				r0, g0, b0, a0 := want.At(x, y).RGBA()
				r1, g1, b1, a1 := got.At(x, y).RGBA()
				if r0 != r1 || g0 != g1 || b0 != b1 || a0 != a1 {
					t.Fatalf("alpha %v: pixel (%d, %d) = %v, want %v", alpha, x, y, got.At(x, y), want.At(x, y))
				}
			}
		}
	}
}
