package htmlreport

import "github.com/tsim-dev/tsim/results"

// NamedRun is one run of a variant, for a command that runs each variant
// once (explain) and shows it as tsim run's page does.
type NamedRun struct {
	Variant string
	Run     *results.Run
}

// RunsExperiment makes an experiment of one replication per variant from
// runs, each run its variant's aggregate and first replication.
func RunsExperiment(name, file string, seed uint64, runs []NamedRun) *results.Experiment {
	x := &results.Experiment{Name: name, File: file, Seed: seed, Replications: 1, Mode: "sim"}
	for i, nr := range runs {
		r := nr.Run
		if r == nil {
			continue
		}
		a := results.Aggregate{DurationS: r.Duration, WarmupS: r.Warmup, Requests: r.Requests,
			ThroughputPerS: r.ThroughputPerS, GoodputPerS: r.GoodputPerS, Latency: r.Latency,
			TimeoutRate: r.TimeoutRate, RejectRate: r.RejectRate, FirstTimeoutS: r.FirstTimeout,
			Tiers: r.Tiers, Calls: r.Calls, Breakdown: r.Breakdown, Events: r.Events,
			Replicas: r.Replicas, ReplicaCalls: r.ReplicaCalls, Balancers: r.Balancers, Quantiles: r.Quantiles}
		x.Scenarios = append(x.Scenarios, &results.Scenario{Index: i, Variant: nr.Variant, Agg: a, First: r})
	}
	x.Finished = len(x.Scenarios)
	return x
}
