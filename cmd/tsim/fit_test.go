package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitCommand: tsim fit writes the fitted experiment and its picture;
// a bad specification is a file:line error and writes nothing.
func TestFitCommand(t *testing.T) {
	dir := t.TempDir()
	out, errs, status := tsimMain(t, nil, "fit", "../../fit/testdata/small.fit", "--max-evals", "6", "--quiet", "-o", filepath.Join(dir, "ok"))
	if status != 0 || !strings.Contains(out, "fitted inputs") || !strings.Contains(out, "predicted (not used in the fit)") {
		t.Fatalf("status %d\n%s\n%s", status, out, errs)
	}
	for _, f := range []string{"fitted.toml", "fit.png"} {
		if _, err := os.Stat(filepath.Join(dir, "ok", f)); err != nil {
			t.Error(err)
		}
	}
	bad := filepath.Join(dir, "bad.fit")
	data, _ := os.ReadFile("../../fit/testdata/small.fit")
	text := strings.Replace(string(data), "min = 5", "min = 500", 1)
	os.WriteFile(bad, []byte(text), 0o644)
	_, errs, status = tsimMain(t, nil, "fit", bad, "--experiment", "../../fit/testdata/twotier.toml", "-o", filepath.Join(dir, "bad"))
	if status != 1 || !strings.Contains(errs, "bad.fit:7: free \"tier.svc.step.1.cpu\": max (200) must be above min (500)") {
		t.Errorf("a bad range: status %d, %s", status, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad")); err == nil {
		t.Error("a bad specification wrote its directory")
	}
	if _, errs, status = tsimMain(t, nil, "fit"); status != 2 || !strings.Contains(errs, "no fit specification") {
		t.Errorf("no spec: status %d, %s", status, errs)
	}
}
