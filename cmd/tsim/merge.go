package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

var cmdMerge = &command{
	Name:      "merge",
	UsageLine: "[-o DIR] [--json] [--quiet] SHARDDIR...",
	Short:     "combine the shards of sharded runs into their results",
	Long: `Merge reads the shards written by 'tsim run FILE --shard i/n' and writes,
for each experiment, exactly the files 'tsim run FILE' would have written
(summary.json, summary.csv, timeseries.csv and the pictures, byte for byte)
into DIR/<name>/, and prints the same summary.

Each argument is a shard directory (DIR/<name>/shard-i-of-n), an
experiment's output directory holding shard directories, or the -o
directory the shards were run with. Shards are grouped by experiment.

Merge refuses shards that do not belong together — run from experiment
files with different contents (shard.json carries the files and their
SHA-256), with different seeds, replications, modes, shard counts or tsim
versions — and shards that are missing, given twice or did not finish.
It needs neither the experiment file nor the directory the shards ran in.

Items are read back in order, one scenario at a time, so merge's memory
does not grow with the number of scenarios.

The flags are:

	-o DIR
		write results under DIR (default "out").
	--json
		print each experiment's summary.json instead of the tables.
	--quiet
		do not list the files written.
`,
	Run: runMerge,
}

func runMerge(_ context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	outDir := fs.String("o", "out", "")
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("quiet", false, "")
	dirs, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	if len(dirs) == 0 {
		return c.usageError(e, "no shard directories given")
	}
	found, err := findShards(dirs)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	groups, err := groupShards(found)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	status = exitOK
	for _, g := range groups {
		m := g.shards[0].m
		x, err := loadSources(m.Sources)
		if err != nil {
			c.errorf(e, "%s: %v", g.shards[0].dir, err)
			status = exitFailure
			continue
		}
		p := &plan{path: filepath.FromSlash(m.File), stem: g.stem, x: x, seed: m.Seed, reps: m.Replications, mode: m.Mode}
		p.out = filepath.Join(*outDir, p.stem)
		if p.items() != m.Items || x.NumScenarios() != m.Scenarios {
			c.errorf(e, "%s: the shards have %d items of %d scenarios; their experiment file has %d scenarios", g.shards[0].dir, m.Items, m.Scenarios, x.NumScenarios())
			status = exitFailure
			continue
		}
		agg := newAggregator(p)
		if err := replay(g, agg); err != nil {
			c.errorf(e, "%v", err)
			status = exitFailure
			continue
		}
		res := agg.res
		if !res.complete() {
			c.errorf(e, "%s: %s", g.stem, describeMissing(res))
			status = exitFailure
			continue
		}
		written, warnings, err := writeOutputs(res)
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
			continue
		}
		if err := printReport(e.stdout, res); err != nil {
			c.errorf(e, "%s: %v", p.path, err)
			status = exitFailure
		}
		if !*quiet {
			fmt.Fprintf(e.stdout, "merged %d shards\nwrote %s%c\n  %s\n\n", len(g.shards), p.out, filepath.Separator, strings.Join(written, " "))
		}
	}
	return status
}
