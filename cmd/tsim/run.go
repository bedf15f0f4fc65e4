package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/tsim-dev/tsim"
	"github.com/tsim-dev/tsim/internal/termui"
)

var cmdRun = &command{
	Name:      "run",
	UsageLine: "FILE... [-o DIR] [--seed N] [--reps N] [--mode sim|real] [--time-scale S] [--cpu sharing|cores] [--shard i/n] [--outputs json,csv,png,html] [--format png,svg,pdf] [--no-plots] [--measured RESULTS] [--keep] [--json] [--wide] [--quiet]",
	Short:     "run experiments and write their results",
	Long:      helpText("run"),
	Run:       runRun,
}

func runRun(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	wide(fs)
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
	measuredFlag := fs.String("measured", "", "")
	keep := fs.Bool("keep", false, "")
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	if len(files) == 0 {
		return c.usageError(e, "no experiment files given")
	}
	opt := tsim.Options{Mode: tsim.Mode(*mode), Workers: numWorkers(), PerReplica: *perReplica, OutputDir: *outDir, Keep: *keep}
	if set["reps"] {
		if err := tsim.CheckReplications(*reps); err != nil {
			return c.usageError(e, "--reps %v", err)
		}
		opt.Replications = *reps
	}
	if set["seed"] {
		opt.Seed = seed
	}
	if set["time-scale"] {
		opt.TimeScale = *timeScale
		if *timeScale == 0 {
			opt.TimeScale = -1 // given, it must be > 0 (0 is the option's "choose one")
		}
	}
	if set["cpu"] {
		opt.CPU = *cpuFlag
	}
	var err error
	if opt.Outputs, err = tsim.ParseOutputs(*outputsFlag); err != nil {
		return c.usageError(e, "--outputs: %v", err)
	}
	opt.Outputs.Formats = *formatFlag
	if *noPlots {
		if set["outputs"] {
			return c.usageError(e, "--no-plots and --outputs: give one of them")
		}
		opt.Outputs.PNG = false
	}
	if set["shard"] {
		if opt.Shard, err = tsim.ParseShard(*shardFlag); err != nil {
			return c.usageError(e, "%v", err)
		}
		if *asJSON {
			return c.usageError(e, "--json and --shard: a shard has no summary; merge the shards, then read summary.json")
		}
	}
	if set["measured"] && opt.Shard.Sharded() {
		return c.usageError(e, "--measured and --shard: a shard has no runs to compare; run unsharded to compare with a load test")
	}
	if err := opt.Check(); err != nil {
		return c.usageError(e, "%v", err)
	}
	if set["measured"] {
		if opt.Measured, err = tsim.ReadMeasured(*measuredFlag); err != nil {
			return c.fail(e, err)
		}
	}

	exps, ok := c.loadAll(e, fs, files)
	if !ok {
		return exitFailure
	}
	for _, x := range exps {
		printWarnings(c, e, x)
	}

	prog := termui.NewProgress(e.stderr, !*quiet && termui.IsTerminal(e.stderr))
	defer prog.Finish()
	opt.Total = prog.SetTotal
	opt.Progress = prog.Add
	opt.Started = func(x *tsim.Experiment) { prog.Describe(x.Name()) }
	status = exitOK
	var notRun []string
	err = tsim.RunAll(ctx, exps, opt, func(f *tsim.Finished) {
		if f.Missing != "" {
			notRun = append(notRun, f.Missing)
		}
		switch {
		case opt.Shard.Sharded():
			if f.ShardComplete && !*quiet {
				prog.Finish()
				c.out(e, "%s (%s): shard %d/%d, %d of %d replications\nwrote %s%c\n  shard.json items.jsonl\n\n",
					f.Experiment.Name(), f.Experiment.Path(), opt.Shard.Index(), opt.Shard.Of(), f.ShardItems, f.Items, f.Dir, filepath.Separator)
			}
		case f.Result != nil && f.Result.Finished > 0:
			if f.Kept != "" && !*quiet && !*asJSON {
				c.out(e, "kept the last run in %s%c\n", f.Kept, filepath.Separator)
			}
			if s := c.printResult(e, fs, f.Result, f.Dir, f.Written, f.Warnings, f.WriteErr, *asJSON, *quiet); s != exitOK {
				status = s
			}
		}
	})
	prog.Finish()
	if err != nil {
		return c.fail(e, err)
	}
	if len(notRun) > 0 {
		c.errorf(e, "interrupted; what finished was written")
		for _, s := range notRun {
			c.errorf(e, "%s", s)
		}
		return exitFailure
	}
	return status
}

// printResult prints one experiment's tables (or its summary.json with
// --json), and what was written into dir. The tables are printed even when
// the files could not be written.
func (c *command) printResult(e *env, fs *flag.FlagSet, res *tsim.Result, dir string, written, warnings []string, werr error, asJSON, quiet bool) int {
	status := exitOK
	for _, w := range warnings {
		c.errorf(e, "%s", w)
	}
	if werr != nil {
		c.errorf(e, "%s: writing results: %v", res.Path(), werr)
		status = exitFailure
	}
	if asJSON {
		b, err := res.SummaryJSON()
		if err != nil {
			c.errorf(e, "%s: %v", res.Path(), err)
			return exitFailure
		}
		e.writeOut(b)
		return status
	}
	var buf bytes.Buffer
	if err := res.WriteText(tables(fs, &buf, e.stdout)); err != nil {
		c.errorf(e, "%s: %v", res.Path(), err)
		status = exitFailure
	}
	if !quiet && werr == nil {
		fmt.Fprintf(&buf, "wrote %s%c\n  %s\n\n", dir, filepath.Separator, strings.Join(written, " "))
	}
	e.writeOut(buf.Bytes())
	return status
}

// numWorkers is how many replications run at once; tests set it to 1 to
// compare a sequential run with a parallel one.
var numWorkers = func() int { return runtime.GOMAXPROCS(0) }
