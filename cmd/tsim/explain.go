package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	"github.com/tsim-dev/tsim"
)

var cmdExplain = &command{
	Name:      "explain",
	UsageLine: "FILE [-o DIR] [--seed N] [--format png,svg,pdf] [--wide] [--quiet]",
	Short:     "say which limit binds, where response time goes and what to change",
	Long:      helpText("explain"),
	Run:       runExplain,
}

func runExplain(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	wide(fs)
	outDir := fs.String("o", "out", "")
	seed := fs.Uint64("seed", 0, "")
	quiet := fs.Bool("quiet", false, "")
	formats := pictureFormats(fs)
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	switch {
	case len(files) == 0:
		return c.usageError(e, "no experiment file given")
	case len(files) > 1:
		return c.usageError(e, "one experiment file at a time, got %d", len(files))
	case tsim.CheckFormats(*formats) != nil:
		return c.usageError(e, "--format: %v", tsim.CheckFormats(*formats))
	}
	x, err := load(fs, files[0])
	if err != nil {
		return c.fail(e, err)
	}
	var opt tsim.ExplainOptions
	if setFlags(fs)["seed"] {
		opt.Seed = seed
	}
	ex, err := tsim.Explain(ctx, x, opt)
	if err != nil {
		return c.fail(e, err)
	}
	var out bytes.Buffer
	if err := ex.WriteText(tables(fs, &out, e.stdout)); err != nil {
		return c.fail(e, err)
	}
	if st := c.writeFiles(e, &out, *outDir, x.Stem(), *formats, ex.WriteFiles, *quiet); st != exitOK {
		return st
	}
	e.writeOut(out.Bytes())
	return exitOK
}

// writeFiles writes what a command's result writes (WriteFiles) into
// the output directory root/name, its pictures in formats (--format), and
// says so in out (unless quiet); what it could not draw is said in out
// too.
func (c *command) writeFiles(e *env, out *bytes.Buffer, root, name, formats string, write func(*tsim.Output) ([]string, []string, error), quiet bool) int {
	dir, err := tsim.OpenOutput(root, name)
	if err != nil {
		return c.fail(e, err)
	}
	defer dir.Close()
	if err := dir.SetFormats(formats); err != nil {
		c.errorf(e, "--format: %v", err)
		return exitFailure
	}
	written, warnings, err := write(dir)
	for _, w := range warnings {
		fmt.Fprintln(out, w)
	}
	if err != nil {
		return c.fail(e, err)
	}
	if !quiet {
		for _, w := range written {
			fmt.Fprintf(out, "wrote %s\n", filepath.Join(dir.Path(), w))
		}
	}
	return exitOK
}
