package realmode

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// Tolerances say how far a real run may stray from the simulation of the
// same topology and still agree with it.
type Tolerances struct {
	Throughput float64 // goodput: relative difference
	Mean       float64 // latency mean, and mean connection waits: relative
	P50        float64 // latency median: relative
	P99        float64 // latency 99th percentile: relative
	// TimeoutRatePP is the largest difference of the timeout rate, and of
	// the rejection rate, in percentage points.
	TimeoutRatePP float64
	// FirstTimeoutFrac is the largest difference of the instant timeouts
	// begin, as a fraction of the run's duration.
	FirstTimeoutFrac float64
	// Level is the relative tolerance for per-tier means (requests
	// executing, queued); LevelAbs an absolute one in requests: a level
	// passes when it is within either. Small queues (a fraction of a
	// request on average) are compared absolutely, since one request more
	// or less is then a large relative error.
	Level    float64
	LevelAbs float64
	// LatencyFloor, in simulated seconds, is the smallest latency
	// difference that counts: a latency (or connection wait) passes when it
	// is within the relative limit or within LatencyFloor. Spans far below
	// the real executor's timer granularity and HTTP cost cannot be
	// measured more finely; ForScale sets it from the time scale.
	LatencyFloor float64
}

// DefaultTolerances are the limits a real run should meet.
var DefaultTolerances = Tolerances{
	Throughput:       0.05,
	Mean:             0.10,
	P50:              0.10,
	P99:              0.15,
	TimeoutRatePP:    2,
	FirstTimeoutFrac: 0.10,
	Level:            0.10,
	LevelAbs:         0.5,
}

// RealResolution is the real-time span below which the real executor
// cannot resolve latencies: Go's timer overshoot (≈0.1–0.3 ms) plus an HTTP
// call on loopback (≈0.1 ms), with a margin.
const RealResolution = 500 * time.Microsecond

// ForScale returns t with LatencyFloor set to RealResolution in simulated
// seconds at the given time scale (unless it is already set).
func (t Tolerances) ForScale(scale float64) Tolerances {
	if t.LatencyFloor == 0 && scale > 0 {
		t.LatencyFloor = RealResolution.Seconds() / scale
	}
	return t
}

// Row is one metric side by side. Diff is relative ((real−sim)/sim) for
// rates of work, latencies and levels, in percentage points for timeout and
// rejection rates, and a fraction of the run for FirstTimeout; Limit is in
// the same unit.
type Row struct {
	Metric string
	Sim    float64
	Real   float64
	Diff   float64
	Limit  float64
	OK     bool
	Rule   string // how Diff and Limit are to be read
}

// Report is the comparison of a real run with a simulation.
type Report struct {
	Rows []Row
}

// OK reports whether every row agrees.
func (r Report) OK() bool {
	for _, row := range r.Rows {
		if !row.OK {
			return false
		}
	}
	return true
}

// Failed returns the rows that disagree.
func (r Report) Failed() []Row {
	var out []Row
	for _, row := range r.Rows {
		if !row.OK {
			out = append(out, row)
		}
	}
	return out
}

// String formats the report as a table.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-36s %12s %12s %9s %8s  %s\n", "metric", "sim", "real", "diff", "limit", "ok")
	for _, row := range r.Rows {
		ok := "ok"
		if !row.OK {
			ok = "DIFFERS"
		}
		fmt.Fprintf(&b, "%-36s %12.4g %12.4g %9s %8s  %s\n", row.Metric, row.Sim, row.Real, fmtDiff(row), fmtLimit(row), ok)
	}
	return b.String()
}

func fmtDiff(r Row) string {
	switch {
	case math.IsNaN(r.Diff):
		return "-"
	case math.IsInf(r.Diff, 0):
		return "inf"
	case r.Rule == rulePP:
		return fmt.Sprintf("%+.2fpp", r.Diff)
	default:
		return fmt.Sprintf("%+.1f%%", 100*r.Diff)
	}
}

func fmtLimit(r Row) string {
	if r.Rule == rulePP {
		return fmt.Sprintf("%.1fpp", r.Limit)
	}
	return fmt.Sprintf("%.0f%%", 100*r.Limit)
}

const (
	ruleRel   = "relative"
	ruleFloor = "relative, or absolute within the latency floor"
	ruleLevel = "relative, or absolute within LevelAbs requests"
	rulePP    = "percentage points"
	ruleFrac  = "fraction of the run; both without timeouts agree"
)

