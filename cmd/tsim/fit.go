package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	api "github.com/tsim-dev/tsim"
	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/runner"
)

var cmdFit = &command{
	Name:      "fit",
	UsageLine: "SPEC.fit [--experiment FILE.toml] [--hold-out NAME,...] [--max-evals N] [--reps N] [--seed N] [-o DIR] [--quiet]",
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
	case set["reps"] && format.CheckReplications(*reps) != nil:
		return c.usageError(e, "--reps %v", format.CheckReplications(*reps))
	}
	opt := api.FitOptions{MaxEvaluations: *maxEvals, Replications: *reps, Seed: *seed}
	for _, h := range strings.Split(*holdOut, ",") {
		if h = strings.TrimSpace(h); h != "" {
			opt.HoldOut = append(opt.HoldOut, h)
		}
	}
	spec, x, err := api.LoadFit(files[0], *experiment)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	if !*quiet {
		opt.Progress = func(done, budget int, best float64) {
			if done%10 == 0 {
				e.mu.Lock()
				fmt.Fprintf(e.stderr, "tsim fit: %d of %d evaluations, best χ² %.3g\n", done, budget, best)
				e.mu.Unlock()
			}
		}
	}
	res, err := api.Fit(ctx, x, spec, opt)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	var out bytes.Buffer
	if err := res.WriteText(&out); err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	fig, err := res.Figure()
	if err != nil {
		c.errorf(e, "fit.png: %v", err)
		return exitFailure
	}
	var png bytes.Buffer
	if err := fig.WritePNG(&png); err != nil {
		c.errorf(e, "fit.png: %v", err)
		return exitFailure
	}
	dir := *outDir
	if dir == "" {
		dir = filepath.Join("out", runner.Stem(files[0])+"-fit")
	}
	lock, err := atomicio.Lock(filepath.Dir(filepath.Clean(dir)), filepath.Base(filepath.Clean(dir)))
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	defer lock.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	written := []string{filepath.Join(dir, "fit.png")}
	if err := atomicio.WriteFile(written[0], png.Bytes()); err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	if res.Experiment != nil {
		p := filepath.Join(dir, "fitted.toml")
		if err := atomicio.WriteFile(p, res.Experiment); err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		written = append(written, p)
	}
	if !*quiet {
		fmt.Fprintf(&out, "\nwrote %s\n", strings.Join(written, " and "))
	}
	e.writeOut(out.Bytes())
	return exitOK
}
