package tsim

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/calibrate"
	"github.com/tsim-dev/tsim/fit"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

// The pages of plan, validate, calibrate and fit: each command's result
// handed to package htmlreport, which builds the page and knows nothing
// of the packages that produced it.

// writePage renders pg and writes it into out as name.
func writePage(out *Output, name string, pg *htmlreport.Page) error {
	b, err := pg.HTML()
	if err == nil {
		err = out.WriteFile(name, b)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// planPage is plan.html's content.
func planPage(r *analysis.PlanResult) *htmlreport.Plan {
	p := &htmlreport.Plan{Name: r.Name, File: r.Path, Reps: r.Reps, Found: r.Found, Best: -1, Answer: r.Answer,
		AnswerText: r.AnswerText, AnswerLabel: r.AnswerLabel, XLabel: r.XLabel, Interrupted: r.Interrupted, Maximize: r.Maximize}
	var text bytes.Buffer
	if r.WriteText(&text) == nil {
		p.Text = text.String()
	}
	var fixed []string
	for _, kv := range r.Fixed {
		if kv.Key != "load.users" && kv.Key != "load.rate" {
			fixed = append(fixed, kv.Key+" = "+kv.Value)
		}
	}
	line := "variant " + r.Variant + ", " + r.Load
	if len(fixed) > 0 {
		line += "; " + strings.Join(fixed, ", ")
	}
	seeds := make([]string, 0, 4)
	for k := range min(r.Reps, 3) {
		seeds = append(seeds, strconv.FormatUint(runner.ReplicationSeed(r.Seed, k), 10))
	}
	if r.Reps > 3 {
		seeds = append(seeds, "...")
	}
	p.Lines = append(p.Lines, line, fmt.Sprintf("%d replications per point (seeds %s), %s simulated at each point",
		r.Reps, strings.Join(seeds, ", "), report.FmtSeconds(r.Duration.Seconds())))
	p.Lines = append(p.Lines, planSearch(r))

	rule := "the one-sided 95% Student t confidence bound across replications"
	if r.Reps == 1 {
		rule = "one replication, without confidence"
	}
	switch {
	case len(r.Goals) > 0 && r.Maximize != "":
		p.Goal = fmt.Sprintf("Goal: the most %s with %s, each clause judged on %s.", r.Maximize, analysis.GoalText(r.Goals, " and "), rule)
	case len(r.Goals) > 0:
		p.Goal = fmt.Sprintf("Goal: %s, each judged on %s.", analysis.GoalText(r.Goals, " and "), rule)
	case r.Maximize != "":
		p.Goal = fmt.Sprintf("Goal: the most %s (the mean across replications).", r.Maximize)
	}
	for _, g := range r.Goals {
		p.Clauses = append(p.Clauses, planClause(g))
	}
	if r.Maximize != "" {
		p.MaxClause = planClause(analysis.Goal{Metric: r.Maximize, Text: r.Maximize})
	}
	if r.Find != "" {
		p.Keys = []string{r.Find}
	}
	for _, a := range r.Axes {
		p.Keys = append(p.Keys, a.Key)
	}
	if len(r.Axes) > 0 && !r.Axes[0].Numeric() {
		p.XLabels = r.Axes[0].Values
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, pt := range r.Points {
		q := htmlreport.PlanPoint{Order: pt.Order, X: pt.X, Mean: pt.Mean, Bound: pt.Bound, Obj: pt.ObjMean, ObjHalf: pt.ObjHalf, OK: pt.OK}
		for _, kv := range pt.Params {
			q.Values = append(q.Values, kv.Value)
		}
		if !pt.OK {
			q.Missed = r.Missed(pt)
		}
		if len(pt.X) > 0 {
			lo, hi = math.Min(lo, pt.X[0]), math.Max(hi, pt.X[0])
		}
		if pt == r.Best {
			p.Best = i
		}
		p.Points = append(p.Points, q)
	}
	p.LogX = lo > 0 && hi/lo >= 20
	return p
}

// planClause is how a clause is shown: its axis, unit and threshold.
func planClause(g analysis.Goal) htmlreport.PlanClause {
	label, scale := g.Axis()
	unit := "s"
	switch g.Metric {
	case "timeouts", "rejected":
		unit = "%"
	case "goodput", "throughput":
		unit = "/s"
	}
	return htmlreport.PlanClause{Text: g.Text, Label: label, Unit: unit, Scale: scale, Limit: g.Limit, Less: g.Less}
}

// planSearch says how the plan searched.
func planSearch(r *analysis.PlanResult) string {
	switch r.Method {
	case analysis.MethodLoad:
		what := map[string]string{"users": "users", "rate": "requests per second"}[r.Find]
		return fmt.Sprintf("search: the most %s within the goal, doubling from the file's peak of %s to bracket it, then bisection; at most %s (%s)",
			what, results.FmtLevel(r.Start), results.FmtLevel(r.Cap), r.CapWhy)
	case analysis.MethodBisect:
		a := r.Axes[0]
		if !a.Ints {
			return fmt.Sprintf("search: bisection over the %d listed values of %s, in increasing order (a capacity setting: more never makes the goal harder to meet)", len(a.Values), a.Key)
		}
		return fmt.Sprintf("search: bisection over %s in %d..%d (a capacity setting: more never makes the goal harder to meet)", a.Key, a.Lo, a.Hi)
	case analysis.MethodMax:
		a := r.Axes[0]
		return fmt.Sprintf("search: the most %s (mean across replications) over %s ∈ {%s}", r.Maximize, a.Key, strings.Join(a.Values, ", "))
	}
	var desc []string
	size := 1
	for _, a := range r.Axes {
		desc = append(desc, fmt.Sprintf("%s ∈ {%s}", a.Key, strings.Join(a.Values, ", ")))
		size *= len(a.Values)
	}
	return fmt.Sprintf("search: a grid of %d points, %s", size, strings.Join(desc, " × "))
}

// validatePage is validate.html's content.
func validatePage(v *Validation) *htmlreport.Validation {
	p := &htmlreport.Validation{Name: v.Name, File: v.Path, Lines: []string{
		fmt.Sprintf("seed %d; each variant at the first point of its sweep, simulated and run for real (goroutines, semaphores and HTTP on loopback) with the same seed", v.Seed)}}
	for _, vv := range v.Variants {
		q := htmlreport.ValidatedVariant{Name: vv.Name}
		if vv.NotRun != nil {
			q.NotRun = vv.NotRun.Error()
			p.Variants = append(p.Variants, q)
			continue
		}
		q.Sim, q.Real, q.Agrees = vv.Sim, vv.Real, vv.Agrees()
		q.Lines = append(q.Lines, fmt.Sprintf("time scale %.4g: %s real for %s simulated", vv.Info.Scale, vv.Info.Real.Round(1e6), vv.Duration))
		for _, n := range vv.Info.Notes {
			q.Lines = append(q.Lines, "note: "+n)
		}
		for _, row := range vv.Report.Rows {
			q.Checks = append(q.Checks, htmlreport.Check{Metric: row.Metric, Sim: row.Sim, Real: row.Real, Diff: row.Diff, Limit: row.Limit,
				PP: row.Rule == "percentage points", OK: row.OK, Rule: row.Rule})
		}
		p.Variants = append(p.Variants, q)
	}
	return p
}

// calibrationPage is calibration.html's content.
func calibrationPage(c *Calibration) *htmlreport.Calibration {
	r := c.Result
	p := &htmlreport.Calibration{Name: r.Experiment, Notes: r.Notes, Warmup: r.Window.From, LoadTest: r.LoadTest}
	var text bytes.Buffer
	if r.WriteText(&text) == nil {
		p.Text = text.String()
	}
	if cp := r.Capture; cp != nil && len(cp.T) > 0 {
		p.Lines = append(p.Lines, fmt.Sprintf("capture %s (%s, %s): %d samples over %s; machines %s", cp.File, cp.Kind, cp.Encoding,
			len(cp.T), report.FmtSeconds(cp.T[len(cp.T)-1]), strings.Join(cp.Machines(), ", ")))
	}
	p.Lines = append(p.Lines, fmt.Sprintf("experiment %s, variant %q", r.Experiment, r.Variant),
		fmt.Sprintf("window %s to %s of the capture (warm-up: %s), %d samples in %d batches", report.FmtSeconds(r.Window.From),
			report.FmtSeconds(r.Window.To), r.Window.WarmupFrom, r.Window.Rows, r.Window.Batches))
	if len(r.Compare) > 0 {
		runs := "one simulated run"
		if r.Reps > 1 {
			runs = fmt.Sprintf("%d simulated runs", r.Reps)
		}
		p.Lines = append(p.Lines, fmt.Sprintf("%s of %s of the calibrated experiment", runs, report.FmtSeconds(r.SimDuration)))
	}
	measure := func(m calibrate.Measure, f func(float64) string) string {
		switch {
		case math.IsNaN(m.Value):
			return "not identified"
		case math.IsNaN(m.Half):
			return f(m.Value)
		}
		return f(m.Value) + " ± " + f(m.Half)
	}
	secs := results.FmtLatency
	pct := func(u float64) string { return results.FmtPercent(u) }
	rate := func(x float64) string { return results.FmtRate(x) + "/s" }
	p.Estimates = &htmlreport.Table{Left: 1,
		Header: []string{"tier", "cores", "requests/s", "CPU busy", "CPU a request", "of it the steps'", "operation's time", "at the CPU", "in calls", "the rest: a wait"},
		Titles: []string{"", "", "X", "U: % Processor Time", "U × cores / X (the utilisation law)", "less what the experiment's bindings spend encoding and decoding",
			"R = N/X (Little's law) where the capture has the level of operations, else the duration counter", "queueing for cores included (M/M/c at U)",
			"the callees' own time (their counters) and the network's (the experiment's)", "R less all the above (corrected by simulation where the notes say)"}}
	for _, e := range r.Tiers {
		head := e.Tier
		if e.Machine != e.Tier {
			head += " (" + e.Machine + ")"
		}
		calls := secs(e.Calls)
		if math.IsNaN(e.Calls) {
			calls = "not identified"
		}
		p.Estimates.Rows = append(p.Estimates.Rows, []string{head, strconv.Itoa(e.Cores), measure(e.Rate, rate), measure(e.Util, pct),
			measure(e.CPU, secs), measure(e.StepCPU, secs), measure(e.Residence, secs), secs(e.AtCPU), calls, measure(e.Wait, secs)})
	}
	p.Changes = &htmlreport.Table{Left: 4, Header: []string{"key", "was", "now", "why"}}
	for _, ch := range r.Changes {
		from := ch.From
		if from == "" {
			from = "(new step)"
		}
		p.Changes.Rows = append(p.Changes.Rows, []string{fmt.Sprintf("tier.%s.step.%d.%s", ch.Tier, ch.Step, ch.Key), from, ch.To, ch.Why})
	}
	for _, cmp := range r.Compare {
		k := htmlreport.CalibratedCounter{Tier: cmp.Tier, Machine: cmp.Machine, Counter: cmp.Counter, Unit: cmp.Unit,
			Measured: cmp.Measured, Simulated: cmp.Simulated, SimHalf: cmp.SimHalf, RelativeError: cmp.RelError()}
		for _, tv := range cmp.MeasuredSeries {
			k.MeasuredT, k.MeasuredV = append(k.MeasuredT, tv.T), append(k.MeasuredV, tv.V)
		}
		for _, tv := range cmp.SimSeries {
			k.SimT, k.SimV = append(k.SimT, tv.T), append(k.SimV, tv.V)
		}
		p.Counters = append(p.Counters, k)
	}
	return p
}

// fitPage is fit.html's content.
func fitPage(r *FitResult) *htmlreport.Fit {
	p := &htmlreport.Fit{Name: r.Name, Notes: r.Notes}
	var text bytes.Buffer
	if r.WriteText(&text) == nil {
		p.Text = text.String()
	}
	fitted, predicted := 0, 0
	reproduced := 0
	for _, t := range r.Targets {
		if t.Fitted {
			fitted++
		} else {
			predicted++
			if t.Verdict == fit.Reproduced {
				reproduced++
			}
		}
	}
	p.Lines = append(p.Lines, fmt.Sprintf("specification %s: %d fitted and %d predicted targets, %d free inputs", r.Spec.File, fitted, predicted, len(r.Inputs)),
		fmt.Sprintf("%d evaluations of %d allowed, Nelder–Mead from %d starts, and %d more for the sensitivities; each evaluation %d replications at seed %d (the same seeds every time: common random numbers)",
			r.Evaluations, r.Budget, r.Starts, r.Probes, r.Replications, r.Seed))
	chi := fmt.Sprintf("χ² = %.2f over %d fitted targets and %d inputs", r.Chi2, fitted, len(r.Inputs))
	switch {
	case r.DoF > 0 && r.Inflation > 1:
		chi += fmt.Sprintf(" (χ²/dof = %.2f: the intervals are widened by √%.2f for the misfit)", r.Chi2/float64(r.DoF), r.Inflation)
	case r.DoF > 0:
		chi += fmt.Sprintf(" (χ²/dof = %.2f)", r.Chi2/float64(r.DoF))
	default:
		chi += " (as many inputs as targets or more: the fit cannot show a misfit)"
	}
	p.Summary = append(p.Summary, chi)
	if predicted > 0 {
		p.Summary = append(p.Summary, fmt.Sprintf("predictions: %d of %d within the figure's tolerance", reproduced, predicted))
	}
	for _, in := range r.Inputs {
		p.Inputs = append(p.Inputs, htmlreport.FitInput{Key: in.Free.Key, Value: in.Text, Lo: in.Lo, Hi: in.Hi, Min: in.Free.Min, Max: in.Free.Max,
			Pinned: in.Pinned, AtBound: in.AtBound, SetBy: in.SetBy, Share: in.Share})
	}
	for _, t := range r.Targets {
		v := t.Target.Variant
		if t.Target.RelativeTo != "" {
			v += " / " + t.Target.RelativeTo
		}
		for _, kv := range t.Target.Set {
			v += ", " + kv.Key + " = " + kv.Value
		}
		p.Targets = append(p.Targets, htmlreport.FitTarget{Name: t.Target.Name, Variant: v, Fitted: t.Fitted, Value: t.Target.Value,
			Tolerance: t.Target.Tolerance, Model: t.Model, SimHalf: t.SimHalf, Lo: t.Lo, Hi: t.Hi, Residual: t.Residual,
			Verdict: t.Verdict, Elasticity: t.Elasticity})
	}
	return p
}