// Compare puts a simulated and a real run of one topology side by side:
// goodput, latency mean, p50 and p99, timeout and rejection rates, each
// tier's requests executing and queued (means), each call's mean
// connection wait, and the instant timeouts begin.
//
// Rules: a relative difference is (real−sim)/sim; when sim is 0 it is 0 if
// real is 0 too, else infinite. Latencies and connection waits also pass
// when |real−sim| ≤ LatencyFloor; tier levels when |real−sim| ≤ LevelAbs.
// Rates are compared in percentage points. FirstTimeout agrees when both
// runs have no timeout, and differs when only one has.
func Compare(sim, real *results.Run, tol Tolerances) Report {
	var r Report
	rel := func(s, x float64) float64 {
		if s == 0 {
			if x == 0 {
				return 0
			}
			return math.Inf(1)
		}
		return (x - s) / math.Abs(s)
	}
	add := func(metric string, s, x, limit float64, rule string, abs float64) {
		d := rel(s, x)
		ok := math.Abs(d) <= limit || math.Abs(x-s) <= abs
		r.Rows = append(r.Rows, Row{Metric: metric, Sim: s, Real: x, Diff: d, Limit: limit, OK: ok, Rule: rule})
	}
	add("goodput /s", sim.GoodputPerS, real.GoodputPerS, tol.Throughput, ruleRel, 0)
	add("latency mean s", sim.Latency.Mean, real.Latency.Mean, tol.Mean, ruleFloor, tol.LatencyFloor)
	add("latency p50 s", sim.Latency.P50, real.Latency.P50, tol.P50, ruleFloor, tol.LatencyFloor)
	add("latency p99 s", sim.Latency.P99, real.Latency.P99, tol.P99, ruleFloor, tol.LatencyFloor)
	pp := func(metric string, s, x float64) {
		d := 100 * (x - s)
		r.Rows = append(r.Rows, Row{Metric: metric, Sim: s, Real: x, Diff: d, Limit: tol.TimeoutRatePP, OK: math.Abs(d) <= tol.TimeoutRatePP, Rule: rulePP})
	}
	pp("timeout rate", sim.TimeoutRate, real.TimeoutRate)
	pp("rejection rate", sim.RejectRate, real.RejectRate)
	for i := range sim.Tiers {
		st := &sim.Tiers[i]
		rt := findTier(real, st.Name)
		if rt == nil {
			r.Rows = append(r.Rows, Row{Metric: "tier " + st.Name + " (missing in real run)", Diff: math.NaN(), OK: false, Rule: ruleRel})
			continue
		}
		add("tier "+st.Name+" executing (mean)", st.ExecutingMean, rt.ExecutingMean, tol.Level, ruleLevel, tol.LevelAbs)
		add("tier "+st.Name+" queued (mean)", st.QueuedMean, rt.QueuedMean, tol.Level, ruleLevel, tol.LevelAbs)
	}
	used := make([]bool, len(real.Calls))
	for i := range sim.Calls {
		sc := &sim.Calls[i]
		name := "call " + sc.From + "→" + sc.To + " conn wait s"
		k := -1
		for j := range real.Calls {
			if !used[j] && real.Calls[j].From == sc.From && real.Calls[j].To == sc.To {
				k = j
				break
			}
		}
		if k < 0 {
			r.Rows = append(r.Rows, Row{Metric: name + " (missing in real run)", Diff: math.NaN(), OK: false, Rule: ruleRel})
			continue
		}
		used[k] = true
		add(name, sc.WaitMean, real.Calls[k].WaitMean, tol.Mean, ruleFloor, tol.LatencyFloor)
	}
	row := Row{Metric: "first timeout s", Sim: sim.FirstTimeout, Real: real.FirstTimeout, Limit: tol.FirstTimeoutFrac, Rule: ruleFrac}
	switch {
	case sim.FirstTimeout < 0 && real.FirstTimeout < 0:
		row.OK = true
	case sim.FirstTimeout < 0 || real.FirstTimeout < 0:
		row.Diff = math.Inf(1)
	default:
		dur := math.Max(sim.Duration, real.Duration)
		row.Diff = (real.FirstTimeout - sim.FirstTimeout) / dur
		row.OK = math.Abs(row.Diff) <= tol.FirstTimeoutFrac
	}
	r.Rows = append(r.Rows, row)
	return r
}

func findTier(r *results.Run, name string) *results.Tier {
	for i := range r.Tiers {
		if r.Tiers[i].Name == name {
			return &r.Tiers[i]
		}
	}
	return nil
}
