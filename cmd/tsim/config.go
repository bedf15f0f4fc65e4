package main

import (
	"context"
	"slices"
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
	if *dotnet == "" {
		return c.usageError(e, "--dotnet is required: the defaults differ by version (%s)", strings.Join(tsim.DotNetVersions(), ", "))
	}
	v, ok := tsim.NormalizeDotNet(*dotnet)
	if !ok {
		if strings.EqualFold(*dotnet, "core") {
			return c.usageError(e, "--dotnet core: .NET Core and .NET 5+ do not read these files")
		}
		return c.usageError(e, "--dotnet %s: unknown version (%s)", *dotnet, strings.Join(tsim.DotNetVersions(), ", "))
	}
	if *cores < 1 || *cores > 1024 {
		return c.usageError(e, "--cores must be 1–1024, got %d", *cores)
	}
	if *host != "" && !slices.Contains(tsim.ConfigHosts(), *host) {
		return c.usageError(e, "--host %s: unknown host (%s)", *host, strings.Join(tsim.ConfigHosts(), ", "))
	}
	if set["max-concurrent-requests-per-cpu"] && *mcrpc < 0 {
		return c.usageError(e, "--max-concurrent-requests-per-cpu must be ≥ 0, got %d", *mcrpc)
	}
	if *name != "" && !validTierName(*name) {
		return c.usageError(e, "--name %q: a tier name is letters, digits, '-' and '_', at most 64", *name)
	}

	rep, err := tsim.ReadConfig(args, tsim.ConfigOptions{
		DotNet:                      v,
		Cores:                       *cores,
		CoresDefaulted:              !set["cores"],
		Host:                        *host,
		MaxConcurrentRequestsPerCPU: *mcrpc,
		Tier:                        *name,
		Service:                     *service,
	})
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	var skeleton []byte
	if *out != "" {
		if skeleton, err = rep.Skeleton(); err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
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
		c.errorf(e, "%v", err)
		return exitFailure
	}
	if *out != "" {
		// Whole or not at all, and only over a regular file: never over
		// a device, a FIFO or a symbolic link at that path.
		if err := tsim.WriteFile(*out, skeleton); err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		b.WriteString("\nwrote " + *out + " (run it with 'tsim run " + *out + "' once its placeholders are filled in)\n")
	} else {
		b.WriteString("\n-o FILE writes these settings as an experiment file for 'tsim run'.\n")
	}
	e.writeOut([]byte(b.String()))
	return exitOK
}

// validTierName is the experiment format's rule for tier names.
func validTierName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
