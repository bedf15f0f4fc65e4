package tsim

import (
	"fmt"
	"math"
)

// Estimate is what tsim check says of an experiment before it runs: how
// many top-level requests it would simulate, over every scenario and
// replication.
type Estimate struct {
	Requests               float64
	Scenarios, Replication int
}

// Estimate estimates the work of running e (format's estimate of the
// requests of each scenario).
func (e *Experiment) Estimate() Estimate {
	x := e.l.X
	return Estimate{Requests: x.EstimatedRequests(), Scenarios: x.NumScenarios(), Replication: x.Replications}
}

// bigRun is the estimated number of requests above which check warns:
// minutes of simulation on one core.
const bigRun = 1e8

// requestsPerSecond is a rough speed of the simulator on one core (tsim
// bench measures it on this machine), for check's estimate of the wait.
const requestsPerSecond = 5e5

// Count writes the estimate's number of requests: "about 3.2 million".
func (s Estimate) Count() string { return fmtCount(s.Requests) }

// Warning is what check warns of a long run, or "".
func (s Estimate) Warning() string {
	if !(s.Requests > bigRun) {
		return ""
	}
	return fmt.Sprintf("about %s requests to simulate (%d scenarios × %d replications); at roughly %s requests/s this takes %s",
		fmtCount(s.Requests), s.Scenarios, s.Replication, fmtCount(requestsPerSecond), fmtWait(s.Requests/requestsPerSecond))
}

func fmtCount(n float64) string {
	switch {
	case math.IsInf(n, 0):
		return "unboundedly many"
	case n >= 1e9:
		return fmt.Sprintf("%.4g billion", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.3g million", n/1e6)
	}
	return fmt.Sprintf("%.0f", n)
}

func fmtWait(s float64) string {
	switch {
	case math.IsInf(s, 0):
		return "forever"
	case s >= 86400:
		return fmt.Sprintf("about %.1f days", s/86400)
	case s >= 3600:
		return fmt.Sprintf("about %.1f hours", s/3600)
	}
	return fmt.Sprintf("about %.0f minutes", math.Ceil(s/60))
}
