package modeltest

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// farmTables are the step tables of farms (model/farm.go): a burst of
// users into a front end that calls a farm of back ends through a
// balancer, or a load spread over load agents. Each back end is its own
// machine; the latencies say how the requests were spread, and each
// table's Check says where they went: the requests the balancer sent to
// each machine, those each machine completed, and the connections the
// front end held. Those are counts, and maxima of levels the executors
// record at every change, so they hold in both executors exactly; tol
// does not widen them.
//
// Real mode runs these tables at a time scale of 0.2 (a simulated second
// in 200 ms of real time): at 0.05 its resolution (realmode's tableFloor)
// came out 0.22–1.21 s of simulated time on this busy machine, loose
// enough that 5 of the 14 tables passed with their last latency 1 s too
// long; at 0.2 it came out 0.08–0.42 s.
var farmTables = func() []StepTable {
	var out []StepTable
	// Each table runs to the first whole second 1 s after its last
	// request ends, which keeps real mode's runs short.
	add := func(name string, top func() *model.Topology, want string, sharing bool, fc farmCheck) {
		w, err := ParseTable(want)
		if err != nil {
			panic(err)
		}
		end := T0 + time.Duration(math.Ceil(w[len(w)-1].Latency)+1)*time.Second
		out = append(out, StepTable{Name: "farm: " + name, Want: want, Sharing: sharing, Check: fc.check, RealScale: 0.2,
			Top: func() *model.Topology {
				t := top()
				t.Duration = end
				return t
			}})
	}
	rr := model.Balancer{Policy: model.BalanceRoundRobin}
	sticky := model.Balancer{Policy: model.BalanceSticky}
	waitBE := Tier("be", 8, Wait(time.Second))

	// Round robin over 4 machines of one FCFS core, 1 s of CPU each
	// request: 8 requests, 2 per machine; each machine runs its 2 one
	// after the other (1 1 1 1 2 2 2 2), both holding their threads from
	// the start.
	add("round-robin", func() *model.Topology { return FarmTop(8, 4, rr, model.Call{}, oneCore(), 0) },
		"1 1 1 1 2 2 2 2", false, farmCheck{sent: "[2 2 2 2]", completed: "[2 2 2 2]", executing: "[2 2 2 2]"})
	// Sticky (keep-alive through an L4 balancer): the front end's 2
	// connections went to be#1 and be#2 and every call follows its
	// connection, so be#3 and be#4 never see a request; 2 at a time, 4
	// rounds of 1 s. The same whether each connection queues its own
	// calls or the pool queues them all.
	for _, perConn := range []bool{true, false} {
		name := "sticky, 2 connections"
		if !perConn {
			name += ", shared queue"
		}
		add(name, func() *model.Topology {
			return FarmTop(8, 4, sticky, model.Call{Conn: model.Conn{Limit: 2, PerConnection: perConn}}, oneCore(), 0)
		}, "1 1 2 2 3 3 4 4", false, farmCheck{sent: "[4 4 0 0]", completed: "[4 4 0 0]", executing: "[1 1 0 0]", conns: 2})
	}
	// Sticky with unlimited connections: 8 opened at once, dealt round
	// robin, 2 per machine.
	add("sticky, unlimited connections", func() *model.Topology { return FarmTop(8, 4, sticky, model.Call{}, oneCore(), 0) },
		"1 1 1 1 2 2 2 2", false, farmCheck{sent: "[2 2 2 2]", completed: "[2 2 2 2]", executing: "[2 2 2 2]", conns: 8})
	// Round robin with 2 connections for the whole farm: the balancer
	// alternates (be#1 be#2 at 0 s, be#3 be#4 at 1 s, and again), and at
	// most 2 run at once.
	add("round-robin, 2 connections", func() *model.Topology {
		return FarmTop(8, 4, rr, model.Call{Conn: model.Conn{Limit: 2, PerConnection: true}}, oneCore(), 0)
	}, "1 1 2 2 3 3 4 4", false, farmCheck{sent: "[2 2 2 2]", completed: "[2 2 2 2]", executing: "[1 1 1 1]", conns: 2})

	// A connection limit of 2 from the front end into 4 machines that
	// wait 1 s. Addressed by the farm's one virtual host name it is one
	// ServicePoint: 2 calls at a time reach the farm, 4 rounds. Addressed
	// by each machine's own name it is a ServicePoint per machine: 2 × 4 =
	// 8 at once, every call done in 1 s.
	add("virtual host, limit 2", func() *model.Topology {
		return FarmTop(8, 4, rr, model.Call{Conn: model.Conn{Limit: 2}}, waitBE, 0)
	}, "1 1 2 2 3 3 4 4", false, farmCheck{sent: "[2 2 2 2]", completed: "[2 2 2 2]", executing: "[1 1 1 1]", conns: 2, pools: "fe→be/2"})
	add("per host, limit 2", func() *model.Topology {
		return FarmTop(8, 4, rr, model.Call{Conn: model.Conn{Limit: 2}, PerHost: true}, waitBE, 0)
	}, "1 1 1 1 1 1 1 1", false, farmCheck{sent: "[2 2 2 2]", completed: "[2 2 2 2]", executing: "[2 2 2 2]", conns: 8,
		pools: "fe→be/8 fe→be#1/2 fe→be#2/2 fe→be#3/2 fe→be#4/2"})

	// Least outstanding, 3 requests at once into be#1 (3 s of its one
	// core) and be#2 (1 s): requests that arrive at one instant see only
	// each other as outstanding, so it deals them as round robin would
	// (the tie goes to the first machine at or after the round-robin
	// position): be#1, be#2, be#1. be#2's ends at 1 s, be#1's at 3 s and
	// 6 s.
	add("least outstanding", func() *model.Topology {
		top := FarmTop(3, 2, model.Balancer{Policy: model.BalanceLeastOutstanding}, model.Call{}, oneCore(), 0)
		top.Tiers[1].Steps = []model.Step{CPU(3 * time.Second)}
		return top
	}, "1 3 6", false, farmCheck{sent: "[2 1]", completed: "[2 1]", executing: "[2 1]"})
	// The balancer's own door: 2 at a time and a queue of 1, 4 requests
	// into 2 machines that wait 1 s: two pass (1 1), the third waits for
	// a place (2), the fourth finds the queue full and is refused with a
	// 503 at once.
	add("balancer door", func() *model.Topology {
		return FarmTop(4, 2, model.Balancer{Policy: model.BalanceRoundRobin, MaxConns: 2, QueueLimit: 1}, model.Call{}, waitBE, 0)
	}, "0/rejected 1 1 2", false, farmCheck{sent: "[2 1]", completed: "[2 1]", balancer: func(b *results.Balancer) string {
		if b.Rejected != 1 || b.InUseMax != 2 || b.WaitingMax != 1 {
			return fmt.Sprintf("balancer rejected %d, in use max %v, waiting max %v; want 1, 2, 1", b.Rejected, b.InUseMax, b.WaitingMax)
		}
		return ""
	}})
	// The balancer's latency, 50 ms each way, around 1 s of waiting.
	add("balancer latency", func() *model.Topology {
		return FarmTop(1, 2, model.Balancer{Policy: model.BalanceRoundRobin, Latency: 50 * time.Millisecond}, model.Call{}, waitBE, 0)
	}, "1.1", false, farmCheck{sent: "[1 0]", completed: "[1 0]"})

	// Session affinity: four calls at once on one shared proxy of a
	// sessionful binding into a farm of 2 WCF machines that wait 1 s; with
	// affinity they all go where the session is. (Without, the calls sent
	// to be#2 fail there and fault the proxy; which of the others still
	// hold it depends, in real mode, on the order its goroutines ran, so that
	// case is no step table: TestFarmWithoutSessionAffinity in simmode and
	// realmode.)
	add("session affinity", func() *model.Topology {
		be := waitBE
		be.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 200, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple}
		return FarmTop(4, 2, model.Balancer{Policy: model.BalanceRoundRobin, Affinity: true}, model.Call{Binding: model.Binding{Sessionful: true}}, be, 0)
	}, "1 1 1 1", false, farmCheck{sent: "[4 0]", completed: "[4 0]", balancer: func(b *results.Balancer) string {
		if b.Refused != 0 {
			return fmt.Sprintf("balancer refused %d, want 0", b.Refused)
		}
		return ""
	}})

	// Load agents: "only two concurrent requests" is per load agent. 8
	// users with one connection per agent into a back end that waits 1 s
	// send 1 at a time from one agent (1 2 … 8), 4 at a time from four
	// (user u runs on agent u mod 4).
	add("one load agent", func() *model.Topology { return agentTop(8, 1, model.Conn{Limit: 1}, 0) },
		"1 2 3 4 5 6 7 8", false, farmCheck{sent: "[8]", agents: 1})
	add("four load agents", func() *model.Topology { return agentTop(8, 4, model.Conn{Limit: 1}, 0) },
		"1 1 1 1 2 2 2 2", false, farmCheck{sent: "[2 2 2 2]", agents: 4})
	// A slow load client: 100 ms of its one core per request before it
	// sends; the four users of each of 2 agents share it (processor
	// sharing) for 0.4 s and then all wait 1 s at the back end together.
	add("load agent CPU", func() *model.Topology { return agentTop(8, 2, model.Conn{}, 100*time.Millisecond) },
		"1.4 1.4 1.4 1.4 1.4 1.4 1.4 1.4", true, farmCheck{sent: "[4 4]", agents: 2})
	return out
}()

