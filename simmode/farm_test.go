package simmode

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// Step tables for farms: n users each send one request at t0 to a front
// end that calls a farm of back ends through a balancer; every back end
// is one FCFS core and each request takes 1 s of it, so the latencies say
// how the requests were spread, and the samples at t0 + 0.5 s say how
// many each machine was executing (holding its thread: running on its
// core or waiting for it).

// farmTop builds fe → be (a farm of n machines like be) with the front
// end's call c.
func farmTop(users, n int, b model.Balancer, c model.Call, be model.Tier) *model.Topology {
	fe := tier("fe")
	tiers := []model.Tier{fe}
	var reps []int
	for r := 1; r <= n; r++ {
		m := be
		m.Name, m.Farm, m.Replica = fmt.Sprintf("be#%d", r), "be", r
		reps = append(reps, len(tiers))
		tiers = append(tiers, m)
	}
	top := burst(users, 0, tiers...)
	top.SampleEvery = 500 * time.Millisecond
	top.Farms = []model.Farm{{Name: "be", Replicas: reps, Balancer: b}}
	c.Target, c.Farm = reps[0], &top.Farms[0]
	top.Tiers[0].Steps = []model.Step{{Kind: model.StepCall, Call: &c}}
	return top
}

// oneCore is a back end of one FCFS core and 1 s of CPU per request.
func oneCore() model.Tier {
	be := tier("be", cpu(time.Second))
	be.Cores, be.CPU = 1, model.CPUFCFS
	return be
}

// runningAt returns how many requests each machine of the farm ran at the
// sample at t (replica order), and the farm's total.
func runningAt(t *testing.T, res *results.Run, at time.Duration) string {
	t.Helper()
	for _, s := range res.Series {
		if s.T != at.Seconds() {
			continue
		}
		var b []string
		for _, m := range s.Replicas {
			b = append(b, fmt.Sprint(m.Executing))
		}
		return fmt.Sprintf("%s = %g", strings.Join(b, "+"), s.Tiers[1].Executing)
	}
	t.Fatalf("no sample at %v", at)
	return ""
}

func TestFarmRoundRobinAndSticky(t *testing.T) {
	at := t0 + 500*time.Millisecond
	cases := []struct {
		name      string
		b         model.Balancer
		conn      model.Conn
		latencies string
		running   string // executing per machine at t0 + 0.5 s, and the farm's
		sent      string
	}{
		// Round robin over 4 machines: 8 requests, 2 per machine; each
		// machine serves its 2 one after the other.
		{"round-robin", model.Balancer{Policy: model.BalanceRoundRobin}, model.Conn{},
			"1 1 1 1 2 2 2 2", "2+2+2+2 = 8", "[2 2 2 2]"},
		// Sticky (keep-alive through an L4 balancer): the front end's 2
		// connections went to be#1 and be#2 and every call follows its
		// connection, so be#3 and be#4 never see a request.
		{"sticky, 2 connections", model.Balancer{Policy: model.BalanceSticky}, model.Conn{Limit: 2, PerConnection: true},
			"1 1 2 2 3 3 4 4", "1+1+0+0 = 2", "[4 4 0 0]"},
		{"sticky, 2 connections, shared queue", model.Balancer{Policy: model.BalanceSticky}, model.Conn{Limit: 2},
			"1 1 2 2 3 3 4 4", "1+1+0+0 = 2", "[4 4 0 0]"},
		// Unlimited connections: 8 opened at t0, dealt round robin.
		{"sticky, unlimited connections", model.Balancer{Policy: model.BalanceSticky}, model.Conn{},
			"1 1 1 1 2 2 2 2", "2+2+2+2 = 8", "[2 2 2 2]"},
		// Round robin again, but 2 connections for the whole farm: the
		// balancer alternates, and at most 2 run at once.
		{"round-robin, 2 connections", model.Balancer{Policy: model.BalanceRoundRobin}, model.Conn{Limit: 2, PerConnection: true},
			"1 1 2 2 3 3 4 4", "1+1+0+0 = 2", "[2 2 2 2]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, res := outcomes(t, farmTop(8, 4, tc.b, model.Call{Conn: tc.conn}, oneCore()))
			expect(t, "latencies", got, tc.latencies)
			expect(t, "executing at t0+0.5s", runningAt(t, res, at), tc.running)
			expect(t, "sent", fmt.Sprint(res.Balancers[0].Sent), tc.sent)
		})
	}
}

