package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/runner"
)

var cmdExplain = &command{
	Name:      "explain",
	UsageLine: "FILE [-o DIR] [--seed N] [--quiet]",
	Short:     "say which limit binds, where response time goes and what to change",
	Long: `Explain answers "why is it slow, and what do I change?" for each variant of
an experiment, in three parts.

1. Before simulating, from the operational laws: every throttle of the
system (connection limits, thread pools, ASP.NET admission, WCF throttles,
locks, CPUs) with its limit L, the mean time H one request holds one of its
slots (a synchronous holder's H includes everything downstream), its
capacity bound L/H in requests per second, the number of users at which it
saturates (closed loads: (D+Z)·L/H) and how busy it is at the peak load.
Then the load's asymptotic bounds — closed: X ≤ min(N/(D+Z), 1/D_max) and
R ≥ max(D, N·D_max − Z); open: X ≤ 1/D_max — where D is the response time
with no queueing, Z the think time and D_max = H/L of the tightest
throttle; which limit binds first, at how many users or what rate; and for
every connection limit how it was decided (the .NET rules: machine.config
entries, autoConfig, System.Net's defaults).

2. From a simulation (each variant once, with the experiment's seed):
where the average completed request's response time went — waiting for a
connection, a thread, admission, a throttle slot, a lock or a core, working
(CPU), external waits and the network — as a table and as breakdown.png.

3. A diagnosis per variant: the binding limit and how busy and queued it
was in the simulation, the idle resources (CPU of each tier), and the
smallest change that moves the bottleneck — the limit that carries the
peak load, N ≥ X·H (Little's law) — with what binds once it is raised
past the next bound.

The sweep of an experiment, if it has one, is left out: each variant is
explained at its base values (use 'tsim plan' to search a key).

The flags are:

	-o DIR
		write breakdown.png under DIR/<file name without extension>/
		(default "out").
	--seed N
		simulate with seed N instead of the file's.
	--quiet
		do not say where the picture was written.
`,
	Run: runExplain,
}

func runExplain(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	outDir := fs.String("o", "out", "")
	seed := fs.Uint64("seed", 0, "")
	quiet := fs.Bool("quiet", false, "")
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	switch {
	case len(files) == 0:
		return c.usageError(e, "no experiment file given")
	case len(files) > 1:
		return c.usageError(e, "one experiment file at a time, got %d", len(files))
	}
	path := files[0]
	x, err := runner.LoadFile(path)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	opt := analysis.ExplainOptions{Path: path}
	if setFlags(fs)["seed"] {
		opt.Seed = seed
	}
	ex, err := analysis.Explain(ctx, x, opt)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	var out bytes.Buffer
	if err := ex.WriteText(&out); err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}

	var bars []plots.BreakdownBar
	for _, v := range ex.Variants {
		bars = append(bars, plots.BreakdownBar{Label: v.Name, Breakdown: v.Run.Breakdown})
	}
	fig, err := plots.Breakdown(ex.Name+": where the response time of a completed request went", bars)
	if err != nil {
		fmt.Fprintf(&out, "breakdown.png not drawn: %v\n", err)
	} else {
		written, err := report.WriteFigure(filepath.Join(*outDir, runner.Stem(path)), "breakdown.png", fig)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		if !*quiet {
			fmt.Fprintf(&out, "wrote %s\n", written)
		}
	}
	e.stdout.Write(out.Bytes())
	return exitOK
}
