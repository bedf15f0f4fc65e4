// Package results holds what a run of tsim produces, as plain data with JSON
// names: request counts, latency, per-tier counters, per-call connection
// statistics, time series and latency points. The simulator and the real
// executor fill it; the CLI prints and writes it; plots draws it. It imports
// nothing else of tsim, so plots never sees the engine.
package results

import "encoding/json"

// Counts is the fate of every request the load generated. The conservation
// law Generated = Completed + TimedOut + Rejected + Failed + InFlight holds
// for every run (see Conserved).
type Counts struct {
	Generated int64 `json:"generated"`
	Completed int64 `json:"completed"`
	TimedOut  int64 `json:"timed_out"`
	Rejected  int64 `json:"rejected"`
	Failed    int64 `json:"failed"`
	InFlight  int64 `json:"in_flight"`
}

// Conserved reports whether the counts add up.
func (c Counts) Conserved() bool {
	return c.Generated == c.Completed+c.TimedOut+c.Rejected+c.Failed+c.InFlight
}

// Add returns the element-wise sum.
func (c Counts) Add(o Counts) Counts {
	return Counts{c.Generated + o.Generated, c.Completed + o.Completed, c.TimedOut + o.TimedOut,
		c.Rejected + o.Rejected, c.Failed + o.Failed, c.InFlight + o.InFlight}
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

// Tier is one tier's counters over the measured period (after warm-up).
// Means are time-weighted; maxima are the largest values seen.
type Tier struct {
	Name             string  `json:"name"`
	Cores            int     `json:"cores"`
	CPUUtil          float64 `json:"cpu_utilisation"`
	ExecutingMean    float64 `json:"requests_executing_mean"`
	ExecutingMax     float64 `json:"requests_executing_max"`
	QueuedMean       float64 `json:"requests_queued_mean"`
	QueuedMax        float64 `json:"requests_queued_max"`
	OutstandingMean  float64 `json:"calls_outstanding_mean"`
	OutstandingMax   float64 `json:"calls_outstanding_max"`
	ThreadsBusyMean  float64 `json:"threads_busy_mean"`
	ThreadsBusyMax   float64 `json:"threads_busy_max"`
	ThreadsMax       float64 `json:"threads_max"`
	ThreadQueueMean  float64 `json:"thread_queue_mean"`
	MemoryMaxMB      float64 `json:"memory_max_mb"`
	Completed        int64   `json:"completed"`
	Rejected         int64   `json:"rejected"`
	Aborted          int64   `json:"aborted"` // ended unserved or cut short by the server: executionTimeout, clientConnectedCheck, a WCF session never opened for a client that had gone
	WastedCPUSeconds float64 `json:"wasted_cpu_s"`
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
}

// TierSample is one tier's counters at one sampling instant.
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
}

// Sample is every tier's counters at one instant (seconds since start).
type Sample struct {
	T     float64      `json:"t"`
	Tiers []TierSample `json:"tiers"`
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
