package fit

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/tsim-dev/tsim/results"
)

// WriteText writes the report tsim fit prints: the fitted inputs with
// their intervals and what sets them, every fitted target's residual, every
// predicted target against its figure, and the sensitivities.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	s := r.Spec
	fmt.Fprintf(&b, "tsim fit: %s (%s), %d fitted and %d predicted targets, %d free inputs\n",
		r.Name, s.File, r.count(true), r.count(false), len(r.Inputs))
	fmt.Fprintf(&b, "  %d evaluations of %d allowed, Nelder–Mead from %d starts, and %d more for the sensitivities; each evaluation %d replications at seed %d (the same seeds every time: common random numbers)\n",
		r.Evaluations, r.Budget, r.Starts, r.Probes, r.Replications, r.Seed)

	b.WriteString("\nfitted inputs (95% intervals from the fitted targets' tolerances and the simulation's noise):\n")
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  key\tvalue\t95% interval\trange\tset mostly by\t")
	for _, in := range r.Inputs {
		iv := "not pinned by the targets"
		if in.Pinned {
			iv = results.Sig4(in.Lo, "none") + " – " + results.Sig4(in.Hi, "none")
		}
		by := "—"
		if in.SetBy != "" {
			by = fmt.Sprintf("%s (%.0f%%)", in.SetBy, 100*in.Share)
		}
		val := in.Text
		if in.AtBound {
			val += " (at the range's end)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s – %s\t%s\t\n", in.Free.label(), val, iv, results.Sig4(in.Free.Min, "none"), results.Sig4(in.Free.Max, "none"), by)
	}
	tw.Flush()

	for _, fitted := range []bool{true, false} {
		if r.count(fitted) == 0 {
			continue
		}
		if fitted {
			b.WriteString("\ntargets used in the fit (residual in tolerances):\n")
		} else {
			b.WriteString("\npredicted (not used in the fit):\n")
		}
		tw = tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
		if fitted {
			fmt.Fprintln(tw, "  target\tvariant\tfigure\tmodel\tresidual\t")
		} else {
			fmt.Fprintln(tw, "  target\tvariant\tfigure\tpredicted\t95% interval\tverdict\t")
		}
		for _, t := range r.Targets {
			if t.Fitted != fitted {
				continue
			}
			v := t.Target.Variant
			if t.Target.RelativeTo != "" {
				v += " / " + t.Target.RelativeTo
			}
			for _, kv := range t.Target.Set {
				v += ", " + kv.Key + " = " + kv.Value
			}
			fig := results.Sig4(t.Target.Value, "none") + " ± " + results.Sig4(t.Target.Tolerance, "none")
			model := results.Sig4(t.Model, "none")
			if t.SimHalf > 0 {
				model += " ± " + results.Sig4(t.SimHalf, "none")
			}
			if fitted {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%+.2f\t\n", t.Target.Name, v, fig, model, t.Residual)
			} else {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t\n", t.Target.Name, v, fig, results.Sig4(t.Model, "none"), interval(t.Lo, t.Hi), t.Verdict)
			}
		}
		tw.Flush()
	}
	fmt.Fprintf(&b, "\nχ² = %.2f over %d fitted targets and %d inputs", r.Chi2, r.count(true), len(r.Inputs))
	switch {
	case r.DoF > 0 && r.Inflation > 1:
		fmt.Fprintf(&b, " (χ²/dof = %.2f: the intervals are widened by √%.2f for the misfit)\n", r.Chi2/float64(r.DoF), r.Inflation)
	case r.DoF > 0:
		fmt.Fprintf(&b, " (χ²/dof = %.2f)\n", r.Chi2/float64(r.DoF))
	default:
		b.WriteString(" (as many inputs as targets or more: the fit cannot show a misfit)\n")
	}
	if n, k := r.verdicts(); k > 0 {
		fmt.Fprintf(&b, "predictions: %d of %d within the figure's tolerance\n", n, k)
	}

	b.WriteString("\nsensitivity (% change of each target for a 1% change of each input):\n")
	tw = tabwriter.NewWriter(&b, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "  target\t")
	for _, in := range r.Inputs {
		fmt.Fprintf(tw, "%s\t", shortKey(in.Free.Key))
	}
	fmt.Fprintln(tw)
	for _, t := range r.Targets {
		fmt.Fprintf(tw, "  %s\t", t.Target.Name)
		for _, e := range t.Elasticity {
			if math.IsNaN(e) {
				fmt.Fprint(tw, "—\t")
			} else {
				fmt.Fprintf(tw, "%+.2f\t", e)
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, n := range r.Notes {
		b.WriteString("\nnote: " + n + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (r *Result) count(fitted bool) int {
	n := 0
	for _, t := range r.Targets {
		if t.Fitted == fitted {
			n++
		}
	}
	return n
}

// verdicts counts the predicted targets within their tolerance, of all
// predicted.
func (r *Result) verdicts() (reproduced, predicted int) {
	for _, t := range r.Targets {
		if !t.Fitted {
			predicted++
			if t.Verdict == Reproduced {
				reproduced++
			}
		}
	}
	return
}

// header is the comment the fitted experiment starts with.
func (r *Result) header() []string {
	h := []string{fmt.Sprintf("FITTED by tsim fit %s (%d evaluations, %d replications each at seed %d):", r.Spec.File, r.Evaluations, r.Replications, r.Seed)}
	for _, in := range r.Inputs {
		iv := "not pinned by the targets"
		if in.Pinned {
			iv = "95% interval " + results.Sig4(in.Lo, "none") + " – " + results.Sig4(in.Hi, "none")
		}
		h = append(h, fmt.Sprintf("  %s = %s (%s)", in.Free.label(), in.Text, iv))
	}
	return h
}

// label is the input's key, with its variant if it has one.
func (f *Free) label() string {
	if f.Variant != "" {
		return f.Key + " [" + f.Variant + "]"
	}
	return f.Key
}

func interval(lo, hi float64) string {
	if !finite(lo) || !finite(hi) {
		return "unbounded (an input it depends on is not pinned)"
	}
	return results.Sig4(lo, "none") + " – " + results.Sig4(hi, "none")
}

// shortKey is a key path's last two parts, for a column heading.
func shortKey(k string) string {
	p := strings.Split(k, ".")
	if len(p) > 2 {
		p = p[len(p)-2:]
	}
	return strings.Join(p, ".")
}
