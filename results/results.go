// Package results holds what a run of tsim produces, as plain data with JSON
// names: request counts, latency, per-tier counters, per-call connection
// statistics, time series and latency points. The simulator and the real
// executor fill it; the CLI prints and writes it; plots draws it. It imports
// nothing else of tsim, so plots never sees the engine.
package results

import "encoding/json"

// Counts is the fate of the requests of the measured period (after
// warm-up, the period rates and latencies cover): Generated were generated
// in it, InFlightAtWarmup were under way when it began, Completed, TimedOut,
// Rejected and Failed ended in it, and InFlight were still under way at the
// end. The conservation law
//
//	Generated + InFlightAtWarmup = Completed + TimedOut + Rejected + Failed + InFlight
//
// holds for every run (see Conserved); without a warm-up InFlightAtWarmup
// is 0 and the counts cover the whole run.
type Counts struct {
	Generated        int64 `json:"generated"`
	InFlightAtWarmup int64 `json:"in_flight_at_warmup"`
	Completed        int64 `json:"completed"`
	TimedOut         int64 `json:"timed_out"`
	Rejected         int64 `json:"rejected"`
	Failed           int64 `json:"failed"`
	InFlight         int64 `json:"in_flight"`
}

// Conserved reports whether the counts add up.
func (c Counts) Conserved() bool {
	return c.Generated+c.InFlightAtWarmup == c.Completed+c.TimedOut+c.Rejected+c.Failed+c.InFlight
}

// Add returns the element-wise sum.
func (c Counts) Add(o Counts) Counts {
	return Counts{c.Generated + o.Generated, c.InFlightAtWarmup + o.InFlightAtWarmup, c.Completed + o.Completed,
		c.TimedOut + o.TimedOut, c.Rejected + o.Rejected, c.Failed + o.Failed, c.InFlight + o.InFlight}
}

// Latency summarises client-observed response times of completed requests, in seconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	// None is set where no request completed, so that there is no latency
	// to report: it is written as null, not as zeros.
	None bool `json:"-"`
}

// MarshalJSON writes null for a latency of no requests.
func (l Latency) MarshalJSON() ([]byte, error) {
	if l.None {
		return []byte("null"), nil
	}
	type plain Latency
	return json.Marshal(plain(l))
}

