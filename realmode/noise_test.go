package realmode

import (
	"time"

	"github.com/tsim-dev/tsim/internal/stallprobe"
	"github.com/tsim-dev/tsim/model"
)

// noise is what this machine added to a real run while it ran, measured
// by a probe beside it in the same process (internal/stallprobe).
type noise = stallprobe.Noise

// withNoise returns a copy of top that models what the machine added to a
// real run at the given time scale, in simulated time:
//
//   - every call (the load's included) is one real HTTP round trip: the
//     measured mean round trip becomes network latency, half each way,
//     held on the connection as the real one is;
//   - every demand (CPU, wait) is one real timer, late by the measured
//     lateness less what the clock compensates (slack, its estimate at the
//     end of the run), and ends in a hand-off of what it held to another
//     goroutine, which must wake and run: one lateness more, and about
//     the work of a loopback round trip (a few wake-ups and switches; on a
//     starved process both grow: a WCF throttle at ρ = 0.75 came out 34%
//     slower than the noisy simulation without this term, at a measured
//     0.49 ms round trip, 2.5 times the quiet one);
//   - a think time is one timer.
//
// Simulated, it says what the real run should show on this machine at
// this moment, as the simulation of top says what an ideal machine would.
// (Measured: on a quiet machine the real run lies between the two, or
// within a few percent of them; under load the noisy simulation follows
// it within 10–20% where the plain one is 20–50% off.)
func withNoise(top *model.Topology, n noise, slack time.Duration, scale float64) *model.Topology {
	c := *top
	toSim := func(d time.Duration) time.Duration { return time.Duration(float64(d) / scale) }
	hop := toSim(n.RTT / 2)
	uncompensated := toSim(max(0, n.Late-slack))
	perDemand := uncompensated + toSim(n.Late+n.RTT)
	call := func(cl *model.Call) *model.Call {
		x := *cl
		x.Network.Latency += hop
		return &x
	}
	// lengthen adds perDemand to a demand whose effective mean is m (a CPU
	// step's is its demand times the tier's cost multiplier).
	lengthen := func(st *model.Step, m time.Duration) {
		if m > 0 {
			st.Demand = st.Demand.Scale(1 + float64(perDemand)/float64(m))
		}
	}
	c.Tiers = append([]model.Tier(nil), top.Tiers...)
	for i := range c.Tiers {
		t := &c.Tiers[i]
		t.Steps = append([]model.Step(nil), t.Steps...)
		for si := range t.Steps {
			st := &t.Steps[si]
			switch st.Kind {
			case model.StepCall:
				st.Call = call(st.Call)
			case model.StepCPU:
				m := st.Demand.Mean()
				if t.CostMultiplier > 0 {
					m = time.Duration(float64(m) * t.CostMultiplier)
				}
				lengthen(st, m)
			case model.StepWait:
				lengthen(st, st.Demand.Mean())
			}
		}
	}
	c.Load.Call = *call(&top.Load.Call)
	if c.Load.Kind == model.LoadClosed {
		if m := c.Load.Think.Mean(); m > 0 {
			c.Load.Think = c.Load.Think.Scale(1 + float64(uncompensated)/float64(m))
		}
	}
	return &c
}
