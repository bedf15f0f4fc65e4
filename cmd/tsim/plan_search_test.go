package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Plan's flags for the bounded load search and for maximising, and its
// refusals of malformed goals: usage errors that name what is allowed.
func TestPlanSearchFlags(t *testing.T) {
	f := writeFile(t, "plan.toml", planExp)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"plan", f, "--goal", "goodput>NaN", "--vary", "k=1..2"}, `tsim plan: goal clause "goodput>NaN": want a finite number of requests per second above 0`},
		{[]string{"plan", f, "--goal", "timeouts<NaN%", "--vary", "k=1..2"}, `tsim plan: goal clause "timeouts<NaN%": want a percentage in (0, 100]`},
		{[]string{"plan", f, "--maximize", "latency", "--vary", "k=1..2"}, "tsim plan: --maximize must be goodput or throughput"},
		{[]string{"plan", f, "--maximize", "goodput", "--find", "users"}, "tsim plan: --maximize searches one setting"},
		{[]string{"plan", f, "--goal", "p99<1s", "--vary", "k=1..2", "--max-load", "10"}, "tsim plan: --max-load bounds --find"},
		{[]string{"plan", f, "--goal", "p99<1s", "--find", "users", "--max-load", "NaN"}, "tsim plan: --max-load bounds --find"},
	} {
		out, errs, st := tsimMain(t, nil, tc.args...)
		if st != exitUsage || !strings.HasPrefix(errs, tc.msg) || out != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2 and %q", tc.args, st, out, errs, tc.msg)
		}
	}
	// --maximize without a goal: the value with the most goodput.
	out, errs, st := tsimMain(t, nil, "plan", f, "--maximize", "goodput", "--vary", "tier.fe.calls.maxconnection=1..4", "--duration", "30s", "-o", t.TempDir(), "--quiet")
	if st != exitOK || errs != "" || !strings.Contains(out, "goal: none") || !strings.Contains(unwrap(out), "gives the most goodput of the values tried") {
		t.Errorf("--maximize goodput: status %d, stderr %q\n%s", st, errs, out)
	}
}

// Interrupted, plan prints the points that finished and exits 1.
func TestPlanInterruptedPrintsItsPoints(t *testing.T) {
	f := writeFile(t, "plan.toml", planExp)
	var vals []string
	for v := 1; v <= 400; v++ {
		vals = append(vals, time.Duration(v*int(time.Millisecond)).String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, errs, st := tsimMain(t, ctx, "plan", f, "--goal", planGoal, "--vary", "tier.be.step.2.wait="+strings.Join(vals, ","), "-o", t.TempDir(), "--quiet")
	if st != exitFailure || !strings.Contains(errs, "warning: the grid has 400 points") || !strings.Contains(errs, "interrupted; the points that finished are above") {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	if !strings.Contains(out, "no answer: interrupted after") || !strings.Contains(out, "search: grid of 400 points") {
		t.Errorf("stdout:\n%s", out)
	}
}
