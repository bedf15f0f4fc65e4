package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"math"
	"testing"
	"time"
)

// sharedMachine is the step table of a client tier and its service on
// one machine: the client holds a lock for 1 s (so its two requests come
// one after the other), spends 1 s of CPU, then calls the service, which
// spends 1 s of CPU. On a core each, A's client CPU runs 1–2 s and its
// service CPU 2–3 s, B's client CPU 2–3 s and service CPU 3–4 s: 3 and 4
// s. On one shared core, at 2 s A's service demand and B's client demand
// share it at half speed and both end at 4 s; B's service CPU runs 4–5 s:
// 4 and 5 s.
func sharedMachine(machine int) *model.Topology {
	cl := tier("cl", model.Step{Kind: model.StepLock, Lock: 0}, wait(time.Second), model.Step{Kind: model.StepUnlock, Lock: 0}, cpu(time.Second), callTo(1, model.Call{}))
	svc := tier("svc", cpu(time.Second))
	cl.Cores, svc.Cores = 1, 1
	cl.Machine, svc.Machine = machine, machine
	return burst(2, 0, cl, svc)
}

func TestMachineSharedByTiers(t *testing.T) {
	got, _ := outcomes(t, sharedMachine(0))
	expect(t, "a machine each", got, "3 4")
	got, res := outcomes(t, sharedMachine(1))
	expect(t, "one machine", got, "4 5")
	// Each tier counts its own CPU: 2 s of demands each, though the
	// machine was busy 1–5 s.
	span := (2*t0 - time.Second).Seconds()
	for _, tr := range res.Tiers {
		if busy := tr.CPUUtil * span; math.Abs(busy-2) > 1e-6 {
			t.Errorf("tier %s: %.6f s of CPU, want 2 (its own demands)", tr.Name, busy)
		}
	}

	// First come, first served: at 2 s A's service demand takes the core
	// first (it asked first) and ends at 3 s; B's client demand 3–4 s, its
	// service 4–5 s.
	top := sharedMachine(1)
	top.Tiers[0].CPU, top.Tiers[1].CPU = model.CPUFCFS, model.CPUFCFS
	got, res = outcomes(t, top)
	expect(t, "one machine, fcfs", got, "3 5")
	for _, tr := range res.Tiers {
		if busy := tr.CPUUtil * span; math.Abs(busy-2) > 1e-6 {
			t.Errorf("fcfs tier %s: %.6f s of CPU, want 2", tr.Name, busy)
		}
	}
}
