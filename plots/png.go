package plots

import (
	"bytes"
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
)

// encodePNG writes m as a PNG. A picture is opaque (drawn on white), so it
// is written as 8-bit RGB with no row filter, its rows compressed by
// klauspost/compress's DEFLATE at its fastest level: image/png would try
// all five filters on every row and keep the best, and compress/flate
// match at every position, together several times slower for files of
// about the same size on plots, whose rows are runs of one colour and
// copies of the row above that the fastest level finds unfiltered.
//
// The rows are cut into strips of a number of rows that depends only on
// the width, compressed at once on up to GOMAXPROCS goroutines and
// written in order, as pigz does: each strip is DEFLATE blocks ending on a
// byte boundary (a sync flush; the last strip's end the stream), started
// with the row above it as the dictionary so that its first row may copy
// it, and the strips' Adler-32 sums are combined. The bytes are the same
// however many goroutines run. Whether every pixel is opaque is seen as
// the rows are turned to RGB; an image with a pixel that is not goes to
// image/png.
func encodePNG(w io.Writer, m *image.RGBA) error {
	b := m.Bounds()
	if b.Empty() {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, m)
	}
	width, height := b.Dx(), b.Dy()
	stride := 1 + 3*width
	rows := stripRows(stride)
	strips := make([]pngStrip, (height+rows-1)/rows)
	var next atomic.Int64
	var translucent atomic.Bool
	var failed error
	var once sync.Once
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(strips)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			room, _ := stripRooms.Get().(*stripRoom)
			if room == nil {
				room = &stripRoom{}
			}
			defer stripRooms.Put(room)
			for !translucent.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(strips) {
					return
				}
				y0, y1 := i*rows, min(height, (i+1)*rows)
				ok, err := compressStrip(room, m, y0, y1, i == len(strips)-1, &strips[i])
				if err != nil {
					once.Do(func() { failed = err })
					translucent.Store(true) // stop the others
					return
				}
				if !ok {
					translucent.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	if failed != nil {
		return failed
	}
	if translucent.Load() {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, m)
	}

	if g, ok := w.(interface{ Grow(int) }); ok { // a bytes.Buffer: one allocation
		n := 8 + 12 + 13 + 12 + 2 + 12 + 4 + 12
		for _, s := range strips {
			n += 12 + len(s.data)
		}
		g.Grow(n)
	}
	e := &pngWriter{w: w}
	e.write([]byte("\x89PNG\r\n\x1a\n"))
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8] = 8 // bits per sample
	ihdr[9] = 2 // colour type: RGB
	// compression, filter and interlace methods 0
	e.chunk("IHDR", ihdr[:])
	e.chunk("IDAT", []byte{0x78, 0x01}) // zlib: deflate, 32 KB window, no dictionary
	sum := uint32(1)                    // the Adler-32 of nothing
	for _, s := range strips {
		e.chunk("IDAT", s.data)
		sum = adler32Combine(sum, s.sum, s.n)
	}
	e.chunk("IDAT", binary.BigEndian.AppendUint32(nil, sum))
	e.chunk("IEND", nil)
	return e.err
}

// stripBytes is about how many bytes of rows a strip holds: enough that
// the blocks a strip ends early cost nothing to speak of, few enough that
// a picture has strips for every core.
const stripBytes = 1 << 18

// stripRows is how many rows of stride bytes a strip holds.
func stripRows(stride int) int { return max(1, stripBytes/stride) }

// pngStrip is a strip of rows compressed: DEFLATE blocks ending on a byte
// boundary, and the Adler-32 of the n bytes of the rows.
type pngStrip struct {
	data []byte
	sum  uint32
	n    int
}

// stripRoom is what a strip's compressor reuses from strip to strip and
// picture to picture: the rows in RGB, the compressor and what it writes.
type stripRoom struct {
	rows []byte
	z    *flate.Writer
	out  bytes.Buffer
}

// stripRooms keeps stripRooms for the next picture.
var stripRooms sync.Pool

