package calibrate

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// stepKey matches a variant's or a sweep's key of a step's demand.
var stepKey = regexp.MustCompile(`^tier\.([A-Za-z0-9_-]+)\.step\.([0-9]+)\.(cpu|wait)$`)

// checkOverrides refuses a chosen variant that sets a demand calibrate
// wrote (the capture would be calibrated into the wrong place) and notes
// the other variants and sweeps that do.
func (r *Result) checkOverrides(doc map[string]any, variant string) error {
	changed := map[string]bool{}
	for _, ch := range r.Changes {
		changed[fmt.Sprintf("tier.%s.step.%d.%s", ch.Tier, ch.Step, ch.Key)] = true
	}
	for _, v := range tables(doc["variant"]) {
		set, _ := v["set"].(map[string]any)
		name, _ := v["name"].(string)
		for _, k := range sortedKeys(set) {
			if !stepKey.MatchString(k) || !changed[k] {
				continue
			}
			if name == variant {
				return fmt.Errorf("variant %q sets %s, a demand calibrate estimates; calibrate a variant that does not (--variant), or move the setting into the tier", name, k)
			}
			r.note(fmt.Sprintf("variant %q sets %s: it overrides the calibrated value in that variant", name, k))
		}
	}
	if sw, ok := doc["sweep"].(map[string]any); ok {
		for _, k := range sortedKeys(sw) {
			if changed[k] {
				r.note(fmt.Sprintf("the sweep varies %s: it overrides the calibrated value", k))
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// write puts tier e's estimates into its steps in doc: the CPU steps
// scaled to the estimated CPU, the wait steps to the estimated wait, or a
// step added where the experiment has none and the capture shows one.
func (r *Result) write(doc map[string]any, top *model.Topology, e *TierEstimate, opts sim.ParseOptions) error {
	t := &top.Tiers[e.Index]
	td := tierOf(doc, t.Name)
	if td == nil {
		return fmt.Errorf("tier %s: not in the experiment's document (a bug in tsim calibrate)", t.Name)
	}
	steps := tables(td["step"])
	if len(steps) != len(t.Steps) {
		return fmt.Errorf("tier %s: %d steps in the file, %d resolved (a bug in tsim calibrate)", t.Name, len(steps), len(t.Steps))
	}
	mult := t.CostMultiplier
	if !(mult > 0) {
		mult = 1
	}
	var cpuSteps, waitSteps []int
	var cpu0, wait0 float64
	hasCalls := false
	for i := range t.Steps {
		switch t.Steps[i].Kind {
		case model.StepCPU:
			cpuSteps = append(cpuSteps, i)
			cpu0 += t.Steps[i].Demand.Mean().Seconds()
		case model.StepWait:
			waitSteps = append(waitSteps, i)
			wait0 += t.Steps[i].Demand.Mean().Seconds()
		case model.StepCall, model.StepLock:
			hasCalls = true
		}
	}
	for _, v := range []struct {
		what string
		x    float64
	}{{"CPU", e.StepCPU.Value}, {"wait", e.Wait.Value}} {
		if v.x > format.MaxDuration.Seconds() || math.IsInf(v.x, 0) {
			c := r.Capture
			return fmt.Errorf("%s: tier %s: the capture gives %s of %s a request (from %s and %s); tsim's demands are at most %s: these are not a running service's counters",
				c.head(e.From.rate), t.Name, fmtSeconds(v.x), v.what, c.name(e.From.rate), c.name(e.From.cpu), fmtSeconds(format.MaxDuration.Seconds()))
		}
	}
	cpu := e.StepCPU.Value / mult
	ms := func(m Measure) string { return fmtMeasure(m) }
	cpuWhy := fmt.Sprintf("%s of CPU a request: %s × %d cores / %s, less %s the experiment's bindings spend",
		ms(e.StepCPU), fmtPercent(e.Util.Value), e.Cores, fmtRate(e.Rate.Value), fmtSeconds(e.Known))
	if mult != 1 {
		cpuWhy += fmt.Sprintf(", divided by the cost multiplier %g", mult)
	}
	if err := r.scale(steps, t, e, "cpu", cpuSteps, cpu0, cpu, e.StepCPU, cpuWhy, opts, td); err != nil {
		return err
	}
	if math.IsNaN(e.Wait.Value) {
		r.note(fmt.Sprintf("tier %s: its wait is not identified: it calls a tier the capture does not have, so the time of its calls is unknown; its waits are left as they are", t.Name))
		return nil
	}
	waitWhy := fmt.Sprintf("%s not at the CPU nor in calls: the operation's %s (%s) − %s at the CPU", ms(e.Wait), fmtSeconds(e.Residence.Value), e.rFrom(), fmtSeconds(e.AtCPU))
	if e.Calls > 0 {
		waitWhy += " − " + fmtSeconds(e.Calls) + " in calls"
	}
	if !math.IsNaN(e.ConnWait.Value) {
		waitWhy += " − " + fmtSeconds(e.ConnWait.Value) + " waiting for connections"
	}
	if e.Refined {
		waitWhy += fmt.Sprintf(" = %s, corrected by simulation for the queue at the cores (the notes say how)", fmtSeconds(e.WaitAnalytic.Value))
	}
	if len(waitSteps) == 0 && hasCalls {
		if significant(e.Wait, e.Residence.Value) {
			e.unexplained = true
			what := "a connection, a lock or a thread"
			if !math.IsNaN(e.ConnWait.Value) {
				what = "a lock or a thread"
			}
			r.note(fmt.Sprintf("tier %s: %s of each request is %s: a wait inside %s — for %s — that the counters do not name; the tier has no wait step, so nothing is written: it is the model's to produce",
				t.Name, fmtMeasure(e.Wait), "not at the CPU nor in calls", t.Name, what))
		}
		return nil
	}
	n := len(r.Changes)
	err := r.scale(steps, t, e, "wait", waitSteps, wait0, e.Wait.Value, e.Wait, waitWhy, opts, td)
	e.waitWritten = len(r.Changes) > n
	return err
}

// significant says whether an estimate is clearly above zero: its
// interval's lower end, and above 1 ms and 2% of the residence.
func significant(m Measure, residence float64) bool {
	lo := m.Value
	if !math.IsNaN(m.Half) {
		lo -= m.Half
	}
	return lo > 0 && m.Value > math.Max(1e-3, 0.02*residence)
}

// scale sets the steps of one kind (cpu or wait) to a total of want
// seconds, keeping their shapes and their split; adds a step when the tier
// has none and the capture clearly shows some.
func (r *Result) scale(steps []map[string]any, t *model.Tier, e *TierEstimate, key string, idx []int, have, want float64, m Measure, why string, opts sim.ParseOptions, td map[string]any) error {
	if len(idx) == 0 {
		if !significant(m, e.Residence.Value) {
			return nil
		}
		to := newDist(want)
		steps = append(steps, map[string]any{key: to})
		td["step"] = steps
		r.Changes = append(r.Changes, Change{Tier: t.Name, Step: len(steps), Key: key, To: to,
			Why: why + "; a new step: the experiment's tier had none, and its shape (exp) is assumed"})
		return nil
	}
	if want <= 0 {
		for _, i := range idx {
			r.Changes = append(r.Changes, Change{Tier: t.Name, Step: i + 1, Key: key, From: t.Steps[i].Demand.String(), To: "0s",
				Why: why + "; nothing is left for it"})
			steps[i][key] = "0s"
		}
		return nil
	}
	for n, i := range idx {
		d := t.Steps[i].Demand
		var to string
		var err error
		switch {
		case have > 0 && d.IsZero():
			continue // a zero step stays zero: the others carry the demand
		case have > 0:
			to, err = scaledDist(d, want/have, opts)
		case n == 0:
			to = newDist(want) // every step was zero: the first takes it all
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("tier %s step %d: %v", t.Name, i+1, err)
		}
		if to == d.String() {
			continue // the experiment had it right
		}
		w := why
		if len(idx) > 1 {
			w += fmt.Sprintf("; split between the tier's %d %s steps as the experiment splits them", len(idx), key)
		}
		r.Changes = append(r.Changes, Change{Tier: t.Name, Step: i + 1, Key: key, From: d.String(), To: to, Why: w})
		steps[i][key] = to
	}
	return nil
}

// comment is the trailing comment of a calibrated key.
func (r *Result) comment(path string) string {
	for _, ch := range r.Changes {
		if path == fmt.Sprintf("tier.%s.step.%d.%s", ch.Tier, ch.Step, ch.Key) {
			if ch.From == "" {
				return "calibrated (new step)"
			}
			return "calibrated; was " + ch.From
		}
	}
	return ""
}

// header is the calibrated file's opening comment.
func (r *Result) header(x *format.Experiment, c *Capture, top *model.Topology) []string {
	var machines []string
	for _, e := range r.Tiers {
		machines = append(machines, e.Machine+" = "+e.Tier)
	}
	h := []string{
		fmt.Sprintf("Calibrated by tsim calibrate: %s, variant %q, against the capture %s", x.File, r.Variant, c.File),
		fmt.Sprintf("(machines %s), from %s to %s of the capture (%d samples, %s apart).", strings.Join(machines, ", "),
			fmtSeconds(r.Window.From), fmtSeconds(r.Window.To), r.Window.Rows, fmtSeconds(r.Window.Every)),
		"",
	}
	for _, e := range r.Tiers {
		h = append(h, fmt.Sprintf("%s: %s requests/s; CPU %s a request (%s of %d cores busy); operation %s; wait %s",
			e.Tier, fmtMeasureRate(e.Rate), fmtMeasure(e.CPU), fmtPercent(e.Util.Value), e.Cores, fmtMeasure(e.Residence), fmtMeasure(e.Wait)))
	}
	h = append(h, "",
		"CPU per request is U·cores/X (the utilisation law), less what the experiment's bindings spend;",
		"a tier's wait is its operation's time less its time at the CPU (queueing for cores included)",
		"and in calls. Counters give means only: the steps keep the experiment's distributions' shapes",
		"and its split between steps (a new step is exponential). Waits for connections, locks and threads",
		"are the model's to produce and are not written. The topology is written out in full and the",
		"original's comments are not kept. docs/field-calibrate.md says what cannot be identified.",
		"")
	return h
}
