package realmode

import (
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// The cross-validation cases, built in Go and short enough for CI: each
// runs a few real seconds at its default time scale.

var plenty = model.Pool{Min: 1000, Max: 1000}

func tier(name string, cores int, steps ...model.Step) model.Tier {
	return model.Tier{Name: name, Cores: cores, CostMultiplier: 1, Worker: plenty, IO: plenty, Steps: steps}
}

func cpuExp(mean time.Duration) model.Step {
	return model.Step{Kind: model.StepCPU, Demand: sim.Exp(mean)}
}

func waitStep(d sim.Dist) model.Step { return model.Step{Kind: model.StepWait, Demand: d} }

func callStep(target int, c model.Call) model.Step {
	c.Target = target
	return model.Step{Kind: model.StepCall, Call: &c}
}

// caseMMc is an M/M/4 queue: Poisson arrivals at 60/s, CPU exp(50 ms) on
// 4 cores (ρ = 0.75). Default scale 0.2: 25 s simulated (1500 requests)
// in 5 s.
func caseMMc() *model.Topology { return caseMMcAt(60) }

// caseMMcAt is caseMMc with arrivals at rate per second (ρ = rate/80).
func caseMMcAt(rate float64) *model.Topology {
	return &model.Topology{
		Duration: 25 * time.Second, SampleEvery: time.Second,
		Tiers: []model.Tier{tier("svc", 4, cpuExp(50*time.Millisecond))},
		Load: model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: rate}},
			Call: model.Call{Target: 0}},
	}
}

// caseMaxConn is the maxconnection story in short form: users ramp from 5
// to 60 over 35 s (think exp(1 s)); the front end calls the back end (CPU
// exp(100 ms) on 8 cores) through limit connections with a 1.5 s timeout.
// With 2 connections the back end serves at most 20/s, queues build from
// about 20 users on and calls start timing out (at about 20 s); unlimited,
// nothing queues and CPU use rises instead. Default scale 0.1: 40 s
// simulated in 4 s.
func caseMaxConn(limit int) *model.Topology {
	return &model.Topology{
		Duration: 40 * time.Second, SampleEvery: time.Second,
		Tiers: []model.Tier{
			tier("fe", 8, callStep(1, model.Call{Timeout: 1500 * time.Millisecond, Conn: model.Conn{Limit: limit}})),
			tier("be", 8, cpuExp(100*time.Millisecond)),
		},
		Load: model.Load{Kind: model.LoadClosed,
			Users: model.Schedule{{At: 0, Value: 5}, {At: 35 * time.Second, Value: 60}},
			Think: sim.Exp(time.Second),
			Call:  model.Call{Target: 0}},
	}
}

// caseSyncAsync: a middle tier with one thread calls a back end that takes
// 1 s; 4 users think exp(2 s). A synchronous handler keeps its thread while
// it waits, so requests serialise (at most 1/s); an asynchronous one
// returns it, so they wait in parallel (≈ 4/(2+1) = 1.33/s, 1 s each).
// Default scale 0.01: 250 s simulated in 2.5 s.
func caseSyncAsync(async bool) *model.Topology {
	mid := tier("mid", 8, callStep(1, model.Call{}))
	mid.Worker = model.Pool{Min: 1, Max: 1}
	mid.Async = async
	return &model.Topology{
		Duration: 250 * time.Second, SampleEvery: 10 * time.Second,
		Tiers: []model.Tier{mid, tier("be", 8, waitStep(sim.Const(time.Second)))},
		Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: 4}},
			Think: sim.Exp(2 * time.Second), Call: model.Call{Target: 0}},
	}
}

// caseWCFThrottle: a WCF service with MaxConcurrentCalls 2 (PerCall,
// Multiple) whose operation waits exp(100 ms) on a database; Poisson
// arrivals at 15/s keep the throttle 75% busy, an M/M/2 queue in front of
// the call slots. Default scale 0.1: 40 s simulated (600 requests) in 4 s.
func caseWCFThrottle() *model.Topology {
	svc := tier("svc", 4, waitStep(sim.Exp(100*time.Millisecond)))
	svc.WCF = &model.WCF{MaxCalls: 2, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple}
	return &model.Topology{
		Duration: 40 * time.Second, SampleEvery: time.Second,
		Tiers: []model.Tier{svc},
		Load: model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: 15}},
			Call: model.Call{Target: 0}},
	}
}

// caseSessions: a netTcp-like sessionful binding to a WCF service
// (PerSession, Single) with MaxConcurrentSessions 5 and 8 users, each
// with its own proxy (think 1 s, 2 s timeout, operation waits exp(100 ms)).
// The first five users' proxies keep their sessions; the others wait for
// one, time out, abort their proxy and try again with a new one, which
// waits in turn: a steady timeout rate. (A constant think time keeps the
// rates from depending on which user draws which think time: the real
// run hands the draws out in its own order.) Default scale 0.1: 40 s
// simulated in 4 s.
func caseSessions() *model.Topology {
	svc := tier("svc", 4, waitStep(sim.Exp(100*time.Millisecond)))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 5, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
	return &model.Topology{
		Duration: 40 * time.Second, SampleEvery: time.Second,
		Tiers: []model.Tier{svc},
		Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: 8}},
			Think: sim.Const(time.Second),
			Call: model.Call{Target: 0, Timeout: 2 * time.Second,
				Binding: model.Binding{Name: "netTcp", Sessionful: true},
				Proxy:   model.Proxy{Kind: model.ProxyPerUser}}},
	}
}
