package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"

	"github.com/tsim-dev/tsim"
)

var cmdCalibrate = &command{
	Name:      "calibrate",
	UsageLine: "CAPTURE.csv|.tsv --experiment FILE.toml [--variant V] [--map MACHINE=TIER,...] [--names FILE] [--loadtest RESULTS] [--warmup D] [--seed N] [--reps N] [-o DIR] [--format png,svg,pdf] [--quiet]",
	Short:     "estimate demands from a PerfMon capture and compare the calibrated model with it",
	Long:      helpText("calibrate"),
	Run:       runCalibrate,
}

func runCalibrate(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	experiment := fs.String("experiment", "", "")
	variant := fs.String("variant", "", "")
	mapFlag := fs.String("map", "", "")
	names := fs.String("names", "", "")
	loadTest := fs.String("loadtest", "", "")
	warmup := fs.Duration("warmup", -1, "")
	seed := fs.Uint64("seed", 0, "")
	reps := fs.Int("reps", 0, "")
	outDir := fs.String("o", "", "")
	quiet := fs.Bool("quiet", false, "")
	formats := pictureFormats(fs)
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	switch {
	case len(files) == 0:
		return c.usageError(e, "no capture given")
	case len(files) > 1:
		return c.usageError(e, "one capture at a time, got %d", len(files))
	case *experiment == "":
		return c.usageError(e, "--experiment FILE.toml is required: the model to calibrate")
	case set["warmup"] && *warmup < 0:
		return c.usageError(e, "--warmup must be ≥ 0, got %v", *warmup)
	case tsim.CheckFormats(*formats) != nil:
		return c.usageError(e, "--format: %v", tsim.CheckFormats(*formats))
	}
	if set["reps"] {
		if err := tsim.CheckReplications(*reps); err != nil {
			return c.usageError(e, "--reps %v", err)
		}
	}
	machines, err := tsim.ParseMachineMap(*mapFlag)
	if err != nil {
		return c.usageError(e, "--map: %v", err)
	}
	capture := files[0]
	dir := *outDir
	if dir == "" {
		dir = filepath.Join("out", stem(capture)+"-calibrated")
	}
	opt := tsim.CalibrateOptions{
		Variant:  *variant,
		Machines: machines,
		Warmup:   *warmup,
		Seed:     *seed,
		Reps:     *reps,
		Input:    loadOptions(fs),
		Names:    *names,
		LoadTest: *loadTest,
		Output:   filepath.ToSlash(filepath.Join(dir, "calibrated.toml")),
	}
	res, err := tsim.Calibrate(ctx, capture, *experiment, opt)
	if err != nil {
		return c.fail(e, err)
	}
	var out bytes.Buffer
	if err := res.WriteText(&out); err != nil {
		return c.fail(e, err)
	}
	// Everything succeeded: write, each file whole or not at all, into a
	// directory no other tsim process is writing.
	clean := filepath.Clean(dir)
	if !*quiet {
		out.WriteString("\n")
	}
	if st := c.writeFiles(e, &out, filepath.Dir(clean), filepath.Base(clean), *formats, res.WriteFiles, *quiet); st != exitOK {
		return st
	}
	toml := filepath.Join(dir, "calibrated.toml")
	if !*quiet {
		fmt.Fprintf(&out, "next: tsim explain %s, then tsim run %s\n", toml, toml)
	}
	e.writeOut(out.Bytes())
	return exitOK
}
