package model

import (
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
func sharedMachine(machine int) *Topology {
	cl := tier("cl", Step{Kind: StepLock, Lock: 0}, wait(time.Second), Step{Kind: StepUnlock, Lock: 0}, cpu(time.Second), callTo(1, Call{}))
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
	top.Tiers[0].CPU, top.Tiers[1].CPU = CPUFCFS, CPUFCFS
	got, res = outcomes(t, top)
	expect(t, "one machine, fcfs", got, "3 5")
	for _, tr := range res.Tiers {
		if busy := tr.CPUUtil * span; math.Abs(busy-2) > 1e-6 {
			t.Errorf("fcfs tier %s: %.6f s of CPU, want 2", tr.Name, busy)
		}
	}
}

func TestMachineBoundSumsDemands(t *testing.T) {
	// The operational bound of a shared machine is its cores over the
	// demands of all its tiers: 1 core / 2 s = 0.5 requests per second.
	a := Analyse(sharedMachine(1))
	var cpus []Bound
	for _, b := range a.Bounds {
		if b.Kind == "cpu" {
			cpus = append(cpus, b)
		}
	}
	if len(cpus) != 1 || cpus[0].Throttle != "CPU cl+svc" || math.Abs(cpus[0].PerSec-0.5) > 1e-9 {
		t.Fatalf("cpu bounds %+v, want one, CPU cl+svc at 0.5/s", cpus)
	}
	a = Analyse(sharedMachine(0))
	n := 0
	for _, b := range a.Bounds {
		if b.Kind == "cpu" {
			n++
			if math.Abs(b.PerSec-1) > 1e-9 {
				t.Errorf("%s: %.3f/s, want 1", b.Throttle, b.PerSec)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d cpu bounds on two machines, want 2", n)
	}
}
