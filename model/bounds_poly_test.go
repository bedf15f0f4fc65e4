package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/sim"
)

// farmChain builds depth farms of n machines each, every machine of farm
// d calling farm d+1 (through its virtual host, or machine by machine
// when perHost), with 1 ms of CPU a visit: n^(depth−1) paths from the load
// to a machine of the last farm.
func farmChain(depth, n int, perHost bool) *Topology {
	top := &Topology{Farms: make([]Farm, depth),
		Load: Load{Kind: LoadClosed, Users: Schedule{{0, 100}}, Think: sim.Const(time.Second)}}
	for d := range depth {
		f := &top.Farms[d]
		f.Name, f.Index = fmt.Sprintf("f%d", d), d
		for r := range n {
			f.Replicas = append(f.Replicas, d*n+r)
		}
	}
	for d := range depth {
		for r := range n {
			t := polyTier(fmt.Sprintf("f%d#%d", d, r+1), time.Millisecond)
			t.Farm, t.Replica, t.Cores = top.Farms[d].Name, r+1, 2
			if d+1 < depth {
				t.Steps = append(t.Steps, Step{Kind: StepCall, Call: &Call{Target: (d + 1) * n, Farm: &top.Farms[d+1], PerHost: perHost, Conn: Conn{Limit: 4}}})
			}
			top.Tiers = append(top.Tiers, t)
		}
	}
	top.Load.Call = Call{Target: 0, Farm: &top.Farms[0]}
	return top
}

// Analyse takes time polynomial in the topology, however deep its farms:
// six farms of 64 machines have 64^5 ≈ 10^9 paths from the load to a
// machine of the last, which the analysis once walked one by one (four
// farms of 1,024 machines ran past ten minutes). Now each tier's steps are
// scanned a bounded number of times: once for the first calls into it,
// once for its profile, once for its visits, and once more for its share
// of its farm's visits.
func TestAnalyseDeepFarmsPolynomial(t *testing.T) {
	for _, perHost := range []bool{false, true} {
		const depth, n = 6, 64
		top := farmChain(depth, n, perHost)
		a, work := analyse(top)
		if max := 4 * len(top.Tiers); work > max {
			t.Errorf("perHost=%v: %d units of work for %d tiers, want at most %d", perHost, work, len(top.Tiers), max)
		}
		if a.D != depth*time.Millisecond {
			t.Errorf("perHost=%v: D = %v, want %v", perHost, a.D, depth*time.Millisecond)
		}
		// Every farm: 64 machines × 2 cores, each visited 1/64 of the
		// time for 1 ms: 128 cores for 1 ms a request, 128,000/s.
		for d := range depth {
			b := findBound(t, a, fmt.Sprintf("CPU f%d", d))
			if b.Machines != n || b.Limit != 2*n || math.Abs(b.PerSec-128000)/128000 > 1e-6 {
				t.Errorf("perHost=%v: farm %d: %+v, want %d machines, %d cores, 128000/s", perHost, d, b, n, 2*n)
			}
		}
		// The connections from farm 0 to farm 1: one pool per machine of
		// farm 0 (virtual host) or per pair of machines (per host).
		c := findBound(t, a, "connections f0→f1")
		pools := n
		if perHost {
			pools = n * n
		}
		if c.Machines != pools || c.Limit != float64(4*pools) || c.PerMachine != 4 {
			t.Errorf("perHost=%v: %+v, want %d pools of 4", perHost, c, pools)
		}
		// Each pool is held 1 ms (the rest of the chain: 5 ms) by its
		// share of the requests: 1/64 of them (1/64² per host).
		// (A hold is truncated to the nanosecond: 1,220.7 ns per host.)
		if want := 4 / (5e-3 / float64(pools)); math.Abs(c.PerSec-want)/want > 1e-3 {
			t.Errorf("perHost=%v: connections %g/s, want %g", perHost, c.PerSec, want)
		}
	}
}

// polyTier is a tier of 8 cores whose thread pools never bind, with cpu
// of CPU a visit.
func polyTier(name string, cpu time.Duration) Tier {
	plenty := Pool{Min: 1000, Max: 1000}
	return Tier{Name: name, Cores: 8, CostMultiplier: 1, Worker: plenty, IO: plenty,
		Steps: []Step{{Kind: StepCPU, Demand: sim.Const(cpu)}}}
}