// FarmTop is fe → be, a farm of n machines like be, with fe's call c: n
// users each send one request at T0; it runs until T0 + horizon (Burst).
func FarmTop(users, n int, b model.Balancer, c model.Call, be model.Tier, horizon time.Duration) *model.Topology {
	tiers := []model.Tier{Tier("fe", 8)}
	var reps []int
	for r := 1; r <= n; r++ {
		m := be
		m.Name, m.Farm, m.Replica = fmt.Sprintf("be#%d", r), "be", r
		reps = append(reps, len(tiers))
		tiers = append(tiers, m)
	}
	top := Burst(users, 0, horizon, tiers...)
	top.Farms = []model.Farm{{Name: "be", Replicas: reps, Balancer: b}}
	c.Target, c.Farm = reps[0], &top.Farms[0]
	top.Tiers[0].Steps = []model.Step{{Kind: model.StepCall, Call: &c}}
	return top
}

// oneCore is a back end of one FCFS core and 1 s of CPU per request.
func oneCore() model.Tier {
	be := Tier("be", 1, CPU(time.Second))
	be.CPU = model.CPUFCFS
	return be
}

// agentTop is users on k load agents (one core each), each agent with its
// own pool of conn into be (which waits 1 s), each request taking cpu of
// its agent's core first (the table sets the run's end).
func agentTop(users, k int, conn model.Conn, cpu time.Duration) *model.Topology {
	var tiers []model.Tier
	for r := 1; r <= k; r++ {
		a := Tier(fmt.Sprintf("agent#%d", r), 1)
		a.Farm, a.Replica, a.Agent = "agent", r, true
		if cpu > 0 {
			a.Steps = append(a.Steps, CPU(cpu))
		}
		a.Steps = append(a.Steps, Call(k, model.Call{Conn: conn}))
		tiers = append(tiers, a)
	}
	tiers = append(tiers, Tier("be", 8, Wait(time.Second)))
	top := Burst(users, 0, 0, tiers...)
	top.Farms = []model.Farm{{Name: "agent", Agents: true, Balancer: model.Balancer{Policy: model.BalanceByUser}}}
	for r := range k {
		top.Farms[0].Replicas = append(top.Farms[0].Replicas, r)
	}
	top.Load.Call = model.Call{Target: 0, Farm: &top.Farms[0]}
	return top
}

