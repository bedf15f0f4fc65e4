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
	Long:      helpText("explain"),
	Run:       runExplain,
}

func runExplain(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
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
	x, err := runner.LoadFile(path, inputOptions(fs))
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
