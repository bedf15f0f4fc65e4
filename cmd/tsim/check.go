package main

import (
	"context"
	"fmt"
	"math"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/runner"
)

var cmdCheck = &command{
	Name:      "check",
	UsageLine: "FILE... [--allow-outside]",
	Short:     "check experiment files without running them",
	Long:      helpText("check"),
	Run:       runCheck,
}

func runCheck(_ context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	if len(files) == 0 {
		return c.usageError(e, "no experiment files given")
	}
	status = exitOK
	for _, f := range files {
		x, err := runner.LoadFile(f, inputOptions(fs))
		if err != nil {
			c.errorf(e, "%v", err)
			status = exitFailure
			continue
		}
		n := x.EstimatedRequests()
		chk := analysis.Check(x, analysis.CheckOptions{Workers: numWorkers(), Memory: analysis.MachineMemory()})
		fmt.Fprintf(e.stdout, "%s: ok (about %s simulated requests, about %s of memory at the peak)\n", f, fmtCount(n), analysis.FmtBytes(chk.PeakBytes))
		printWarnings(c, e, x)
		for _, w := range chk.Warnings {
			c.errorf(e, "warning: %s: %s", f, w)
		}
		if n > bigRun {
			c.errorf(e, "warning: %s: about %s requests to simulate (%d scenarios × %d replications); at roughly %s requests/s this takes %s",
				f, fmtCount(n), x.NumScenarios(), x.Replications, fmtCount(requestsPerSecond), fmtWait(n/requestsPerSecond))
		}
	}
	return status
}

// printWarnings prints the settings of x that take no effect, one line
// each with file and line (docs/dotnet.md, "Settings that take no effect").
func printWarnings(c *command, e *env, x *format.Experiment) {
	for _, w := range x.Warnings {
		c.errorf(e, "warning: %s", w)
	}
}

// bigRun is the estimated number of requests above which check warns:
// minutes of simulation on one core.
const bigRun = 1e8

// requestsPerSecond is a rough speed of the simulator on one core (tsim
// bench measures it on this machine), for check's estimate of the wait.
const requestsPerSecond = 5e5

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
