package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateAgrees runs the M/M/4 validation experiment for one simulated
// minute in 3 real seconds in both modes: they agree within the default
// tolerances, and validate-counters.png is written. With zero tolerance the
// same run disagrees and validate exits 1.
//
// A real run shares this 2-core machine with the other test packages, which
// can knock one run off (realmode's own cross-checks allow the same): the
// agreement must hold in one of three attempts, and every report is logged.
func TestValidateAgrees(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join("..", "..", "experiments", "validation", "mmc.toml")
	var out, errs string
	var st int
	for attempt := 1; attempt <= 3; attempt++ {
		out, errs, st = tsim(t, nil, "validate", file, "--duration", "60s", "--time-scale", "0.05", "-o", dir)
		if st == exitOK && strings.Contains(out, "variant base: agree") {
			break
		}
		t.Logf("attempt %d: status %d\n%s%s", attempt, st, out, errs)
	}
	if st != exitOK || !strings.Contains(out, "variant base: agree") {
		t.Fatalf("no agreement in 3 attempts; last: status %d\nstdout:\n%s\nstderr:\n%s", st, out, errs)
	}
	for _, metric := range []string{"goodput /s", "latency p99 s", "tier svc executing (mean)"} {
		if !strings.Contains(out, metric) {
			t.Errorf("report lacks %q:\n%s", metric, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mmc", "validate-counters.png")); err != nil {
		t.Error(err)
	}
	out, _, st = tsim(t, nil, "validate", file, "--duration", "20s", "--time-scale", "0.05", "-o", dir,
		"--tolerance", "throughput=0,mean=0,p50=0,p99=0")
	if st != exitFailure || !strings.Contains(out, "DISAGREE") {
		t.Errorf("zero tolerance: status %d, want 1 and DISAGREE:\n%s", st, out)
	}
}

func TestValidateUsage(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"validate"}, "tsim validate: no experiment files given"},
		{[]string{"validate", f, "--tolerance", "speed=5%"}, `tsim validate: --tolerance: unknown tolerance "speed"`},
		{[]string{"validate", f, "--tolerance", "mean"}, `tsim validate: --tolerance: "mean": want NAME=VALUE`},
		{[]string{"validate", f, "--time-scale", "-1"}, "tsim validate: --time-scale must be > 0"},
		{[]string{"validate", f, "--cpu", "gpu"}, `tsim validate: --cpu must be sharing or cores, got "gpu"`},
	} {
		_, errs, st := tsim(t, nil, tc.args...)
		if st != exitUsage || !strings.HasPrefix(errs, tc.msg) {
			t.Errorf("%q: status %d, stderr %q; want 2 and %q", tc.args, st, errs, tc.msg)
		}
	}
}

func TestParseTolerances(t *testing.T) {
	tol, err := parseTolerances("throughput=3%, p99=0.2, timeouts=1pp, first_timeout=5%, level_abs=1")
	if err != nil {
		t.Fatal(err)
	}
	if tol.Throughput != 0.03 || tol.P99 != 0.2 || tol.TimeoutRatePP != 1 || tol.FirstTimeoutFrac != 0.05 || tol.LevelAbs != 1 {
		t.Errorf("%+v", tol)
	}
}
