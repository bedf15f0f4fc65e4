package results

// Param is one key path and its value, as a sweep point or an override
// names it ("tier.web.calls.maxconnection" = "8").
type Param struct{ Key, Value string }

// Axis is one sweep axis: a key path and its values, in order.
type Axis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// Aggregate is one scenario summarised over its replications:
//
//   - request counts (those of each replication's measured period, see
//     Counts), tier and call counts, and events are summed;
//   - the simulated duration and the warm-up (both may differ between
//     replications: precision stopping, automatic warm-up), throughput,
//     goodput, timeout and reject rates and the time averages of tiers
//     and calls are means over the replications;
//   - latency statistics, the latency quantiles and the response-time
//     breakdown are means over the replications that completed a request
//     after warm-up (a replication in which every request timed out has no
//     latency to average);
//   - maxima are maxima, and first_timeout_s is the earliest;
//   - CI holds the 95% Student t confidence half-widths of the mean across
//     replications, t(0.975, n−1)·s/√n, when there are two or more.
type Aggregate struct {
	DurationS      float64    `json:"duration_s"`
	WarmupS        float64    `json:"warmup_s"`
	Requests       Counts     `json:"requests"`
	ThroughputPerS float64    `json:"throughput_per_s"`
	GoodputPerS    float64    `json:"goodput_per_s"`
	Latency        Latency    `json:"latency_s"`
	TimeoutRate    float64    `json:"timeout_rate"`
	RejectRate     float64    `json:"reject_rate"`
	FirstTimeoutS  float64    `json:"first_timeout_s"` // -1 if none
	Tiers          []Tier     `json:"tiers"`
	Calls          []Call     `json:"calls"`
	Breakdown      Breakdown  `json:"breakdown_s"`
	Events         uint64     `json:"events"`
	CI             *Intervals `json:"ci,omitempty"`
	// Unstable, if set, says that replications stopped unstable
	// (Run.Unstable): the first one's outcome, and how many of them.
	Unstable string `json:"unstable,omitempty"`

	// Farms: every machine's counters and calls (Run.Replicas,
	// ReplicaCalls) aggregated as Tiers and Calls are, and each farm's
	// balancer. The reports show the machines only on request
	// (Experiment.PerReplica).
	Replicas     []Tier     `json:"replicas,omitempty"`
	ReplicaCalls []Call     `json:"replica_calls,omitempty"`
	Balancers    []Balancer `json:"balancers,omitempty"`

	// Quantiles are the mean latency at q = 0.001 ... 0.999, for the
	// latency distribution picture; nil where not kept.
	Quantiles []float64 `json:"-"`
}

// Intervals are confidence half-widths; nil where fewer than two
// replications had a value.
type Intervals struct {
	Level          float64  `json:"level"`
	ThroughputPerS *float64 `json:"throughput_per_s"`
	GoodputPerS    *float64 `json:"goodput_per_s"`
	LatencyMeanS   *float64 `json:"latency_mean_s"`
	LatencyP99S    *float64 `json:"latency_p99_s"`
	TimeoutRate    *float64 `json:"timeout_rate"`
}

// Scenario is one variant at one sweep point, with all its replications
// run and aggregated.
type Scenario struct {
	Index   int
	Variant string
	Params  []Param // the sweep values, in axis order
	Agg     Aggregate
	// First is replication 0, kept with its time series and latency
	// points for the pictures when the experiment has no sweep; nil
	// otherwise.
	First *Run
	// LoadTest is First's latency over time against a load test's
	// measurement (tsim run --measured; loadtest.go); nil without one.
	LoadTest *LoadTest
}

// Experiment is what one run of an experiment file produced.
type Experiment struct {
	Name        string // the experiment's name, or the file's stem
	Description string
	File        string // the file as given, with forward slashes
	Stem        string // the file name without extension
	Seed        uint64
	// Replications is the number of replications of every scenario, and
	// ReplicationSeeds their master seeds (the same for every scenario:
	// common random numbers).
	Replications     int
	ReplicationSeeds []uint64
	Mode             string // "sim" or "real"
	Sweep            []Axis
	// PerReplica: the reports show every machine of a farm besides the
	// farm's totals (report.per_replica, tsim run --per-replica).
	PerReplica bool
	// USL is the Universal Scalability Law fitted to the throughput of
	// each line of a sweep over a concurrency-like key (users, a
	// connection limit, a thread pool, a throttle; analysis.AttachUSL);
	// nil otherwise.
	USL []*USL
	// Warnings are the settings the experiment makes that take no effect
	// (format.Experiment.Warnings), each "file:line: key: why".
	Warnings []string
	// Scenarios has one entry per scenario, in order; a scenario that did
	// not finish (the run was interrupted) is nil.
	Scenarios []*Scenario
	Finished  int
}

// Complete reports whether every scenario finished.
func (e *Experiment) Complete() bool { return e.Finished == len(e.Scenarios) }

// IsSweep reports whether the experiment sweeps keys over values.
func (e *Experiment) IsSweep() bool { return len(e.Sweep) > 0 }

// Done returns the finished scenarios in index order.
func (e *Experiment) Done() []*Scenario {
	var out []*Scenario
	for _, s := range e.Scenarios {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// SweepKeys returns the sweep keys, in axis order.
func (e *Experiment) SweepKeys() []string {
	var keys []string
	for _, ax := range e.Sweep {
		keys = append(keys, ax.Key)
	}
	return keys
}

// MaxCDFCurves bounds the scenarios of a sweep whose latency distributions
// are kept for the latency distribution picture; more curves would not be
// readable.
const MaxCDFCurves = 10
