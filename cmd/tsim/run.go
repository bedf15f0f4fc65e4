package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/loadtest"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

var cmdRun = &command{
	Name:      "run",
	UsageLine: "FILE... [-o DIR] [--seed N] [--reps N] [--mode sim|real] [--time-scale S] [--cpu sharing|cores] [--shard i/n] [--outputs json,csv,png,html] [--format png,svg,pdf] [--no-plots] [--measured RESULTS] [--keep] [--json] [--quiet]",
	Short:     "run experiments and write their results",
	Long:      helpText("run"),
	Run:       runRun,
}

func runRun(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	outDir := fs.String("o", "out", "")
	seed := fs.Uint64("seed", 0, "")
	reps := fs.Int("reps", 0, "")
	mode := fs.String("mode", "sim", "")
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("quiet", false, "")
	shardFlag := fs.String("shard", "", "")
	timeScale := fs.Float64("time-scale", 0, "")
	cpuFlag := fs.String("cpu", "sharing", "")
	outputsFlag := fs.String("outputs", "json,csv,png,html", "")
	noPlots := fs.Bool("no-plots", false, "")
	formatFlag := fs.String("format", "png", "")
	perReplica := fs.Bool("per-replica", false, "")
	keep := fs.Bool("keep", false, "")
	measuredFlag := fs.String("measured", "", "")
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	if len(files) == 0 {
		return c.usageError(e, "no experiment files given")
	}
	if set["reps"] {
		if err := format.CheckReplications(*reps); err != nil {
			return c.usageError(e, "--reps %v", err)
		}
	}
	if !slices.Contains(runner.Modes, *mode) {
		return c.usageError(e, "--mode must be one of %s, got %q", strings.Join(runner.Modes, ", "), *mode)
	}
	kinds, err := report.ParseOutputs(*outputsFlag)
	if err != nil {
		return c.usageError(e, "--outputs: %v", err)
	}
	if _, err := plots.ParseFormats(*formatFlag); err != nil {
		return c.usageError(e, "--format: %v", err)
	}
	kinds.Formats = *formatFlag
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
	if set["measured"] && sh.Sharded() {
		return c.usageError(e, "--measured and --shard: a shard has no runs to compare; run unsharded to compare with a load test")
	}
	var measured *loadtest.Result
	if set["measured"] {
		if measured, err = readMeasured(*measuredFlag); err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
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
	o := runner.Overrides{Mode: *mode, Shard: sh, OutDir: *outDir, PerReplica: *perReplica}
	if set["seed"] {
		o.Seed = seed
	}
	if set["reps"] {
		o.Reps = *reps
	}
	o.Input = inputOptions(fs)
	plans, errs := runner.PlanFiles(files, o)
	for _, err := range errs {
		c.errorf(e, "%v", err)
	}
	if len(errs) > 0 {
		return exitFailure
	}
	for _, p := range plans {
		printWarnings(c, e, p.X)
	}
	// Own every output directory before simulating anything: an unusable
	// -o, or one another run is writing to, is found now, not after the
	// work.
	for _, p := range plans {
		d, err := p.Lock()
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		defer d.Unlock()
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
			if *keep {
				// The last run's files move to history/<n> before this
				// run's are written (tsim diff DIR compares them).
				kept, err := htmlreport.Keep(f.p.Out, report.OutputFiles)
				if err != nil {
					c.errorf(e, "%s: keeping the last run: %v", f.p.Path, err)
					st = exitFailure
					continue
				}
				if kept != "" && !*quiet && !*asJSON {
					c.out(e, "kept the last run in %s%c\n", kept, filepath.Separator)
				}
			}
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
	if sh.Sharded() {
		for _, p := range plans {
			if ctx.Err() != nil {
				notRun = append(notRun, p.Path+": not run")
				continue
			}
			prog.describe(p.Name())
			dir, complete, err := runner.RunShard(func(s runner.Sink) error { return runner.RunItems(ctx, p, ex, workers, prog.add, s) }, p, p.Sources, versionString())
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
		}
	} else {
		// The next experiment starts while the last replications of the
		// one before run; results still arrive, and are written, in order.
		var failed error
		runner.ExecuteAll(ctx, plans, ex, workers, prog.add,
			func(p *runner.Plan) { prog.describe(p.Name()) },
			func(p *runner.Plan, res *results.Experiment, err error) bool {
				switch {
				case err != nil:
					failed = err
					return false
				case res == nil:
					notRun = append(notRun, p.Path+": not run")
					return true
				}
				if !res.Complete() {
					notRun = append(notRun, runner.DescribeMissing(p, res))
				}
				if res.Finished > 0 {
					if measured != nil && measured.Attach(res) == 0 {
						c.errorf(e, "%s: a sweep keeps no run to compare with %s: --measured compares the variants of an experiment without a sweep", p.Path, measured.File)
					}
					toWrite <- finished{p, res}
				}
				return true
			})
		if failed != nil {
			stop()
			prog.finish()
			c.errorf(e, "%v", failed)
			return exitFailure
		}
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

// readMeasured reads a load test's results (--measured): a regular file
// of at most format.MaxDataBytes, parsed by package loadtest.
func readMeasured(path string) (*loadtest.Result, error) {
	data, err := input.ReadRegular(path, format.MaxDataBytes, "load-test results")
	if err != nil {
		return nil, err
	}
	return loadtest.Parse(data, path)
}