func TestFarmVirtualHostVersusPerHostLimit(t *testing.T) {
	// A connection limit of 2 from the front end. Addressed by the
	// farm's one virtual host name it is one ServicePoint: 2 calls at a
	// time reach the farm of 4. Addressed by each machine's own name it is
	// a ServicePoint per machine: 2 × 4 = 8 at once.
	be := tier("be", wait(time.Second))
	at := t0 + 500*time.Millisecond
	for _, tc := range []struct {
		name                string
		perHost             bool
		latencies, running  string
		pools, inUseMax     string
		farmLimit, hostName string
	}{
		{"virtual host", false, "1 1 2 2 3 3 4 4", "1+1+0+0 = 2", "fe→be", "2", "2", "be"},
		{"per host", true, "1 1 1 1 1 1 1 1", "2+2+2+2 = 8", "fe→be#1 fe→be#2 fe→be#3 fe→be#4", "8", "8", "be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := farmTop(8, 4, model.Balancer{Policy: model.BalanceRoundRobin}, model.Call{Conn: model.Conn{Limit: 2}, PerHost: tc.perHost}, be)
			got, res := outcomes(t, top)
			expect(t, "latencies", got, tc.latencies)
			expect(t, "executing at t0+0.5s", runningAt(t, res, at), tc.running)
			var pools []string
			for _, c := range res.ReplicaCalls {
				pools = append(pools, c.From+"→"+c.To)
			}
			if !tc.perHost {
				pools = []string{res.Calls[1].From + "→" + res.Calls[1].To}
			}
			expect(t, "pools", strings.Join(pools, " "), tc.pools)
			fc := res.Calls[1]
			expect(t, "connections in use at most", fmt.Sprint(fc.InUseMax), tc.inUseMax)
			expect(t, "farm limit", fmt.Sprint(fc.Limit), tc.farmLimit)
			expect(t, "folded to", fc.To, tc.hostName)
		})
	}
}

func TestFarmLeastOutstandingAndBalancerDoor(t *testing.T) {
	// Requests that arrive at one instant see only each other as
	// outstanding: least outstanding deals them as round robin would (the
	// tie goes to the first machine at or after the round-robin position).
	slow := oneCore()
	top := farmTop(3, 2, model.Balancer{Policy: model.BalanceLeastOutstanding}, model.Call{}, slow)
	top.Tiers[1].Steps = []model.Step{cpu(3 * time.Second)}
	got, res := outcomes(t, top)
	expect(t, "least outstanding", got, "1 3 6")
	expect(t, "sent", fmt.Sprint(res.Balancers[0].Sent), "[2 1]")

	// The balancer's own door: 2 at a time, a queue of 1; the fourth of
	// four is refused with a 503 at once, the third waits for a place.
	top = farmTop(4, 2, model.Balancer{Policy: model.BalanceRoundRobin, MaxConns: 2, QueueLimit: 1}, model.Call{}, tier("be", wait(time.Second)))
	got, res = outcomes(t, top)
	expect(t, "balancer door", got, "0/rejected 1 1 2")
	if b := res.Balancers[0]; b.Rejected != 1 || b.InUseMax != 2 || b.WaitingMax != 1 {
		t.Errorf("balancer %+v", b)
	}

	// Its latency: 50 ms each way.
	top = farmTop(1, 2, model.Balancer{Policy: model.BalanceRoundRobin, Latency: 50 * time.Millisecond}, model.Call{}, tier("be", wait(time.Second)))
	got, _ = outcomes(t, top)
	expect(t, "balancer latency", got, "1.1")
}

