package plots

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"
)

// encodePNG writes a PNG that decodes to the image it was given: noisy or
// plain, tiny or wider than DEFLATE's window reaches, opaque or not.
func TestEncodePNGRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	white := func(w, h int) *image.RGBA {
		m := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range m.Pix {
			m.Pix[i] = 0xff
		}
		return m
	}
	speckle := func(m *image.RGBA, n int, alpha bool) *image.RGBA {
		b := m.Bounds()
		for range n {
			c := color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 0xff}
			if alpha {
				c = color.RGBA{c.R / 2, c.G / 2, c.B / 2, 0x80}
			}
			m.SetRGBA(rng.IntN(b.Dx()), rng.IntN(b.Dy()), c)
		}
		return m
	}
	lines := func(m *image.RGBA) *image.RGBA {
		b := m.Bounds()
		for x := range b.Dx() {
			y := (x * 7 / 3) % b.Dy()
			for k := range 3 {
				m.SetRGBA(x, (y+k)%b.Dy(), color.RGBA{0, 0x72, 0xb2, 0xff})
			}
		}
		return m
	}
	noise := image.NewRGBA(image.Rect(0, 0, 200, 150))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(rng.IntN(256))
		if i%4 == 3 {
			noise.Pix[i] = 0xff
		}
	}
	for _, tc := range []struct {
		name  string
		m     *image.RGBA
		alpha bool
	}{
		{"speckled", speckle(white(301, 97), 5000, false), false},
		{"translucent", speckle(white(301, 97), 5000, true), true},
		{"white", white(640, 480), false},
		{"one pixel", white(1, 1), false},
		{"one row", lines(white(500, 1)), false},
		{"lines", lines(white(1200, 800)), false},
		{"noise", noise, false},
		{"wider than the window", lines(speckle(white(11_000, 40), 300, false)), false},
	} {
		var buf bytes.Buffer
		if err := encodePNG(&buf, tc.m); err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(&buf)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		// A translucent pixel goes through image/png, whose round trip
		// rounds: compare with its.
		var want image.Image = tc.m
		if tc.alpha {
			var ref bytes.Buffer
			png.Encode(&ref, tc.m)
			want, _ = png.Decode(&ref)
		}
		b := tc.m.Bounds()
		if got.Bounds() != b {
			t.Fatalf("%s: bounds %v, want %v", tc.name, got.Bounds(), b)
		}
		for y := range b.Dy() {
			for x := range b.Dx() {
				r0, g0, b0, a0 := want.At(x, y).RGBA()
				r1, g1, b1, a1 := got.At(x, y).RGBA()
				if r0 != r1 || g0 != g1 || b0 != b1 || a0 != a1 {
					t.Fatalf("%s: pixel (%d, %d) = %v, want %v", tc.name, x, y, got.At(x, y), want.At(x, y))
				}
			}
		}
	}
}

// huffmanLengths keeps to its limit and gives a complete code (Kraft sum
// one) for skewed and degenerate frequencies alike.
func TestHuffmanLengths(t *testing.T) {
	fib := make([]int, 40)
	fib[0], fib[1] = 1, 1
	for i := 2; i < len(fib); i++ {
		fib[i] = fib[i-1] + fib[i-2]
	}
	for _, freq := range [][]int{fib, {5}, {0, 0, 7, 0}, {1, 1}, {3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}} {
		for _, limit := range []int{7, 15} {
			f := append(freq, make([]int, max(0, 2-len(freq)))...)
			lens := huffmanLengths(f, limit)
			var kraft float64
			for s, l := range lens {
				if int(l) > limit {
					t.Fatalf("%v, limit %d: length %d", freq, limit, l)
				}
				if f[s] > 0 && l == 0 {
					t.Fatalf("%v: symbol %d has no code", freq, s)
				}
				if l > 0 {
					kraft += 1 / float64(uint(1)<<l)
				}
			}
			if kraft != 1 {
				t.Errorf("%v, limit %d: lengths %v, Kraft sum %v", freq, limit, lens, kraft)
			}
		}
	}
}
