package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"

	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/internal/atomicio"
)

var cmdDiff = &command{
	Name:      "diff",
	UsageLine: "A[@VARIANT] [B[@VARIANT]] [-o FILE] [--quiet]",
	Short:     "compare two result folders: each figure's change against its intervals, what binds, diff.html",
	Long:      helpText("diff"),
	Run:       runDiff,
}

func runDiff(_ context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	out := fs.String("o", filepath.Join("out", htmlreport.DiffFileName), "")
	quiet := fs.Bool("quiet", false, "")
	pos, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	var a, b htmlreport.Side
	switch len(pos) {
	case 1:
		// One folder: its last kept run against it.
		b = htmlreport.ParseSide(pos[0])
		dir, err := htmlreport.LastKept(b.Dir)
		if err != nil {
			return c.fail(e, err)
		}
		a = htmlreport.Side{Dir: dir, Variant: b.Variant}
	case 2:
		a, b = htmlreport.ParseSide(pos[0]), htmlreport.ParseSide(pos[1])
	default:
		return c.usageError(e, "give two result folders (or one, to compare it with its last kept run), got %d", len(pos))
	}
	cmp, err := htmlreport.Diff(a, b)
	if err != nil {
		return c.fail(e, err)
	}
	var text bytes.Buffer
	if err := cmp.WriteText(&text); err != nil {
		return c.fail(e, err)
	}
	page, err := cmp.Page().HTML()
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(*out), 0o755); err == nil {
			err = atomicio.WriteFile(*out, page)
		}
	}
	if err != nil {
		e.writeOut(text.Bytes())
		c.errorf(e, "writing %s: %v", *out, err)
		return exitFailure
	}
	if !*quiet {
		text.WriteString("\nwrote " + *out + "\n")
	}
	e.writeOut(text.Bytes())
	return exitOK
}
