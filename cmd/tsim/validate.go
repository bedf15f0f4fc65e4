package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/realmode"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/runner"
)

var cmdValidate = &command{
	Name:      "validate",
	UsageLine: "FILE... [--tolerance LIST] [--time-scale S] [--duration D] [--cpu sharing|cores] [--seed N] [-o DIR] [--quiet]",
	Short:     "run experiments both simulated and for real, and compare",
	Long:      helpText("validate"),
	Run:       runValidate,
}

func runValidate(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	outDir := fs.String("o", "out", "")
	seed := fs.Uint64("seed", 0, "")
	tolFlag := fs.String("tolerance", "", "")
	timeScale := fs.Float64("time-scale", 0, "")
	quiet := fs.Bool("quiet", false, "")
	duration := fs.Duration("duration", 0, "")
	cpuFlag := fs.String("cpu", "sharing", "")
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	if len(files) == 0 {
		return c.usageError(e, "no experiment files given")
	}
	if set["duration"] {
		if err := format.CheckDuration(*duration); err != nil {
			return c.usageError(e, "--duration %v", err)
		}
	}
	if set["time-scale"] && !(*timeScale > 0) {
		return c.usageError(e, "--time-scale must be > 0, got %v", *timeScale)
	}
	cpu, err := runner.ParseCPU(*cpuFlag)
	if err != nil {
		return c.usageError(e, "%v", err)
	}
	tol, err := realmode.ParseTolerances(*tolFlag)
	if err != nil {
		return c.usageError(e, "--tolerance: %v", err)
	}
	var xs []*format.Experiment
	for _, path := range files {
		x, err := runner.LoadFile(path, inputOptions(fs))
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		xs = append(xs, x)
	}

	w := e.stdout
	status = exitOK
	var agreed, notRun []string
	var disagreed []string
	for fi, x := range xs {
		path := files[fi]
		s := x.Seed
		if set["seed"] {
			s = *seed
		}
		fmt.Fprintf(w, "%s (%s)\n", x.Name, path)
		var runs []plots.Run
		for _, name := range x.Variants {
			if ctx.Err() != nil {
				c.errorf(e, "interrupted: %s: variant %s and what follows were not validated", path, name)
				return exitFailure
			}
			sc, err := x.ScenarioWith(name, firstPoint(x), nil)
			if err != nil {
				c.errorf(e, "%v", err)
				return exitFailure
			}
			if set["duration"] {
				sc.Topology.Duration = *duration
				if sc.Topology.Warmup >= *duration {
					sc.Topology.Warmup = 0
				}
			}
			v, err := runner.Validate(ctx, &sc.Topology, s, realmode.Options{TimeScale: *timeScale, CPU: cpu}, tol)
			if err != nil && (v == nil || v.Sim == nil) {
				c.errorf(e, "%s: variant %s: %v", path, name, err)
				return exitFailure
			}
			if err != nil {
				if ctx.Err() != nil {
					c.errorf(e, "interrupted: %s: variant %s: %v", path, name, err)
					return exitFailure
				}
				fmt.Fprintf(w, "\nvariant %s: not run for real: %v\n", name, err)
				notRun = append(notRun, path+": "+name)
				continue
			}
			sim, real, info, rep := v.Sim, v.Real, v.Info, v.Report
			verdict := "agree"
			if !rep.OK() {
				verdict = fmt.Sprintf("DISAGREE on %d of %d", len(rep.Failed()), len(rep.Rows))
				status = exitFailure
				disagreed = append(disagreed, path+": "+name)
			} else {
				agreed = append(agreed, path+": "+name)
			}
			fmt.Fprintf(w, "\nvariant %s: %s (time scale %.4g: %s real for %s simulated)\n",
				name, verdict, info.Scale, info.Real.Round(1e6), sc.Topology.Duration)
			for _, n := range info.Notes {
				fmt.Fprintf(w, "  note: %s\n", n)
			}
			fmt.Fprint(w, indent(rep.String(), "  "))
			runs = append(runs, plots.Run{Label: name + " (sim)", Run: sim}, plots.Run{Label: name + " (real)", Run: real})
		}
		if len(runs) > 0 {
			pages, err := plots.Counters(x.Name+": simulated and real counters", runs)
			if err != nil {
				fmt.Fprintf(w, "validate-counters.png not drawn: %v\n", err)
			}
			for i, fig := range pages { // validate-counters.png, validate-counters-2.png, ...
				name := plots.FileName(plots.PageStem("validate-counters", i), plots.PNG)
				written, err := report.WriteFigure(filepath.Join(*outDir, runner.Stem(path)), name, fig)
				if err != nil {
					c.errorf(e, "%v", err)
					return exitFailure
				}
				if !*quiet {
					fmt.Fprintf(w, "wrote %s\n", written)
				}
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, verdictLine(agreed, disagreed, notRun))
	return status
}

// verdictLine is validate's last line: how many variants agree, and which
// do not.
func verdictLine(agreed, disagreed, notRun []string) string {
	n := len(agreed) + len(disagreed) + len(notRun)
	var b strings.Builder
	if len(disagreed) == 0 {
		fmt.Fprintf(&b, "verdict: AGREE: %d of %d variants agree", len(agreed), n)
	} else {
		fmt.Fprintf(&b, "verdict: DISAGREE: %d of %d variants disagree (%s)", len(disagreed), n, strings.Join(disagreed, "; "))
	}
	if len(notRun) > 0 {
		fmt.Fprintf(&b, "; %d not run for real (%s)", len(notRun), strings.Join(notRun, "; "))
	}
	return b.String()
}

// firstPoint is the sweep's first point (nil without a sweep).
func firstPoint(x *format.Experiment) []format.Param {
	var ps []format.Param
	for _, a := range x.Sweep {
		if len(a.Values) > 0 {
			ps = append(ps, format.Param{Key: a.Key, Value: a.Values[0]})
		}
	}
	return ps
}

// parseTolerances reads --tolerance over realmode.DefaultTolerances.
func indent(s, pre string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if l != "" {
			b.WriteString(pre + l)
		}
	}
	return b.String()
}
