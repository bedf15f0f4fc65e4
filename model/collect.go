package model

import (
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// EntryTiers are the tiers whose replies count as the system's throughput:
// the load's entry tier, every machine of its farm, and, when the load
// runs on agents, the tiers the agents call.
func EntryTiers(top *Topology) []int {
	var out []int
	add := func(c *Call) {
		if c.Farm != nil {
			out = append(out, c.Farm.Replicas...)
		} else if c.Target >= 0 {
			out = append(out, c.Target)
		}
	}
	lc := &top.Load.Call
	if lc.Farm == nil || !lc.Farm.Agents {
		add(lc)
		return out
	}
	seen := map[*Call]bool{}
	for _, a := range lc.Farm.Replicas {
		for si := range top.Tiers[a].Steps {
			if st := &top.Tiers[a].Steps[si]; st.Kind == StepCall && !seen[st.Call] {
				seen[st.Call] = true
				add(st.Call)
			}
		}
	}
	return out
}

// FoldFarms turns a run's per-machine results into farm totals (results
// FoldTiers, FoldSamples, FoldCalls): res.Tiers, Calls, TierNames and the
// series' tiers become the farms', and the machines move to Replicas,
// ReplicaCalls, ReplicaNames and each sample's Replicas. resp, if given,
// are the tiers' response-time histograms (index as Topology.Tiers): a
// farm's response-time quantiles are then those of its machines' merged.
// Both executors call it.
func FoldFarms(top *Topology, res *results.Run, resp []*sim.Histogram) {
	farm := make([]string, len(top.Tiers))
	cores := make([]int, len(top.Tiers))
	for i := range top.Tiers {
		farm[i], cores[i] = top.Tiers[i].Farm, top.Tiers[i].Cores
	}
	names := res.TierNames
	res.Tiers, res.Replicas = results.FoldTiers(res.Tiers, farm)
	res.TierNames, res.ReplicaNames = nil, nil
	for i, t := range top.Tiers {
		if t.Farm != "" {
			res.ReplicaNames = append(res.ReplicaNames, names[i])
		}
	}
	for _, t := range res.Tiers {
		res.TierNames = append(res.TierNames, t.Name)
	}
	if resp != nil {
		for k := range res.Tiers {
			ft := &res.Tiers[k]
			if ft.Replicas == 0 {
				continue
			}
			h := sim.NewHistogram()
			for i := range top.Tiers {
				if top.Tiers[i].Farm == ft.Name {
					h.Merge(resp[i])
				}
			}
			if h.Count() > 0 {
				ft.ResponseMean = h.Mean().Seconds()
				ft.ResponseP50 = h.Quantile(0.5).Seconds()
				ft.ResponseP99 = h.Quantile(0.99).Seconds()
			}
		}
	}
	res.Calls, res.ReplicaCalls = results.FoldCalls(res.Calls)
	for k := range res.Series {
		s := &res.Series[k]
		s.Tiers, s.Replicas = results.FoldSamples(s.Tiers, cores, farm)
	}
}

// LatencySummary is the latency block of a result and the latency at
// q = 0.001 … 0.999 (for CDF plots), from a histogram of client latencies;
// both executors report through it.
func LatencySummary(h *sim.Histogram) (results.Latency, []float64) {
	if h.Count() == 0 {
		return results.Latency{}, nil
	}
	q := func(p float64) float64 { return h.Quantile(p).Seconds() }
	l := results.Latency{Mean: h.Mean().Seconds(), P50: q(0.5), P90: q(0.9), P99: q(0.99), P999: q(0.999), Max: h.Max().Seconds()}
	qs := make([]float64, 999)
	for i := range qs {
		qs[i] = float64(i+1) / 1000
	}
	out := make([]float64, len(qs))
	for i, d := range h.Quantiles(qs) {
		out[i] = d.Seconds()
	}
	return l, out
}
