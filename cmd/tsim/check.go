package main

import (
	"context"
	"fmt"

	"github.com/tsim-dev/tsim/runner"
)

var cmdCheck = &command{
	Name:      "check",
	UsageLine: "FILE...",
	Short:     "check experiment files without running them",
	Long:      helpText("check"),
	Run:       runCheck,
}

func runCheck(_ context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	if len(files) == 0 {
		return c.usageError(e, "no experiment files given")
	}
	status = exitOK
	for _, f := range files {
		if _, err := runner.LoadFile(f); err != nil {
			c.errorf(e, "%v", err)
			status = exitFailure
			continue
		}
		fmt.Fprintf(e.stdout, "%s: ok\n", f)
	}
	return status
}
