package results

// The column tables: every number of a Tier, a TierSample, a Call, a
// Balancer, a Latency and a Breakdown, once, with its name in
// summary.json and the CSV files and how it combines each way tsim
// combines rows:
//
//   - across the replications of a scenario (MeanTiers, MeanCalls,
//     MeanBalancers, MeanLatency, MeanBreakdown; runner's aggregation);
//   - across the machines of a farm (FoldTiers, FoldSamples, FoldCalls:
//     one row of a farm's totals);
//   - across two adjacent sampling intervals (CompactSeries).
//
// A field added to one of those types gets its row here, or a test
// (columns_test.go) fails: no way of combining can forget it.

// Op is how the values of one column combine into one.
type Op uint8

const (
	// First is the first row's value: names and settings, alike in every
	// row combined.
	First Op = iota
	// Total adds the values up.
	Total
	// Largest is the largest value, and at least 0.
	Largest
	// Average is the plain mean of every row.
	Average
	// Weighted is a mean weighted by Rule.By. Across replications a
	// replication counts once if its weight is positive (the mean of a
	// duration over the replications in which something ended), and the
	// result is 0 if none has; across machines and intervals each row
	// counts by its weight, and where every weight is 0 the result is
	// the plain mean with Rule.ElseMean, else 0.
	Weighted
	// Later is the later interval's value: a level at an instant or a
	// running total (intervals only).
	Later
)

// Weight names the number a Weighted rule weighs each row by.
type Weight uint8

const (
	ByNone      Weight = iota
	ByCores            // the cores (a sample's tier's, given apart)
	ByArrived          // requests that arrived
	ByCalls            // operations or calls started
	ByCompleted        // requests completed
	ByExecN            // (samples) requests whose execution ended in the interval
	ByWaitN            // (samples) requests whose wait ended in the interval
	ByCallN            // (samples) operations that ended in the interval
)

// Rule is how a column combines in one direction.
type Rule struct {
	Op Op
	By Weight
	// ElseMean: a Weighted rule across machines whose weights are all 0 is the
	// plain mean (else 0).
	ElseMean bool
}

// Column is one number of a row of type T: exactly one of F, I and N
// reaches it.
type Column[T any] struct {
	Name string // the JSON key (and CSV column) of the field
	F    func(*T) *float64
	I    func(*T) *int64
	N    func(*T) *int
	// Runs: across replications; Machines: across a farm's machines;
	// Intervals: across two sampling intervals. A direction a type is
	// never combined in is left zero.
	Runs, Machines, Intervals Rule
}

// Value is the column's value in row t, as a float64.
func (c *Column[T]) Value(t *T) float64 {
	switch {
	case c.F != nil:
		return *c.F(t)
	case c.I != nil:
		return float64(*c.I(t))
	}
	return float64(*c.N(t))
}

var (
	same     = Rule{Op: First}
	sum      = Rule{Op: Total}
	most     = Rule{Op: Largest}
	mean     = Rule{Op: Average}
	last     = Rule{Op: Later}
	byCores  = Rule{Op: Weighted, By: ByCores, ElseMean: true}
	byServed = Rule{Op: Weighted, By: ByCompleted, ElseMean: true}
)

// level is a time-weighted level's mean and maximum over the period: the
// mean is a mean over replications and a sum over machines (a farm's
// level is its machines' together); the maximum the largest over
// replications and a sum over machines (an upper bound of the farm's).
func level(mean_, max_ string, m func(*Tier) *float64, x func(*Tier) *float64) []Column[Tier] {
	return []Column[Tier]{
		{Name: mean_, F: m, Runs: mean, Machines: sum},
		{Name: max_, F: x, Runs: most, Machines: sum},
	}
}

