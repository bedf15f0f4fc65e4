package modeltest

import (
	"time"

	"github.com/tsim-dev/tsim/model"
)

// CLR4Pool is a CLR 4+ worker pool (hill climbing and starvation) of the
// given minimum: the gate ticks every 500 ms, idle threads retire after
// 20 s (docs/dotnet.md §3).
func CLR4Pool(min int) model.Pool {
	return model.Pool{Min: min, Max: 1000, Injection: model.InjectCLR4, GateDelay: 500 * time.Millisecond, IdleTimeout: 20 * time.Second}
}

// SteadyStreamItem is how long each item of the steady stream holds its
// thread: a second and a few hundred nanoseconds, so that no item ends at
// the instant another arrives (the stream's instants are 40 ms apart and
// this is no whole multiple of 40 ms within the run).
const SteadyStreamItem = 1_000_123_457 * time.Nanosecond

// SteadyStream is a pool of minimum 20 fed one blocking work item every
// 40 ms (25 a second, the first at 20 ms), each holding its thread for
// SteadyStreamItem, for the given time. The pool is never starved (an
// item completes every 50 ms or so), so only hill climbing moves it.
func SteadyStream(d time.Duration) *model.Topology {
	svc := Tier("svc", 4, Wait(SteadyStreamItem))
	svc.Worker = CLR4Pool(20)
	var at []time.Duration
	for t := 20 * time.Millisecond; t < d; t += 40 * time.Millisecond {
		at = append(at, t)
	}
	return &model.Topology{Duration: d, SampleEvery: time.Second, Tiers: []model.Tier{svc},
		Load: model.Load{Kind: model.LoadOpen, Arrivals: at, Rate: model.Schedule{{At: 0, Value: 25}}, Call: model.Call{Target: 0}}}
}

// GoalAt is the hill-climbing goal of a pool at a named instant.
type GoalAt struct {
	At   time.Duration
	Goal int
}

// SteadyStreamChanges are the changes of the SteadyStream pool's goal
// over 150 s, worked out apart from tsim by an event-by-event reference
// (each item's start and end, the samples they make, and an independent
// reading of HillClimbing.Update with direct DFT sums): four of warm-up
// (the wave alone), then climbing while each thread added pays (about
// 0.85 of a thread's throughput against the 0.15 asked); the backlog is
// gone at 128.6 s, and the goal falls back once throughput stops
// following it.
//
// Each sample ends at the first completion that brings more than
// (goal − 1) / 0.15 completions (127 at 20 threads: about 6.4 s), so the
// random sample intervals (10–200 ms) move none of these instants.
var SteadyStreamChanges = []GoalAt{
	{7300864199, 21}, {20142469140, 20}, {32663950624, 21}, {45505555565, 20},
	{51746296307, 22}, {58347160506, 23}, {64707901248, 24}, {77629506189, 25},
	{84110370388, 26}, {90551111130, 29}, {97071975329, 30}, {103592716071, 31},
	{110193580270, 33}, {116634321012, 34}, {123235185211, 35}, {129740123457, 37},
	{139380123457, 39}, {149540123457, 35},
}

// SteadyStreamGoals is the goal at named instants between the changes,
// while the pool is saturated (the threads working equal the goal).
var SteadyStreamGoals = []GoalAt{
	{5 * time.Second, 20}, {15 * time.Second, 21}, {25 * time.Second, 20}, {40 * time.Second, 21},
	{50 * time.Second, 20}, {55 * time.Second, 22}, {62 * time.Second, 23}, {70 * time.Second, 24},
	{80 * time.Second, 25}, {87 * time.Second, 26}, {94 * time.Second, 29}, {100 * time.Second, 30},
	{107 * time.Second, 31}, {113 * time.Second, 33}, {120 * time.Second, 34}, {126 * time.Second, 35},
}
