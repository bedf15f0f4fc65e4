package main

import (
	"context"
	"path/filepath"

	"github.com/tsim-dev/tsim"
)

var cmdMerge = &command{
	Name:      "merge",
	UsageLine: "[-o DIR] [--format png,svg,pdf] [--json] [--wide] [--quiet] SHARDDIR...",
	Short:     "combine the shards of sharded runs into their results",
	Long:      helpText("merge"),
	Run:       runMerge,
}

func runMerge(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	wide(fs)
	outDir := fs.String("o", "out", "")
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("quiet", false, "")
	formats := pictureFormats(fs)
	dirs, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	if len(dirs) == 0 {
		return c.usageError(e, "no shard directories given")
	}
	if err := tsim.CheckFormats(*formats); err != nil {
		return c.usageError(e, "--format: %v", err)
	}
	kinds, err := tsim.ParseOutputs("json,csv,png,html") // every kind, as tsim run writes by default
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	kinds.Formats = *formats
	merged, err := tsim.Merge(ctx, dirs)
	status = exitOK
	if err != nil {
		c.errorf(e, "%v", err)
		status = exitFailure
	}
	for _, m := range merged {
		out, err := tsim.OpenOutput(*outDir, m.Stem)
		if err != nil {
			c.errorf(e, "%s: output: %v", m.Path(), err)
			status = exitFailure
			continue
		}
		written, warnings, werr := m.WriteFiles(out, kinds)
		out.Close()
		if s := c.printResult(e, fs, m.Result, out.Path(), written, warnings, werr, *asJSON, true); s != exitOK {
			status = s
		}
		if !*quiet && !*asJSON {
			c.out(e, "merged %d shards into %s%c\n\n", m.Shards, out.Path(), filepath.Separator)
		}
	}
	return status
}