// TierColumns are Tier's numbers (docs/counters.md defines them).
var TierColumns = concat(
	[]Column[Tier]{
		{Name: "cores", N: func(t *Tier) *int { return &t.Cores }, Runs: same, Machines: sum},
		{Name: "replicas", N: func(t *Tier) *int { return &t.Replicas }, Runs: same, Machines: same}, // the farm's count, set by FoldFarm
		{Name: "machine", N: func(t *Tier) *int { return &t.Machine }, Runs: same, Machines: same},   // a farm's machines share no machine
		{Name: "cpu_utilisation", F: func(t *Tier) *float64 { return &t.CPUUtil }, Runs: mean, Machines: byCores},
	},
	level("requests_executing_mean", "requests_executing_max", func(t *Tier) *float64 { return &t.ExecutingMean }, func(t *Tier) *float64 { return &t.ExecutingMax }),
	level("requests_queued_mean", "requests_queued_max", func(t *Tier) *float64 { return &t.QueuedMean }, func(t *Tier) *float64 { return &t.QueuedMax }),
	level("requests_current_mean", "requests_current_max", func(t *Tier) *float64 { return &t.CurrentMean }, func(t *Tier) *float64 { return &t.CurrentMax }),
	level("requests_in_application_queue_mean", "requests_in_application_queue_max", func(t *Tier) *float64 { return &t.AppQueuedMean }, func(t *Tier) *float64 { return &t.AppQueuedMax }),
	level("pipeline_instance_count_mean", "pipeline_instance_count_max", func(t *Tier) *float64 { return &t.PipelinesMean }, func(t *Tier) *float64 { return &t.PipelinesMax }),
	level("calls_outstanding_mean", "calls_outstanding_max", func(t *Tier) *float64 { return &t.OutstandingMean }, func(t *Tier) *float64 { return &t.OutstandingMax }),
	level("instances_mean", "instances_max", func(t *Tier) *float64 { return &t.InstancesMean }, func(t *Tier) *float64 { return &t.InstancesMax }),
	level("listener_waiting_mean", "listener_waiting_max", func(t *Tier) *float64 { return &t.ListenerWaitingMean }, func(t *Tier) *float64 { return &t.ListenerWaitingMax }),
	level("threads_busy_mean", "threads_busy_max", func(t *Tier) *float64 { return &t.ThreadsBusyMean }, func(t *Tier) *float64 { return &t.ThreadsBusyMax }),
	[]Column[Tier]{
		{Name: "threads_max", F: func(t *Tier) *float64 { return &t.ThreadsMax }, Runs: most, Machines: sum},
		{Name: "thread_queue_mean", F: func(t *Tier) *float64 { return &t.ThreadQueueMean }, Runs: mean, Machines: sum},
	},
	level("worker_threads_busy_mean", "worker_threads_busy_max", func(t *Tier) *float64 { return &t.WorkerBusyMean }, func(t *Tier) *float64 { return &t.WorkerBusyMax }),
	level("worker_threads_mean", "worker_threads_max", func(t *Tier) *float64 { return &t.WorkersMean }, func(t *Tier) *float64 { return &t.WorkersMax }),
	level("io_threads_busy_mean", "io_threads_busy_max", func(t *Tier) *float64 { return &t.IOBusyMean }, func(t *Tier) *float64 { return &t.IOBusyMax }),
	level("io_threads_mean", "io_threads_max", func(t *Tier) *float64 { return &t.IOThreadsMean }, func(t *Tier) *float64 { return &t.IOThreadsMax }),
	[]Column[Tier]{
		{Name: "memory_max_mb", F: func(t *Tier) *float64 { return &t.MemoryMaxMB }, Runs: most, Machines: sum},
		{Name: "requests_per_s", F: func(t *Tier) *float64 { return &t.RequestsPerS }, Runs: mean, Machines: sum},
		{Name: "calls_per_s", F: func(t *Tier) *float64 { return &t.CallsPerS }, Runs: mean, Machines: sum},
		// Durations: means over the replications in which they ended,
		// weighted by what ended on each machine; maxima the largest.
		{Name: "request_execution_time_mean_s", F: func(t *Tier) *float64 { return &t.ExecTimeMean },
			Runs: Rule{Op: Weighted, By: ByArrived}, Machines: byServed},
		{Name: "request_execution_time_max_s", F: func(t *Tier) *float64 { return &t.ExecTimeMax }, Runs: most, Machines: most},
		{Name: "request_wait_time_mean_s", F: func(t *Tier) *float64 { return &t.WaitTimeMean },
			Runs: Rule{Op: Weighted, By: ByArrived}, Machines: Rule{Op: Weighted, By: ByArrived, ElseMean: true}},
		{Name: "request_wait_time_max_s", F: func(t *Tier) *float64 { return &t.WaitTimeMax }, Runs: most, Machines: most},
		{Name: "calls_duration_mean_s", F: func(t *Tier) *float64 { return &t.CallDurationMean },
			Runs: Rule{Op: Weighted, By: ByCalls}, Machines: Rule{Op: Weighted, By: ByCalls, ElseMean: true}},
		{Name: "calls_duration_max_s", F: func(t *Tier) *float64 { return &t.CallDurationMax }, Runs: most, Machines: most},
		{Name: "response_time_mean_s", F: func(t *Tier) *float64 { return &t.ResponseMean }, Runs: Rule{Op: Weighted, By: ByCompleted}, Machines: byServed},
		{Name: "response_time_p50_s", F: func(t *Tier) *float64 { return &t.ResponseP50 }, Runs: Rule{Op: Weighted, By: ByCompleted}, Machines: byServed},
		{Name: "response_time_p99_s", F: func(t *Tier) *float64 { return &t.ResponseP99 }, Runs: Rule{Op: Weighted, By: ByCompleted}, Machines: byServed},
		{Name: "p_wait", F: func(t *Tier) *float64 { return &t.PWait }, Runs: Rule{Op: Weighted, By: ByCompleted}, Machines: byServed},
		{Name: "arrived", I: func(t *Tier) *int64 { return &t.Arrived }, Runs: sum, Machines: sum},
		{Name: "calls", I: func(t *Tier) *int64 { return &t.Calls }, Runs: sum, Machines: sum},
		{Name: "completed", I: func(t *Tier) *int64 { return &t.Completed }, Runs: sum, Machines: sum},
		{Name: "rejected", I: func(t *Tier) *int64 { return &t.Rejected }, Runs: sum, Machines: sum},
		{Name: "aborted", I: func(t *Tier) *int64 { return &t.Aborted }, Runs: sum, Machines: sum},
		{Name: "wasted_cpu_s", F: func(t *Tier) *float64 { return &t.WastedCPUSeconds }, Runs: mean, Machines: sum},
		{Name: "gc_time_percent", F: func(t *Tier) *float64 { return &t.GCTimePercent }, Runs: mean, Machines: mean},
		{Name: "gen0_collections", I: func(t *Tier) *int64 { return &t.Gen0Collections }, Runs: sum, Machines: sum},
		{Name: "gen2_collections", I: func(t *Tier) *int64 { return &t.Gen2Collections }, Runs: sum, Machines: sum},
		{Name: "out_of_memory", I: func(t *Tier) *int64 { return &t.OutOfMemory }, Runs: sum, Machines: sum},
		{Name: "committed_max_mb", F: func(t *Tier) *float64 { return &t.CommittedMaxMB }, Runs: most, Machines: sum},
		{Name: "context_switch_cpu_share", F: func(t *Tier) *float64 { return &t.SwitchCPUShare }, Runs: mean, Machines: byCores},
		{Name: "paging_cpu_share", F: func(t *Tier) *float64 { return &t.PagingCPUShare }, Runs: mean, Machines: byCores},
		{Name: "bookkeeping_cpu_share", F: func(t *Tier) *float64 { return &t.BookkeepingCPUShare }, Runs: mean, Machines: byCores},
		{Name: "lock_handoff_share", F: func(t *Tier) *float64 { return &t.LockHandoffShare }, Runs: mean, Machines: mean},
	},
)

