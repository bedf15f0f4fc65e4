package main

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/bench"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

func TestReplicationSeed(t *testing.T) {
	if replicationSeed(42, 0) != 42 {
		t.Errorf("replication 0 must use the experiment seed, so that --seed S --reps 1 replays it")
	}
	// Nearby seeds do not share replications.
	seen := map[uint64]bool{}
	for _, s := range []uint64{0, 1, 2, 3} {
		for k := range 50 {
			r := replicationSeed(s, k)
			if seen[r] {
				t.Fatalf("seed %d replication %d repeats an earlier seed's", s, k)
			}
			seen[r] = true
		}
	}
}

// failing fails every replication.
type failing struct{}

func (*failing) parallel() bool { return true }

func (f *failing) run(_ context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	return nil, errors.New("model: requests not conserved")
}

func TestExecuteFailureSaysHowToReplay(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	x, err := loadExperiment(f)
	if err != nil {
		t.Fatal(err)
	}
	p := &plan{path: f, stem: "small", x: x, seed: 3, reps: 2, mode: "sim"}
	_, err = execute(context.Background(), p, &failing{}, 1, nil)
	if err == nil {
		t.Fatal("no error from a failing replication")
	}
	for _, s := range []string{f + ": variant broken, replication 1 (seed 3): model: requests not conserved", "tsim run " + f + " --seed 3 --reps 1"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}

func TestAggregateRuns(t *testing.T) {
	tier := func(cpu, execMean, execMax float64, completed int64) results.Tier {
		return results.Tier{Name: "fe", Cores: 4, CPUUtil: cpu, ExecutingMean: execMean, ExecutingMax: execMax, Completed: completed}
	}
	runs := []*results.Run{
		{Duration: 60, Warmup: 10, Requests: results.Counts{Generated: 10, Completed: 8, TimedOut: 2},
			ThroughputPerS: 2, GoodputPerS: 1, TimeoutRate: 0.2, FirstTimeout: 30,
			Latency:   results.Latency{Mean: 1, P99: 3, Max: 4},
			Tiers:     []results.Tier{tier(0.5, 10, 20, 100)},
			TierNames: []string{"fe", "be"},
			Calls: []results.Call{
				{From: "fe", To: "be", InUseMean: 2, InUseMax: 2, WaitMean: 1, Calls: 10},
				{From: "load", To: "fe", InUseMean: 4, Calls: 10},
			}},
		{Duration: 60, Warmup: 10, Requests: results.Counts{Generated: 12, Completed: 12},
			ThroughputPerS: 4, GoodputPerS: 3, TimeoutRate: 0, FirstTimeout: -1,
			Latency:   results.Latency{Mean: 3, P99: 5, Max: 6},
			Tiers:     []results.Tier{tier(0.7, 20, 25, 50)},
			TierNames: []string{"fe", "be"},
			Calls: []results.Call{
				{From: "load", To: "fe", InUseMean: 6, Calls: 12},
			}},
		{Duration: 60, Warmup: 10, Requests: results.Counts{Generated: 5, TimedOut: 5},
			ThroughputPerS: 3, GoodputPerS: 0, TimeoutRate: 1, FirstTimeout: 20,
			Tiers:     []results.Tier{tier(0.3, 30, 40, 0)},
			TierNames: []string{"fe", "be"}},
	}
	a := aggregateRuns(runs)
	if want := (results.Counts{Generated: 27, Completed: 20, TimedOut: 7}); a.Requests != want {
		t.Errorf("counts %+v, want %+v", a.Requests, want)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("throughput", a.ThroughputPerS, 3)
	near("goodput", a.GoodputPerS, 4.0/3)
	near("timeout rate", a.TimeoutRate, 0.4)
	// Latency averages only the replications that completed requests.
	near("latency mean", a.Latency.Mean, 2)
	near("latency max", a.Latency.Max, 6)
	near("first timeout", a.FirstTimeoutS, 20)
	near("tier cpu", a.Tiers[0].CPUUtil, 0.5)
	near("tier executing max", a.Tiers[0].ExecutingMax, 40)
	if a.Tiers[0].Completed != 150 {
		t.Errorf("tier completed %d, want 150", a.Tiers[0].Completed)
	}
	// Calls are matched by name and listed load first.
	if len(a.Calls) != 2 || a.Calls[0].From != "load" || a.Calls[1].From != "fe" {
		t.Fatalf("calls %+v", a.Calls)
	}
	near("load in use", a.Calls[0].InUseMean, 10.0/3)
	near("fe wait mean", a.Calls[1].WaitMean, 1)
	if a.Calls[0].Calls != 22 {
		t.Errorf("load calls %d, want 22", a.Calls[0].Calls)
	}
	// 95% half-width of {2, 4, 3}: t(0.975, 2) = 4.303, s = 1, n = 3.
	if a.CI == nil || a.CI.ThroughputPerS == nil {
		t.Fatal("no confidence interval with three replications")
	}
	near("ci throughput", math.Round(*a.CI.ThroughputPerS*1000)/1000, math.Round(4.302653*1/math.Sqrt(3)*1000)/1000)
	if a.CI.LatencyMeanS == nil {
		t.Errorf("latency CI missing with two replications that completed requests")
	}
	if one := aggregateRuns(runs[:1]); one.CI != nil {
		t.Errorf("a CI from one replication")
	}
}

func TestMedianRow(t *testing.T) {
	rs := []bench.Result{{WallS: 3, Requests: 10}, {WallS: 1, Requests: 10}, {WallS: 2, Requests: 10, Events: 40}}
	r := medianRow("m", rs)
	if r.WallS != 2 || r.Events != 40 || r.RequestsPerS != 5 || r.EventsPerS != 20 {
		t.Errorf("median of three: %+v", r)
	}
	r = medianRow("m", []bench.Result{{WallS: 4, Requests: 6}, {WallS: 2, Requests: 6}})
	if r.WallS != 3 || r.RequestsPerS != 2 {
		t.Errorf("median of two: %+v", r)
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{fmtLatency(0), "0"},
		{fmtLatency(0.00085), "850 µs"},
		{fmtLatency(0.0453), "45.3 ms"},
		{fmtLatency(0.453), "453 ms"},
		{fmtLatency(6.5), "6.50 s"},
		{fmtLatency(12.34), "12.3 s"},
		{fmtPercent(0), "0%"},
		{fmtPercent(0.0004), "0.04%"},
		{fmtPercent(0.041), "4.1%"},
		{fmtPercent(0.37), "37%"},
		{fmtRate(13.333), "13.33"},
		{fmtRate(1520.4), "1520"},
		{meanMax(68.94, 91), "68.9 / 91"},
		{fmtSeconds(300), "300 s"},
		{stem("dir/crack-throttling.toml"), "crack-throttling"},
		{shortKey("tier.fe.calls.maxconnection"), "maxconnection"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
