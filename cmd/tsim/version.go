package main

import (
	"context"
	"runtime"

	"github.com/tsim-dev/tsim"
)

var cmdVersion = &command{
	Name:      "version",
	UsageLine: "",
	Short:     "print the tsim version",
	Long:      helpText("version"),
	Run:       runVersion,
}

func runVersion(_ context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	pos, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	if len(pos) > 0 {
		return c.usageError(e, "unexpected argument %q", pos[0])
	}
	c.out(e, "tsim version %s %s %s/%s\n", tsim.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