// tierWeight is row t's weight w.
func tierWeight(w Weight, t *Tier) float64 {
	switch w {
	case ByCores:
		return float64(t.Cores)
	case ByArrived:
		return float64(t.Arrived)
	case ByCalls:
		return float64(t.Calls)
	case ByCompleted:
		return float64(t.Completed)
	}
	panic("results: no such weight of a tier")
}

// sample is a counter of a sampling instant: a level at the instant (the
// later interval's; a farm's machines' together).
func sample(name string, get func(*TierSample) *float64) Column[TierSample] {
	return Column[TierSample]{Name: name, F: get, Machines: sum, Intervals: last}
}

// SampleColumns are TierSample's numbers, in the order of timeseries.csv
// (which writes those with a Name).
var SampleColumns = []Column[TierSample]{
	sample("requests_executing", func(s *TierSample) *float64 { return &s.Executing }),
	sample("requests_queued", func(s *TierSample) *float64 { return &s.Queued }),
	sample("calls_outstanding", func(s *TierSample) *float64 { return &s.Outstanding }),
	sample("threads_busy", func(s *TierSample) *float64 { return &s.ThreadsBusy }),
	sample("threads", func(s *TierSample) *float64 { return &s.Threads }),
	sample("thread_queue", func(s *TierSample) *float64 { return &s.ThreadQueue }),
	sample("connections_in_use", func(s *TierSample) *float64 { return &s.ConnsInUse }),
	sample("connections_waiting", func(s *TierSample) *float64 { return &s.ConnsWaiting }),
	{Name: "cpu_percent", F: func(s *TierSample) *float64 { return &s.CPU }, Machines: byCores, Intervals: mean},
	sample("memory_mb", func(s *TierSample) *float64 { return &s.MemoryMB }),
	sample("requests_current", func(s *TierSample) *float64 { return &s.Current }),
	sample("requests_in_application_queue", func(s *TierSample) *float64 { return &s.AppQueued }),
	sample("pipeline_instance_count", func(s *TierSample) *float64 { return &s.Pipelines }),
	sample("instances", func(s *TierSample) *float64 { return &s.Instances }),
	sample("worker_threads_busy", func(s *TierSample) *float64 { return &s.WorkerBusy }),
	sample("worker_threads", func(s *TierSample) *float64 { return &s.Workers }),
	sample("io_threads_busy", func(s *TierSample) *float64 { return &s.IOBusy }),
	sample("io_threads", func(s *TierSample) *float64 { return &s.IOThreads }),
	// Rates and durations over the interval that ends at the instant.
	{Name: "requests_per_s", F: func(s *TierSample) *float64 { return &s.RequestsPerS }, Machines: sum, Intervals: mean},
	{Name: "calls_per_s", F: func(s *TierSample) *float64 { return &s.CallsPerS }, Machines: sum, Intervals: mean},
	{Name: "request_execution_time_ms", F: func(s *TierSample) *float64 { return &s.ExecTimeMS },
		Machines: Rule{Op: Weighted, By: ByExecN, ElseMean: true}, Intervals: Rule{Op: Weighted, By: ByExecN}},
	{Name: "request_execution_time_max_ms", F: func(s *TierSample) *float64 { return &s.ExecTimeMaxMS }, Machines: most, Intervals: most},
	{Name: "request_wait_time_ms", F: func(s *TierSample) *float64 { return &s.WaitTimeMS },
		Machines: Rule{Op: Weighted, By: ByWaitN, ElseMean: true}, Intervals: Rule{Op: Weighted, By: ByWaitN}},
	{Name: "request_wait_time_max_ms", F: func(s *TierSample) *float64 { return &s.WaitTimeMaxMS }, Machines: most, Intervals: most},
	{Name: "calls_duration_s", F: func(s *TierSample) *float64 { return &s.CallDuration },
		Machines: Rule{Op: Weighted, By: ByCallN, ElseMean: true}, Intervals: Rule{Op: Weighted, By: ByCallN}},
	{Name: "calls_duration_max_s", F: func(s *TierSample) *float64 { return &s.CallDurationMax }, Machines: most, Intervals: most},
	// How many ended in the interval: not written, they weigh the
	// durations above.
	{I: func(s *TierSample) *int64 { return &s.ExecN }, Machines: sum, Intervals: sum},
	{I: func(s *TierSample) *int64 { return &s.WaitN }, Machines: sum, Intervals: sum},
	{I: func(s *TierSample) *int64 { return &s.CallN }, Machines: sum, Intervals: sum},
	sample("calls", func(s *TierSample) *float64 { return &s.Calls }),
	sample("requests_rejected", func(s *TierSample) *float64 { return &s.RequestsRejected }),
}

