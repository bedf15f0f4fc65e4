package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

var cmdRun = &command{
	Name:      "run",
	UsageLine: "FILE... [-o DIR] [--seed N] [--reps N] [--mode sim|real] [--time-scale S] [--cpu sharing|cores] [--shard i/n] [--outputs json,csv,png] [--no-plots] [--json] [--quiet]",
	Short:     "run experiments and write their results",
	Long: `Run loads each experiment file, runs every scenario (each variant at each
sweep point) the experiment's number of times (replications), prints a
summary and writes the results into DIR/<file name without extension>/.
Flags may come before, between or after the files.

All files are loaded and checked before anything runs. Replications and
scenarios run in parallel on GOMAXPROCS workers; each replication has its own
engine, so the results are the same as a sequential run and the same file and
seed always give byte-identical summary.json and CSV files.

Replication 1 of every scenario uses the experiment's seed, replication k
a seed derived from it (summary.json lists them as replication_seeds), and
every variant and sweep point uses the same seeds, so that variants are
compared on common random numbers. To replay one replication alone, run with
--seed set to its seed and --reps 1.

The flags are:

	-o DIR
		write results under DIR (default "out").
	--seed N
		use N as the experiment's seed instead of the file's.
	--reps N
		run each scenario N times instead of the file's replications.
	--mode sim|real
		run on the discrete-event simulator (sim, the default) or for real
		(real): every tier a net/http server on 127.0.0.1, every call a real
		HTTP request through a transport limited to the modelled
		connections, pools and throttles as semaphores deciding with the
		simulator's own code, demands as scaled sleeps. Replications then
		run one at a time, and the results, in simulated units, vary a
		little from run to run. 'tsim validate' compares the two modes.
	--time-scale S
		with --mode real: real seconds per simulated second (default: 10 ms
		of real time for the smallest mean demand, within 2 minutes a run).
	--cpu sharing|cores
		with --mode real: processor sharing (default, the simulator's
		discipline) or one core permit per demand, first come first served.
	--shard i/n
		run only shard i of n (0 ≤ i < n) of each experiment and write its
		raw results for 'tsim merge' instead of the summary files; see
		"Sharding" below.
	--outputs LIST
		write only the kinds of file in LIST, a comma-separated list of
		json (summary.json), csv (summary.csv, timeseries.csv) and png
		(the pictures); default json,csv,png. Files of the kinds left out
		are removed from the experiment's directory, so none is stale.
		Pictures take most of the time of a short run: sweeps and CI
		usually want --outputs json,csv.
	--no-plots
		the same as --outputs json,csv.
	--json
		print each experiment's summary.json to standard output instead of
		the tables.
	--quiet
		show no progress bar and no list of files written.

A progress bar appears on standard error when it is a terminal and the run
lasts more than a second.

Files written for each experiment:

	summary.json      the results of every scenario: request counts,
	                  throughput, goodput, latency, timeout rate, per-tier
	                  counters, per-call connection statistics and, with
	                  replications, 95% confidence half-widths ("ci")
	summary.csv       one row per scenario
	timeseries.csv    every tier's counters at each sampling instant of the
	                  first replication of each variant (not for sweeps)
	counters.png      the counters over time, one column per variant
	latency.png       each request's client latency against its end time
	latency-cdf.png   the latency distribution of each variant
	sweep-*.png       throughput, p99 latency and timeouts against the
	                  first swept key (sweeps only)

Files are written whole or not at all (a temporary file, then renamed).
Before anything runs, every output directory is created, checked to be
writable, and locked: a second tsim writing into the same directory at the
same time refuses to start instead of mixing its files with the first's
(the lock is released when the process ends, however it ends). Temporary
files a killed run left behind are removed then. The files of one
experiment are written, and its tables printed, while the next experiment
runs; if writing fails, the tables are still printed.

Across replications, counts are summed; rates, latency statistics and the
time averages of tiers and calls are averaged; maxima are maxima. Scenarios
are aggregated one by one, in order, as their replications finish, and
their raw results dropped, so memory does not grow with the sweep.

Sharding. The work of an experiment is its items: every replication of
every scenario, numbered scenario by scenario (item k is replication
k mod R of scenario k / R, for R replications). With --shard i/n, tsim runs
the items k with k mod n = i and writes them, in item order as they finish,
as one JSON line each to DIR/<name>/shard-i-of-n/items.jsonl; when the
shard ends it writes shard.json there, with the experiment's files and
their SHA-256, the seed, the replications and whether every item finished.
Run the n shards anywhere (processes, machines, a Kubernetes Indexed Job)
with the same file, seed and --reps, then 'tsim merge' writes exactly the
files an unsharded run writes. See docs/scaling.md.

Interrupting a run (Ctrl-C) lets the replications under way finish, writes
the scenarios that finished, names those that did not, and exits with
status 1. A failed run (such as a broken conservation law) also exits 1.
`,
	Run: runRun,
}

