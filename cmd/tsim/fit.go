package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tsim-dev/tsim"
)

var cmdFit = &command{
	Name:      "fit",
	UsageLine: "SPEC.fit [--experiment FILE.toml] [--hold-out NAME,...] [--max-evals N] [--reps N] [--seed N] [-o DIR] [--format png,svg,pdf] [--quiet]",
	Short:     "search the inputs that match target figures, and predict the figures not used",
	Long:      helpText("fit"),
	Run:       runFit,
}

func runFit(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	experiment := fs.String("experiment", "", "")
	holdOut := fs.String("hold-out", "", "")
	maxEvals := fs.Int("max-evals", 0, "")
	reps := fs.Int("reps", 0, "")
	seed := fs.Uint64("seed", 0, "")
	outDir := fs.String("o", "", "")
	quiet := fs.Bool("quiet", false, "")
	formats := pictureFormats(fs)
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	switch {
	case len(files) == 0:
		return c.usageError(e, "no fit specification given")
	case len(files) > 1:
		return c.usageError(e, "one fit specification at a time, got %d", len(files))
	case set["max-evals"] && (*maxEvals < 1 || *maxEvals > 100000):
		return c.usageError(e, "--max-evals must be between 1 and 100000, got %d", *maxEvals)
	case set["reps"] && tsim.CheckReplications(*reps) != nil:
		return c.usageError(e, "--reps %v", tsim.CheckReplications(*reps))
	case tsim.CheckFormats(*formats) != nil:
		return c.usageError(e, "--format: %v", tsim.CheckFormats(*formats))
	}
	opt := tsim.FitOptions{MaxEvaluations: *maxEvals, Replications: *reps, Seed: *seed}
	for _, h := range strings.Split(*holdOut, ",") {
		if h = strings.TrimSpace(h); h != "" {
			opt.HoldOut = append(opt.HoldOut, h)
		}
	}
	spec, x, err := tsim.LoadFit(files[0], *experiment)
	if err != nil {
		return c.fail(e, err)
	}
	if !*quiet {
		opt.Progress = func(done, budget int, best float64) {
			if done%10 == 0 {
				e.mu.Lock()
				fmt.Fprintf(e.stderr, "tsim fit: %d of %d evaluations, best Σ(residual/tolerance)² %.3g\n", done, budget, best)
				e.mu.Unlock()
			}
		}
	}
	res, err := tsim.Fit(ctx, x, spec, opt)
	if err != nil {
		return c.fail(e, err)
	}
	var out bytes.Buffer
	if err := res.WriteText(&out); err != nil {
		return c.fail(e, err)
	}
	dir := *outDir
	if dir == "" {
		dir = filepath.Join("out", stem(files[0])+"-fit")
	}
	clean := filepath.Clean(dir)
	if st := c.writeFiles(e, &out, filepath.Dir(clean), filepath.Base(clean), *formats, res.WriteFiles, *quiet); st != exitOK {
		return st
	}
	e.writeOut(out.Bytes())
	return exitOK
}
