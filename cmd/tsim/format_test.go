package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --format writes every picture in each format asked for, the same bytes
// for the same seed, and removes pictures of the formats (and pages) a
// run no longer writes.
func TestRunFormats(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	exp := filepath.Join(dir, "small")
	if _, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--quiet", "--format", "png,svg,pdf"); st != exitOK {
		t.Fatalf("status %d: %s", st, errs)
	}
	names := strings.Join(listDir(t, exp), " ")
	for _, want := range []string{"counters.png", "counters.svg", "counters.pdf", "latency.svg", "latency-cdf.pdf"} {
		if !strings.Contains(names, want) {
			t.Errorf("--format png,svg,pdf wrote %s: no %s", names, want)
		}
	}
	svg := readFile(t, filepath.Join(exp, "counters.svg"))
	pdf := readFile(t, filepath.Join(exp, "counters.pdf"))
	// A page of counters left by a longer chain goes too.
	if err := os.WriteFile(filepath.Join(exp, "counters-2.png"), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--quiet", "--format", "svg,pdf"); st != exitOK {
		t.Fatalf("status %d: %s", st, errs)
	}
	for _, n := range listDir(t, exp) {
		if strings.HasSuffix(n, ".png") {
			t.Errorf("--format svg,pdf left %s", n)
		}
	}
	if !bytes.Equal(readFile(t, filepath.Join(exp, "counters.svg")), svg) || !bytes.Equal(readFile(t, filepath.Join(exp, "counters.pdf")), pdf) {
		t.Errorf("the same seed wrote other SVG or PDF bytes")
	}
	if _, errs, st := tsimMain(t, nil, "run", f, "--format", "gif"); st != exitUsage || !strings.Contains(errs, `unknown picture format "gif"`) {
		t.Errorf("--format gif: status %d, %q; want usage", st, errs)
	}
}

// The other commands that draw take --format too: explain's breakdown
// and plan's search in each format asked for, the same bytes for the same
// seed, and the formats no longer asked for removed.
func TestCommandFormats(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	exp := filepath.Join(dir, "small")
	for _, args := range [][]string{
		{"explain", f, "-o", dir, "--format", "png,svg,pdf"},
		{"plan", f, "--goal", "p99<2s", "--vary", "tier.fe.calls.maxconnection=1..8", "--duration", "20s", "--reps", "2", "-o", dir, "--format", "png,svg,pdf"},
	} {
		out, errs, st := tsimMain(t, nil, args...)
		if st != exitOK {
			t.Fatalf("%s: status %d: %s\n%s", args[0], st, errs, out)
		}
	}
	names := strings.Join(listDir(t, exp), " ")
	for _, want := range []string{"breakdown.png", "breakdown.svg", "breakdown.pdf", "plan.png", "plan.svg", "plan.pdf"} {
		if !strings.Contains(names, want) {
			t.Errorf("--format png,svg,pdf wrote %s: no %s", names, want)
		}
	}
	svg := readFile(t, filepath.Join(exp, "breakdown.svg"))
	pdf := readFile(t, filepath.Join(exp, "plan.pdf"))
	for _, args := range [][]string{
		{"explain", f, "-o", dir, "--format", "svg", "--quiet"},
		{"plan", f, "--goal", "p99<2s", "--vary", "tier.fe.calls.maxconnection=1..8", "--duration", "20s", "--reps", "2", "-o", dir, "--format", "pdf", "--quiet"},
	} {
		if _, errs, st := tsimMain(t, nil, args...); st != exitOK {
			t.Fatalf("%s: status %d: %s", args[0], st, errs)
		}
	}
	names = strings.Join(listDir(t, exp), " ")
	for _, gone := range []string{"breakdown.png", "breakdown.pdf", "plan.png", "plan.svg"} {
		if strings.Contains(names, gone) {
			t.Errorf("a later --format without it left %s: %s", gone, names)
		}
	}
	if !bytes.Equal(readFile(t, filepath.Join(exp, "breakdown.svg")), svg) || !bytes.Equal(readFile(t, filepath.Join(exp, "plan.pdf")), pdf) {
		t.Errorf("the same seed wrote other SVG or PDF bytes")
	}
	for _, args := range [][]string{
		{"explain", f}, {"plan", f, "--goal", "p99<2s", "--vary", "tier.fe.calls.maxconnection=1..8"}, {"validate", f},
		{"calibrate", "capture.csv", "--experiment", f}, {"fit", "x.fit"}, {"merge", dir},
	} {
		if _, errs, st := tsimMain(t, nil, append(args, "--format", "gif")...); st != exitUsage || !strings.Contains(errs, `unknown picture format "gif"`) {
			t.Errorf("%s --format gif: status %d, %q; want usage", args[0], st, errs)
		}
	}
}
