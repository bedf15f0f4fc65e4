package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

func TestParseGoal(t *testing.T) {
	gs, err := ParseGoal("p99<1s, timeouts<0.1%,goodput>50,p99.9<250ms,rejected<2%,throughput>10/s,mean<2s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Goal{
		{"p99", true, 1, "p99 < 1s", false}, {"timeouts", true, 0.001, "timeouts < 0.1%", false}, {"goodput", false, 50, "goodput > 50", false},
		{"p99.9", true, 0.25, "p99.9 < 250ms", false}, {"rejected", true, 0.02, "rejected < 2%", false}, {"throughput", false, 10, "throughput > 10/s", false},
		{"mean", true, 2, "mean < 2s", false},
	}
	if len(gs) != len(want) {
		t.Fatalf("%d clauses", len(gs))
	}
	for i := range want {
		if gs[i] != want[i] {
			t.Errorf("clause %d: %+v, want %+v", i, gs[i], want[i])
		}
	}
	for _, bad := range []string{"p99>1s", "p99<1", "timeouts<0.1", "timeouts>1%", "goodput<5", "latency<1s", "p99", "p99<-1s", "timeouts<200%",
		"goodput>NaN", "throughput>nan/s", "timeouts<NaN%", "rejected<NaN%", "goodput>Inf", "goodput>1e400", "p99<NaNs", "p99<1s,", ""} {
		if _, err := ParseGoal(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// An error names what is allowed, and quotes a short excerpt of what
	// was given, not all of it.
	_, err = ParseGoal("goodput>NaN")
	if err == nil || !strings.Contains(err.Error(), "a finite number of requests per second above 0") {
		t.Errorf("goodput>NaN: %v", err)
	}
	long := "p99<" + strings.Repeat("9", 100000) + "s"
	if _, err := ParseGoal(long); err == nil || len(err.Error()) > 300 {
		t.Errorf("a 100,000-character clause: %d-byte error", len(err.Error()))
	}
}

func TestGoalJudge(t *testing.T) {
	g := Goal{Metric: "p99", Less: true, Limit: 3.7}
	// {1, 2, 3}: mean 2, s = 1, t(0.95, 2) = 2.919986: bound 2 + 2.919986/√3.
	mean, bound, ok := g.Judge([]float64{1, 2, 3})
	if mean != 2 || math.Abs(bound-(2+2.919986/math.Sqrt(3))) > 1e-5 || !ok {
		t.Errorf("mean %v bound %v ok %v", mean, bound, ok)
	}
	g.Limit = 3.6
	if _, _, ok := g.Judge([]float64{1, 2, 3}); ok {
		t.Errorf("met a limit below the upper bound")
	}
	low := Goal{Metric: "goodput", Limit: 0.3}
	if _, b, ok := low.Judge([]float64{1, 2, 3}); !ok || math.Abs(b-0.3141455) > 1e-6 {
		t.Errorf("lower bound %v, ok %v; want 2 − 1.686 = 0.314 and the goal of 0.3 met", b, ok)
	}
	if _, _, ok := g.Judge([]float64{1, math.Inf(1)}); ok {
		t.Errorf("a replication without completions met a latency goal")
	}
	if m, b, ok := g.Judge([]float64{3}); m != 3 || b != 3 || !ok {
		t.Errorf("one replication: %v %v %v", m, b, ok)
	}
	r := &results.Run{GoodputPerS: 0, Latency: results.Latency{P99: 0}}
	if v := g.Of(r); !math.IsInf(v, 1) {
		t.Errorf("latency without completions: %v", v)
	}
}

func TestParseVary(t *testing.T) {
	for _, tc := range []struct {
		in     string
		vals   string
		ints   bool
		lo, hi int
	}{
		{"k=1..128", "1 2 4 8 16 32 64 128", true, 1, 128},
		{"k=3..100", "3 4 8 16 32 64 100", true, 3, 100},
		{"k=2..9", "2 3 4 5 6 7 8 9", true, 2, 9},
		{"k=1s..10s", "1s 2s 4s 8s 10s", false, 0, 0},
		{"k=0.5..3", "0.5 1 2 3", false, 0, 0},
		{"k=wcf35,wcf4", "wcf35 wcf4", false, 0, 0},
		{"k=8", "8", false, 0, 0},
	} {
		a, err := ParseVary(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if got := strings.Join(a.Values, " "); got != tc.vals || a.Ints != tc.ints || a.Lo != tc.lo || a.Hi != tc.hi {
			t.Errorf("%s: %q ints %v %d..%d", tc.in, got, a.Ints, a.Lo, a.Hi)
		}
	}
	for _, bad := range []string{"k", "=1..2", "k=5..2", "k=0s..1s", "k=a..b"} {
		if _, err := ParseVary(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestGoalNone(t *testing.T) {
	gs, err := ParseGoal("p99<2s,timeouts=0")
	if err != nil {
		t.Fatal(err)
	}
	g := gs[1]
	if !g.None || g.Metric != "timeouts" {
		t.Fatalf("%+v", g)
	}
	if _, _, ok := g.Judge([]float64{0, 0, 0}); !ok {
		t.Errorf("no timeouts in any replication must meet timeouts=0")
	}
	if _, _, ok := g.Judge([]float64{0, 0.0001, 0}); ok {
		t.Errorf("one replication with timeouts must miss timeouts=0")
	}
	for _, bad := range []string{"p99=0", "timeouts=1%", "goodput=0"} {
		if _, err := ParseGoal(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
