package plots

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// encodePNG writes m as a PNG. A picture is opaque (drawn on white), so it
// is written as 8-bit RGB with no row filter, compressed by rowDeflate:
// image/png would try all five filters on every row and keep the best, and
// compress/flate hash every position (together a third of the time of
// drawing a picture). A plot's rows are mostly runs of one colour and
// copies of the row above, which rowDeflate finds unfiltered.
//
// The rows are cut into strips of a number of rows that depends only on
// the width, compressed at once on up to GOMAXPROCS goroutines, and
// written in order: the bytes are the same however many run. Whether
// every pixel is opaque is seen as the rows are turned to RGB; an image
// with a pixel that is not goes to image/png.
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
			z := newRowDeflate(stride)
			z.tokens, z.out = room.tokens[:0], room.out[:0]
			defer func() { room.tokens, room.out = z.tokens[:0], z.out[:0] }()
			for !translucent.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(strips) {
					return
				}
				y0, y1 := i*rows, min(height, (i+1)*rows)
				if !compressStrip(z, room, m, y0, y1, i == len(strips)-1, &strips[i]) {
					translucent.Store(true)
				}
			}
		}()
	}
	wg.Wait()
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
// picture to picture: the rows in RGB and which are the row above again,
// a block's tokens and what is being written.
type stripRoom struct {
	rows   []byte
	same   []bool
	tokens []uint32
	out    []byte
}

// stripRooms keeps stripRooms for the next picture.
var stripRooms sync.Pool

// compressStrip compresses rows y0 to y1 of m (relative to its bounds)
// into s, the last strip of the stream if final; false if a pixel is not
// opaque.
//
// A row that is the row above again (a fifth to a third of a plot's:
// margins, gaps between panels, the flat stretches of lines) is not
// turned to RGB again but copied, its sum is added from the row above's,
// and it is one copy of the row above, a match of 258 bytes at a time.
func compressStrip(z *rowDeflate, room *stripRoom, m *image.RGBA, y0, y1 int, final bool, s *pngStrip) bool {
	stride := z.stride
	// The rows in RGB one after the other, after the row above the strip
	// (the last of the strip before, which its first may copy from; its
	// sum is that strip's) or none.
	above := min(y0, 1)
	n := y1 - y0 + above
	if cap(room.rows) < n*stride {
		room.rows = make([]byte, n*stride)
	}
	if cap(room.same) < n {
		room.same = make([]bool, n)
	}
	rows, same := room.rows[:n*stride], room.same[:n]
	sum := newAdler()
	var rowSum, rowWeighted uint64 // the last row turned to RGB's share of s1 and s2
	width := 4 * m.Rect.Dx()
	for y := y0 - above; y < y1; y++ {
		off := m.PixOffset(m.Rect.Min.X, m.Rect.Min.Y+y)
		at := (y - y0 + above) * stride
		p := m.Pix[off : off+width]
		same[at/stride] = y > y0-above && bytes.Equal(p, m.Pix[off-m.Stride:off-m.Stride+width])
		if same[at/stride] {
			copy(rows[at:at+stride], rows[at-stride:at])
			sum.s2 = (sum.s2 + uint64(stride%adlerMod)*sum.s1 + rowWeighted) % adlerMod
			sum.s1 = (sum.s1 + rowSum) % adlerMod
			continue
		}
		into := &sum
		if y < y0 {
			into = &adler{}
		}
		s1, s2 := into.s1, into.s2
		rows[at] = 0 // filter None
		if !rgbRow(rows[at+1:at+stride], p, into) {
			return false
		}
		rowSum = (into.s1 + adlerMod - s1) % adlerMod
		rowWeighted = (into.s2 + 2*adlerMod - s2 - uint64(stride%adlerMod)*s1%adlerMod) % adlerMod
	}
	z.reset(z.out[:0])
	for y := y0; y < y1; y++ {
		at := (y - y0 + above) * stride
		if same[at/stride] && z.dist[1] == stride {
			z.copyRow()
		} else {
			z.writeRow(rows[max(0, at-stride) : at+stride])
		}
	}
	s.data = bytes.Clone(z.end(final))
	s.sum, s.n = sum.sum32(), (y1-y0)*stride
	return true
}

// rgbRow writes the RGB of the RGBA pixels p to dst (3 bytes for each 4 of
// p), four pixels at a time, and adds a row of a filter byte 0 and them
// to sum; false if a pixel is not opaque.
func rgbRow(dst, p []byte, sum *adler) bool {
	const (
		alpha2 = 0xff000000_ff000000
		low3   = 0x00000000_00ffffff
		high3  = 0x0000ffff_ff000000
		lanes  = 0x00ff00ff_00ff00ff
		ones   = 0x00010001_00010001
		// The weights of the bytes of twelve in s2, 12 for the first to
		// 1 for the last, as 16-bit lanes multiplied into the top lane:
		// of the even bytes of the first eight, the odd, and of the last
		// four (bytes 0 and 2 in the low lanes, 1 and 3 in the high).
		// The products' lanes add up to less than 1<<16: no carries.
		wEven8 = 6 | 8<<16 | 10<<32 | 12<<48
		wOdd8  = 5 | 7<<16 | 9<<32 | 11<<48
		wLast4 = 1 | 3<<16 | 2<<32 | 4<<48
	)
	s1, s2 := sum.s1, sum.s2
	s2 += s1 // the filter byte
	all := uint64(alpha2)
	for len(p) >= 16 && len(dst) >= 12 {
		in, out := (*[16]byte)(p), (*[12]byte)(dst)
		p0 := binary.LittleEndian.Uint64(in[:8])
		p1 := binary.LittleEndian.Uint64(in[8:])
		all &= p0 & p1
		q0 := p0&low3 | p0>>8&high3 // six bytes: r g b r g b
		q1 := p1&low3 | p1>>8&high3
		a, b := q0|q1<<48, q1>>16 // eight bytes, then four
		binary.LittleEndian.PutUint64(out[:8], a)
		binary.LittleEndian.PutUint32(out[8:], uint32(b))
		ae, ao := a&lanes, a>>8&lanes
		bl := b&0x00ff00ff | (b>>8&0x00ff00ff)<<32
		s2 += 12*s1 + (ae*wEven8+ao*wOdd8+bl*wLast4)>>48
		s1 += ((ae + ao + bl) * ones) >> 48
		p, dst = p[16:], dst[12:]
	}
	opaque := all&alpha2 == alpha2
	for x, j := 0, 0; x < len(p); x, j = x+4, j+3 {
		dst[j], dst[j+1], dst[j+2] = p[x], p[x+1], p[x+2]
		opaque = opaque && p[x+3] == 0xff
		for _, c := range dst[j : j+3] {
			s1 += uint64(c)
			s2 += s1
		}
	}
	sum.s1, sum.s2 = s1%adlerMod, s2%adlerMod
	return opaque
}

// adlerMod is Adler-32's modulus.
const adlerMod = 65521

// adler is an Adler-32 being summed; a row of up to a few hundred
// thousand bytes adds to s1 and s2 without overflow before they are
// reduced.
type adler struct{ s1, s2 uint64 }

func newAdler() adler { return adler{s1: 1} }

func (a adler) sum32() uint32 { return uint32(a.s2%adlerMod)<<16 | uint32(a.s1%adlerMod) }

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
