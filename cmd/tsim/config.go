package main

import (
	"context"
	"strings"

	"github.com/tsim-dev/tsim/dotnetconfig"
	"github.com/tsim-dev/tsim/internal/atomicio"
)

var cmdConfig = &command{
	Name:      "config",
	UsageLine: "FILE|DIR|KIND=FILE... --dotnet VERSION [--cores N] [--host H] [--max-concurrent-requests-per-cpu N] [--name TIER] [--service NAME] [-o FILE]",
	Short:     "read .NET configuration files and print the throttles in effect",
	Long: `Config reads real .NET Framework configuration files of one process and
resolves the throttles they leave in effect the way .NET does for the given
version: System.Net's connectionManagement, ASP.NET's processModel,
httpRuntime, compilation and applicationPool, and WCF's serviceThrottling,
binding timeouts, security modes and reliable sessions. It prints a table of
every effective value with where it came from (file:line, or the default and
why), warns about entries that have no effect (a maxconnection entry outside
system.net/connectionManagement, a processModel outside machine.config, a
setting autoConfig overrides, ...), and with -o writes the tier as an
experiment file that 'tsim run' accepts.

Files are told apart by name: machine.config, web.config, aspnet.config,
app.config or NAME.exe.config. Name any other file KIND=FILE, KIND one of
machine, web, app, aspnet (web=Web.Release.config). A directory stands for
the files in it with those names. machine.config is applied first, then the
web.config files in the order given (the Framework's root web.config before
the application's), or the executable's file; a later file overrides an
earlier one attribute by attribute, and <clear/> and <remove> in
connectionManagement drop earlier entries. <location> with a path is
ignored, with a warning. Aspnet.config only contributes applicationPool.

Connection limits come from the rule 'tsim run' applies (docs/experiment-
format.md, "How the connection limit is resolved"), so the two cannot
disagree. docs/field-config.md walks through the "Crack Throttling" case.

The flags are:

	--dotnet VERSION
		the process's .NET version: 2.0, 3.0, 3.5, 4.0, 4.5, 4.6, 4.7 or
		4.8 (4.7.2 is read as 4.7). Required: defaults differ by version.
	--cores N
		the processors the runtime sees (default 1; every per-CPU value
		scales with it).
	--host self|aspnet-classic|iis-integrated
		how the process is hosted (default: ASP.NET when a web.config is
		given, on the classic pipeline before .NET 4.0 and the integrated
		one from 4.0; otherwise self).
	--max-concurrent-requests-per-cpu N
		the MaxConcurrentRequestsPerCPU registry value under
		HKLM\SOFTWARE\Microsoft\ASP.NET\<version>, if it is set (IIS 7
		integrated pipeline; Aspnet.config's applicationPool wins).
	--name TIER
		the tier's name in the experiment file (default web for ASP.NET,
		app otherwise).
	--service NAME
		the <service> whose throttle the tier gets when several are
		configured (default the first).
	-o FILE
		write the experiment file to FILE ("-": to standard output
		instead of the table; warnings then go to standard error).

The exit status is 1 if a file is malformed (each problem is named by file
and line) or a setting is invalid, 2 for a usage error; warnings do not
change it.
`,
	Run: runConfig,
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
		return c.usageError(e, "--dotnet is required: the defaults differ by version (%s)", strings.Join(dotnetconfig.DotNetVersions(), ", "))
	}
	v, ok := dotnetconfig.NormalizeVersion(*dotnet)
	if !ok {
		if strings.EqualFold(*dotnet, "core") {
			return c.usageError(e, "--dotnet core: .NET Core and .NET 5+ do not read these files")
		}
		return c.usageError(e, "--dotnet %s: unknown version (%s)", *dotnet, strings.Join(dotnetconfig.DotNetVersions(), ", "))
	}
	if *cores < 1 || *cores > 1024 {
		return c.usageError(e, "--cores must be 1–1024, got %d", *cores)
	}
	if *host != "" && !contains(dotnetconfig.HostNames(), *host) {
		return c.usageError(e, "--host %s: unknown host (%s)", *host, strings.Join(dotnetconfig.HostNames(), ", "))
	}
	if set["max-concurrent-requests-per-cpu"] && *mcrpc < 0 {
		return c.usageError(e, "--max-concurrent-requests-per-cpu must be ≥ 0, got %d", *mcrpc)
	}
	if *name != "" && !validTierName(*name) {
		return c.usageError(e, "--name %q: a tier name is letters, digits, '-' and '_', at most 64", *name)
	}

	files, err := dotnetconfig.ReadArgs(args)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	rep, err := dotnetconfig.Resolve(files, dotnetconfig.Options{
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
		if err := atomicio.WriteFile(*out, skeleton); err != nil {
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
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
