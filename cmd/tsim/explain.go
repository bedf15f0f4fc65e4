package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/internal/atomicio"
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

	diagnosis := out.String()
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
	// explain.html: the diagnosis, and each variant's run as tsim run's
	// page shows it (beside a run's report.html, which it leaves alone).
	var runs []htmlreport.NamedRun
	for _, v := range ex.Variants {
		runs = append(runs, htmlreport.NamedRun{Variant: v.Name, Run: v.Run})
	}
	pg := htmlreport.Experiment(htmlreport.RunsExperiment(ex.Name, path, ex.Seed, runs), htmlreport.Options{})
	pg.Title = "tsim explain: " + ex.Name
	pg.Insert("", &htmlreport.Section{ID: "diagnosis", Title: "Diagnosis", Blocks: []htmlreport.Block{{Pre: diagnosis}}})
	page, err := pg.HTML()
	if err == nil {
		dir := filepath.Join(*outDir, runner.Stem(path))
		if err = os.MkdirAll(dir, 0o755); err == nil {
			err = atomicio.WriteFile(filepath.Join(dir, "explain.html"), page)
		}
		if err == nil && !*quiet {
			fmt.Fprintf(&out, "wrote %s\n", filepath.Join(dir, "explain.html"))
		}
	}
	if err != nil {
		c.errorf(e, "explain.html: %v", err)
		return exitFailure
	}
	e.stdout.Write(out.Bytes())
	return exitOK
}
