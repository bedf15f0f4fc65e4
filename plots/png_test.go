package plots

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/adler32"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"runtime"
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
	// Runs of a noisy row repeated, across strips' edges.
	repeated := func(w, h int) *image.RGBA {
		m := white(w, h)
		for y := 0; y < h; {
			row := m.Pix[y*m.Stride : (y+1)*m.Stride]
			for x := range w {
				if rng.IntN(3) == 0 {
					row[4*x], row[4*x+1], row[4*x+2] = uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256))
				}
			}
			n := 1 + rng.IntN(9)
			for k := 1; k < n && y+k < h; k++ {
				copy(m.Pix[(y+k)*m.Stride:], row)
			}
			y += n
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
		// Strips of stripRows rows: one row short of, exactly and one row
		// past a whole number of strips, and a strip of one row.
		{"a row short of two strips", lines(speckle(white(600, 2*stripRows(1+3*600)-1), 2000, false)), false},
		{"two strips", lines(speckle(white(600, 2*stripRows(1+3*600)), 2000, false)), false},
		{"a row past two strips", lines(speckle(white(600, 2*stripRows(1+3*600)+1), 2000, false)), false},
		{"strips of one row", lines(speckle(white(stripBytes/3+1, 5), 500, false)), false},
		{"translucent in the last strip", translucentAt(lines(white(400, 3*stripRows(1+3*400))), 399, 3*stripRows(1+3*400)-1), true},
		{"repeated rows", repeated(700, 3*stripRows(1+3*700)+5), false},
		{"repeated rows wider than the window", repeated(11_000, 30), false},
		{"repeated rows of one strip each", repeated(stripBytes/3+1, 9), false},
		{"not at the origin", lines(speckle(white(300, 900), 500, false)).SubImage(image.Rect(7, 3, 290, 880)).(*image.RGBA), false},
	} {
		var buf bytes.Buffer
		if err := encodePNG(&buf, tc.m); err != nil {
			t.Fatal(err)
		}
		if !tc.alpha {
			checkZlib(t, tc.name, buf.Bytes(), tc.m.Bounds().Dy()*(1+3*tc.m.Bounds().Dx()))
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
		if got.Bounds().Size() != b.Size() {
			t.Fatalf("%s: bounds %v, want %v", tc.name, got.Bounds(), b)
		}
		gb := got.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				r0, g0, b0, a0 := want.At(x, y).RGBA()
				gx, gy := x-b.Min.X+gb.Min.X, y-b.Min.Y+gb.Min.Y
				r1, g1, b1, a1 := got.At(gx, gy).RGBA()
				if r0 != r1 || g0 != g1 || b0 != b1 || a0 != a1 {
					t.Fatalf("%s: pixel (%d, %d) = %v, want %v", tc.name, x, y, got.At(gx, gy), want.At(x, y))
				}
			}
		}
	}
}

// checkZlib reads the zlib stream of a PNG's IDAT chunks to its end
// (which checks its Adler-32, as image/png need not) and wants n bytes.
func checkZlib(t *testing.T, name string, file []byte, n int) {
	t.Helper()
	var idat []byte
	for p := file[8:]; len(p) >= 12; {
		l := int(binary.BigEndian.Uint32(p))
		if string(p[4:8]) == "IDAT" {
			idat = append(idat, p[8:8+l]...)
		}
		p = p[12+l:]
	}
	r, err := zlib.NewReader(bytes.NewReader(idat))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: the zlib stream: %v", name, err)
	}
	if len(data) != n {
		t.Fatalf("%s: the zlib stream holds %d bytes, want %d", name, len(data), n)
	}
}

// translucentAt makes m's pixel (x, y) half transparent.
func translucentAt(m *image.RGBA, x, y int) *image.RGBA {
	m.SetRGBA(x, y, color.RGBA{0x40, 0x40, 0x40, 0x80})
	return m
}

// encodePNG writes the same bytes however many goroutines compress the
// strips.
func TestEncodePNGDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := image.NewRGBA(image.Rect(0, 0, 900, 5*stripRows(1+3*900)+3))
	for i := range m.Pix {
		m.Pix[i] = 0xff
	}
	for range 20_000 {
		m.SetRGBA(rng.IntN(900), rng.IntN(m.Rect.Dy()), color.RGBA{uint8(rng.IntN(256)), 0x72, 0xb2, 0xff})
	}
	var want []byte
	for _, procs := range []int{1, 2, 3, 8} {
		old := runtime.GOMAXPROCS(procs)
		var buf bytes.Buffer
		err := encodePNG(&buf, m)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		if want == nil {
			want = buf.Bytes()
		} else if !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("GOMAXPROCS %d: %d bytes differ from GOMAXPROCS 1's %d", procs, buf.Len(), len(want))
		}
	}
}

// adler32Combine of the sums of two pieces is the sum of the whole, for
// pieces empty, short and longer than the modulus.
func TestAdler32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	data := make([]byte, 300_000)
	for i := range data {
		data[i] = uint8(rng.IntN(256))
		if i > 100_000 {
			data[i] = 0xff // sums that wrap often
		}
	}
	for _, cut := range []int{0, 1, 65520, 65521, 65522, 150_000, len(data)} {
		a, b := adler32.Checksum(data[:cut]), adler32.Checksum(data[cut:])
		if got, want := adler32Combine(a, b, len(data)-cut), adler32.Checksum(data); got != want {
			t.Errorf("cut at %d: %08x, want %08x", cut, got, want)
		}
	}
}
