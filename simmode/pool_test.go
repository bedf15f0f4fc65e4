package simmode

import (
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
	"github.com/tsim-dev/tsim/sim"
)

// TestCLR4BurstOneThreadPerSecondWhileStarved: min 2, ten requests each
// holding a thread 10 s at t0. With the CPU idle the gate (every 500 ms)
// finds the pool starved once nothing was dequeued for more than 500 ms:
// a thread at t0 + 1 s, whose own dequeue makes the next tick (500 ms
// later, not more) find the pool fresh; so one thread a second, on every
// other tick (docs/dotnet.md §3c, §3d). Under InjectCLR the same burst
// gets a thread every tick (TestCLRThreadInjection).
func TestCLR4BurstOneThreadPerSecondWhileStarved(t *testing.T) {
	be := tier("be", wait(10*time.Second))
	be.Worker = modeltest.CLR4Pool(2)
	got, res := outcomes(t, burst(10, 0, be))
	expect(t, "latencies", got, "10 10 11 12 13 14 15 16 17 18")
	if res.Tiers[0].ThreadsMax != 10 {
		t.Errorf("threads max %v, want 10", res.Tiers[0].ThreadsMax)
	}
}

// TestCLR4MinRaisedNoDelay: with the minimum raised to 10 (SetMinThreads,
// processModel minWorkerThreads) the ten requests start at once: threads
// up to the minimum come without delay, under every injection rule.
func TestCLR4MinRaisedNoDelay(t *testing.T) {
	for _, inj := range []model.Injection{model.InjectCLR4, model.InjectCLR, model.InjectCLR2} {
		be := tier("be", wait(10*time.Second))
		be.Worker = modeltest.CLR4Pool(10)
		be.Worker.Injection = inj
		got, _ := outcomes(t, burst(10, 0, be))
		expect(t, inj.String(), got, strings.TrimSpace(strings.Repeat("10 ", 10)))
	}
}

// TestCLR4SteadyStreamHillClimbing: the hill-climbing trajectory of a
// saturated pool, step by step (modeltest.SteadyStreamGoals): every goal
// change at the instant the reference worked out, and the threads
// working at each named instant.
func TestCLR4SteadyStreamHillClimbing(t *testing.T) {
	top := modeltest.SteadyStream(150 * time.Second)
	r := newRunner(top, model.Options{Seed: 1, MaxPoints: 20000}, 0)
	type change struct {
		at   time.Duration
		goal int
		why  model.HillClimbingTransition
	}
	var changes []change
	p := &r.tiers[0].worker.ThreadPool
	p.Trace = func(now time.Duration, goal int, why model.HillClimbingTransition) {
		changes = append(changes, change{now, goal, why})
	}
	r.start()
	r.e.Run(sim.Time(top.Duration))
	res := r.collect()
	var want []change
	for _, g := range modeltest.SteadyStreamChanges {
		want = append(want, change{g.At, g.Goal, model.HCClimbingMove})
	}
	for i := 0; i < 4; i++ {
		want[i].why = model.HCWarmup
	}
	if len(changes) != len(want) {
		t.Fatalf("%d goal changes, want %d: %v", len(changes), len(want), changes)
	}
	for i, c := range changes {
		if w := want[i]; c.goal != w.goal || c.why != w.why || c.at != w.at {
			t.Errorf("change %d: %v → %d (%v), want %v → %d (%v)", i+1, c.at, c.goal, c.why, w.at, w.goal, w.why)
		}
	}
	for _, g := range modeltest.SteadyStreamGoals {
		s := res.Series[int(g.At/time.Second)]
		if s.T != g.At.Seconds() || s.Tiers[0].WorkerBusy != float64(g.Goal) {
			t.Errorf("at %v: %v threads working (sample at %vs), want %d", g.At, s.Tiers[0].WorkerBusy, s.T, g.Goal)
		}
	}
}