// compressStrip compresses rows y0 to y1 of m (relative to its bounds)
// into s, the last strip of the stream if final; false if a pixel is not
// opaque.
func compressStrip(room *stripRoom, m *image.RGBA, y0, y1 int, final bool, s *pngStrip) (bool, error) {
	width := m.Rect.Dx()
	stride := 1 + 3*width
	// The rows in RGB, after the row above the strip (the dictionary) or
	// none.
	above := min(y0, 1)
	n := (y1 - y0 + above) * stride
	if cap(room.rows) < n {
		room.rows = make([]byte, n)
	}
	rows := room.rows[:n]
	for y := y0 - above; y < y1; y++ {
		off := m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y+y)
		at := (y - y0 + above) * stride
		rows[at] = 0 // filter None
		if !rgbRow(rows[at+1:at+stride], m.Pix[off:off+4*width]) {
			return false, nil
		}
	}
	dict, data := rows[:above*stride], rows[above*stride:]
	room.out.Reset()
	if room.z == nil {
		z, err := flate.NewWriter(&room.out, flate.BestSpeed)
		if err != nil {
			return false, err
		}
		room.z = z
	}
	room.z.ResetDict(&room.out, dict)
	if _, err := room.z.Write(data); err != nil {
		return false, err
	}
	end := room.z.Flush // a sync flush: ends on a byte boundary
	if final {
		end = room.z.Close
	}
	if err := end(); err != nil {
		return false, err
	}
	s.data = bytes.Clone(room.out.Bytes())
	s.sum, s.n = adler32.Checksum(data), len(data)
	return true, nil
}

// rgbRow writes the RGB of the RGBA pixels p to dst (3 bytes for each 4 of
// p), four pixels at a time; false if a pixel is not opaque.
func rgbRow(dst, p []byte) bool {
	const (
		alpha2 = 0xff000000_ff000000
		low3   = 0x00000000_00ffffff
		high3  = 0x0000ffff_ff000000
	)
	all := uint64(alpha2)
	for len(p) >= 16 && len(dst) >= 12 {
		in, out := (*[16]byte)(p), (*[12]byte)(dst)
		p0 := binary.LittleEndian.Uint64(in[:8])
		p1 := binary.LittleEndian.Uint64(in[8:])
		all &= p0 & p1
		q0 := p0&low3 | p0>>8&high3 // six bytes: r g b r g b
		q1 := p1&low3 | p1>>8&high3
		binary.LittleEndian.PutUint64(out[:8], q0|q1<<48)
		binary.LittleEndian.PutUint32(out[8:], uint32(q1>>16))
		p, dst = p[16:], dst[12:]
	}
	opaque := all&alpha2 == alpha2
	for x, j := 0, 0; x < len(p); x, j = x+4, j+3 {
		dst[j], dst[j+1], dst[j+2] = p[x], p[x+1], p[x+2]
		opaque = opaque && p[x+3] == 0xff
	}
	return opaque
}

// adlerMod is Adler-32's modulus.
const adlerMod = 65521

// adler32Combine is the Adler-32 of the bytes of sum a followed by n bytes
// of sum b (as zlib's adler32_combine).
func adler32Combine(a, b uint32, n int) uint32 {
	const mod = adlerMod
	rem := uint64(n % mod)
	a1, a2 := uint64(a&0xffff), uint64(a>>16)
	b1, b2 := uint64(b&0xffff), uint64(b>>16)
	s1 := (a1 + b1 + mod - 1) % mod
	s2 := (rem*a1 + a2 + b2 + mod - rem) % mod
	return uint32(s2<<16 | s1)
}

// pngWriter writes PNG chunks and keeps the first error.
type pngWriter struct {
	w   io.Writer
	err error
}

func (e *pngWriter) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

// chunk writes a chunk: its length, type, data and the CRC of type and
// data.
func (e *pngWriter) chunk(typ string, data []byte) {
	var head [8]byte
	binary.BigEndian.PutUint32(head[:4], uint32(len(data)))
	copy(head[4:], typ)
	crc := crc32.Update(crc32.ChecksumIEEE(head[4:]), crc32.IEEETable, data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc)
	e.write(head[:])
	e.write(data)
	e.write(tail[:])
}
