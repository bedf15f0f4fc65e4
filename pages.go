package tsim

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/report"
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
			what, report.FmtLevel(r.Start), report.FmtLevel(r.Cap), r.CapWhy)
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
