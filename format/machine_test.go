package format

import (
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/simmode"
)

func TestMachineShared(t *testing.T) {
	// be on web's machine: it takes web's 8 cores (its per-CPU defaults
	// too: WCF 3.5's throttles do not scale, so check the cores) and both
	// get one machine id; the load's agents on web's machine too.
	top := loadTopo(t, mut("name = \"be\"\npreset = \"self-net35\"\ncores = 4", "name = \"be\"\npreset = \"self-net35\"\nmachine = \"web\""))
	web, be := top.Tiers[0], top.Tiers[1]
	if be.Cores != 8 || web.Machine == 0 || be.Machine != web.Machine {
		t.Errorf("web machine %d, be machine %d cores %d; want one machine, 8 cores", web.Machine, be.Machine, be.Cores)
	}
	top = loadTopo(t, mut("think = \"exp(1s)\"", "think = \"exp(1s)\"\nagent_machine = \"be\"\nagent_cpu = \"const(1ms)\""))
	var agent, beT *model.Tier
	for i := range top.Tiers {
		switch t := &top.Tiers[i]; {
		case t.Agent:
			agent = t
		case t.Name == "be":
			beT = t
		}
	}
	if agent == nil || beT == nil || agent.Machine == 0 || agent.Machine != beT.Machine || agent.Cores != 4 {
		t.Fatalf("agent %+v, be machine %d; want the agent on be's 4-core machine", agent, beT.Machine)
	}
	if top.Tiers[1].Name != "web" || top.Tiers[1].Machine != 0 {
		t.Errorf("web: machine %d, want its own (0)", top.Tiers[1].Machine)
	}
}

func TestMachineBad(t *testing.T) {
	be := "name = \"be\"\npreset = \"self-net35\"\ncores = 4"
	for _, tc := range []struct{ name, file, want string }{
		{"unknown", mut(be, be+"\nmachine = \"db\""), `crack.toml:23: tier.be.machine: unknown tier "db"; allowed: the name of another tier (web, be)`},
		{"itself", mut(be, be+"\nmachine = \"be\""), `crack.toml:23: tier.be.machine: names the tier itself; a tier is on its own machine unless this names another tier`},
		{"cores", mut(be, be+"\nmachine = \"web\""), `crack.toml:22: tier.be.cores: is 4, but the tier runs on the machine of "web" (8 cores); leave cores out or set 8`},
		{"farm", strings.Replace(mut("cores = 8", "cores = 8\nreplicas = 2"), be, be+"\nmachine = \"web\"", 1), `crack.toml:24: tier.be.machine: tier "web" is a farm (replicas); a tier shares one machine, not a farm's`},
		{"agent-cores", mut("think = \"exp(1s)\"", "think = \"exp(1s)\"\nagent_machine = \"be\"\nagent_cores = 2"), `crack.toml:8: load.agent_cores: is 2, but the agents run on the machine of "be" (4 cores); leave agent_cores out or set 4`},
		{"chain", strings.Replace(mut("cores = 8", "cores = 8\nmachine = \"be\""), be, be+"\nmachine = \"web\"", 1), `crack.toml:24: tier.be.machine: tier "web" runs on another tier's machine itself; name that tier ("be")`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadExperiment("crack.toml", []byte(tc.file), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got:\n%v\nwant a line:\n%s", err, tc.want)
			}
		})
	}
}

func TestMachineAgentsShareTheService(t *testing.T) {
	// The load's agent on the service's two cores: its 1 ms a request and
	// the service's 1 ms (exponential) share them, at most 1,000 requests a
	// second; on an agent of its own, close to 2,000 (two stations in
	// tandem, 50 users).
	file := func(agent string) string {
		return `name = "a"
duration = "20s"
warmup = "5s"
[load]
users = 50
think = "const(0s)"
agent_cpu = "exp(1ms)"
` + agent + `
[load.call]
binding = "none"
loopback = true
[[tier]]
name = "svc"
cores = 2
  [[tier.step]]
  cpu = "exp(1ms)"
`
	}
	for _, tc := range []struct {
		agent  string
		lo, hi float64
	}{{`agent_machine = "svc"`, 950, 1010}, {`agent_cores = 2`, 1850, 2010}} {
		top := loadTopo(t, file(tc.agent))
		res, err := simmode.Run(&top, model.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if g := res.GoodputPerS; g < tc.lo || g > tc.hi {
			t.Errorf("%s: %.0f requests/s, want %.0f–%.0f", tc.agent, g, tc.lo, tc.hi)
		}
	}
}
