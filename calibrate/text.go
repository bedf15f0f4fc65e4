package calibrate

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// WriteText writes what tsim calibrate prints: the window, each tier's
// estimates and how they were reached, what was written, the comparison
// of measured and simulated counters, the notes, and what the counters
// cannot tell.
func (r *Result) WriteText(out io.Writer) error {
	var b strings.Builder
	c := r.Capture
	fmt.Fprintf(&b, "capture %s: %d samples %s apart over %s; machines %s\n", c.File, len(c.T), fmtSeconds(r.Window.Every), fmtSeconds(c.T[len(c.T)-1]), c.machineList())
	fmt.Fprintf(&b, "experiment %s, variant %q\n", r.Experiment, r.Variant)
	fmt.Fprintf(&b, "window: %s to %s of the capture (warm-up: %s), %d samples in %d batches; ± is a 95%% confidence half-width from the batches\n\n",
		fmtSeconds(r.Window.From), fmtSeconds(r.Window.To), r.Window.WarmupFrom, r.Window.Rows, r.Window.Batches)
	for _, e := range r.Tiers {
		head := e.Tier
		if e.Machine != e.Tier {
			head += " (machine " + e.Machine + ")"
		}
		fmt.Fprintf(&b, "%s, %d cores\n", head, e.Cores)
		row := func(what, value, how string) {
			fmt.Fprintf(&b, "  %-22s %-22s %s\n", what, value, how)
		}
		row("requests/s", fmtMeasureRate(e.Rate), "X: "+e.From.rateName)
		row("CPU busy", fmtPercentMeasure(e.Util), "U: "+cProcessor)
		row("CPU a request", fmtMeasure(e.CPU), fmt.Sprintf("U × %d cores / X (utilisation law)", e.Cores))
		row("  of it the steps'", fmtMeasure(e.StepCPU), fmt.Sprintf("less %s the experiment's bindings spend encoding and decoding", fmtSeconds(e.Known)))
		if e.little() {
			row("operation's time", fmtMeasure(e.Residence), fmt.Sprintf("R = N/X: %s / X (Little's law); %s says %s", e.From.levelName, e.From.durName, fmtSeconds(e.Duration.Value)))
		} else {
			row("operation's time", fmtMeasure(e.Residence), "R: "+e.From.durName)
		}
		row("  at the CPU", fmtSeconds(e.AtCPU), fmt.Sprintf("queueing for cores included (M/M/%d at U: × %.3g)", e.Cores, e.Stretch))
		if e.Calls > 0 || math.IsNaN(e.Calls) {
			v := fmtSeconds(e.Calls)
			if math.IsNaN(e.Calls) {
				v = "not identified"
			}
			row("  in calls", v, "the callees' own time (their counters) and the network's (the experiment's)")
		}
		if !math.IsNaN(e.ConnWait.Value) {
			row("  waiting for a conn.", fmtMeasure(e.ConnWait), "Little's law: Requests Waiting For A Connection / X")
		}
		if e.Refined {
			row("  the rest: a wait", fmtMeasure(e.Wait), fmt.Sprintf("R less all the above, %s, corrected by simulation (notes)", fmtSeconds(e.WaitAnalytic.Value)))
		} else {
			row("  the rest: a wait", fmtMeasure(e.Wait), "R less all the above")
		}
		b.WriteString("\n")
	}
	if len(r.Changes) > 0 {
		fmt.Fprintf(&b, "written into the experiment:\n")
		for _, ch := range r.Changes {
			from := ch.From
			if from == "" {
				from = "(new step)"
			}
			fmt.Fprintf(&b, "  tier.%s.step.%d.%s: %s → %s\n      %s\n", ch.Tier, ch.Step, ch.Key, from, ch.To, ch.Why)
		}
	} else {
		b.WriteString("nothing written: no demand differs clearly from what the experiment has\n")
	}
	b.WriteString("\n")

	if len(r.Compare) > 0 {
		runs := "one run of " + fmtSeconds(r.SimDuration)
		if r.Reps > 1 {
			runs = fmt.Sprintf("%d runs of %s; ± over the runs", r.Reps, fmtSeconds(r.SimDuration))
		}
		fmt.Fprintf(&b, "measured against simulated (the calibrated experiment, %s), means over the window:\n", runs)
		tw := []int{len("tier"), len("counter"), len("measured"), len("simulated"), len("error")}
		var lines [][]string
		for _, cmp := range r.Compare {
			sv := fmtValue(cmp.Simulated)
			if !math.IsNaN(cmp.SimHalf) {
				sv += simHalf(cmp.SimHalf)
			}
			l := []string{cmp.Tier, cmp.Counter + " (" + cmp.Unit + ")", fmtValue(cmp.Measured), sv, fmtRelError(cmp.RelError())}
			if math.IsNaN(cmp.RelError()) {
				l[4] = "–"
			}
			for i, s := range l {
				tw[i] = max(tw[i], len([]rune(s)))
			}
			lines = append(lines, l)
		}
		pad := func(s string, n int, right bool) string {
			p := strings.Repeat(" ", n-len([]rune(s)))
			if right {
				return p + s
			}
			return s + p
		}
		fmt.Fprintf(&b, " %s │ %s │ %s │ %s │ %s\n", pad("tier", tw[0], false), pad("counter", tw[1], false), pad("measured", tw[2], true), pad("simulated", tw[3], true), pad("error", tw[4], true))
		fmt.Fprintf(&b, "─%s─┼─%s─┼─%s─┼─%s─┼─%s─\n", strings.Repeat("─", tw[0]), strings.Repeat("─", tw[1]), strings.Repeat("─", tw[2]), strings.Repeat("─", tw[3]), strings.Repeat("─", tw[4]))
		for _, l := range lines {
			fmt.Fprintf(&b, " %s │ %s │ %s │ %s │ %s\n", pad(l[0], tw[0], false), pad(l[1], tw[1], false), pad(l[2], tw[2], true), pad(l[3], tw[3], true), pad(l[4], tw[4], true))
		}
		b.WriteString("\n")
	}
	if lt := r.LoadTest; lt != nil {
		fmt.Fprintf(&b, "client latency, measured by the load test (%s, %s) / simulated, of the requests that ended in each window:\n", lt.File, lt.Tool)
		fmt.Fprintf(&b, "  %-17s %-13s %-13s %-19s %-19s %s\n", "window", "requests", "errors", "p50", "p90", "p99")
		lat := func(x float64) string {
			if math.IsNaN(x) {
				return "–"
			}
			return fmtSeconds(x)
		}
		pct := func(x float64) string {
			if math.IsNaN(x) {
				return "–"
			}
			return fmt.Sprintf("%.3g%%", 100*x)
		}
		row := func(name string, w results.LatencyWindow) {
			m, s := w.Measured, w.Simulated
			fmt.Fprintf(&b, "  %-17s %-13s %-13s %-19s %-19s %s\n", name, fmt.Sprintf("%d / %d", m.Requests, s.Requests), pct(m.ErrorRate)+" / "+pct(s.ErrorRate),
				lat(m.P50S)+" / "+lat(s.P50S), lat(m.P90S)+" / "+lat(s.P90S), lat(m.P99S)+" / "+lat(s.P99S))
		}
		for _, w := range lt.Windows {
			row(fmtSeconds(w.FromS)+"–"+fmtSeconds(w.ToS), w)
		}
		row("all", lt.Overall)
		b.WriteString("  (simulated requests: the first run's latency points, a deterministic subsample)\n\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("notes:\n")
		for _, n := range r.Notes {
			b.WriteString(wrap(n, "  - ", "    ", 100))
		}
		b.WriteString("\n")
	}
	b.WriteString(notIdentified)
	_, err := io.WriteString(out, b.String())
	return err
}

// notIdentified is what no counter can tell, printed after every
// calibration (docs/field-calibrate.md has the reasons).
const notIdentified = `not identified from counters alone (kept from the experiment, or assumed):
  - the shape of each demand's distribution: counters give means; steps keep the experiment's
    family and coefficient of variation, a new step is exponential
  - how a tier's CPU splits between its cpu steps, and its wait between its wait steps (kept as the
    experiment splits them), and the steps' order
  - what the wait is: a database, a disk, a lock, a sleep; and waits inside the tier for connections,
    locks or threads, which are left to the model to produce, not written
  - the load: the number of users of a closed load (so its think time), the arrival process
    (a load test given with --loadtest tells them)
  - the throttles and limits themselves (from the configuration: tsim config) and the network's
    latency and the bindings' costs (from the experiment)
`

func fmtPercentMeasure(m Measure) string {
	if math.IsNaN(m.Half) {
		return fmtPercent(m.Value)
	}
	return fmt.Sprintf("%.3g%% ± %.2g", 100*m.Value, 100*m.Half)
}

// wrap breaks s into lines of at most width runes, the first prefixed
// first, the others rest.
func wrap(s, first, rest string, width int) string {
	var b strings.Builder
	line := first
	n := len([]rune(line))
	for i, w := range strings.Fields(s) {
		if i > 0 && n+1+len([]rune(w)) > width {
			b.WriteString(line + "\n")
			line, n = rest+w, len([]rune(rest))+len([]rune(w))
			continue
		}
		if i > 0 {
			line += " "
			n++
		}
		line += w
		n += len([]rune(w))
	}
	b.WriteString(line + "\n")
	return b.String()
}

func fmtSignedSeconds(s float64) string {
	if s < 0 {
		return "−" + fmtSeconds(-s)
	}
	return fmtSeconds(s)
}

func fmtMeasure(m Measure) string {
	if math.IsNaN(m.Value) {
		return "not identified"
	}
	if math.IsNaN(m.Half) {
		return fmtSeconds(m.Value)
	}
	return fmtSeconds(m.Value) + " ± " + fmtSpanPlain(m.Half, m.Value)
}

// fmtSpanPlain writes a half-width in the unit of the value it goes with.
func fmtSpanPlain(h, v float64) string {
	if h == 0 {
		return "0"
	}
	av := math.Max(math.Abs(v), h)
	switch {
	case av >= 1:
		return strconv.FormatFloat(round2(h), 'f', -1, 64) + " s"
	case av >= 1e-3:
		return strconv.FormatFloat(round2(h*1e3), 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(round2(h*1e6), 'f', -1, 64) + " µs"
}

func round2(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 1-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

func fmtMeasureRate(m Measure) string {
	if math.IsNaN(m.Half) {
		return fmt.Sprintf("%.3g", m.Value)
	}
	return fmt.Sprintf("%.3g ± %.2g", m.Value, m.Half)
}

func fmtRate(x float64) string { return fmt.Sprintf("%.3g requests/s", x) }

func fmtPercent(u float64) string { return fmt.Sprintf("%.3g%%", 100*u) }