// SampleColumn is the column of SampleColumns named name, or nil.
func SampleColumn(name string) *Column[TierSample] {
	for i := range SampleColumns {
		if SampleColumns[i].Name == name {
			return &SampleColumns[i]
		}
	}
	return nil
}

func sampleWeight(w Weight, s *TierSample) float64 {
	switch w {
	case ByExecN:
		return float64(s.ExecN)
	case ByWaitN:
		return float64(s.WaitN)
	case ByCallN:
		return float64(s.CallN)
	}
	panic("results: no such weight of a sample")
}

// CallColumns are Call's numbers. Its limit, which folds over the distinct
// caller→callee pairs of a farm, is FoldCalls's own; here it is the
// first's.
var CallColumns = []Column[Call]{
	{Name: "connection_limit", N: func(c *Call) *int { return &c.Limit }, Runs: same, Machines: same},
	{Name: "connections_in_use_mean", F: func(c *Call) *float64 { return &c.InUseMean }, Runs: mean, Machines: sum},
	{Name: "connections_in_use_max", F: func(c *Call) *float64 { return &c.InUseMax }, Runs: most, Machines: sum},
	{Name: "connections_waiting_mean", F: func(c *Call) *float64 { return &c.WaitingMean }, Runs: mean, Machines: sum},
	{Name: "connections_waiting_max", F: func(c *Call) *float64 { return &c.WaitingMax }, Runs: most, Machines: sum},
	{Name: "connection_wait_mean_s", F: func(c *Call) *float64 { return &c.WaitMean },
		Runs: Rule{Op: Weighted, By: ByCalls}, Machines: Rule{Op: Weighted, By: ByCalls}},
	{Name: "connection_wait_p99_s", F: func(c *Call) *float64 { return &c.WaitP99 }, Runs: Rule{Op: Weighted, By: ByCalls}, Machines: most},
	{Name: "calls", I: func(c *Call) *int64 { return &c.Calls }, Runs: sum, Machines: sum},
	{Name: "timed_out", I: func(c *Call) *int64 { return &c.TimedOut }, Runs: sum, Machines: sum},
	{Name: "rejected", I: func(c *Call) *int64 { return &c.Rejected }, Runs: sum, Machines: sum},
	{Name: "failed", I: func(c *Call) *int64 { return &c.Failed }, Runs: sum, Machines: sum},
	{Name: "retries", I: func(c *Call) *int64 { return &c.Retries }, Runs: sum, Machines: sum},
	{Name: "proxies_created", I: func(c *Call) *int64 { return &c.Proxies }, Runs: sum, Machines: sum},
	{Name: "factory_cache_hits", I: func(c *Call) *int64 { return &c.FactoryHits }, Runs: sum, Machines: sum},
	{Name: "factories_built", I: func(c *Call) *int64 { return &c.FactoriesBuilt }, Runs: sum, Machines: sum},
	{Name: "factories_purged", I: func(c *Call) *int64 { return &c.FactoriesPurged }, Runs: sum, Machines: sum},
	{Name: "negotiation_timed_out", I: func(c *Call) *int64 { return &c.NegotiationTimedOut }, Runs: sum, Machines: sum},
	{Name: "negotiation_failed", I: func(c *Call) *int64 { return &c.NegotiationFailed }, Runs: sum, Machines: sum},
}

