package realmode

import (
	"fmt"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// The model's farm step tables (model/farm_test.go) for real: each
// machine of a farm its own listener, the balancer a listener of its own
// deciding with model.ChooseReplica, a PerHost caller picking with
// model.Pick.

// farmTop is fe → be, a farm of n machines like be, with fe's call c; n
// users send one request each at t0.
func farmTop(users, n int, b model.Balancer, c model.Call, be model.Tier, horizon time.Duration) *model.Topology {
	tiers := []model.Tier{tier("fe", 8)}
	var reps []int
	for r := 1; r <= n; r++ {
		m := be
		m.Name, m.Farm, m.Replica = fmt.Sprintf("be#%d", r), "be", r
		reps = append(reps, len(tiers))
		tiers = append(tiers, m)
	}
	top := burst(users, 0, horizon, tiers...)
	top.Farms = []model.Farm{{Name: "be", Replicas: reps, Balancer: b}}
	c.Target, c.Farm = reps[0], &top.Farms[0]
	top.Tiers[0].Steps = []model.Step{{Kind: model.StepCall, Call: &c}}
	return top
}

func oneCoreFCFS() model.Tier {
	be := tier("be", 1, cpuStep(time.Second))
	be.CPU = model.CPUFCFS
	return be
}

func TestStepFarmBalancers(t *testing.T) {
	t.Parallel()
	wait := tier("be", 8, waitFor(time.Second))
	for _, tc := range []struct {
		name  string
		b     model.Balancer
		c     model.Call
		be    model.Tier
		users int
		want  string
		sent  string // "" = not checked
	}{
		{"round-robin", model.Balancer{Policy: model.BalanceRoundRobin}, model.Call{}, oneCoreFCFS(), 8,
			"1 1 1 1 2 2 2 2", "[2 2 2 2]"},
		{"sticky, 2 connections", model.Balancer{Policy: model.BalanceSticky}, model.Call{Conn: model.Conn{Limit: 2, PerConnection: true}}, oneCoreFCFS(), 8,
			"1 1 2 2 3 3 4 4", "[4 4 0 0]"},
		{"virtual host, limit 2", model.Balancer{Policy: model.BalanceRoundRobin}, model.Call{Conn: model.Conn{Limit: 2}}, wait, 8,
			"1 1 2 2 3 3 4 4", ""},
		{"per host, limit 2", model.Balancer{Policy: model.BalanceRoundRobin}, model.Call{Conn: model.Conn{Limit: 2}, PerHost: true}, wait, 8,
			"1 1 1 1 1 1 1 1", "[2 2 2 2]"},
		{"balancer door", model.Balancer{Policy: model.BalanceRoundRobin, MaxConns: 2, QueueLimit: 1}, model.Call{}, wait, 4,
			"0/rejected 1 1 2", ""},
		{"balancer latency", model.Balancer{Policy: model.BalanceRoundRobin, Latency: 50 * time.Millisecond}, model.Call{}, wait, 1,
			"1.1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 4
			if tc.users <= 4 {
				n = 2
			}
			top := farmTop(tc.users, n, tc.b, tc.c, tc.be, 6*time.Second)
			s, r := table(t, tc.name, top, tc.want, Options{})
			for _, res := range judged(s, r) {
				if tc.sent != "" {
					if got := fmt.Sprint(res.Balancers[0].Sent); got != tc.sent {
						t.Errorf("%s: sent %s, want %s", tc.name, got, tc.sent)
					}
				}
			}
		})
	}
}

func TestStepFarmSessionAffinity(t *testing.T) {
	t.Parallel()
	be := tier("be", 8, waitFor(time.Second))
	be.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 200, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple}
	call := model.Call{Binding: model.Binding{Sessionful: true}}
	// With affinity all four calls on the shared proxy reach the session's
	// machine.
	top := farmTop(4, 2, model.Balancer{Policy: model.BalanceRoundRobin, Affinity: true}, call, be, 4*time.Second)
	s, r := table(t, "affinity", top, "1 1 1 1", Options{})
	for _, res := range judged(s, r) {
		if b := res.Balancers[0]; b.Refused != 0 || fmt.Sprint(b.Sent) != "[4 0]" {
			t.Errorf("affinity: %+v", b)
		}
	}
	// Without, a call sent to the other machine fails there and the proxy
	// faults. (Which calls still hold the faulted proxy depends on when
	// their goroutines ran, so only the failures are checked: the model's
	// table is in model TestFarmSessionAffinity.)
	// Each ends 1–2 s (50–100 ms of real time) before the run: judged
	// as a table is (judgeReal).
	top = farmTop(4, 2, model.Balancer{Policy: model.BalanceRoundRobin}, call, be, 4*time.Second)
	judgeReal(t, "no affinity", top, Options{Seed: 1, TimeScale: stepScale}, tableStall, func(res *results.Run, _ noise) string {
		if b := res.Balancers[0]; b.Refused < 1 || res.Requests.Failed != b.Refused || res.Requests.Completed+res.Requests.Failed != 4 {
			return fmt.Sprintf("balancer %+v, requests %+v", b, res.Requests)
		}
		return ""
	})
}

func TestStepFarmLoadAgents(t *testing.T) {
	t.Parallel()
	// model TestFarmLoadAgents: one connection per load agent.
	for _, tc := range []struct {
		agents int
		want   string
	}{{1, "1 2 3 4"}, {2, "1 1 2 2"}} {
		var tiers []model.Tier
		for r := 1; r <= tc.agents; r++ {
			a := tier(fmt.Sprintf("agent#%d", r), 1, model.Step{Kind: model.StepCall, Call: &model.Call{Target: tc.agents, Conn: model.Conn{Limit: 1}}})
			a.Farm, a.Replica, a.Agent = "agent", r, true
			tiers = append(tiers, a)
		}
		tiers = append(tiers, tier("be", 8, waitFor(time.Second)))
		top := burst(4, 0, 6*time.Second, tiers...)
		top.Farms = []model.Farm{{Name: "agent", Agents: true, Balancer: model.Balancer{Policy: model.BalanceByUser}}}
		for r := range tc.agents {
			top.Farms[0].Replicas = append(top.Farms[0].Replicas, r)
		}
		top.Load.Call = model.Call{Target: 0, Farm: &top.Farms[0]}
		table(t, fmt.Sprintf("%d agents", tc.agents), top, tc.want, Options{})
	}
}
