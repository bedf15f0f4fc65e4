package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	crackCapture = "../../calibrate/testdata/crack/capture.csv"
	crackField   = "../../calibrate/testdata/crack/field.toml"
	crackMap     = "FESERVER1=web,BESERVER002=co1wacwb201"
)

// TestCalibrate walks docs/field-calibrate.md: the story's capture
// calibrates the field model, the calibrated file runs and explains, and
// its binding limit is the two connections.
func TestCalibrate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cal")
	out, errs, st := tsimMain(t, nil, "calibrate", crackCapture, "--experiment", crackField, "--map", crackMap, "-o", dir)
	if st != exitOK {
		t.Fatalf("status %d: %s", st, errs)
	}
	for _, want := range []string{
		"web (machine FESERVER1), 8 cores",
		"tier.web.step.1.cpu: exp(10ms) → exp(20",
		"tier.co1wacwb201.step.2.wait: (new step) → exp(",
		"the calibrated model reproduces that wait",
		"not identified from counters alone",
		"wrote " + filepath.Join(dir, "calibrated.toml"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"calibrated.toml", "calibration.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	out, errs, st = tsimMain(t, nil, "explain", filepath.Join(dir, "calibrated.toml"), "-o", t.TempDir())
	if st != exitOK || !strings.Contains(out, "binds first: connections web→co1wacwb201 (2 connections") {
		t.Errorf("explain: status %d, %s\n%s", st, errs, out)
	}
}

// TestCalibrateBadCapture: a capture with a problem is an error naming
// file, line and column, exit 1, and nothing is written.
func TestCalibrateBadCapture(t *testing.T) {
	good, err := os.ReadFile(crackCapture)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\r\n")
	for _, tc := range []struct {
		name, data, want string
	}{
		{"non-numeric", strings.Join(lines[:40], "") + nthField(lines[40], 1, `"n/a"`) + strings.Join(lines[41:], ""), `bad.csv:41:`},
		{"time going back", strings.Join(lines[:199], "") + lines[200] + lines[199] + strings.Join(lines[201:], ""), "bad.csv:201:1: time"},
		{"header", strings.Replace(string(good), "PDH-CSV 4.0", "PDH-CSV 9", 1), "bad.csv:1:1: not a PDH CSV file"},
		{"missing counter", strings.ReplaceAll(string(good), `\Calls Per Second"`, `\Calls Per Minute"`), "machine BESERVER002 (tier co1wacwb201) lacks a request rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			bad := filepath.Join(dir, "bad.csv")
			if err := os.WriteFile(bad, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			_, errs, st := tsimMain(t, nil, "calibrate", bad, "--experiment", crackField, "--map", crackMap, "-o", out)
			if st != exitFailure || !strings.HasPrefix(errs, "tsim calibrate: "+dir) || !strings.Contains(errs, tc.want) {
				t.Errorf("status %d, stderr %q; want 1 and %q", st, errs, tc.want)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("%d entries in %s after an error, want only bad.csv: %v", len(ents), dir, ents)
			}
		})
	}
}

func TestCalibrateUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate"}, "no capture given"},
		{[]string{"calibrate", crackCapture}, "--experiment FILE.toml is required"},
		{[]string{"calibrate", crackCapture, "x.csv", "--experiment", crackField}, "one capture at a time"},
		{[]string{"calibrate", crackCapture, "--experiment", crackField, "--map", "FESERVER1"}, `--map: "FESERVER1" is not MACHINE=TIER`},
		{[]string{"calibrate", crackCapture, "--experiment", crackField, "--map", "A=web,B=web"}, "tier web mapped twice"},
		{[]string{"calibrate", crackCapture, "--experiment", crackField, "--warmup", "-1s"}, "--warmup must be ≥ 0"},
		{[]string{"calibrate", crackCapture, "--experiment", crackField, "--reps", "0"}, "--reps"},
	} {
		_, errs, st := tsimMain(t, nil, tc.args...)
		if st != exitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: status %d, %q; want 2 and %q", tc.args, st, errs, tc.want)
		}
	}
	_, errs, st := tsimMain(t, nil, "calibrate", crackCapture, "--experiment", crackField, "--map", "FESERVER1=nosuch", "-o", t.TempDir())
	if st != exitFailure || !strings.Contains(errs, `--map: no tier "nosuch"`) {
		t.Errorf("an unknown tier: status %d, %q", st, errs)
	}
	out, _, st := tsimMain(t, nil, "help", "calibrate")
	if st != exitOK || !strings.Contains(out, "usage: tsim calibrate CAPTURE.csv|.tsv --experiment FILE.toml") {
		t.Errorf("help: %d %q", st, out)
	}
}

// nthField replaces field n (from 0) of a line of quoted fields.
func nthField(line string, n int, v string) string {
	f := strings.Split(line, ",")
	f[n] = v
	return strings.Join(f, ",")
}
