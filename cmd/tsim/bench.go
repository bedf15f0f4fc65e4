package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/tsim-dev/tsim/bench"
)

var cmdBench = &command{
	Name:      "bench",
	UsageLine: "[--json] [--model NAME] [--runs N] [--wide]",
	Short:     "measure how fast the simulator runs",
	Long:      helpText("bench"),
	Run:       runBench,
}

func runBench(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	wide(fs)
	asJSON := fs.Bool("json", false, "")
	only := fs.String("model", "", "")
	runs := fs.Int("runs", 1, "")
	pos, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	if len(pos) > 0 {
		return c.usageError(e, "unexpected argument %q", pos[0])
	}
	if *runs < 1 {
		return c.usageError(e, "--runs must be at least 1, got %d", *runs)
	}
	models := bench.Models()
	if *only != "" {
		if !slices.Contains(models, *only) {
			return c.usageError(e, "unknown model %q (models: %s)", *only, strings.Join(models, ", "))
		}
		models = []string{*only}
	}
	rows, err := bench.RunModels(ctx, models, *runs)
	if err != nil {
		return c.fail(e, err)
	}

	if *asJSON {
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return c.fail(e, err)
		}
		e.writeOut(append(b, '\n'))
		return exitOK
	}
	var out bytes.Buffer
	if err := bench.WriteTable(tables(fs, &out, e.stdout), rows); err != nil {
		return c.fail(e, err)
	}
	e.writeOut(out.Bytes())
	return exitOK
}
