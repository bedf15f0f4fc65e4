package htmlreport

import (
	"os"
	"path/filepath"
	"testing"
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
	f := Figure{A: 4, B: 6, Format: fmtRate}
	if got := f.Change(); got != "+2.00 (+50%)" {
		t.Errorf("change %q", got)
	}
}

func TestKeep(t *testing.T) {
	dir := t.TempDir()
	names := []string{"summary.json", "report.html"}
	if kept, err := Keep(dir, names); err != nil || kept != "" {
		t.Fatalf("keeping nothing: %q, %v", kept, err)
	}
	if _, err := LastKept(dir); err == nil {
		t.Error("LastKept of a folder without history: no error")
	}
	for run := 1; run <= 3; run++ {
		if err := os.WriteFile(filepath.Join(dir, "summary.json"), []byte{byte('0' + run)}, 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "other.txt"), nil, 0o644) // not a result file: stays
		kept, err := Keep(dir, names)
		if want := filepath.Join(dir, HistoryDir, string(rune('0'+run))); err != nil || kept != want {
			t.Fatalf("run %d: kept %q, %v; want %q", run, kept, err, want)
		}
	}
	last, err := LastKept(dir)
	if err != nil || last != filepath.Join(dir, HistoryDir, "3") {
		t.Fatalf("LastKept %q, %v", last, err)
	}
	if b, _ := os.ReadFile(filepath.Join(last, "summary.json")); string(b) != "3" {
		t.Errorf("history/3 holds run %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.txt")); err != nil {
		t.Errorf("a file that is not a result was moved: %v", err)
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
