package model

import (
	"time"

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

// Collector gathers what the load's requests came to, the same way in both
// executors (real mode locks it): the counts over the whole run, checked
// for conservation, and the measured period's counts, latencies,
// response-time breakdown and latency points. Times are simulated.
type Collector struct {
	Counts results.Counts // over the whole run
	// Measuring: the warm-up has ended (StartMeasuring).
	Measuring bool
	// Latency is the measured period's completed requests' latencies;
	// Precise, if set, their batch means (Topology.Precision).
	Latency *sim.Histogram
	Precise *sim.BatchMeans
	points  results.PointSampler

	genAtWarm, liveAtWarm                                 int64 // generated before the warm-up ended, and still under way then
	completed, timedOut, rejected, failed, ended, bdCount int64 // measured
	bd                                                    results.BreakdownSums
	firstTimeout                                          time.Duration // -1: none
}

// NewCollector returns a collector that keeps up to maxPoints latency
// points for the plots.
func NewCollector(maxPoints int) *Collector {
	return &Collector{Latency: sim.NewHistogram(), points: results.PointSampler{Max: maxPoints}, firstTimeout: -1}
}

// Ended records a top-level request that ended at now with outcome o,
// after lat, its latency broken down into bd (results.Bd*).
func (c *Collector) Ended(now, lat time.Duration, bd *[results.BdN]time.Duration, o results.Outcome) {
	switch o {
	case results.Completed:
		c.Counts.Completed++
	case results.TimedOut:
		c.Counts.TimedOut++
		if c.firstTimeout < 0 {
			c.firstTimeout = now
		}
	case results.Rejected:
		c.Counts.Rejected++
	case results.Failed:
		c.Counts.Failed++
	}
	if c.Measuring {
		c.ended++
		switch o {
		case results.Completed:
			c.completed++
			c.Latency.Record(lat)
			if c.Precise != nil {
				c.Precise.Add(lat.Seconds())
			}
			for i := range bd {
				c.bd[i] += bd[i].Seconds()
			}
			c.bdCount++
		case results.TimedOut:
			c.timedOut++
		case results.Rejected:
			c.rejected++
		case results.Failed:
			c.failed++
		}
	}
	c.points.Add(results.Point{T: sim.Time(now).Seconds(), Latency: lat.Seconds(), Outcome: o})
}

// StartMeasuring ends the warm-up: generated requests were generated
// before it, live of them are still under way.
func (c *Collector) StartMeasuring(generated, live int64) {
	c.Measuring = true
	c.genAtWarm, c.liveAtWarm = generated, live
	c.Latency.Reset()
	c.completed, c.timedOut, c.rejected, c.failed, c.ended = 0, 0, 0, 0, 0
	c.bd, c.bdCount = results.BreakdownSums{}, 0
}

// Fill fills a run's result: generated requests in all, live still under
// way (counted independently of the ends, for the conservation check),
// entryDone entry-tier replies in the measured period of span.
func (c *Collector) Fill(res *results.Run, generated, live, entryDone int64, span time.Duration) {
	res.Points = c.points.Points()
	res.FirstTimeout = -1
	if c.firstTimeout >= 0 {
		res.FirstTimeout = sim.Time(c.firstTimeout).Seconds()
	}
	c.Counts.Generated, c.Counts.InFlight = generated, live
	// The reported counts are the measured period's, as rates and
	// latencies are (results.Counts).
	res.Requests = results.Counts{
		Generated: generated - c.genAtWarm, InFlightAtWarmup: c.liveAtWarm,
		Completed: c.completed, TimedOut: c.timedOut, Rejected: c.rejected, Failed: c.failed,
		InFlight: live,
	}
	if s := sim.Time(span).Seconds(); s > 0 { // an instant's seconds, as the simulator's clock gives them
		res.ThroughputPerS = float64(entryDone) / s
		res.GoodputPerS = float64(c.completed) / s
	}
	if c.ended > 0 {
		res.TimeoutRate = float64(c.timedOut) / float64(c.ended)
		res.RejectRate = float64(c.rejected) / float64(c.ended)
	}
	res.Latency, res.Quantiles = LatencySummary(c.Latency)
	res.Breakdown = c.bd.Mean(c.bdCount)
}
