package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"

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
	if set["duration"] {
		if err := tsim.CheckDuration(*duration); err != nil {
			return c.usageError(e, "--duration %v", err)
		}
	}
	if set["time-scale"] && !(*timeScale > 0) {
		return c.usageError(e, "--time-scale must be > 0, got %v", *timeScale)
	}
	if err := tsim.CheckCPU(*cpuFlag); err != nil {
		return c.usageError(e, "--cpu must be sharing or cores, got %q", *cpuFlag)
	}
	if err := tsim.CheckTolerance(*tolFlag); err != nil {
		return c.usageError(e, "--tolerance: %v", err)
	}
	if err := tsim.CheckFormats(*formats); err != nil {
		return c.usageError(e, "--format: %v", err)
	}
	var xs []*tsim.Experiment
	for _, path := range files {
		x, err := load(fs, path)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		xs = append(xs, x)
	}

	opt := tsim.ValidateOptions{Tolerance: *tolFlag, TimeScale: *timeScale, CPU: *cpuFlag, Duration: *duration}
	if set["seed"] {
		opt.Seed = seed
	}
	status = exitOK
	var agreed, disagreed, notRun []string
	for _, x := range xs {
		path := x.Path()
		c.out(e, "%s (%s)\n", x.Format().Name, path)
		// Each variant is printed as it finishes: a real run takes a while.
		opt.Each = func(v *tsim.ValidatedVariant) {
			var b bytes.Buffer
			v.WriteText(&b)
			e.writeOut(b.Bytes())
			switch {
			case v.NotRun != nil:
				notRun = append(notRun, path+": "+v.Name)
			case v.Agrees():
				agreed = append(agreed, path+": "+v.Name)
			default:
				disagreed = append(disagreed, path+": "+v.Name)
				status = exitFailure
			}
		}
		val, err := tsim.Validate(ctx, x, opt)
		if err != nil {
			if ctx.Err() != nil {
				c.errorf(e, "interrupted: %v", err)
			} else {
				c.errorf(e, "%v", err)
			}
			return exitFailure
		}
		var out bytes.Buffer
		if st := c.writeFiles(e, &out, *outDir, x.Stem(), *formats, val.WriteFiles, *quiet); st != exitOK {
			return st
		}
		out.WriteString("\n")
		e.writeOut(out.Bytes())
	}
	c.out(e, "%s\n", verdictLine(agreed, disagreed, notRun))
	return status
}

// verdictLine is validate's last line: how many variants agree, and which
// do not.
func verdictLine(agreed, disagreed, notRun []string) string {
	n := len(agreed) + len(disagreed) + len(notRun)
	var b strings.Builder
	if len(disagreed) == 0 {
		fmt.Fprintf(&b, "verdict: AGREE: %d of %d variants agree", len(agreed), n)
	} else {
		fmt.Fprintf(&b, "verdict: DISAGREE: %d of %d variants disagree (%s)", len(disagreed), n, strings.Join(disagreed, "; "))
	}
	if len(notRun) > 0 {
		fmt.Fprintf(&b, "; %d not run for real (%s)", len(notRun), strings.Join(notRun, "; "))
	}
	return b.String()
}