// farmCheck is what a farm table checks besides its latencies ("" or 0:
// not checked): the balancer's requests sent to each machine (Sent, in
// replica order), each machine's completed requests, its requests
// executing at most, the front end's connections to the farm in use at
// most, its connection pools ("from→to/limit", the farm's folded pool
// first, then the machines'), the balancer's other counters, and the
// number of load agents the run folded into one "agent" row.
type farmCheck struct {
	sent, completed, executing string
	conns                      float64
	pools                      string
	balancer                   func(*results.Balancer) string
	agents                     int
}

func (fc farmCheck) check(r *results.Run, _ float64) (out []string) {
	if len(r.Balancers) != 1 {
		return []string{fmt.Sprintf("%d balancers, want 1", len(r.Balancers))}
	}
	b := &r.Balancers[0]
	if got := fmt.Sprint(b.Sent); got != fc.sent {
		errorf(&out, "balancer sent %s, want %s", got, fc.sent)
	}
	perMachine := func(what, want string, v func(*results.Tier) any) {
		if want == "" {
			return
		}
		var got []string
		for k := range r.Replicas {
			if results.FarmOf(r.Replicas[k].Name) == "be" {
				got = append(got, fmt.Sprint(v(&r.Replicas[k])))
			}
		}
		if g := "[" + strings.Join(got, " ") + "]"; g != want {
			errorf(&out, "%s per machine %s, want %s", what, g, want)
		}
	}
	perMachine("completed", fc.completed, func(t *results.Tier) any { return t.Completed })
	perMachine("executing max", fc.executing, func(t *results.Tier) any { return t.ExecutingMax })
	if fc.conns > 0 || fc.pools != "" {
		var pools []string
		var inUse float64
		for _, c := range append(append([]results.Call(nil), r.Calls...), r.ReplicaCalls...) {
			if c.From == "fe" && results.FarmOf(c.To) == "be" {
				pools = append(pools, fmt.Sprintf("%s→%s/%d", c.From, c.To, c.Limit))
				if c.To == "be" {
					inUse = c.InUseMax
				}
			}
		}
		if fc.conns > 0 && inUse != fc.conns {
			errorf(&out, "fe→be connections in use max %v, want %v", inUse, fc.conns)
		}
		if g := strings.Join(pools, " "); fc.pools != "" && g != fc.pools {
			errorf(&out, "connection pools %q, want %q", g, fc.pools)
		}
	}
	if fc.balancer != nil {
		if m := fc.balancer(b); m != "" {
			out = append(out, m)
		}
	}
	if fc.agents > 0 {
		if a := r.Tiers[0]; a.Name != "agent" || a.Replicas != fc.agents {
			errorf(&out, "first row %s of %d machines, want agent of %d", a.Name, a.Replicas, fc.agents)
		}
	}
	return out
}
