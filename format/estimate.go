package format

import (
	"math"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// Estimates of the work a run is, for tsim check to warn about a file
// that would take hours. The unit is simulated top-level requests (what
// tsim bench reports as requests and requests/s), so that an estimate
// divided by the measured requests/s gives the wall time.

// EstimatedRequests estimates the top-level requests one replication of
// the scenario simulates:
//
//   - open load: the arrivals, ∫ rate dt over the duration (exact for the
//     piecewise-linear schedule);
//   - closed load: ∫ users dt / (Z + R) over the duration, with Z the mean
//     think time and R the response time with no queueing anywhere (D of
//     model.Analyse; at most load.timeout, when one is set, since a user
//     who gives up sends the next request after thinking). That is the
//     interactive response-time law with the smallest R, so an upper bound
//     where requests queue (the real R is larger); requests rejected
//     early, faster than R, can make the real count larger.
//
// Retries, downstream calls and stopping early on precision are not
// counted. It is +Inf for a closed load with no think time and no demand
// (the run never advances), and 0 for a topology without a load.
func (sc *Scenario) EstimatedRequests() float64 {
	return estimateRequests(&sc.Topology)
}

func estimateRequests(top *model.Topology) float64 {
	d := top.Duration
	switch top.Load.Kind {
	case model.LoadOpen:
		return integrate(top.Load.Rate, d)
	case model.LoadClosed:
		userSeconds := integrate(top.Load.Users, d)
		if userSeconds == 0 {
			return 0
		}
		if len(top.Tiers) == 0 || top.Load.Call.Target < 0 || top.Load.Call.Target >= len(top.Tiers) {
			return 0
		}
		a := model.Analyse(top)
		r := a.D
		if t := top.Load.Call.Timeout; t > 0 && t < r {
			r = t
		}
		cycle := (a.Z + r).Seconds()
		if !(cycle > 0) {
			return math.Inf(1)
		}
		return userSeconds / cycle
	}
	return 0
}

// integrate returns ∫₀ᵈ s(t) dt in value·seconds for a piecewise-linear
// schedule that holds its first value before the first point and its last
// after the last.
func integrate(s model.Schedule, d time.Duration) float64 {
	if len(s) == 0 || d <= 0 {
		return 0
	}
	sum := 0.0
	prevT, prevV := time.Duration(0), s[0].Value
	for _, p := range s {
		if p.At <= prevT {
			prevV = p.Value // a step at prevT (or a point before 0)
			continue
		}
		end := min(p.At, d)
		// Linear from (prevT, prevV) to (p.At, p.Value), cut at end.
		vEnd := prevV + (p.Value-prevV)*float64(end-prevT)/float64(p.At-prevT)
		sum += (prevV + vEnd) / 2 * (end - prevT).Seconds()
		if p.At >= d {
			return sum
		}
		prevT, prevV = p.At, p.Value
	}
	return sum + prevV*(d-prevT).Seconds()
}

// estimateSample is how many scenarios EstimatedRequests resolves at most.
const estimateSample = 256

// EstimatedRequests estimates the top-level requests a whole run of the
// experiment simulates: every scenario's EstimatedRequests times the
// replications. Up to 256 scenarios are resolved, evenly spread over
// them; a larger experiment is extrapolated from those (a sweep's
// scenarios are alike enough for a warning). Scenarios that fail to
// resolve count as the average of the others.
func (x *Experiment) EstimatedRequests() float64 {
	n := x.NumScenarios()
	if n == 0 {
		return 0
	}
	k := min(n, estimateSample)
	sum, got := 0.0, 0
	for j := range k {
		i := j * n / k
		sc, err := x.Scenario(i)
		if err != nil {
			continue
		}
		sum += sc.EstimatedRequests()
		got++
	}
	if got == 0 {
		return 0
	}
	return sum / float64(got) * float64(n) * float64(x.Replications)
}