func callWeight(w Weight, c *Call) float64 {
	if w == ByCalls {
		return float64(c.Calls)
	}
	panic("results: no such weight of a call")
}

// BalancerColumns are Balancer's numbers (its requests sent to each
// machine are summed machine by machine, by MeanBalancers).
var BalancerColumns = []Column[Balancer]{
	{Name: "connection_limit", N: func(b *Balancer) *int { return &b.Limit }, Runs: same},
	{Name: "queue_limit", N: func(b *Balancer) *int { return &b.QueueLimit }, Runs: same},
	{Name: "latency_s", F: func(b *Balancer) *float64 { return &b.LatencyS }, Runs: same},
	{Name: "connections_in_use_mean", F: func(b *Balancer) *float64 { return &b.InUseMean }, Runs: mean},
	{Name: "connections_in_use_max", F: func(b *Balancer) *float64 { return &b.InUseMax }, Runs: most},
	{Name: "waiting_mean", F: func(b *Balancer) *float64 { return &b.WaitingMean }, Runs: mean},
	{Name: "waiting_max", F: func(b *Balancer) *float64 { return &b.WaitingMax }, Runs: most},
	{Name: "rejected", I: func(b *Balancer) *int64 { return &b.Rejected }, Runs: sum},
	{Name: "refused", I: func(b *Balancer) *int64 { return &b.Refused }, Runs: sum},
}

