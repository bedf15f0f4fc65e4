// Package modeltest builds the small topologies that tests of both
// executors use, and holds the step tables they are checked against
// (steps.go, steps_wcf.go, contention.go, farm.go): the simulator must
// give each table exactly, the real executor within its resolution, from
// one definition.
//
// Package modeltest imports model, sim and results; only tests import it.
package modeltest

import (
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// Plenty is a thread pool that never binds.
var Plenty = model.Pool{Min: 1000, Max: 1000}

// Tier is a tier of the given cores with pools that never bind and the
// given steps.
func Tier(name string, cores int, steps ...model.Step) model.Tier {
	return model.Tier{Name: name, Cores: cores, CostMultiplier: 1, Worker: Plenty, IO: Plenty, Steps: steps}
}

// Const is a constant demand.
func Const(d time.Duration) sim.Dist { return sim.Const(d) }

// CPU is a CPU step of constant demand d; CPUOf one of the demand dist.
func CPU(d time.Duration) model.Step  { return CPUOf(sim.Const(d)) }
func CPUOf(dist sim.Dist) model.Step  { return model.Step{Kind: model.StepCPU, Demand: dist} }
func Wait(d time.Duration) model.Step { return WaitOf(sim.Const(d)) }
func WaitOf(dist sim.Dist) model.Step { return model.Step{Kind: model.StepWait, Demand: dist} }
func Lock(l int) model.Step           { return model.Step{Kind: model.StepLock, Lock: l} }
func Unlock(l int) model.Step         { return model.Step{Kind: model.StepUnlock, Lock: l} }

// Call is a call step to tier target.
func Call(target int, c model.Call) model.Step {
	c.Target = target
	return model.Step{Kind: model.StepCall, Call: &c}
}

// T0 is when a burst's users send their request.
const T0 = 2 * time.Second

// Leave is when a burst's users leave after their request (retired while
// busy, they finish it first): late enough that no scheduling delay of the
// real executor makes it come before their request, early enough that a
// user whose request ended at once does not send another: halfway between
// the two, so that a timer late by up to T0/2 of simulated time (50 ms of
// real time at a scale of 0.05) on either side changes nothing.
const Leave = T0 / 2

// Burst is a topology where n users each send one request at T0, with the
// given client timeout, and then leave; it runs until T0 + horizon.
func Burst(n int, timeout, horizon time.Duration, tiers ...model.Tier) *model.Topology {
	return &model.Topology{
		Duration: T0 + horizon, SampleEvery: time.Second, Tiers: tiers,
		Load: model.Load{Kind: model.LoadClosed,
			Users: model.Schedule{{At: 0, Value: float64(n)}, {At: T0 + Leave, Value: float64(n)}, {At: T0 + Leave, Value: 0}},
			Think: sim.Const(T0),
			Call:  model.Call{Target: 0, Timeout: timeout}},
	}
}

// Pipeline is the reference pipeline: 100 users (think exp(1 s)) call a
// front end of 96 threads that calls a back end through 2 connections;
// the back end takes exp(50 ms) of CPU and exp(100 ms) of waiting.
func Pipeline(timeout time.Duration, dur time.Duration) *model.Topology {
	unlimited := model.Pool{Min: 1, Max: 1 << 20, Injection: model.InjectNone}
	return &model.Topology{
		Duration:    dur,
		SampleEvery: time.Second,
		Tiers: []model.Tier{
			{Name: "fe", Cores: 8, CostMultiplier: 1, Worker: model.Pool{Min: 96, Max: 96}, IO: unlimited,
				Steps: []model.Step{{Kind: model.StepCall, Call: &model.Call{Target: 1, Conn: model.Conn{Limit: 2}}}}},
			{Name: "be", Cores: 8, CostMultiplier: 1, Worker: unlimited, IO: unlimited,
				Steps: []model.Step{
					{Kind: model.StepCPU, Demand: sim.Exp(50 * time.Millisecond)},
					{Kind: model.StepWait, Demand: sim.Exp(100 * time.Millisecond)},
				}},
		},
		Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: 100}}, Think: sim.Exp(time.Second),
			Call: model.Call{Target: 0, Timeout: timeout}},
	}
}
