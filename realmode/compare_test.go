package realmode

import (
	"math"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

func run(goodput, mean, timeoutRate, firstTO float64, exec, queued float64, connWait float64) *results.Run {
	return &results.Run{
		Duration: 100, GoodputPerS: goodput,
		Latency:     results.Latency{Mean: mean, P50: mean, P99: 3 * mean},
		TimeoutRate: timeoutRate, FirstTimeout: firstTO,
		Tiers: []results.Tier{{Name: "fe", ExecutingMean: exec, QueuedMean: queued}},
		Calls: []results.Call{{From: "fe", To: "be", WaitMean: connWait}},
	}
}

func row(t *testing.T, r Report, metric string) Row {
	t.Helper()
	for _, x := range r.Rows {
		if x.Metric == metric {
			return x
		}
	}
	t.Fatalf("no row %q in\n%s", metric, r)
	return Row{}
}

func TestCompareRules(t *testing.T) {
	tol := DefaultTolerances
	tol.LatencyFloor = 0.002
	sim := run(100, 0.5, 0.10, 30, 20, 0.2, 0)
	real := run(96, 0.54, 0.115, 38, 21.5, 0.6, 0.0015)
	rep := Compare(sim, real, tol)
	t.Logf("\n%s", rep)
	for _, c := range []struct {
		metric string
		diff   float64
		ok     bool
	}{
		{"goodput /s", -0.04, true},                   // 4% < 5%
		{"latency mean s", 0.08, true},                // 8% < 10%
		{"timeout rate", 1.5, true},                   // 1.5pp < 2pp
		{"tier fe executing (mean)", 0.075, true},     // 7.5% < 10%
		{"tier fe queued (mean)", 2, true},            // +200%, but 0.4 requests ≤ 0.5
		{"call fe→be conn wait s", math.Inf(1), true}, // from 0, but 1.5 ms ≤ the 2 ms floor
		{"first timeout s", 0.08, true},               // 8 s of 100 s
	} {
		r := row(t, rep, c.metric)
		if r.OK != c.ok || math.Abs(r.Diff-c.diff) > 1e-9 && !(math.IsInf(c.diff, 1) && math.IsInf(r.Diff, 1)) {
			t.Errorf("%s: diff %v ok %v, want %v %v", c.metric, r.Diff, r.OK, c.diff, c.ok)
		}
	}
	if !rep.OK() {
		t.Errorf("report should agree:\n%s", rep)
	}

	bad := run(90, 0.6, 0.13, -1, 25, 1.2, 0.01)
	rep = Compare(sim, bad, tol)
	for _, m := range []string{"goodput /s", "latency mean s", "timeout rate", "tier fe executing (mean)", "tier fe queued (mean)", "call fe→be conn wait s", "first timeout s"} {
		if row(t, rep, m).OK {
			t.Errorf("%s should differ:\n%s", m, rep)
		}
	}
	if rep.OK() || len(rep.Failed()) < 7 || !strings.Contains(rep.String(), "DIFFERS") {
		t.Errorf("report should disagree:\n%s", rep)
	}

	// Neither run timed out: the first-timeout row agrees.
	none := run(100, 0.5, 0, -1, 20, 0, 0)
	if r := row(t, Compare(none, none, tol), "first timeout s"); !r.OK {
		t.Errorf("no timeouts on either side: %+v", r)
	}
	// A missing tier is reported, not skipped.
	noTier := run(100, 0.5, 0, -1, 20, 0, 0)
	noTier.Tiers = nil
	if Compare(none, noTier, tol).OK() {
		t.Error("a tier missing in the real run was not reported")
	}
}

func TestForScale(t *testing.T) {
	tol := DefaultTolerances.ForScale(0.1)
	if math.Abs(tol.LatencyFloor-0.005) > 1e-12 {
		t.Errorf("floor %v, want 0.5 ms / 0.1 = 5 ms", tol.LatencyFloor)
	}
	if DefaultTolerances.LatencyFloor != 0 {
		t.Error("ForScale changed DefaultTolerances")
	}
}