func TestFarmSessionAffinity(t *testing.T) {
	// Four calls at t0 on one shared proxy of a sessionful binding into a
	// farm of 2 WCF machines. With affinity they all go where the session
	// is. Without, round robin sends the second and fourth to be#2, which
	// does not know the session: they fail at once, and the proxy faults.
	be := tier("be", wait(time.Second))
	be.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 200, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple}
	call := model.Call{Binding: model.Binding{Sessionful: true}}
	for _, tc := range []struct {
		affinity        bool
		latencies, sent string
		refused         int64
	}{
		{true, "1 1 1 1", "[4 0]", 0},
		{false, "0/failed 0/failed 1 1", "[2 0]", 2},
	} {
		got, res := outcomes(t, farmTop(4, 2, model.Balancer{Policy: model.BalanceRoundRobin, Affinity: tc.affinity}, call, be))
		expect(t, fmt.Sprintf("affinity %v", tc.affinity), got, tc.latencies)
		if b := res.Balancers[0]; fmt.Sprint(b.Sent) != tc.sent || b.Refused != tc.refused {
			t.Errorf("affinity %v: balancer %+v", tc.affinity, b)
		}
	}
}

// agentTop is n users on k load agents, each agent with its own pool of
// conn into be (wait 1 s), each with agent CPU cpu first.
func agentTop(users, k int, conn model.Conn, cpuPer time.Duration) *model.Topology {
	var tiers []model.Tier
	for r := 1; r <= k; r++ {
		a := model.Tier{Name: fmt.Sprintf("agent#%d", r), Farm: "agent", Replica: r, Agent: true, Cores: 1, CostMultiplier: 1, Worker: plenty, IO: plenty}
		if cpuPer > 0 {
			a.Steps = append(a.Steps, cpu(cpuPer))
		}
		a.Steps = append(a.Steps, model.Step{Kind: model.StepCall, Call: &model.Call{Target: k, Conn: conn}})
		tiers = append(tiers, a)
	}
	tiers = append(tiers, tier("be", wait(time.Second)))
	top := burst(users, 0, tiers...)
	top.Farms = []model.Farm{{Name: "agent", Agents: true, Balancer: model.Balancer{Policy: model.BalanceByUser}}}
	for r := range k {
		top.Farms[0].Replicas = append(top.Farms[0].Replicas, r)
	}
	top.Load.Call = model.Call{Target: 0, Farm: &top.Farms[0]}
	return top
}

func TestFarmLoadAgents(t *testing.T) {
	// "Only two concurrent requests" is per load agent: 8 users with one
	// connection each agent send 1 at a time from one agent, 4 at a time
	// from four (user u runs on agent u mod 4).
	got, _ := outcomes(t, agentTop(8, 1, model.Conn{Limit: 1}, 0))
	expect(t, "one agent", got, "1 2 3 4 5 6 7 8")
	got, res := outcomes(t, agentTop(8, 4, model.Conn{Limit: 1}, 0))
	expect(t, "four agents", got, "1 1 1 1 2 2 2 2")
	if fmt.Sprint(res.Balancers[0].Sent) != "[2 2 2 2]" || res.Tiers[0].Name != "agent" || res.Tiers[0].Replicas != 4 {
		t.Errorf("agents: %v, %+v", res.Balancers[0].Sent, res.Tiers[0])
	}
	// A slow load client: 100 ms of its one core per request, before it
	// sends: the four users of each of 2 agents queue for it (processor
	// sharing), 0.4 s, and all reach be at once.
	got, _ = outcomes(t, agentTop(8, 2, model.Conn{}, 100*time.Millisecond))
	expect(t, "agent CPU", got, "1.4 1.4 1.4 1.4 1.4 1.4 1.4 1.4")
}