// LatencyColumns are Latency's numbers; across replications they combine
// over those that completed a request (the caller passes only those).
var LatencyColumns = []Column[Latency]{
	{Name: "mean", F: func(l *Latency) *float64 { return &l.Mean }, Runs: mean},
	{Name: "p50", F: func(l *Latency) *float64 { return &l.P50 }, Runs: mean},
	{Name: "p90", F: func(l *Latency) *float64 { return &l.P90 }, Runs: mean},
	{Name: "p99", F: func(l *Latency) *float64 { return &l.P99 }, Runs: mean},
	{Name: "p999", F: func(l *Latency) *float64 { return &l.P999 }, Runs: mean},
	{Name: "max", F: func(l *Latency) *float64 { return &l.Max }, Runs: most},
}

// BreakdownColumns are Breakdown's categories, in the order of the Bd
// constants; across replications they combine as LatencyColumns do.
var BreakdownColumns = []Column[Breakdown]{
	{Name: "connection_wait", F: func(b *Breakdown) *float64 { return &b.ConnWait }, Runs: mean},
	{Name: "admission_wait", F: func(b *Breakdown) *float64 { return &b.AdmissionWait }, Runs: mean},
	{Name: "thread_wait", F: func(b *Breakdown) *float64 { return &b.ThreadWait }, Runs: mean},
	{Name: "throttle_wait", F: func(b *Breakdown) *float64 { return &b.ThrottleWait }, Runs: mean},
	{Name: "lock_wait", F: func(b *Breakdown) *float64 { return &b.LockWait }, Runs: mean},
	{Name: "cpu_wait", F: func(b *Breakdown) *float64 { return &b.CPUWait }, Runs: mean},
	{Name: "cpu", F: func(b *Breakdown) *float64 { return &b.CPU }, Runs: mean},
	{Name: "external_wait", F: func(b *Breakdown) *float64 { return &b.ExternalWait }, Runs: mean},
	{Name: "network", F: func(b *Breakdown) *float64 { return &b.Network }, Runs: mean},
	{Name: "other", F: func(b *Breakdown) *float64 { return &b.Other }, Runs: mean},
}

