package runner

import (
	"fmt"
	"math"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/results"
)

// Sane checks that r, read back from a file (a shard's items), could be a
// run: the simulated span positive and within format.MaxDuration, every
// number finite and not negative (first_timeout_s may be −1), the
// requests conserved, every latency, duration and breakdown within the
// run, every share within 0..1, each sample's tiers matching the tiers'
// names. The message names the first field that is not.
func Sane(r *results.Run) error {
	span := r.Duration
	switch {
	case !(span > 0) || span > format.MaxDuration.Seconds():
		return fmt.Errorf("duration_s is %v; a run lasts more than 0 and at most %v s", r.Duration, format.MaxDuration.Seconds())
	case !(r.Warmup >= 0) || r.Warmup > span || r.Warmup == span && r.Unstable == "":
		return fmt.Errorf("warmup_s is %v; it is at least 0 and less than duration_s (%v)", r.Warmup, span)
	case !(r.FirstTimeout == -1 || r.FirstTimeout >= 0 && r.FirstTimeout <= span):
		return fmt.Errorf("first_timeout_s is %v; it is −1 (none) or within the run", r.FirstTimeout)
	}
	c := r.Requests
	for _, n := range []int64{c.Generated, c.InFlightAtWarmup, c.Completed, c.TimedOut, c.Rejected, c.Failed, c.InFlight} {
		if n < 0 {
			return fmt.Errorf("requests: a negative count (%+v)", c)
		}
	}
	if !c.Conserved() {
		return fmt.Errorf("requests: %+v do not add up (generated + in_flight_at_warmup = completed + timed_out + rejected + failed + in_flight)", c)
	}
	v := verifier{dur: span}
	v.num("throughput_per_s", r.ThroughputPerS)
	v.num("goodput_per_s", r.GoodputPerS)
	v.share("timeout_rate", r.TimeoutRate)
	v.share("reject_rate", r.RejectRate)
	checkRow(&v, "latency_s", results.LatencyColumns, &r.Latency, true)
	checkRow(&v, "breakdown_s", results.BreakdownColumns, &r.Breakdown, true)
	for i := range r.Tiers {
		checkTier(&v, "tiers", i, &r.Tiers[i])
	}
	for i := range r.Replicas {
		checkTier(&v, "replicas", i, &r.Replicas[i])
	}
	for _, calls := range [][]results.Call{r.Calls, r.ReplicaCalls} {
		for i := range calls {
			checkRow(&v, fmt.Sprintf("calls[%d]", i), results.CallColumns, &calls[i], false)
			v.span(fmt.Sprintf("calls[%d].connection_wait_mean_s", i), calls[i].WaitMean)
			v.span(fmt.Sprintf("calls[%d].connection_wait_p99_s", i), calls[i].WaitP99)
		}
	}
	for i := range r.Balancers {
		b := &r.Balancers[i]
		checkRow(&v, fmt.Sprintf("balancers[%d]", i), results.BalancerColumns, b, false)
		if len(b.Sent) > format.MaxMachines {
			v.fail(fmt.Sprintf("balancers[%d].sent", i), "has %d machines; at most %d", len(b.Sent), format.MaxMachines)
		}
		for _, n := range b.Sent {
			if n < 0 {
				v.fail(fmt.Sprintf("balancers[%d].sent", i), "holds a negative count")
			}
		}
	}
	for i, q := range r.Quantiles {
		v.span(fmt.Sprintf("quantiles[%d]", i), q)
	}
	for i, p := range r.Points {
		v.span(fmt.Sprintf("points[%d].t", i), p.T)
		v.span(fmt.Sprintf("points[%d].latency", i), p.Latency)
	}
	for i := range r.Series {
		s := &r.Series[i]
		v.span(fmt.Sprintf("series[%d].t", i), s.T)
		if len(s.Tiers) != len(r.TierNames) || len(s.Replicas) != len(r.ReplicaNames) {
			v.fail(fmt.Sprintf("series[%d]", i), "has %d tiers and %d machines; the run names %d and %d", len(s.Tiers), len(s.Replicas), len(r.TierNames), len(r.ReplicaNames))
		}
		for _, ts := range [][]results.TierSample{s.Tiers, s.Replicas} {
			for k := range ts {
				checkRow(&v, fmt.Sprintf("series[%d].tiers[%d]", i, k), results.SampleColumns, &ts[k], false)
			}
		}
		if v.err != nil {
			break
		}
	}
	return v.err
}

// checkTier checks a tier's numbers: finite and not negative, its spans
// within the run and P(wait) a share.
func checkTier(v *verifier, list string, i int, t *results.Tier) {
	at := fmt.Sprintf("%s[%d]", list, i)
	checkRow(v, at, results.TierColumns, t, false)
	for _, c := range results.TierColumns {
		if c.F != nil && strings.HasSuffix(c.Name, "_s") && !strings.HasSuffix(c.Name, "_per_s") && c.Name != "wasted_cpu_s" {
			v.span(at+"."+c.Name, *c.F(t))
		}
	}
	v.share(at+".p_wait", t.PWait)
}

// checkRow checks every number of row: finite and not negative, and
// within the run when spans.
func checkRow[T any](v *verifier, at string, cols []results.Column[T], row *T, spans bool) {
	for i := range cols {
		c := &cols[i]
		name := at + "." + c.Name
		if spans {
			v.span(name, c.Value(row))
		} else {
			v.num(name, c.Value(row))
		}
	}
}

// verifier keeps the first problem found.
type verifier struct {
	dur float64 // the run's simulated span
	err error
}

func (v *verifier) fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("%s %s", field, fmt.Sprintf(format, args...))
	}
}

func (v *verifier) num(field string, x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
		v.fail(field, "is %v; it is a finite number, at least 0", x)
	}
}

func (v *verifier) share(field string, x float64) {
	if !(x >= 0 && x <= 1) {
		v.fail(field, "is %v; a share is between 0 and 1", x)
	}
}

// span checks a span of time (or an instant) in seconds: within the run.
func (v *verifier) span(field string, x float64) {
	// A run's spans and instants are at most its duration; a little more
	// for rounding, and a real run's timers.
	if !(x >= 0 && x <= v.dur*1.001+1e-6) {
		v.fail(field, "is %v s; it lies within the run (0 to %v s)", x, v.dur)
	}
}
