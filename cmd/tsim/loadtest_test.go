package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunMeasured: tsim run --measured compares each variant with a load
// test: a table, loadtest.csv, loadtest.png and summary.json's load_test;
// a file that is not a load test's results is an error before anything
// runs.
func TestRunMeasured(t *testing.T) {
	const shop = "../../loadtest/testdata/shop.toml"
	for _, measured := range []string{"jmeter.jtl", "k6.json", "simulation.log"} {
		dir := t.TempDir()
		out, errs, st := tsimMain(t, nil, "run", shop, "--measured", "../../loadtest/testdata/"+measured, "-o", dir, "--quiet", "--outputs", "json,csv")
		if st != exitOK {
			t.Fatalf("%s: status %d: %s", measured, st, errs)
		}
		if !strings.Contains(out, "variant as measured against ../../loadtest/testdata/"+measured) {
			t.Errorf("%s: no comparison table in\n%s", measured, out)
		}
		csv, err := os.ReadFile(filepath.Join(dir, "shop", "loadtest.csv"))
		if err != nil || strings.Count(string(csv), "\n") != 1+2*6 {
			t.Errorf("%s: loadtest.csv: %v\n%s", measured, err, csv)
		}
		var sum struct {
			Variants []struct {
				LoadTest *struct {
					Tool    string `json:"tool"`
					Overall struct {
						Measured struct {
							Requests int     `json:"requests"`
							P50      float64 `json:"p50_s"`
						} `json:"measured"`
					} `json:"overall"`
				} `json:"load_test"`
			} `json:"variants"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, "shop", "summary.json"))
		if err := json.Unmarshal(b, &sum); err != nil || len(sum.Variants) != 2 || sum.Variants[0].LoadTest == nil || sum.Variants[0].LoadTest.Overall.Measured.Requests == 0 {
			t.Errorf("%s: summary.json: %v %s", measured, err, b[:min(len(b), 300)])
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jtl")
	os.WriteFile(bad, []byte("root:x:0:0:SECRET:/root:/bin/bash\n"), 0o644)
	_, errs, st := tsimMain(t, nil, "run", shop, "--measured", bad, "-o", filepath.Join(dir, "out"))
	if st != exitFailure || !strings.Contains(errs, "not a load test's results") || strings.Contains(errs, "SECRET") {
		t.Errorf("a bad file: status %d, %q", st, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("output written after a bad --measured")
	}
}
