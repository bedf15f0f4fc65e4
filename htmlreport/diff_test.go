package htmlreport

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

func TestVerdict(t *testing.T) {
	h := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		f     Figure
		want  Verdict
		class string
	}{
		{Figure{A: 1, B: 1, HA: h(0.1), HB: h(0.1), Better: 1}, NoChange, "same"},
		{Figure{A: 1, B: 2, Better: 1}, NoInterval, "unjudged"},
		{Figure{A: 1, B: 2, HA: h(0.1), Better: 1}, NoInterval, "unjudged"},
		{Figure{A: 1, B: 1.1, HA: h(0.1), HB: h(0.1), Better: 1}, WithinCI, "same"},    // 0.1 < 0.141
		{Figure{A: 1, B: 1.15, HA: h(0.1), HB: h(0.1), Better: 1}, BeyondCI, "better"}, // 0.15 > 0.141
		{Figure{A: 1, B: 0.8, HA: h(0.1), HB: h(0.1), Better: 1}, BeyondCI, "worse"},
		{Figure{A: 1, B: 0.8, HA: h(0.1), HB: h(0.1), Better: -1}, BeyondCI, "better"},
		{Figure{A: 1, B: 3, HA: h(0.1), HB: h(0.1)}, BeyondCI, "changed"},
		{Figure{A: 1, B: 3, NoneB: true}, NotAvailable, ""},
	} {
		if got := c.f.Verdict(); got != c.want {
			t.Errorf("%+v: verdict %d, want %d", c.f, got, c.want)
		}
		if got := c.f.Class(); got != c.class {
			t.Errorf("%+v: class %q, want %q", c.f, got, c.class)
		}
	}
	f := Figure{A: 4, B: 6, Format: results.FmtRate}
	if got := f.Change(); got != "+2.00 (+50%)" {
		t.Errorf("change %q", got)
	}
}

func TestLastKept(t *testing.T) {
	dir := t.TempDir()
	if _, err := LastKept(dir); err == nil {
		t.Error("LastKept of a folder without history: no error")
	}
	for _, n := range []string{"1", "2", "10", "09", "x"} {
		if err := os.MkdirAll(filepath.Join(dir, HistoryDir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if last, err := LastKept(dir); err != nil || last != filepath.Join(dir, HistoryDir, "10") {
		t.Errorf("LastKept %q, %v", last, err)
	}
}

func TestParseSide(t *testing.T) {
	dir := t.TempDir()
	at := filepath.Join(dir, "odd@name")
	os.Mkdir(at, 0o755)
	for _, c := range []struct {
		arg  string
		want Side
	}{
		{"out/x", Side{Dir: "out/x"}},
		{"out/x@fixed", Side{Dir: "out/x", Variant: "fixed"}},
		{at, Side{Dir: at}},
		{at + "@v", Side{Dir: at, Variant: "v"}},
		{"a@b/c", Side{Dir: "a@b/c"}},
	} {
		if got := ParseSide(c.arg); got != c.want {
			t.Errorf("ParseSide(%q) = %+v, want %+v", c.arg, got, c.want)
		}
	}
}