func concat[T any](parts ...[]Column[T]) []Column[T] {
	var out []Column[T]
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func noWeight[T any](Weight, *T) float64 { panic("results: a column weighs by nothing here") }

// ---------------------------------------------------------------------------
// The three ways of combining, each driven by a table.

// combineRuns combines rows, each a replication's (n replications in all:
// a row a replication lacks still divides a mean), into out, which holds
// the first row's names and settings.
func combineRuns[T any](cols []Column[T], out *T, rows []*T, n float64, weight func(Weight, *T) float64) {
	for ci := range cols {
		c := &cols[ci]
		r := c.Runs
		if r.Op == First {
			continue
		}
		if c.F == nil {
			var s int64
			for _, row := range rows {
				s += c.intOf(row)
			}
			c.setInt(out, s)
			continue
		}
		var s, k float64
		for _, row := range rows {
			v := *c.F(row)
			switch r.Op {
			case Total:
				s += v
			case Largest:
				s = max(s, v)
			case Average:
				s += v / n
			case Weighted:
				if weight(r.By, row) > 0 {
					s += v
					k++
				}
			}
		}
		if r.Op == Weighted && k > 0 {
			s /= k
		}
		*c.F(out) = s
	}
}

// combineMachines combines a farm's machines' rows into out, which holds
// the first row's names and settings.
func combineMachines[T any](cols []Column[T], out *T, rows []T, weight func(Weight, int) float64) {
	for ci := range cols {
		c := &cols[ci]
		r := c.Machines
		if r.Op == First {
			continue
		}
		if c.F == nil {
			var s int64
			for i := range rows {
				s += c.intOf(&rows[i])
			}
			c.setInt(out, s)
			continue
		}
		var s, t float64
		switch r.Op {
		case Total, Average:
			for i := range rows {
				s += *c.F(&rows[i])
			}
			if r.Op == Average {
				s /= float64(len(rows))
			}
		case Largest:
			for i := range rows {
				s = max(s, *c.F(&rows[i]))
			}
		case Weighted:
			for i := range rows {
				w := weight(r.By, i)
				s += *c.F(&rows[i]) * w
				t += w
			}
			switch {
			case t != 0:
				s /= t
			case r.ElseMean:
				s = 0
				for i := range rows {
					s += *c.F(&rows[i])
				}
				s /= float64(len(rows))
			}
		}
		*c.F(out) = s
	}
}

// combineIntervals makes b's interval counters cover a's interval too
// (a, of the same length, comes just before b).
func combineIntervals[T any](cols []Column[T], b, a *T, weight func(Weight, *T) float64) {
	for ci := range cols {
		c := &cols[ci]
		r := c.Intervals
		switch {
		case r.Op == Later || r.Op == First:
		case c.F == nil: // a count: Total
			c.setInt(b, c.intOf(b)+c.intOf(a))
		case r.Op == Average:
			*c.F(b) = (*c.F(a) + *c.F(b)) / 2
		case r.Op == Largest:
			*c.F(b) = max(*c.F(a), *c.F(b))
		case r.Op == Total:
			*c.F(b) += *c.F(a)
		case r.Op == Weighted:
			n, m := weight(r.By, a), weight(r.By, b)
			if n+m == 0 {
				*c.F(b) = 0
			} else {
				*c.F(b) = (*c.F(a)*n + *c.F(b)*m) / (n + m)
			}
		}
	}
}

func (c *Column[T]) intOf(t *T) int64 {
	if c.I != nil {
		return *c.I(t)
	}
	return int64(*c.N(t))
}

func (c *Column[T]) setInt(t *T, v int64) {
	if c.I != nil {
		*c.I(t) = v
		return
	}
	*c.N(t) = int(v)
}

// Mean is the mean of xs (0 of none), summed in order: the one mean of
// the replications' headline figures.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