// Tier is one tier's counters over the measured period (after warm-up),
// named after the PerfMon counters they stand for (docs/counters.md has
// every one, its counter path and its definition). Levels have a
// time-weighted mean and a maximum: the largest value held for a positive
// time (a request refused at the instant it arrived was never held).
// Durations are in seconds, over the requests (or calls) that ended in the
// period; rates are per second of the period.
//
// A request at a tier is queued from its arrival until it starts
// executing, and executing from then until it ends. It starts executing as
// ASP.NET counts it: on an ASP.NET host when it has left the request queue
// and holds its worker thread (with the asynchronous WCF module, when it
// has left the queue); on any other host when it holds the thread its
// operation runs on. Its operation runs (WCF's Calls Outstanding) from the
// first step to the last, after the message was decoded and before the
// reply is encoded.
type Tier struct {
	Name  string `json:"name"`
	Cores int    `json:"cores"`
	// Replicas is the machines of a farm whose totals this is (FoldFarm);
	// 0 for a tier on one machine.
	Replicas int `json:"replicas,omitempty"`
	// Machine, if > 0, is the machine the tier shares with the other tiers
	// of the same Machine (model.Tier.Machine): their CPU utilisations are
	// each one's share of that machine's Cores. 0: a machine of its own.
	Machine int `json:"machine,omitempty"`
	// What names the tier's PerfMon counters: how it is hosted (a
	// model.HostKind name: "self", "aspnet-classic", "iis-integrated",
	// "threads"), its .NET version ("" when not .NET) and whether it is a
	// WCF service.
	Host    string  `json:"host"`
	DotNet  string  `json:"dotnet,omitempty"`
	WCF     bool    `json:"wcf"`
	CPUUtil float64 `json:"cpu_utilisation"` // Processor(_Total)\% Processor Time / 100

	// Levels.
	ExecutingMean   float64 `json:"requests_executing_mean"` // ASP.NET Apps\Requests Executing
	ExecutingMax    float64 `json:"requests_executing_max"`
	QueuedMean      float64 `json:"requests_queued_mean"` // ASP.NET\Requests Queued: arrived, not executing yet
	QueuedMax       float64 `json:"requests_queued_max"`
	CurrentMean     float64 `json:"requests_current_mean"` // ASP.NET\Requests Current: queued + executing
	CurrentMax      float64 `json:"requests_current_max"`
	AppQueuedMean   float64 `json:"requests_in_application_queue_mean"` // ASP.NET Apps\Requests In Application Queue: the admission queue alone
	AppQueuedMax    float64 `json:"requests_in_application_queue_max"`
	PipelinesMean   float64 `json:"pipeline_instance_count_mean"` // ASP.NET Apps\Pipeline Instance Count (ASP.NET hosts)
	PipelinesMax    float64 `json:"pipeline_instance_count_max"`
	OutstandingMean float64 `json:"calls_outstanding_mean"` // ServiceModelService\Calls Outstanding: operations in progress
	OutstandingMax  float64 `json:"calls_outstanding_max"`
	InstancesMean   float64 `json:"instances_mean"` // ServiceModelService\Instances (WCF tiers)
	InstancesMax    float64 `json:"instances_max"`
	// ListenerWaiting: connections waiting in the tier's netTcp listener
	// for a session (pending and backlogged; model.Listener).
	ListenerWaitingMean float64 `json:"listener_waiting_mean,omitempty"`
	ListenerWaitingMax  float64 `json:"listener_waiting_max,omitempty"`
	ThreadsBusyMean     float64 `json:"threads_busy_mean"` // worker + I/O
	ThreadsBusyMax      float64 `json:"threads_busy_max"`
	ThreadsMax          float64 `json:"threads_max"`
	ThreadQueueMean     float64 `json:"thread_queue_mean"`
	WorkerBusyMean      float64 `json:"worker_threads_busy_mean"` // CLR thread pool: worker threads running a request
	WorkerBusyMax       float64 `json:"worker_threads_busy_max"`
	WorkersMean         float64 `json:"worker_threads_mean"` // worker threads that exist
	WorkersMax          float64 `json:"worker_threads_max"`
	IOBusyMean          float64 `json:"io_threads_busy_mean"` // CLR thread pool: I/O completion threads running a request
	IOBusyMax           float64 `json:"io_threads_busy_max"`
	IOThreadsMean       float64 `json:"io_threads_mean"`
	IOThreadsMax        float64 `json:"io_threads_max"`
	MemoryMaxMB         float64 `json:"memory_max_mb"`

	// Rates and durations.
	RequestsPerS     float64 `json:"requests_per_s"`                // ASP.NET Apps\Requests/Sec: arrivals
	CallsPerS        float64 `json:"calls_per_s"`                   // ServiceModelService\Calls Per Second: operations started
	ExecTimeMean     float64 `json:"request_execution_time_mean_s"` // ASP.NET\Request Execution Time
	ExecTimeMax      float64 `json:"request_execution_time_max_s"`
	WaitTimeMean     float64 `json:"request_wait_time_mean_s"` // ASP.NET\Request Wait Time: arrival to execution
	WaitTimeMax      float64 `json:"request_wait_time_max_s"`
	CallDurationMean float64 `json:"calls_duration_mean_s"` // ServiceModelService\Calls Duration
	CallDurationMax  float64 `json:"calls_duration_max_s"`

	// Response time at the tier, arrival to reply, of the requests it
	// completed (nil-like zeros when it completed none), and the share of
	// them that waited a positive time in one of its queues (admission,
	// threads, WCF throttles and locks, FCFS cores).
	ResponseMean float64 `json:"response_time_mean_s"`
	ResponseP50  float64 `json:"response_time_p50_s"`
	ResponseP99  float64 `json:"response_time_p99_s"`
	PWait        float64 `json:"p_wait"`

	// Counts.
	Arrived          int64   `json:"arrived"` // requests that arrived (Requests Total over the period)
	Calls            int64   `json:"calls"`   // operations started (ServiceModelService\Calls over the period)
	Completed        int64   `json:"completed"`
	Rejected         int64   `json:"rejected"`
	Aborted          int64   `json:"aborted"` // ended unserved or cut short by the server: executionTimeout, clientConnectedCheck, a WCF session never opened for a client that had gone
	WastedCPUSeconds float64 `json:"wasted_cpu_s"`

	// What the contention mechanisms took (model.Contention; issue 24);
	// all zero, and absent from summary.json, when they are off.
	GCTimePercent   float64 `json:"gc_time_percent,omitempty"`  // .NET CLR Memory\% Time in GC: the share of the period the process was paused
	Gen0Collections int64   `json:"gen0_collections,omitempty"` // .NET CLR Memory\# Gen 0 Collections (every collection collects gen 0)
	Gen2Collections int64   `json:"gen2_collections,omitempty"` // .NET CLR Memory\# Gen 2 Collections
	OutOfMemory     int64   `json:"out_of_memory,omitempty"`    // requests failed with an OutOfMemoryException (in Failed)
	CommittedMaxMB  float64 `json:"committed_max_mb,omitempty"` // stacks, working sets and base (model.Memory)
	// The share of the tier's CPU capacity (cores × the period) lost to
	// context switches, to paging, and spent on per-call bookkeeping.
	SwitchCPUShare      float64 `json:"context_switch_cpu_share,omitempty"`
	PagingCPUShare      float64 `json:"paging_cpu_share,omitempty"`
	BookkeepingCPUShare float64 `json:"bookkeeping_cpu_share,omitempty"`
	// LockHandoffShare is the share of the period the tier's locks stood
	// held and idle while a waiter woke (lock convoys), summed over its
	// locks.
	LockHandoffShare float64 `json:"lock_handoff_share,omitempty"`
}

