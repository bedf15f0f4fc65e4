package tsim

import (
	"fmt"
	"math"

	"github.com/tsim-dev/tsim/analysis"
)

// Estimate is what tsim check says of an experiment before it runs: how
// many top-level requests it would simulate, over every scenario and
// replication, how much memory it would take at its peak, and what it
// warns of (memory, a load above capacity; see analysis.Check).
type Estimate struct {
	Requests               float64
	Scenarios, Replication int
	PeakBytes              float64
	Warnings               []string
}

// Estimate estimates the work of running e with workers replications at
// once (0: GOMAXPROCS), against the memory of this machine.
func (e *Experiment) Estimate(workers int) Estimate {
	x := e.l.X
	chk := analysis.Check(x, analysis.CheckOptions{Workers: workers, Memory: analysis.MachineMemory()})
	return Estimate{Requests: chk.Requests, Scenarios: x.NumScenarios(), Replication: x.Replications,
		PeakBytes: chk.PeakBytes, Warnings: chk.Warnings}
}

// Memory writes the estimate's peak memory: "1.2 GB".
func (s Estimate) Memory() string { return analysis.FmtBytes(s.PeakBytes) }

// bigRun is the estimated number of requests above which check warns:
// minutes of simulation on one core.
const bigRun = 1e8

// requestsPerSecond is a rough speed of the simulator on one core (tsim
// bench measures it on this machine), for check's estimate of the wait.
const requestsPerSecond = 5e5

// Count writes the estimate's number of requests: "about 3.2 million".
func (s Estimate) Count() string { return fmtCount(s.Requests) }

// Warning is what check warns of a long run, or "" (the others are in
// Warnings).
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
