package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

var cmdRun = &command{
	Name:      "run",
	UsageLine: "FILE... [-o DIR] [--seed N] [--reps N] [--mode sim|real] [--time-scale S] [--cpu sharing|cores] [--shard i/n] [--json] [--quiet]",
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
	if !contains(modes, *mode) {
		return c.usageError(e, "--mode must be one of %s, got %q", strings.Join(modes, ", "), *mode)
	}
	var sh shard
	if set["shard"] {
		var err error
		if sh, err = parseShard(*shardFlag); err != nil {
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
	cpu, err := parseCPU(*cpuFlag)
	if err != nil {
		return c.usageError(e, "%v", err)
	}
	ex, err := executorFor(*mode, *timeScale, cpu)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}

	// Load every file before running any: a mistake in the last file
	// should not wait for the first to finish.
	var plans []*plan
	sources := map[*plan][]sourceFile{}
	failed := false
	for _, f := range files {
		x, src, err := loadExperimentSources(f)
		if err != nil {
			c.errorf(e, "%v", err)
			failed = true
			continue
		}
		p := &plan{path: f, stem: stem(f), x: x, seed: x.Seed, reps: x.Replications, mode: *mode, shard: sh}
		sources[p] = src
		if set["seed"] {
			p.seed = *seed
		}
		if set["reps"] {
			p.reps = *reps
		}
		p.out = filepath.Join(*outDir, p.stem)
		for _, q := range plans {
			if q.out == p.out {
				c.errorf(e, "%s and %s would both write to %s; rename one or run them separately", q.path, p.path, p.out)
				failed = true
			}
		}
		plans = append(plans, p)
	}
	if failed {
		return exitFailure
	}

	total := 0
	for _, p := range plans {
		total += p.shard.count(p.items())
	}
	prog := newProgress(e.stderr, total, !*quiet && isTerminal(e.stderr))
	defer prog.finish()
	workers := numWorkers()

	status = exitOK
	var notRun []string
	for _, p := range plans {
		if ctx.Err() != nil {
			notRun = append(notRun, p.path+": not run")
			continue
		}
		prog.describe(experimentName(p))
		if p.shard.sharded() {
			dir, complete, err := runShard(func(s sink) error { return runItems(ctx, p, ex, workers, prog.add, s) }, p, sources[p])
			prog.finish()
			if err != nil {
				c.errorf(e, "%v", err)
				return exitFailure
			}
			if !complete {
				notRun = append(notRun, fmt.Sprintf("%s: shard %d/%d not finished", p.path, p.shard.i, p.shard.n))
				continue
			}
			if !*quiet {
				fmt.Fprintf(e.stdout, "%s (%s): shard %d/%d, %d of %d replications\nwrote %s%c\n  shard.json items.jsonl\n\n",
					experimentName(p), p.path, p.shard.i, p.shard.n, p.shard.count(p.items()), p.items(), dir, filepath.Separator)
			}
			continue
		}
		res, err := execute(ctx, p, ex, workers, prog.add)
		if err != nil {
			prog.finish()
			c.errorf(e, "%v", err)
			return exitFailure
		}
		if !res.complete() {
			notRun = append(notRun, describeMissing(res))
		}
		if res.finished == 0 {
			continue
		}
		written, warnings, err := writeOutputs(res)
		prog.finish()
		for _, w := range warnings {
			c.errorf(e, "%s", w)
		}
		if err != nil {
			c.errorf(e, "%s: writing results: %v", p.path, err)
			status = exitFailure
			continue
		}
		if *asJSON {
			b, err := summaryBytes(res)
			if err != nil {
				c.errorf(e, "%s: %v", p.path, err)
				status = exitFailure
				continue
			}
			e.stdout.Write(b)
		} else {
			if err := printReport(e.stdout, res); err != nil {
				c.errorf(e, "%s: %v", p.path, err)
				status = exitFailure
			}
			if !*quiet {
				fmt.Fprintf(e.stdout, "wrote %s%c\n  %s\n\n", p.out, filepath.Separator, strings.Join(written, " "))
			}
		}
	}
	if len(notRun) > 0 {
		prog.finish()
		c.errorf(e, "interrupted; what finished was written")
		for _, s := range notRun {
			c.errorf(e, "%s", s)
		}
		return exitFailure
	}
	return status
}

// numWorkers is how many replications run at once; tests set it to 1 to
// compare a sequential run with a parallel one.
var numWorkers = func() int { return runtime.GOMAXPROCS(0) }

// stem is a file's name without directory and extension: the name of its
// output directory.
func stem(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// describeMissing says which scenarios of an interrupted experiment did
// not finish.
func describeMissing(r *experimentResult) string {
	var names []string
	missing := 0
	for i, s := range r.scenarios {
		if s != nil {
			continue
		}
		missing++
		if len(names) < 3 {
			sc, err := r.plan.x.Scenario(i)
			if err == nil {
				names = append(names, scenarioName(sc.Variant, sc.Params))
			}
		}
	}
	more := ""
	if missing > len(names) {
		more = ", ..."
	}
	return fmt.Sprintf("%s: %d of %d scenarios not finished (%s%s)", r.plan.path, missing, len(r.scenarios), strings.Join(names, "; "), more)
}