// Call is one caller→callee pair: its connection limit and how it was
// resolved, connections in use and waiting, and the fate of its calls.
type Call struct {
	From        string  `json:"from"`
	To          string  `json:"to"`
	Limit       int     `json:"connection_limit"` // 0 = unlimited
	Resolution  string  `json:"limit_resolution"`
	InUseMean   float64 `json:"connections_in_use_mean"`
	InUseMax    float64 `json:"connections_in_use_max"`
	WaitingMean float64 `json:"connections_waiting_mean"`
	WaitingMax  float64 `json:"connections_waiting_max"`
	WaitMean    float64 `json:"connection_wait_mean_s"`
	WaitP99     float64 `json:"connection_wait_p99_s"`
	Calls       int64   `json:"calls"`
	TimedOut    int64   `json:"timed_out"`
	Rejected    int64   `json:"rejected"`
	Failed      int64   `json:"failed"`
	Retries     int64   `json:"retries"`
	// The WCF client proxies the calls constructed, and their
	// ChannelFactories: found in ClientBase<T>'s cache or the
	// application's, built, and purged from the cache by a newer one.
	// Counted for a tier's calls that price their proxies
	// (proxy_create_cost or factory_create_cost), zero otherwise.
	Proxies         int64 `json:"proxies_created,omitempty"`
	FactoryHits     int64 `json:"factory_cache_hits,omitempty"`
	FactoriesBuilt  int64 `json:"factories_built,omitempty"`
	FactoriesPurged int64 `json:"factories_purged,omitempty"`
	// Of TimedOut and Failed, those that ended during a new proxy's
	// security negotiation as its own exchange (model.Binding.
	// NegotiationLegs): the negotiation's timeout (a TimeoutException),
	// the service's refusal (a SecurityNegotiationException).
	NegotiationTimedOut int64 `json:"negotiation_timed_out,omitempty"`
	NegotiationFailed   int64 `json:"negotiation_failed,omitempty"`
}

