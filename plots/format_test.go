package plots

import (
	"bytes"
	"strings"
	"testing"
)

// Every figure writes as SVG and PDF, and the same figure gives the same
// bytes: no date of writing in the PDF (fpdf's CreationDate and ModDate
// would be now), no map order in its catalogs, no ids in the SVG.
func TestVectorFormatsAreDeterministic(t *testing.T) {
	figs := figures(t)
	for _, name := range []string{"counters.png", "latency.png", "latency-cdf.png", "sweep.png"} {
		f := figs[name]
		for _, format := range []Format{SVG, PDF} {
			var a, b bytes.Buffer
			if err := f.Write(&a, format); err != nil {
				t.Fatalf("%s as %s: %v", name, format, err)
			}
			if err := f.Write(&b, format); err != nil {
				t.Fatalf("%s as %s: %v", name, format, err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Errorf("%s as %s: two writings differ", name, format)
			}
			s := a.String()
			switch format {
			case SVG:
				if !strings.HasPrefix(s, "<?xml") || !strings.Contains(s, "<svg") || strings.Contains(s, " id=") {
					t.Errorf("%s as SVG: not an SVG without ids: %.80q", name, s)
				}
			case PDF:
				if !strings.HasPrefix(s, "%PDF-") || !strings.Contains(s, "/CreationDate (D:20000101000000)") || !strings.Contains(s, "/ModDate (D:20000101000000)") {
					t.Errorf("%s as PDF: not a PDF of the fixed date", name)
				}
			}
		}
	}
}

func TestParseFormats(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"png", "png", ""},
		{"svg, PDF", "svg pdf", ""},
		{"png,svg,pdf", "png svg pdf", ""},
		{"", "", "no picture format"},
		{"png,gif", "", `unknown picture format "gif" (allowed: png, svg, pdf)`},
		{"svg,svg", "", "given twice"},
	} {
		got, err := ParseFormats(tc.in)
		var names []string
		for _, f := range got {
			names = append(names, string(f))
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(names, " ") != tc.want {
			t.Errorf("%q: %v %v, want %s", tc.in, names, err, tc.want)
		}
	}
	if got := FileName(PageStem("counters", 0), SVG); got != "counters.svg" {
		t.Errorf("first page: %s", got)
	}
	if got := FileName(PageStem("counters", 2), PDF); got != "counters-3.pdf" {
		t.Errorf("third page: %s", got)
	}
}

// PDF text is Windows-1252, as vgpdf's fonts are encoded: the dash as its
// byte, Greek letters spelled out, what else it lacks as "?".
func TestWindows1252(t *testing.T) {
	if got, want := windows1252("fe — σ ≥ 1 µs, 中"), "fe \x97 sigma >= 1 \xb5s, ?"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
