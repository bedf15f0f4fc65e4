package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/tsim-dev/tsim"
)

var cmdValidate = &command{
	Name:      "validate",
	UsageLine: "FILE... [--tolerance LIST] [--time-scale S] [--duration D] [--cpu sharing|cores] [--seed N] [-o DIR] [--format png,svg,pdf] [--quiet]",
	Short:     "run experiments both simulated and for real, and compare",
	Long:      helpText("validate"),
	Run:       runValidate,
}

func runValidate(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	outDir := fs.String("o", "out", "")
	seed := fs.Uint64("seed", 0, "")
	tolFlag := fs.String("tolerance", "", "")
	timeScale := fs.Float64("time-scale", 0, "")
	quiet := fs.Bool("quiet", false, "")
	duration := fs.Duration("duration", 0, "")
	cpuFlag := fs.String("cpu", "sharing", "")
	formats := pictureFormats(fs)
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	if len(files) == 0 {
		return c.usageError(e, "no experiment files given")
	}
	opt := tsim.ValidateOptions{Tolerance: *tolFlag, TimeScale: *timeScale, CPU: *cpuFlag, Duration: *duration}
	if set["time-scale"] && *timeScale == 0 {
		opt.TimeScale = -1 // given, it must be > 0 (0 is the option's "choose one")
	}
	if err := opt.Check(); err != nil {
		return c.usageError(e, "%v", err)
	}
	if err := tsim.CheckFormats(*formats); err != nil {
		return c.usageError(e, "--format: %v", err)
	}
	xs, ok := c.loadAll(e, fs, files)
	if !ok {
		return exitFailure
	}

	if set["seed"] {
		opt.Seed = seed
	}
	status = exitOK
	var vals []*tsim.Validation
	for _, x := range xs {
		c.out(e, "%s (%s)\n", x.Format().Name, x.Path())
		// Each variant is printed as it finishes: a real run takes a while.
		opt.Each = func(v *tsim.ValidatedVariant) {
			var b bytes.Buffer
			v.WriteText(&b)
			e.writeOut(b.Bytes())
			if v.NotRun == nil && !v.Agrees() {
				status = exitFailure
			}
		}
		val, err := tsim.Validate(ctx, x, opt)
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("interrupted: %v", err)
			}
			return c.fail(e, err)
		}
		vals = append(vals, val)
		var out bytes.Buffer
		if st := c.writeFiles(e, &out, *outDir, x.Stem(), *formats, val.WriteFiles, *quiet); st != exitOK {
			return st
		}
		out.WriteString("\n")
		e.writeOut(out.Bytes())
	}
	c.out(e, "%s\n", tsim.Verdict(vals))
	return status
}
