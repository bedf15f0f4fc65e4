package format

import (
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/model"
)

// farmFile is minimal with the back end as a farm of 4 and the front end
// as a farm of 3.
var farmFile = strings.Replace(mut("cores = 4", "cores = 4\nreplicas = 4\nbalancer.policy = \"sticky\""),
	"cores = 8", "cores = 8\nreplicas = 3", 1)

func TestFarmErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"zero replicas", mut("cores = 4", "cores = 4\nreplicas = 0"),
			"crack.toml:23: tier.be.replicas: must be > 0, got 0"},
		{"no such policy", mut("cores = 4", "cores = 4\nbalancer.policy = \"weighted\""),
			`crack.toml:23: tier.be.balancer.policy: unknown value "weighted" (allowed: "round-robin", "random", "least-outstanding", "sticky")`},
		{"affinity on a sessionless binding", mut("cores = 4", "cores = 4\nreplicas = 2\nbalancer.affinity = \"session\""),
			`crack.toml:24: tier.be.balancer.affinity: "session" keeps a WCF session's calls on its machine, but every call into be uses a sessionless binding; affinity needs a sessionful binding (wsHttp, netTcp, namedPipe, or binding_sessionful = true), or leave it out`},
		{"agents without a load", mut("users = 10", "users = 10\nagents = 12"),
			"crack.toml:6: load.agents: 12 agents but at most 10 users: 2 agents would send nothing (users run on agents in turn; allowed: 1 to 10 agents)"},
		{"farm_address to one machine", mut(`timeout = "20s"`, "timeout = \"20s\"\nfarm_address = \"per-host\""),
			"crack.toml:18: tier.web.step.2.farm_address: applies to calls into a farm; be runs on one machine (give it replicas = N)"},
		{"per-host and sticky", strings.Replace(farmFile, `timeout = "20s"`, "timeout = \"20s\"\nfarm_address = \"per-host\"", 1),
			`crack.toml:19: tier.web.step.2.farm_address: "per-host": the caller picks each machine itself, but be's balancer.policy is "sticky", which a balancer between connections and machines applies (allowed with per-host: round-robin, random, least-outstanding; or farm_address = "virtual")`},
		{"queue without a limit", mut("cores = 4", "cores = 4\nbalancer.queue_limit = 5"),
			"crack.toml:23: tier.be.balancer.queue_limit: applies with balancer.max_connections (the requests the balancer passes at once); set it too"},
		{"no such farm_address", mut(`timeout = "20s"`, "timeout = \"20s\"\nfarm_address = \"dns\""),
			`crack.toml:18: tier.web.step.2.farm_address: unknown value "dns" (allowed: "virtual", "per-host")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadExperiment("crack.toml", []byte(tc.file), nil)
			if err == nil {
				t.Fatalf("loaded; want %s", tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("got\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

func TestFarmExpansion(t *testing.T) {
	x, err := LoadExperiment("crack.toml", []byte(strings.Replace(farmFile, "users = 10", "users = 10\nagents = 2\nagent_cpu = \"exp(1ms)\"", 1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := x.Scenario(0)
	if err != nil {
		t.Fatal(err)
	}
	top := &sc.Topology
	var names []string
	for _, ti := range top.Tiers {
		names = append(names, ti.Name)
	}
	if got := strings.Join(names, " "); got != "agent#1 agent#2 web#1 web#2 web#3 be#1 be#2 be#3 be#4" {
		t.Fatalf("machines: %s", got)
	}
	if len(top.Farms) != 3 || top.Farms[0].Name != "agent" || top.Farms[2].Balancer.Policy != model.BalanceSticky {
		t.Fatalf("farms %+v", top.Farms)
	}
	if c := top.Load.Call; c.Farm != &top.Farms[0] || c.Farm.Balancer.Policy != model.BalanceByUser {
		t.Errorf("the load does not reach its agents: %+v", c)
	}
	// Every machine has its own calls, into the farm's first machine.
	seen := map[*model.Call]bool{}
	for i := range top.Tiers {
		for _, st := range top.Tiers[i].Steps {
			if st.Kind != model.StepCall {
				continue
			}
			if seen[st.Call] {
				t.Errorf("%s shares a call with another machine", top.Tiers[i].Name)
			}
			seen[st.Call] = true
			want := &top.Farms[1]
			if strings.HasPrefix(top.Tiers[i].Name, "web") {
				want = &top.Farms[2]
			}
			if st.Call.Farm != want || st.Call.Target != want.Replicas[0] {
				t.Errorf("%s calls %d (farm %v)", top.Tiers[i].Name, st.Call.Target, st.Call.Farm)
			}
		}
	}
	r := top.Tiers[2].Steps[1].Call.Conn.Resolution
	for _, want := range []string{"one virtual host name", "connection-sticky, so these 96 connections reach at most 4 of its 4 machines", "the farm be receives at most 96 × 3 machines of web = 288 connections"} {
		if !strings.Contains(r, want) {
			t.Errorf("resolution %q lacks %q", r, want)
		}
	}
	// A sweep varies replicas like any key.
	x, err = LoadExperiment("crack.toml", []byte(farmFile+"\n[sweep]\nkey = \"tier.be.replicas\"\nvalues = [1, 8]\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err = x.Scenario(1)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sc.Topology.Farms[1].Replicas); n != 8 {
		t.Errorf("replicas 8 gave %d machines", n)
	}
	// Without farms nothing changes.
	x, _ = LoadExperiment("crack.toml", []byte(minimal), nil)
	sc, _ = x.Scenario(0)
	if len(sc.Topology.Farms) != 0 || sc.Topology.Tiers[0].Name != "web" {
		t.Errorf("a file without farms compiled into %+v", sc.Topology.Farms)
	}
}
