package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is tsim's release version; builds from a VCS checkout add the
// revision they were built from.
const version = "0.1.0-dev"

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
	fmt.Fprintf(e.stdout, "tsim version %s %s %s/%s\n", versionString(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}

// versionString is the version constant plus the VCS revision of the build,
// if the build recorded one.
func versionString() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v += " (" + rev
	if dirty {
		v += "+dirty"
	}
	return v + ")"
}
