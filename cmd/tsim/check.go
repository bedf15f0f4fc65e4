package main

import (
	"context"

	"github.com/tsim-dev/tsim"
)

var cmdCheck = &command{
	Name:      "check",
	UsageLine: "FILE... [--allow-outside]",
	Short:     "check experiment files without running them",
	Long:      helpText("check"),
	Run:       runCheck,
}

func runCheck(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	if len(files) == 0 {
		return c.usageError(e, "no experiment files given")
	}
	status = exitOK
	for i, f := range files {
		if ctx.Err() != nil {
			c.errorf(e, "interrupted: %d of %d files checked", i, len(files))
			return exitFailure
		}
		x, err := load(fs, f)
		if err != nil {
			c.errorf(e, "%v", err)
			status = exitFailure
			continue
		}
		est := x.Estimate(numWorkers())
		c.out(e, "%s: ok (about %s simulated requests, about %s of memory at the peak)\n", f, est.Count(), est.Memory())
		printWarnings(c, e, x)
		for _, w := range est.Warnings {
			c.errorf(e, "warning: %s: %s", f, w)
		}
		if w := est.Warning(); w != "" {
			c.errorf(e, "warning: %s: %s", f, w)
		}
	}
	return status
}

// printWarnings prints the settings of x that take no effect, one line
// each with file and line (docs/dotnet.md, "Settings that take no effect").
func printWarnings(c *command, e *env, x *tsim.Experiment) {
	for _, w := range x.Warnings() {
		c.errorf(e, "warning: %s", w)
	}
}
