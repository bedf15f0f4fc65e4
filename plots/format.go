package plots

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/text/encoding/charmap"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Format is a picture's file format, named as its file name ends.
type Format string

const (
	PNG Format = "png" // a raster picture at 96 dots per inch
	SVG Format = "svg" // vector, through gonum/plot's vgsvg; text in the reader's Liberation Serif or its fallback
	PDF Format = "pdf" // vector, through gonum/plot's vgpdf, with its fonts embedded
)

// Formats are the formats a picture can be written in, in the order
// ParseFormats reports them.
var Formats = []Format{PNG, SVG, PDF}

// ParseFormats reads a comma-separated list of formats ("png,svg,pdf"),
// each at most once, in the order given.
func ParseFormats(s string) ([]Format, error) {
	var out []Format
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		f := Format(strings.ToLower(k))
		known := false
		for _, g := range Formats {
			known = known || g == f
		}
		if !known {
			return nil, fmt.Errorf("unknown picture format %q (allowed: png, svg, pdf)", k)
		}
		for _, g := range out {
			if g == f {
				return nil, fmt.Errorf("picture format %q given twice", k)
			}
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, errors.New("no picture format given (allowed: png, svg, pdf)")
	}
	return out, nil
}

// FileName is the name of a picture's file: stem and the format's
// extension ("counters", SVG: "counters.svg").
func FileName(stem string, f Format) string { return stem + "." + string(f) }

// PageStem is the stem of page i (from 0) of a picture drawn in pages:
// the stem itself for the first, then stem-2, stem-3, ...
func PageStem(stem string, i int) string {
	if i == 0 {
		return stem
	}
	return stem + "-" + strconv.Itoa(i+1)
}

// Write renders the figure in format f.
func (f *Figure) Write(w io.Writer, format Format) error {
	switch format {
	case PNG:
		return f.WritePNG(w)
	case SVG:
		c := vgsvg.New(f.Width, f.Height)
		f.drawOn(c)
		// vgsvg writes elements in drawing order with no ids, no dates
		// and no map order: the same figure gives the same bytes.
		_, err := c.WriteTo(w)
		return err
	case PDF:
		c := newPDF(f.Width, f.Height)
		f.drawOn(pdfCanvas{c})
		var buf bytes.Buffer // vgpdf writes nothing until the end
		if _, err := c.WriteTo(&buf); err != nil {
			return err
		}
		_, err := w.Write(buf.Bytes())
		return err
	}
	return fmt.Errorf("plots: unknown picture format %q (allowed: png, svg, pdf)", format)
}

// drawOn draws the figure on a canvas of its size.
func (f *Figure) drawOn(c vg.CanvasSizer) {
	dc := draw.New(c)
	// Every picture is drawn on white: vgimg's canvas starts white, a
	// vector canvas transparent.
	dc.SetColor(white)
	dc.Fill(dc.Rectangle.Path())
	f.draw(drawHeader(pad(dc, 8), f.heading(), f.subtitle))
}

// white is the background of every picture.
var white = color.White

// pdfDate is the creation and modification date of every PDF: a PDF of
// the same run is the same bytes, whenever it is written (fpdf would
// write the time of writing).
var pdfDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// pdfDefaults sets, once, the defaults fpdf gives the documents vgpdf
// makes (vgpdf keeps its document to itself): the fixed dates and
// catalogs written in a sorted order rather than a map's.
var pdfDefaults sync.Once

// pdfCanvas is vgpdf's canvas with text turned to Windows-1252, the
// encoding vgpdf embeds its fonts in (it passes UTF-8 through, which
// shows "—" as three letters).
type pdfCanvas struct{ *vgpdf.Canvas }

func (c pdfCanvas) FillString(f font.Face, pt vg.Point, s string) {
	c.Canvas.FillString(f, pt, windows1252(s))
}

// windows1252 is s in Windows-1252: the Greek letters and signs it lacks
// spelled out (the text is then a little wider than its place was
// measured for), any other rune as "?".
func windows1252(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if alt, ok := spelled[r]; ok {
			b = append(b, alt...)
			continue
		}
		c, ok := charmap.Windows1252.EncodeRune(r)
		if !ok {
			c = '?'
		}
		b = append(b, c)
	}
	return string(b)
}

// spelled are the runes of tsim's pictures that Windows-1252 lacks.
var spelled = map[rune]string{
	'σ': "sigma", 'κ': "kappa", 'λ': "lambda", '≥': ">=", '≤': "<=", '−': "-", '→': "->",
}

func newPDF(w, h vg.Length) *vgpdf.Canvas {
	pdfDefaults.Do(func() {
		fpdf.SetDefaultCreationDate(pdfDate)
		fpdf.SetDefaultModificationDate(pdfDate)
		fpdf.SetDefaultCatalogSort(true)
	})
	return vgpdf.New(w, h)
}
