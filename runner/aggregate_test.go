package runner

import (
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// TestAggregateDurationIsAMean: replications that stopped on precision at
// different instants, with different automatic warm-ups, aggregate to the
// mean duration as well as the mean warm-up (duration_s was replication
// 1's alone); counts add up, including those under way at the warm-up.
func TestAggregateDurationIsAMean(t *testing.T) {
	tier := results.Tier{Name: "t", Host: "self", Arrived: 10, Completed: 9, ResponseMean: 1, CallDurationMean: 0.5, Calls: 9}
	run := func(dur, warm float64, c results.Counts) *results.Run {
		return &results.Run{Duration: dur, Warmup: warm, Requests: c, FirstTimeout: -1, Tiers: []results.Tier{tier}, TierNames: []string{"t"}}
	}
	a := aggregateRuns([]*results.Run{
		run(100, 10, results.Counts{Generated: 9, InFlightAtWarmup: 1, Completed: 10}),
		run(300, 30, results.Counts{Generated: 10, Completed: 9, InFlight: 1}),
	})
	if a.DurationS != 200 || a.WarmupS != 20 {
		t.Errorf("duration %v (want 200), warm-up %v (want 20)", a.DurationS, a.WarmupS)
	}
	if want := (results.Counts{Generated: 19, InFlightAtWarmup: 1, Completed: 19, InFlight: 1}); a.Requests != want || !a.Requests.Conserved() {
		t.Errorf("requests %+v, want %+v", a.Requests, want)
	}
	if tr := a.Tiers[0]; tr.Arrived != 20 || tr.ResponseMean != 1 || tr.CallDurationMean != 0.5 || tr.Host != "self" {
		t.Errorf("tier %+v", tr)
	}
}
