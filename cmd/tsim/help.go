package main

import (
	"context"
	"embed"
	"fmt"
	"io"
)

var cmdHelp = &command{
	Name:      "help",
	UsageLine: "[command]",
	Short:     "show help for tsim or one of its commands",
	Long:      helpText("help"),
	Run:       runHelp,
}

func runHelp(_ context.Context, c *command, e *env, args []string) int {
	switch len(args) {
	case 0:
		printUsage(e.stdout)
		return exitOK
	case 1:
		t := lookup(args[0])
		if t == nil {
			c.errorf(e, "unknown help topic %q; run 'tsim help' for the list of commands", args[0])
			return exitUsage
		}
		fmt.Fprintf(e.stdout, "usage: tsim %s %s\n\n%s", t.Name, t.UsageLine, t.Long)
		return exitOK
	default:
		return c.usageError(e, "too many arguments")
	}
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `tsim simulates multi-tier request/reply systems (ASP.NET, WCF, HTTP
services) and their throttles: where requests queue, which limit binds, when
clients start to time out, and which setting fixes it.

Usage:

	tsim <command> [arguments]

The commands are:

`)
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-9s %s\n", c.Name, c.Short)
	}
	fmt.Fprint(w, `
Use "tsim help <command>" for more information about a command.
`)
}

// helpTexts are the long help texts, one file per command in help/.
//
//go:embed help/*.txt
var helpTexts embed.FS

// helpText is the text of "tsim help NAME".
func helpText(name string) string {
	b, err := helpTexts.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("tsim: no help text for " + name) // a build without help/NAME.txt
	}
	return string(b)
}
