package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/realmode"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/runner"
)

var cmdValidate = &command{
	Name:      "validate",
	UsageLine: "FILE... [--tolerance LIST] [--time-scale S] [--duration D] [--cpu sharing|cores] [--seed N] [-o DIR] [--quiet]",
	Short:     "run experiments both simulated and for real, and compare",
	Long: `Validate runs each variant of each experiment twice with the same seed:
once in the simulator, once for real (--mode real: every tier a net/http
server on 127.0.0.1, every call a real HTTP request through a transport
limited to the modelled connections, thread pools and throttles as
semaphores whose decisions come from the simulator's own code, demands as
sleeps scaled by the time scale). It prints, per variant, the two side by
side — goodput, latency mean, p50 and p99, timeout and rejection rates,
each tier's requests executing and queued, each call's connection wait,
and the instant timeouts begin — with the difference, the tolerance and a
verdict, and writes validate-counters.png: the counters of both modes,
side by side, under DIR/<file name without extension>/.

It exits with status 1 when any difference is outside its tolerance.

A sweep is validated at its first point only (a real run takes real time).
A variant the real executor cannot run is reported and skipped.

The flags are:

	--tolerance LIST
		override tolerances, as comma-separated NAME=VALUE: throughput,
		mean, p50, p99, level (relative, as 5% or 0.05), timeouts (the
		timeout and rejection rates, in percentage points, as 2 or 2pp),
		first_timeout (a fraction of the run, as 10%), level_abs (requests).
		Defaults: throughput=5%,mean=10%,p50=10%,p99=15%,timeouts=2pp,
		first_timeout=10%,level=10%,level_abs=0.5.
	--time-scale S
		real seconds per simulated second (default: 10 ms of real time for
		the smallest mean demand, within a 2-minute budget per run).
	--cpu sharing|cores
		how the real executor serves CPU: "sharing" (default) is processor
		sharing on the wall clock, the simulator's own discipline; "cores"
		holds one of the tier's core permits per demand, first come first
		served — the means agree for exponential demands, the percentiles
		differ by discipline.
	--duration D
		run each variant for D simulated time (Go duration syntax, such as
		2m) instead of the file's duration, for a quicker check.
	--seed N
		use seed N instead of each file's.
	-o DIR
		write validate-counters.png under DIR/<name>/ (default "out").
	--quiet
		do not say where the picture was written.
`,
	Run: runValidate,
}

func runValidate(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
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
	if set["duration"] && *duration <= 0 {
		return c.usageError(e, "--duration must be > 0, got %v", *duration)
	}
	if set["time-scale"] && !(*timeScale > 0) {
		return c.usageError(e, "--time-scale must be > 0, got %v", *timeScale)
	}
	cpu, err := runner.ParseCPU(*cpuFlag)
	if err != nil {
		return c.usageError(e, "%v", err)
	}
	tol, err := parseTolerances(*tolFlag)
	if err != nil {
		return c.usageError(e, "--tolerance: %v", err)
	}
	var xs []*format.Experiment
	for _, path := range files {
		x, err := runner.LoadFile(path)
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
			sim, err := runner.Sim{}.Run(ctx, &sc.Topology, s, model.Options{})
			if err != nil {
				c.errorf(e, "%s: variant %s: simulation: %v", path, name, err)
				return exitFailure
			}
			real, info, err := realmode.RunWithInfo(ctx, &sc.Topology, realmode.Options{Seed: s, TimeScale: *timeScale, CPU: cpu})
			if err != nil {
				if ctx.Err() != nil {
					c.errorf(e, "interrupted: %s: variant %s: %v", path, name, err)
					return exitFailure
				}
				fmt.Fprintf(w, "\nvariant %s: not run for real: %v\n", name, err)
				notRun = append(notRun, path+": "+name)
				continue
			}
			rep := realmode.Compare(sim, real, tol.ForScale(info.Scale))
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
			fig, err := plots.Counters(x.Name+": simulated and real counters", runs)
			if err != nil {
				fmt.Fprintf(w, "validate-counters.png not drawn: %v\n", err)
			} else {
				written, err := report.WriteFigure(filepath.Join(*outDir, runner.Stem(path)), "validate-counters.png", fig)
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
func parseTolerances(s string) (realmode.Tolerances, error) {
	tol := realmode.DefaultTolerances
	if strings.TrimSpace(s) == "" {
		return tol, nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return tol, fmt.Errorf("%q: want NAME=VALUE", kv)
		}
		name = strings.TrimSpace(name)
		val = strings.TrimSpace(val)
		num := func(suffix string, scale float64) (float64, error) {
			v := strings.TrimSuffix(val, suffix)
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 {
				return 0, fmt.Errorf("%s: bad value %q", name, val)
			}
			if v != val {
				f *= scale
			}
			return f, nil
		}
		var err error
		switch name {
		case "throughput":
			tol.Throughput, err = num("%", 0.01)
		case "mean":
			tol.Mean, err = num("%", 0.01)
		case "p50":
			tol.P50, err = num("%", 0.01)
		case "p99":
			tol.P99, err = num("%", 0.01)
		case "level":
			tol.Level, err = num("%", 0.01)
		case "level_abs":
			tol.LevelAbs, err = num("", 1)
		case "timeouts":
			tol.TimeoutRatePP, err = num("pp", 1)
		case "first_timeout":
			tol.FirstTimeoutFrac, err = num("%", 0.01)
		default:
			return tol, fmt.Errorf("unknown tolerance %q (allowed: throughput, mean, p50, p99, level, level_abs, timeouts, first_timeout)", name)
		}
		if err != nil {
			return tol, err
		}
	}
	return tol, nil
}

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
