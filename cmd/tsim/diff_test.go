package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tsim diff compares two variants of one run, and with --keep a run with
// the one before.
func TestDiff(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	if _, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--quiet", "--no-plots"); st != exitOK {
		t.Fatalf("run: status %d: %s", st, errs)
	}
	exp := filepath.Join(dir, "small")
	page := filepath.Join(dir, "d", "diff.html")
	out, errs, st := tsimMain(t, nil, "diff", exp+"@broken", exp+"@fixed", "-o", page)
	if st != exitOK {
		t.Fatalf("diff: status %d: %s", st, errs)
	}
	for _, want := range []string{"broken → fixed", "goodput/s", "beyond ±", "(better)", "fe → be: the connection limit of 2 binds", "wrote " + page} {
		if !strings.Contains(out, want) {
			t.Errorf("diff's output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "tsim diff: small vs small") {
		t.Errorf("diff.html: %v", err)
	}

	// --keep: the second run keeps the first in history/1; diff DIR
	// compares them (the same seed: nothing changed).
	if _, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--no-plots", "--keep", "--seed", "4"); st != exitOK {
		t.Fatalf("run --keep: status %d: %s", st, errs)
	}
	if _, err := os.Stat(filepath.Join(exp, "history", "1", "summary.json")); err != nil {
		t.Fatalf("the first run was not kept: %v", err)
	}
	out, errs, st = tsimMain(t, nil, "diff", exp, "-o", page, "--quiet")
	if st != exitOK || !strings.Contains(out, "A  "+filepath.ToSlash(filepath.Join(exp, "history", "1"))) || !strings.Contains(out, "seed 4") {
		t.Errorf("diff DIR: status %d, stderr %q, stdout:\n%s", st, errs, out)
	}

	for _, bad := range [][]string{{"diff"}, {"diff", "a", "b", "c"}} {
		if _, _, st := tsimMain(t, nil, bad...); st != exitUsage {
			t.Errorf("%v: status %d, want usage", bad, st)
		}
	}
	if _, errs, st := tsimMain(t, nil, "diff", exp+"@nosuch", exp); st != exitFailure || !strings.Contains(errs, `no variant "nosuch" (it has broken, fixed)`) {
		t.Errorf("unknown variant: status %d, %q", st, errs)
	}
	if _, errs, st := tsimMain(t, nil, "diff", filepath.Join(dir, "none"), exp); st != exitFailure || !strings.Contains(errs, "no such result folder") {
		t.Errorf("missing folder: status %d, %q", st, errs)
	}
}

// tsim explain writes explain.html: the diagnosis and the variants' runs.
func TestExplainWritesPage(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	out, errs, st := tsimMain(t, nil, "explain", f, "-o", dir)
	if st != exitOK {
		t.Fatalf("explain: status %d: %s", st, errs)
	}
	page := filepath.Join(dir, "small", "explain.html")
	if !strings.Contains(out, "wrote "+page) {
		t.Errorf("explain does not say it wrote %s:\n%s", page, out)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>tsim explain: small</title>", `id="diagnosis"`, "binds first", "Variant broken", "fe → be: 2:",
		`id="counters"`, `"id":"counters/broken/fe/counts"`, `"id":"latency/fixed"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("explain.html lacks %q", want)
		}
	}
}
