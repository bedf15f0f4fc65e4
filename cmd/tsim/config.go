package main

import (
	"context"
	"strings"

	"github.com/tsim-dev/tsim"
)

var cmdConfig = &command{
	Name:      "config",
	UsageLine: "FILE|DIR|KIND=FILE... --dotnet VERSION [--cores N] [--host H] [--max-concurrent-requests-per-cpu N] [--name TIER] [--service NAME] [-o FILE]",
	Short:     "read .NET configuration files and print the throttles in effect",
	Long:      helpText("config"),
	Run:       runConfig,
}

func runConfig(_ context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	dotnet := fs.String("dotnet", "", "")
	cores := fs.Int("cores", 1, "")
	host := fs.String("host", "", "")
	mcrpc := fs.Int("max-concurrent-requests-per-cpu", -1, "")
	name := fs.String("name", "", "")
	service := fs.String("service", "", "")
	out := fs.String("o", "", "")
	args, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	if len(args) == 0 {
		return c.usageError(e, "no configuration files given")
	}
	opt := tsim.ConfigOptions{DotNet: *dotnet, Cores: *cores, CoresDefaulted: !set["cores"], Host: *host,
		MaxConcurrentRequestsPerCPU: *mcrpc, Tier: *name, Service: *service}
	if err := tsim.CheckConfigOptions(&opt); err != nil {
		return c.usageError(e, "%v", err)
	}
	if set["max-concurrent-requests-per-cpu"] && *mcrpc < 0 {
		return c.usageError(e, "--max-concurrent-requests-per-cpu must be ≥ 0, got %d", *mcrpc)
	}
	rep, err := tsim.ReadConfig(args, opt)
	if err != nil {
		return c.fail(e, err)
	}
	var skeleton []byte
	if *out != "" {
		if skeleton, err = rep.Skeleton(); err != nil {
			return c.fail(e, err)
		}
	}
	if *out == "-" {
		for _, w := range rep.Warnings {
			c.errorf(e, "warning: %s", w)
		}
		e.writeOut(skeleton)
		return exitOK
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		return c.fail(e, err)
	}
	if *out != "" {
		// Whole or not at all, and only over a regular file: never over
		// a device, a FIFO or a symbolic link at that path.
		if err := tsim.WriteFile(*out, skeleton); err != nil {
			return c.fail(e, err)
		}
		b.WriteString("\nwrote " + *out + " (run it with 'tsim run " + *out + "' once its placeholders are filled in)\n")
	} else {
		b.WriteString("\n-o FILE writes these settings as an experiment file for 'tsim run'.\n")
	}
	e.writeOut([]byte(b.String()))
	return exitOK
}