// TierSample is one tier's counters at one sampling instant, as PerfMon
// samples them: levels are the values at the instant; rates and durations
// cover the interval that ends at it (zero at t = 0 and in an interval in
// which nothing ended); Calls and RequestsRejected are totals since the
// start of the run, warm-up included, as a PerfMon raw counter is. Field by
// field the definitions are those of Tier (docs/counters.md).
type TierSample struct {
	Executing    float64 `json:"requests_executing"`
	Queued       float64 `json:"requests_queued"`
	Outstanding  float64 `json:"calls_outstanding"`
	ThreadsBusy  float64 `json:"threads_busy"`
	Threads      float64 `json:"threads"`
	ThreadQueue  float64 `json:"thread_queue"`
	ConnsInUse   float64 `json:"connections_in_use"`
	ConnsWaiting float64 `json:"connections_waiting"`
	CPU          float64 `json:"cpu_percent"` // average over the interval that ends here
	MemoryMB     float64 `json:"memory_mb"`

	Current    float64 `json:"requests_current"`
	AppQueued  float64 `json:"requests_in_application_queue"`
	Pipelines  float64 `json:"pipeline_instance_count"`
	Instances  float64 `json:"instances"`
	WorkerBusy float64 `json:"worker_threads_busy"`
	Workers    float64 `json:"worker_threads"`
	IOBusy     float64 `json:"io_threads_busy"`
	IOThreads  float64 `json:"io_threads"`

	// Over the interval that ends here.
	RequestsPerS    float64 `json:"requests_per_s"`
	CallsPerS       float64 `json:"calls_per_s"`
	ExecTimeMS      float64 `json:"request_execution_time_ms"` // mean; PerfMon's unit for ASP.NET
	ExecTimeMaxMS   float64 `json:"request_execution_time_max_ms"`
	WaitTimeMS      float64 `json:"request_wait_time_ms"`
	WaitTimeMaxMS   float64 `json:"request_wait_time_max_ms"`
	CallDuration    float64 `json:"calls_duration_s"` // mean; PerfMon's unit for WCF
	CallDurationMax float64 `json:"calls_duration_max_s"`
	// How many ended in the interval, to merge intervals (CompactSeries).
	ExecN, WaitN, CallN int64 `json:"-"`

	// Totals since the start of the run.
	Calls            float64 `json:"calls"`
	RequestsRejected float64 `json:"requests_rejected"`
}

// Sample is every tier's counters at one instant (seconds since start).
type Sample struct {
	T     float64      `json:"t"`
	Tiers []TierSample `json:"tiers"`
	// Replicas are the machines of the farms, in Run.ReplicaNames order.
	Replicas []TierSample `json:"replicas,omitempty"`
}

// Point is one request as its client saw it: when it ended and how long it
// took (seconds), and how it ended.
type Point struct {
	T       float64 `json:"t"`
	Latency float64 `json:"latency"`
	Outcome Outcome `json:"outcome"`
}

// Outcome is how a request ended.
type Outcome uint8

const (
	Completed Outcome = iota
	TimedOut
	Rejected
	Failed
)

var outcomeNames = [...]string{"completed", "timed_out", "rejected", "failed"}

func (o Outcome) String() string { return outcomeNames[o] }

// MarshalText writes the outcome's name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Breakdown is where the average completed request's response time went, in
// seconds per request, as seen from the entry tier down (see explain).
type Breakdown struct {
	ConnWait      float64 `json:"connection_wait"`
	AdmissionWait float64 `json:"admission_wait"`
	ThreadWait    float64 `json:"thread_wait"`
	ThrottleWait  float64 `json:"throttle_wait"`
	LockWait      float64 `json:"lock_wait"`
	CPUWait       float64 `json:"cpu_wait"` // processor sharing slowdown beyond the demand
	CPU           float64 `json:"cpu"`
	ExternalWait  float64 `json:"external_wait"`
	Network       float64 `json:"network"`
	Other         float64 `json:"other"`
}

