package model_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
)

// The operational-law bounds of a farm: a per-machine limit multiplies
// with the machines, and a sticky balancer spreads by connections.
func TestAnalyseFarm(t *testing.T) {
	const file = `
[load]
users = 100
think = "1s"
[[tier]]
name = "web"
replicas = 3
cores = 4
calls.client = "dotnet"
calls.maxconnection = 2
  [[tier.step]]
  call = "svc"
  binding = "none"
  network_latency = "0s"
[[tier]]
name = "svc"
replicas = 4
cores = 2
balancer.policy = "POLICY"
  [[tier.step]]
  cpu = "100ms"
`
	bound := func(a model.Analysis, name string) model.Bound {
		for _, b := range a.Bounds {
			if b.Throttle == name {
				return b
			}
		}
		t.Fatalf("no bound %q in %+v", name, a.Bounds)
		return model.Bound{}
	}
	for _, tc := range []struct {
		policy  string
		cpuPerS float64 // the farm's CPU bound
		note    string
	}{
		// 4 machines × 2 cores, 100 ms a request: 80/s.
		{"round-robin", 80, "4 machines of svc, 2 each"},
		// 6 connections dealt over 4 machines: 2, 2, 1, 1; the busiest two
		// get a third of the requests each and saturate at 2/0.1/(1/3) = 60/s.
		{"sticky", 60, "the busiest machine receives 33% of the farm's requests (sticky), not 25%"},
	} {
		x, err := format.LoadExperiment("farm.toml", []byte(strings.Replace(file, "POLICY", tc.policy, 1)), nil)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := x.Scenario(0)
		if err != nil {
			t.Fatal(err)
		}
		a := model.Analyse(&sc.Topology)
		c := bound(a, "connections web→svc")
		if c.Limit != 6 || c.Machines != 3 || c.PerMachine != 2 || math.Abs(c.PerSec-60) > 1e-6 {
			t.Errorf("%s: connections %+v, want 2 × 3 = 6 connections, 60/s", tc.policy, c)
		}
		if !strings.Contains(c.Note, "the farm svc receives at most 2 × 3 machines of web = 6 connections") {
			t.Errorf("%s: connection note %q", tc.policy, c.Note)
		}
		cpu := bound(a, "CPU svc")
		if cpu.Limit != 8 || cpu.Machines != 4 || math.Abs(cpu.PerSec-tc.cpuPerS) > 1e-6 || !strings.Contains(cpu.Note, tc.note) {
			t.Errorf("%s: CPU %+v, want 8 cores, %g/s, note %q", tc.policy, cpu, tc.cpuPerS, tc.note)
		}
	}
}