func findBound(t *testing.T, a Analysis, name string) Bound {
	t.Helper()
	for _, b := range a.Bounds {
		if b.Throttle == name {
			return b
		}
	}
	t.Fatalf("no bound %q", name)
	return Bound{}
}

// randomFarms builds a random call graph (a DAG: tier i calls only tiers
// after it) of single tiers and farms of 1-4 machines under the balancer
// policies whose shares differ (sticky, with connection limits, deals
// connections unevenly).
func randomFarms(rng *rand.Rand) *Topology {
	top := &Topology{Load: Load{Kind: LoadClosed, Users: Schedule{{0, 10}}, Think: sim.Const(time.Second)}}
	type group struct {
		first, n int
		farm     int // -1: a single tier
	}
	var groups []group
	ng := 1 + rng.IntN(5)
	nf := 0
	for range ng {
		if rng.IntN(2) == 0 {
			groups = append(groups, group{n: 1, farm: -1})
			continue
		}
		groups = append(groups, group{n: 1 + rng.IntN(4), farm: nf})
		nf++
	}
	top.Farms = make([]Farm, nf)
	next := 0
	for g := range groups {
		gr := &groups[g]
		gr.first = next
		next += gr.n
		if gr.farm >= 0 {
			f := &top.Farms[gr.farm]
			f.Name, f.Index = fmt.Sprintf("g%d", g), gr.farm
			f.Balancer.Policy = []BalancePolicy{BalanceRoundRobin, BalanceRandom, BalanceSticky}[rng.IntN(3)]
			for r := range gr.n {
				f.Replicas = append(f.Replicas, gr.first+r)
			}
		}
	}
	call := func(g int) Call {
		gr := groups[g]
		c := Call{Target: gr.first, Conn: Conn{Limit: 1 + rng.IntN(3)}}
		if gr.farm >= 0 {
			c.Farm = &top.Farms[gr.farm]
			c.PerHost = c.Farm.Balancer.Policy != BalanceSticky && rng.IntN(2) == 0
		}
		return c
	}
	for g, gr := range groups {
		for r := range gr.n {
			t := polyTier(fmt.Sprintf("g%d#%d", g, r+1), time.Duration(1+rng.IntN(9))*time.Millisecond)
			if gr.farm >= 0 {
				t.Farm, t.Replica = top.Farms[gr.farm].Name, r+1
			}
			for h := g + 1; h < len(groups); h++ {
				if rng.IntN(2) == 0 {
					c := call(h)
					t.Steps = append(t.Steps, Step{Kind: StepCall, Call: &c})
				}
			}
			top.Tiers = append(top.Tiers, t)
		}
	}
	top.Load.Call = call(0)
	return top
}

// The visits that flow down the graph once, farm by farm, are those of
// every path from the load (the reference: a walk of each path, the sum
// of the products of the shares along it), and the first call into each
// tier is that of a scan of every call in order.
func TestAnalyserAgainstPathWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for k := range 2000 {
		top := randomFarms(rng)
		an := newAnalyser(top)
		want := make([]float64, len(top.Tiers))
		var walk func(c *Call, v float64)
		walk = func(c *Call, v float64) {
			targets, shares := []int{c.Target}, []float64{1}
			if c.Farm != nil {
				targets, shares = c.Farm.Replicas, an.shares[c.Farm.Index]
			}
			for r, m := range targets {
				want[m] += v * shares[r]
				for _, st := range top.Tiers[m].Steps {
					if st.Kind == StepCall {
						walk(st.Call, v*shares[r])
					}
				}
			}
		}
		walk(&top.Load.Call, 1)
		for i := range want {
			if math.Abs(an.visits[i]-want[i]) > 1e-12*math.Max(1, want[i]) {
				t.Fatalf("topology %d, tier %s: %g visits, the paths give %g", k, top.Tiers[i].Name, an.visits[i], want[i])
			}
			var first *Call
			reaches := func(c *Call) bool {
				if c.Farm == nil {
					return c.Target == i
				}
				for _, m := range c.Farm.Replicas {
					if m == i {
						return true
					}
				}
				return false
			}
			if reaches(&top.Load.Call) {
				first = &top.Load.Call
			}
			for ti := range top.Tiers {
				for _, st := range top.Tiers[ti].Steps {
					if first == nil && st.Kind == StepCall && reaches(st.Call) {
						first = st.Call
					}
				}
			}
			if an.into[i] != first {
				t.Fatalf("topology %d, tier %s: first call into it %p, the scan gives %p", k, top.Tiers[i].Name, an.into[i], first)
			}
		}
	}
}