func runRun(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	outDir := fs.String("o", "out", "")
	seed := fs.Uint64("seed", 0, "")
	reps := fs.Int("reps", 0, "")
	mode := fs.String("mode", "sim", "")
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("quiet", false, "")
	shardFlag := fs.String("shard", "", "")
	timeScale := fs.Float64("time-scale", 0, "")
	cpuFlag := fs.String("cpu", "sharing", "")
	outputsFlag := fs.String("outputs", "json,csv,png", "")
	noPlots := fs.Bool("no-plots", false, "")
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	if len(files) == 0 {
		return c.usageError(e, "no experiment files given")
	}
	if set["reps"] && *reps < 1 {
		return c.usageError(e, "--reps must be at least 1, got %d", *reps)
	}
	if !slices.Contains(runner.Modes, *mode) {
		return c.usageError(e, "--mode must be one of %s, got %q", strings.Join(runner.Modes, ", "), *mode)
	}
	kinds, err := report.ParseOutputs(*outputsFlag)
	if err != nil {
		return c.usageError(e, "--outputs: %v", err)
	}
	if *noPlots {
		if set["outputs"] {
			return c.usageError(e, "--no-plots and --outputs: give one of them")
		}
		kinds.PNG = false
	}
	var sh runner.Shard
	if set["shard"] {
		var err error
		if sh, err = runner.ParseShard(*shardFlag); err != nil {
			return c.usageError(e, "%v", err)
		}
		if *asJSON {
			return c.usageError(e, "--json and --shard: a shard has no summary; merge the shards, then read summary.json")
		}
	}
	if set["time-scale"] && (*mode != "real" || !(*timeScale > 0)) {
		return c.usageError(e, "--time-scale needs --mode real and a value > 0 (real seconds per simulated second), got %v", *timeScale)
	}
	if set["cpu"] && *mode != "real" {
		return c.usageError(e, "--cpu needs --mode real")
	}
	cpu, err := runner.ParseCPU(*cpuFlag)
	if err != nil {
		return c.usageError(e, "%v", err)
	}
	ex, err := runner.ExecutorFor(*mode, *timeScale, cpu)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}

	// Load every file before running any: a mistake in the last file
	// should not wait for the first to finish.
	var plans []*runner.Plan
	sources := map[*runner.Plan][]runner.SourceFile{}
	failed := false
	for _, f := range files {
		x, src, err := runner.LoadSourcesFrom(f)
		if err != nil {
			c.errorf(e, "%v", err)
			failed = true
			continue
		}
		p := &runner.Plan{Path: f, Stem: runner.Stem(f), X: x, Seed: x.Seed, Reps: x.Replications, Mode: *mode, Shard: sh}
		if err := runner.CheckStem(p.Stem); err != nil {
			c.errorf(e, "%s: %v", f, err)
			failed = true
			continue
		}
		sources[p] = src
		if set["seed"] {
			p.Seed = *seed
		}
		if set["reps"] {
			p.Reps = *reps
		}
		p.Out = filepath.Join(*outDir, p.Stem)
		for _, q := range plans {
			if q.Out == p.Out {
				c.errorf(e, "%s and %s would both write to %s; rename one or run them separately", q.Path, p.Path, p.Out)
				failed = true
			}
		}
		plans = append(plans, p)
	}
	if failed {
		return exitFailure
	}

	// Own every output directory before simulating anything: an unusable
	// -o, or one another run is writing to, is found now, not after the
	// work.
	dirs := map[*runner.Plan]*atomicio.Dir{}
	defer func() {
		for _, d := range dirs {
			d.Unlock()
		}
	}()
	for _, p := range plans {
		root, name := filepath.Dir(p.Out), p.Stem
		if p.Shard.Sharded() {
			root, name = p.Out, p.Shard.DirName()
		}
		d, err := atomicio.Lock(root, name)
		if err != nil {
			c.errorf(e, "%s: output: %v", p.Path, err)
			return exitFailure
		}
		dirs[p] = d
	}

	total := 0
	for _, p := range plans {
		total += p.Shard.Count(p.Items())
	}
	prog := newProgress(e.stderr, total, !*quiet && isTerminal(e.stderr))
	defer prog.finish()
	workers := numWorkers()

	// Results are written, and their tables printed, by one goroutine in
	// experiment order while the next experiment simulates; at most one
	// experiment waits for it, so memory stays bounded.
	type finished struct {
		p   *runner.Plan
		res *results.Experiment
	}
	toWrite := make(chan finished, 1)
	writeStatus := make(chan int, 1)
	go func() {
		st := exitOK
		for f := range toWrite {
			if s := c.writeResults(e, f.p, f.res, kinds, *asJSON, *quiet); s != exitOK {
				st = s
			}
		}
		writeStatus <- st
	}()
	stop := func() int {
		close(toWrite)
		return <-writeStatus
	}

	var notRun []string
	for _, p := range plans {
		if ctx.Err() != nil {
			notRun = append(notRun, p.Path+": not run")
			continue
		}
		prog.describe(p.Name())
		if p.Shard.Sharded() {
			dir, complete, err := runner.RunShard(func(s runner.Sink) error { return runner.RunItems(ctx, p, ex, workers, prog.add, s) }, p, sources[p], versionString())
			prog.finish()
			if err != nil {
				stop()
				c.errorf(e, "%v", err)
				return exitFailure
			}
			if !complete {
				notRun = append(notRun, fmt.Sprintf("%s: shard %d/%d not finished", p.Path, p.Shard.Index(), p.Shard.Of()))
				continue
			}
			if !*quiet {
				c.out(e, "%s (%s): shard %d/%d, %d of %d replications\nwrote %s%c\n  shard.json items.jsonl\n\n",
					p.Name(), p.Path, p.Shard.Index(), p.Shard.Of(), p.Shard.Count(p.Items()), p.Items(), dir, filepath.Separator)
			}
			continue
		}
		res, err := runner.Execute(ctx, p, ex, workers, prog.add)
		if err != nil {
			stop()
			prog.finish()
			c.errorf(e, "%v", err)
			return exitFailure
		}
		if !res.Complete() {
			notRun = append(notRun, runner.DescribeMissing(p, res))
		}
		if res.Finished == 0 {
			continue
		}
		toWrite <- finished{p, res}
	}
	status = stop()
	prog.finish()
	if len(notRun) > 0 {
		c.errorf(e, "interrupted; what finished was written")
		for _, s := range notRun {
			c.errorf(e, "%s", s)
		}
		return exitFailure
	}
	return status
}

