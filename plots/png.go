package plots

import (
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"io"
)

// encodePNG writes m as a PNG. A picture is opaque (drawn on white), so it
// is written as 8-bit RGB with no row filter, compressed by rowDeflate:
// image/png would try all five filters on every row and keep the best, and
// compress/flate hash every position (together a third of the time of
// drawing a picture). A plot's rows are mostly runs of one colour and
// copies of the row above, which rowDeflate finds unfiltered. An image
// with a pixel that is not opaque goes to image/png.
func encodePNG(w io.Writer, m *image.RGBA) error {
	b := m.Bounds()
	if b.Empty() || !m.Opaque() {
		return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(w, m)
	}
	width, height := b.Dx(), b.Dy()
	e := &pngWriter{w: w}
	e.write([]byte("\x89PNG\r\n\x1a\n"))
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8] = 8 // bits per sample
	ihdr[9] = 2 // colour type: RGB
	// compression, filter and interlace methods 0
	e.chunk("IHDR", ihdr[:])

	stride := 1 + 3*width
	z := newRowDeflate(idatWriter{e}, stride)
	buf := make([]byte, 2*stride) // the row before, then this one
	for y := range height {
		cur := buf[stride:]
		cur[0] = 0 // filter None
		p := m.Pix[y*m.Stride : y*m.Stride+4*width]
		for x, j := 0, 1; x < 4*width; x, j = x+4, j+3 {
			cur[j], cur[j+1], cur[j+2] = p[x], p[x+1], p[x+2]
		}
		if y == 0 {
			z.writeRow(cur)
		} else {
			z.writeRow(buf)
		}
		copy(buf, cur)
	}
	if err := z.close(); err != nil {
		return err
	}
	e.chunk("IEND", nil)
	return e.err
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

// idatWriter writes what it is given as one IDAT chunk.
type idatWriter struct{ e *pngWriter }

func (w idatWriter) Write(b []byte) (int, error) {
	w.e.chunk("IDAT", b)
	if w.e.err != nil {
		return 0, w.e.err
	}
	return len(b), nil
}
