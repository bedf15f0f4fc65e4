package runner

import (
	"math"
	"slices"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// Aggregator is the Sink of a run (or a merge) that keeps results: it
// collects each scenario's replications, aggregates them when the last one
// arrives and keeps only the aggregate (and, without a sweep, the first
// replication for the pictures).
type Aggregator struct {
	p    *Plan
	res  *results.Experiment
	sc   *format.Scenario // the scenario being collected
	runs []*results.Run
	got  int
}

func NewAggregator(p *Plan) *Aggregator {
	return &Aggregator{p: p, res: p.newExperiment()}
}

// Result is what the aggregator has collected so far.
func (a *Aggregator) Result() *results.Experiment { return a.res }

func (a *Aggregator) Take(it Item) error {
	if a.sc == nil || it.Scenario.Index != a.sc.Index {
		// A scenario left incomplete by an interruption is dropped.
		a.sc, a.runs, a.got = it.Scenario, make([]*results.Run, a.p.Reps), 0
	}
	if a.runs[it.Rep] == nil {
		a.got++
	}
	a.runs[it.Rep] = it.Run
	if a.got == a.p.Reps {
		a.res.Scenarios[a.sc.Index] = finishScenario(a.p, a.sc, a.runs, len(a.res.Scenarios))
		a.res.Finished++
		a.sc, a.runs, a.got = nil, nil, 0
	}
	return nil
}

// finishScenario aggregates a scenario's replications and keeps what the
// pictures need of its first replication.
func finishScenario(p *Plan, sc *format.Scenario, runs []*results.Run, n int) *results.Scenario {
	s := &results.Scenario{Index: sc.Index, Variant: sc.Variant, Params: sc.Params, Agg: aggregateRuns(runs)}
	if !p.sweep() {
		s.First = runs[0]
	}
	if p.sweep() && n > results.MaxCDFCurves {
		s.Agg.Quantiles = nil
	}
	return s
}

const ciLevel = 0.95

// halfWidth is the confidence half-width of the mean of xs, or nil.
func halfWidth(xs []float64) *float64 {
	if len(xs) < 2 {
		return nil
	}
	_, h := sim.MeanCI(xs, ciLevel)
	if math.IsNaN(h) || math.IsInf(h, 0) {
		return nil
	}
	return &h
}

// aggregateRuns summarises the replications of one scenario, in
// replication order.
func aggregateRuns(runs []*results.Run) results.Aggregate {
	a := results.Aggregate{FirstTimeoutS: -1}
	var dur, warm, thr, good, tor, rej []float64
	var withLat []*results.Run
	for _, r := range runs {
		dur = append(dur, r.Duration)
		warm = append(warm, r.Warmup)
		thr = append(thr, r.ThroughputPerS)
		good = append(good, r.GoodputPerS)
		tor = append(tor, r.TimeoutRate)
		rej = append(rej, r.RejectRate)
		a.Requests = a.Requests.Add(r.Requests)
		a.Events += r.Events
		if r.FirstTimeout >= 0 && (a.FirstTimeoutS < 0 || r.FirstTimeout < a.FirstTimeoutS) {
			a.FirstTimeoutS = r.FirstTimeout
		}
		if r.GoodputPerS > 0 {
			withLat = append(withLat, r)
		}
	}
	mean := results.Mean
	a.DurationS, a.WarmupS, a.ThroughputPerS, a.GoodputPerS = mean(dur), mean(warm), mean(thr), mean(good)
	a.TimeoutRate, a.RejectRate = mean(tor), mean(rej)

	var lmean, lp99 []float64
	for _, r := range withLat {
		lmean = append(lmean, r.Latency.Mean)
		lp99 = append(lp99, r.Latency.P99)
	}
	if len(withLat) > 0 {
		lat := make([]*results.Latency, len(withLat))
		bd := make([]*results.Breakdown, len(withLat))
		for i, r := range withLat {
			lat[i], bd[i] = &r.Latency, &r.Breakdown
		}
		a.Latency, a.Breakdown = results.MeanLatency(lat), results.MeanBreakdown(bd)
		var nq float64
		for _, r := range withLat {
			if len(r.Quantiles) == 0 {
				continue
			}
			if a.Quantiles == nil {
				a.Quantiles = make([]float64, len(r.Quantiles))
			}
			if len(r.Quantiles) != len(a.Quantiles) {
				continue
			}
			nq++
			for i, v := range r.Quantiles {
				a.Quantiles[i] += v
			}
		}
		for i := range a.Quantiles {
			a.Quantiles[i] /= nq
		}
	}
	a.Latency.None = len(withLat) == 0
	a.Unstable = results.UnstableOf(runs)
	a.Tiers = aggregateTiers(runs)
	a.Calls = aggregateCalls(runs)
	if len(runs[0].Replicas) > 0 {
		machines := make([][]results.Tier, len(runs))
		balancers := make([][]results.Balancer, len(runs))
		for i, r := range runs {
			machines[i], balancers[i] = r.Replicas, r.Balancers
		}
		a.Replicas = results.MeanTiers(machines)
		a.ReplicaCalls = aggregateCallsOf(runs, func(r *results.Run) []results.Call { return r.ReplicaCalls }, runs[0].ReplicaNames)
		a.Balancers = results.MeanBalancers(balancers)
	}
	if len(runs) > 1 {
		a.CI = &results.Intervals{
			Level:          ciLevel,
			ThroughputPerS: halfWidth(thr),
			GoodputPerS:    halfWidth(good),
			LatencyMeanS:   halfWidth(lmean),
			LatencyP99S:    halfWidth(lp99),
			TimeoutRate:    halfWidth(tor),
		}
	}
	return a
}

// aggregateTiers averages each tier's counters over the replications
// (results.MeanTiers says how).
func aggregateTiers(runs []*results.Run) []results.Tier {
	tiers := make([][]results.Tier, len(runs))
	for i, r := range runs {
		tiers[i] = r.Tiers
	}
	return results.MeanTiers(tiers)
}

// aggregateCalls averages each caller→callee pair over the replications.
// A run lists a pair when it is first used, so pairs are matched by (from,
// to, occurrence) rather than by position, and listed in tier order: the
// load's calls first, then by caller and callee.
func aggregateCalls(runs []*results.Run) []results.Call {
	return aggregateCallsOf(runs, func(r *results.Run) []results.Call { return r.Calls }, nil)
}

// aggregateCallsOf is aggregateCalls of the rows calls picks from each
// run; names, if given, order the callers and callees (else the run's
// TierNames).
func aggregateCallsOf(runs []*results.Run, calls func(*results.Run) []results.Call, names []string) []results.Call {
	type key struct {
		from, to string
		nth      int
	}
	var keys []key
	rows := map[key][]*results.Call{}
	for _, r := range runs {
		seen := map[[2]string]int{}
		cs := calls(r)
		for i := range cs {
			c := &cs[i]
			pair := [2]string{c.From, c.To}
			k := key{c.From, c.To, seen[pair]}
			seen[pair]++
			if rows[k] == nil {
				keys = append(keys, k)
			}
			rows[k] = append(rows[k], c)
		}
	}
	order := map[string]int{"load": -1}
	if names == nil {
		names = runs[0].TierNames
	}
	for i, name := range names {
		order[name] = i
	}
	rank := func(k key) [3]int { return [3]int{order[k.from], order[k.to], k.nth} }
	slices.SortStableFunc(keys, func(a, b key) int {
		ra, rb := rank(a), rank(b)
		return slices.Compare(ra[:], rb[:])
	})
	out := make([]results.Call, 0, len(keys))
	for _, k := range keys {
		out = append(out, results.MeanCall(rows[k], len(runs)))
	}
	return out
}