// writeResults writes one experiment's files and prints its tables (or its
// summary.json with --json). The tables are printed even when the files
// cannot be written.
func (c *command) writeResults(e *env, p *runner.Plan, res *results.Experiment, kinds report.Outputs, asJSON, quiet bool) int {
	status := exitOK
	written, warnings, werr := report.WriteOutputs(p.Out, res, kinds)
	for _, w := range warnings {
		c.errorf(e, "%s", w)
	}
	if werr != nil {
		c.errorf(e, "%s: writing results: %v", p.Path, werr)
		status = exitFailure
	}
	if asJSON {
		b, err := report.SummaryJSON(res)
		if err != nil {
			c.errorf(e, "%s: %v", p.Path, err)
			return exitFailure
		}
		e.writeOut(b)
		return status
	}
	var buf strings.Builder
	if err := report.PrintReport(&buf, res); err != nil {
		c.errorf(e, "%s: %v", p.Path, err)
		status = exitFailure
	}
	if !quiet && werr == nil {
		fmt.Fprintf(&buf, "wrote %s%c\n  %s\n\n", p.Out, filepath.Separator, strings.Join(written, " "))
	}
	e.writeOut([]byte(buf.String()))
	return status
}

// numWorkers is how many replications run at once; tests set it to 1 to
// compare a sequential run with a parallel one.
var numWorkers = func() int { return runtime.GOMAXPROCS(0) }
