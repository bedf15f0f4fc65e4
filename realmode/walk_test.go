package realmode

import (
	"context"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// TestWalkPhaseTakenByBothExecutors adds a phase to the shared walk — a
// gate of one place, model.Tier.Gates — and shows that the simulator and
// real mode both take it: 8 users who think 0.5 s and wait 100 ms in the
// operation would complete 8/0.6 = 13.3 requests/s; through a gate of one
// place at most 1/0.1 = 10/s. Nothing in either executor names this tier
// or its gate: both follow model.Tier.Walk.
func TestWalkPhaseTakenByBothExecutors(t *testing.T) {
	top := func(gates []int) *model.Topology {
		svc := tier("svc", 4, waitStep(sim.Const(100*time.Millisecond)))
		svc.Gates = gates
		return &model.Topology{
			Duration: 60 * time.Second, Warmup: 5 * time.Second, SampleEvery: time.Second,
			Tiers: []model.Tier{svc},
			Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: 8}},
				Think: sim.Const(500 * time.Millisecond), Call: model.Call{Target: 0}},
		}
	}
	if w := top([]int{1}).Tiers[0].Walk(); len(w) != 7 || w[1].Kind != model.PhaseGate {
		t.Fatalf("walk %v: want the gate after admission, before the thread", w)
	}
	simOpen, err := simmode.Run(top(nil), model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	simGated, err := simmode.Run(top([]int{1}), model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if g := simOpen.GoodputPerS; g < 13 || g > 13.5 {
		t.Errorf("simulated without the gate: %.2f/s, want 13.3", g)
	}
	if g := simGated.GoodputPerS; g < 9.8 || g > 10.01 {
		t.Errorf("simulated through the gate: %.2f/s, want 10", g)
	}
	opt := Options{Seed: 1, TimeScale: 0.05}
	realOpen, err := Run(context.Background(), top(nil), opt)
	if err != nil {
		t.Fatal(err)
	}
	realGated, err := Run(context.Background(), top([]int{1}), opt)
	if err != nil {
		t.Fatal(err)
	}
	// A gate of one place caps the rate whatever the machine's noise (a
	// late timer only lowers it); the open run is well above that cap
	// unless the machine stalls for a third of the run.
	if g := realGated.GoodputPerS; g > 10.3 {
		t.Errorf("real through the gate: %.2f/s; one place at 100 ms allows at most 10/s", g)
	}
	if realOpen.GoodputPerS < 1.15*realGated.GoodputPerS {
		t.Errorf("real without the gate %.2f/s is not clearly above real through it %.2f/s", realOpen.GoodputPerS, realGated.GoodputPerS)
	}
	t.Logf("goodput/s: sim %.2f open, %.2f gated; real %.2f open, %.2f gated", simOpen.GoodputPerS, simGated.GoodputPerS, realOpen.GoodputPerS, realGated.GoodputPerS)
}
