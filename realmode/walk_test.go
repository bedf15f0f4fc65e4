package realmode

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// TestWalkPhaseTakenByBothExecutors adds a phase to the shared walk — a
// gate of one place, model.Tier.Gates — and shows that the simulator and
// real mode both take it: 8 users who think 0.5 s and wait 100 ms in the
// operation would complete 8/0.6 = 13.3 requests/s; through a gate of one
// place at most 1/0.1 = 10/s. Nothing in either executor names this tier
// or its gate: both follow model.Tier.Walk.
//
// That real mode takes the gate is judged on every run, however busy the
// machine: through the gate one request executes at a time, without it
// all eight do (they start together), and the gate caps the rate (a late
// timer only lowers it). The rates themselves are cross-checked against
// the simulation (crossCheck), on time: on a busy machine both runs slow
// down (measured with two busy loops on 2 cores: 9.8/s open, 8.8/s gated)
// and those comparisons may go unjudged.
func TestWalkPhaseTakenByBothExecutors(t *testing.T) {
	top := func(gates []int) *model.Topology {
		svc := tier("svc", 4, waitStep(sim.Const(100*time.Millisecond)))
		svc.Gates = gates
		return &model.Topology{
			Duration: 25 * time.Second, Warmup: 5 * time.Second, SampleEvery: time.Second,
			Tiers: []model.Tier{svc},
			Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: 8}},
				Think: sim.Const(500 * time.Millisecond), Call: model.Call{Target: 0}},
		}
	}
	if w := top([]int{1}).Tiers[0].Walk(); len(w) != 7 || w[1].Kind != model.PhaseGate {
		t.Fatalf("walk %v: want the gate after admission, before the thread", w)
	}
	opt := Options{TimeScale: 0.05}
	open := crossCheck(t, "without the gate", top(nil), top(nil), opt, false)
	gated := crossCheck(t, "through the gate", top([]int{1}), top([]int{1}), opt, false)
	if g := open.sim.GoodputPerS; g < 13 || g > 13.5 {
		t.Errorf("simulated without the gate: %.2f/s, want 13.3", g)
	}
	if g := gated.sim.GoodputPerS; g < 9.8 || g > 10.01 {
		t.Errorf("simulated through the gate: %.2f/s, want 10", g)
	}
	for _, res := range []*results.Run{gated.sim, gated.real} {
		if tr := res.Tiers[0]; tr.ExecutingMax != 1 || tr.ThreadsBusyMax != 1 {
			t.Errorf("through the gate: %v executing, %v threads busy at most; want 1", tr.ExecutingMax, tr.ThreadsBusyMax)
		}
	}
	for _, res := range []*results.Run{open.sim, open.real} {
		if tr := res.Tiers[0]; tr.ExecutingMax != 8 {
			t.Errorf("without the gate: %v executing at most; want 8", tr.ExecutingMax)
		}
	}
	if g := gated.real.GoodputPerS; g > 10.3 {
		t.Errorf("real through the gate: %.2f/s; one place at 100 ms allows at most 10/s", g)
	}
	open.check(t, "goodput")
	gated.check(t, "goodput")
	if open.judged() && gated.judged() && open.real.GoodputPerS <= gated.real.GoodputPerS {
		t.Errorf("real without the gate %.2f/s is not above real through it %.2f/s", open.real.GoodputPerS, gated.real.GoodputPerS)
	}
	t.Logf("goodput/s: sim %.2f open, %.2f gated; real %.2f open, %.2f gated", open.sim.GoodputPerS, gated.sim.GoodputPerS, open.real.GoodputPerS, gated.real.GoodputPerS)
}