// Run is the result of one replication of one scenario.
type Run struct {
	Seed           uint64    `json:"seed"`
	Duration       float64   `json:"duration_s"`
	Warmup         float64   `json:"warmup_s"`
	Requests       Counts    `json:"requests"`
	ThroughputPerS float64   `json:"throughput_per_s"`
	GoodputPerS    float64   `json:"goodput_per_s"`
	Latency        Latency   `json:"latency_s"`
	TimeoutRate    float64   `json:"timeout_rate"`
	RejectRate     float64   `json:"reject_rate"`
	FirstTimeout   float64   `json:"first_timeout_s"` // -1 if none
	Tiers          []Tier    `json:"tiers"`
	Calls          []Call    `json:"calls"`
	Breakdown      Breakdown `json:"breakdown_s"`
	Events         uint64    `json:"events"`
	TraceHash      uint64    `json:"trace_hash"`
	// Unstable, if set, says why the run stopped before its end: an open
	// load above capacity made its backlog grow without bound
	// (model.Stability).
	Unstable string `json:"unstable,omitempty"`

	// Farms (farm.go): Tiers and Calls hold their totals; these hold each
	// machine, and each farm's balancer. Empty without farms.
	Replicas     []Tier     `json:"replicas,omitempty"`
	ReplicaCalls []Call     `json:"replica_calls,omitempty"`
	Balancers    []Balancer `json:"balancers,omitempty"`
	ReplicaNames []string   `json:"-"`

	// Not in summary.json: written to timeseries.csv and drawn.
	TierNames []string  `json:"-"`
	Series    []Sample  `json:"-"`
	Points    []Point   `json:"-"`
	Quantiles []float64 `json:"-"` // latency at q = 0.001, 0.002, ..., 0.999 (for CDF plots)
}

// Breakdown categories: the indexes of BreakdownSums. Both executors charge
// each span of a request's life to one of them.
const (
	BdConn = iota
	BdAdmit
	BdThread
	BdThrottle
	BdLock
	BdCPUWait
	BdCPU
	BdExternal
	BdNet
	BdOther
	BdN
)

// BreakdownSums adds up, per category, the seconds of the requests measured.
type BreakdownSums [BdN]float64

// Mean is the breakdown of the average of n requests (zero when n is 0).
func (s BreakdownSums) Mean(n int64) Breakdown {
	if n <= 0 {
		return Breakdown{}
	}
	f := float64(n)
	return Breakdown{
		ConnWait: s[BdConn] / f, AdmissionWait: s[BdAdmit] / f, ThreadWait: s[BdThread] / f,
		ThrottleWait: s[BdThrottle] / f, LockWait: s[BdLock] / f, CPUWait: s[BdCPUWait] / f,
		CPU: s[BdCPU] / f, ExternalWait: s[BdExternal] / f, Network: s[BdNet] / f, Other: s[BdOther] / f,
	}
}

// MeanTiers aggregates one scenario's tiers over its replications (tiers
// are the same, in the same order, in every replication), as
// TierColumns's Runs rules say: time averages, rates, utilisation and
// wasted CPU are means over the replications; maxima are maxima; counts
// are sums; the means of durations are means over the replications in
// which requests arrived (calls started), and a tier's response-time
// statistics and P(wait) over those in which it completed a request.
func MeanTiers(runs [][]Tier) []Tier {
	out := make([]Tier, len(runs[0]))
	rows := make([]*Tier, 0, len(runs))
	for i := range out {
		rows = rows[:0]
		for _, r := range runs {
			if i < len(r) {
				rows = append(rows, &r[i])
			}
		}
		out[i] = runs[0][i]
		combineRuns(TierColumns, &out[i], rows, float64(len(runs)), tierWeight)
	}
	return out
}

// MeanCall aggregates one caller→callee pair over n replications (rows
// are its rows, in replication order; a replication may lack it), as
// CallColumns's Runs rules say.
func MeanCall(rows []*Call, n int) Call {
	out := *rows[0]
	combineRuns(CallColumns, &out, rows, float64(n), callWeight)
	return out
}

// MeanLatency aggregates the latencies of the replications that completed
// a request: means, and the largest maximum.
func MeanLatency(rows []*Latency) Latency {
	var out Latency
	combineRuns(LatencyColumns, &out, rows, float64(len(rows)), noWeight[Latency])
	return out
}

// MeanBreakdown aggregates the breakdowns of the replications that
// completed a request.
func MeanBreakdown(rows []*Breakdown) Breakdown {
	var out Breakdown
	combineRuns(BreakdownColumns, &out, rows, float64(len(rows)), noWeight[Breakdown])
	return out
}
