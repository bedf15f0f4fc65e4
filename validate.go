package tsim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/realmode"
	"github.com/tsim-dev/tsim/runner"
)

// ValidateOptions say how Validate runs each variant.
type ValidateOptions struct {
	// Seed, when not nil, replaces the experiment's seed.
	Seed *uint64
	// Tolerance is tsim validate's --tolerance list (NAME=VALUE,...) over
	// the default tolerances; see CheckTolerance.
	Tolerance string
	// TimeScale is real seconds per simulated second (0: chosen), CPU how
	// demands share the cores for real ("sharing", the default, or
	// "cores"), and Duration, when > 0, replaces the file's duration.
	TimeScale float64
	CPU       string
	Duration  time.Duration
	// Each, if set, is called after each variant, in order.
	Each func(*ValidatedVariant)
}

// Check checks the options as tsim validate takes them from its flags: the
// messages name the flags.
func (o *ValidateOptions) Check() error {
	switch {
	case o.Duration != 0 && format.CheckDuration(o.Duration) != nil:
		return fmt.Errorf("--duration %v", format.CheckDuration(o.Duration))
	case o.TimeScale != 0 && !(o.TimeScale > 0):
		return fmt.Errorf("--time-scale must be > 0, got %v", max(o.TimeScale, 0))
	case o.CPU != "" && CheckCPU(o.CPU) != nil:
		return fmt.Errorf("--cpu must be sharing or cores, got %q", o.CPU)
	case CheckTolerance(o.Tolerance) != nil:
		return fmt.Errorf("--tolerance: %v", CheckTolerance(o.Tolerance))
	}
	return nil
}

// CheckTolerance checks a --tolerance list.
func CheckTolerance(s string) error {
	_, err := realmode.ParseTolerances(s)
	return err
}

// CheckDuration checks a span setting against the format's limits.
func CheckDuration(d time.Duration) error { return format.CheckDuration(d) }

// Validation is Validate's answer for one experiment: each variant run
// simulated and for real, compared.
type Validation struct {
	Name, Path string
	Seed       uint64
	Variants   []*ValidatedVariant
}

// ValidatedVariant is one variant run both ways. Validation is nil when
// the variant was not run for real (NotRun says why); Sim is then the
// simulated run alone.
type ValidatedVariant struct {
	Name string
	*realmode.Validation
	NotRun   error
	Duration time.Duration // simulated
}

// Agrees reports whether the variant was run for real and agrees with
// the simulation within the tolerances.
func (v *ValidatedVariant) Agrees() bool { return v.NotRun == nil && v.Report.OK() }

// WriteText writes what tsim validate prints of the variant.
func (v *ValidatedVariant) WriteText(w io.Writer) error {
	if v.NotRun != nil {
		_, err := fmt.Fprintf(w, "\nvariant %s: not run for real: %v\n", v.Name, v.NotRun)
		return err
	}
	rep, info := v.Report, v.Info
	verdict := "agree"
	if !rep.OK() {
		verdict = fmt.Sprintf("DISAGREE on %d of %d", len(rep.Failed()), len(rep.Rows))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nvariant %s: %s (time scale %.4g: %s real for %s simulated)\n",
		v.Name, verdict, info.Scale, info.Real.Round(1e6), v.Duration)
	for _, n := range info.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	for _, l := range strings.SplitAfter(rep.String(), "\n") {
		if l != "" {
			b.WriteString("  " + l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Validate runs each variant of e (at its first sweep point) on the
// simulator and for real with the same seed, and compares them. A variant
// real mode cannot run is reported, not an error. When ctx is cancelled it
// returns, with the error, the variants it finished.
func Validate(ctx context.Context, e *Experiment, opt ValidateOptions) (*Validation, error) {
	tol, err := realmode.ParseTolerances(opt.Tolerance)
	if err != nil {
		return nil, fmt.Errorf("--tolerance: %v", err)
	}
	cpu := opt.CPU
	if cpu == "" {
		cpu = "sharing"
	}
	disc, err := runner.ParseCPU(cpu)
	if err != nil {
		return nil, err
	}
	x := e.l.X
	seed := x.Seed
	if opt.Seed != nil {
		seed = *opt.Seed
	}
	val := &Validation{Name: x.Name, Path: e.Path(), Seed: seed}
	for _, name := range x.Variants {
		if err := ctx.Err(); err != nil {
			return val, fmt.Errorf("%s: variant %s and what follows were not validated: %w", e.Path(), name, err)
		}
		sc, err := x.ScenarioWith(name, firstPoint(x), nil)
		if err != nil {
			return val, err
		}
		if opt.Duration > 0 {
			sc.Topology.Duration = opt.Duration
			if sc.Topology.Warmup >= opt.Duration {
				sc.Topology.Warmup = 0
			}
		}
		v, err := runner.Validate(ctx, &sc.Topology, seed, realmode.Options{TimeScale: opt.TimeScale, CPU: disc}, tol)
		if err != nil && (v == nil || v.Sim == nil) {
			return val, fmt.Errorf("%s: variant %s: %v", e.Path(), name, err)
		}
		if err != nil && ctx.Err() != nil {
			return val, fmt.Errorf("%s: variant %s: %w", e.Path(), name, err)
		}
		vv := &ValidatedVariant{Name: name, Validation: v, NotRun: err, Duration: sc.Topology.Duration}
		val.Variants = append(val.Variants, vv)
		if opt.Each != nil {
			opt.Each(vv)
		}
	}
	return val, nil
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

// WriteFiles writes validate-counters.png (in out's formats; further
// pages validate-counters-2.png, ...), the simulated and the real counters
// of each variant run both ways, and validate.html, the verdicts, the
// figures side by side and both runs' charts overlaid, into out.
func (v *Validation) WriteFiles(out *Output) (written, warnings []string, err error) {
	var runs []plots.Run
	for _, vv := range v.Variants {
		if vv.NotRun == nil {
			runs = append(runs, plots.Run{Label: vv.Name + " (sim)", Run: vv.Sim}, plots.Run{Label: vv.Name + " (real)", Run: vv.Real})
		}
	}
	pic := picture{stem: "validate-counters"}
	if len(runs) > 0 {
		if pic.pages, err = plots.Counters(v.Name+": simulated and real counters", runs); err != nil {
			warnings = append(warnings, fmt.Sprintf("validate-counters.png not drawn: %v", err))
		}
	}
	if written, err = writePictures(out, pic); err != nil {
		return written, warnings, err
	}
	if err := writePage(out, htmlreport.ValidateFileName, htmlreport.ValidatePage(validatePage(v))); err != nil {
		return written, warnings, err
	}
	return append(written, htmlreport.ValidateFileName), warnings, nil
}

// Verdict is tsim validate's last line over the validations of several
// experiments: how many variants agree, and which do not or were not run
// for real.
func Verdict(vals []*Validation) string {
	var agreed, disagreed, notRun []string
	for _, v := range vals {
		for _, vv := range v.Variants {
			name := v.Path + ": " + vv.Name
			switch {
			case vv.NotRun != nil:
				notRun = append(notRun, name)
			case vv.Agrees():
				agreed = append(agreed, name)
			default:
				disagreed = append(disagreed, name)
			}
		}
	}
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
