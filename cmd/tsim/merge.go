package main

import (
	"context"
	"path/filepath"

	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/runner"
)

var cmdMerge = &command{
	Name:      "merge",
	UsageLine: "[-o DIR] [--json] [--quiet] SHARDDIR...",
	Short:     "combine the shards of sharded runs into their results",
	Long:      helpText("merge"),
	Run:       runMerge,
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
	found, err := runner.FindShards(dirs)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	groups, err := runner.GroupShards(found)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	status = exitOK
	for _, g := range groups {
		p, res, err := runner.Merge(g)
		if err != nil {
			c.errorf(e, "%v", err)
			status = exitFailure
			continue
		}
		p.Out = filepath.Join(*outDir, p.Stem)
		if err := runner.CheckStem(p.Stem); err != nil {
			c.errorf(e, "%s: %v", p.Path, err)
			status = exitFailure
			continue
		}
		d, err := atomicio.Lock(*outDir, p.Stem)
		if err != nil {
			c.errorf(e, "%s: output: %v", p.Path, err)
			status = exitFailure
			continue
		}
		if s := c.writeResults(e, p, res, report.All, *asJSON, true); s != exitOK {
			status = s
		}
		d.Unlock()
		if !*quiet && !*asJSON {
			c.out(e, "merged %d shards into %s%c\n\n", len(g.Shards), p.Out, filepath.Separator)
		}
	}
	return status
}
