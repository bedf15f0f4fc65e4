package analysis

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

// WriteText writes the result as 'tsim plan' prints it: what was searched
// and how, every evaluated point ordered by the searched values with each
// clause's mean and bound, and the answer.
func (r *PlanResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s (%s): plan\n", r.Name, r.Path)
	var fixed []string
	for _, kv := range r.Fixed {
		if kv.Key != "load.users" && kv.Key != "load.rate" {
			fixed = append(fixed, kv.Key+" = "+kv.Value)
		}
	}
	extra := ""
	if len(fixed) > 0 {
		extra = "; " + strings.Join(fixed, ", ")
	}
	para(w, "variant %s, %s%s; %d replications per point (seeds %s), %s simulated", r.Variant, r.Load, extra, r.Reps,
		seedList(r.Seed, r.Reps), report.FmtSeconds(r.Duration.Seconds()))
	rule := "the one-sided 95% Student t confidence bound across replications"
	if r.Reps == 1 {
		rule = "one replication, without confidence"
	}
	if len(r.Goals) > 0 {
		para(w, "goal: %s, each judged on %s", GoalText(r.Goals, " and "), rule)
	} else {
		para(w, "goal: none (every value counts)")
	}
	switch r.Method {
	case MethodLoad:
		para(w, "search: the most %s within the goal — doubling from the file's peak of %s to bracket it, then bisection; at most %s (%s)",
			map[string]string{"users": "users", "rate": "requests per second"}[r.Find], fmtCount(r.Start), fmtCount(r.Cap), r.CapWhy)
	case MethodBisect:
		a := r.Axes[0]
		if !a.Ints {
			para(w, "search: bisection over the %d listed values of %s, in increasing order (a capacity setting: more never makes the goal harder to meet)", len(a.Values), a.Key)
			break
		}
		para(w, "search: bisection over %s in %d..%d (a capacity setting: more never makes the goal harder to meet)", a.Key, a.Lo, a.Hi)
	case MethodMax:
		a := r.Axes[0]
		refine := ""
		if a.Ints {
			refine = ", then bisection on the slope (is it lower at m than at m+1?) between the best one's neighbours"
		}
		para(w, "search: the most %s (mean across replications) over %s ∈ {%s}%s", r.Maximize, a.Key, strings.Join(a.Values, ", "), refine)
	default:
		var desc []string
		size := 1
		for _, a := range r.Axes {
			desc = append(desc, fmt.Sprintf("%s ∈ {%s}", a.Key, strings.Join(a.Values, ", ")))
			size *= len(a.Values)
		}
		order := ""
		if len(r.Axes) > 1 {
			order = "; cheapest = smallest in the first key, then the next"
		}
		para(w, "search: grid of %d points, %s%s", size, strings.Join(desc, " × "), order)
	}
	fmt.Fprintln(w)
	if err := r.writePoints(w); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if r.Found {
		para(w, "answer: %s.", r.AnswerText)
	} else if r.Interrupted {
		para(w, "no answer: %s.", r.AnswerText)
	} else {
		para(w, "no answer: %s.", r.AnswerText)
	}
	return nil
}

func seedList(seed uint64, reps int) string {
	var s []string
	for k := range min(reps, 3) {
		s = append(s, strconv.FormatUint(runner.ReplicationSeed(seed, k), 10))
	}
	if reps > 3 {
		s = append(s, "...")
	}
	return strings.Join(s, ", ")
}

// Missed lists the metrics of the goal's clauses that pt misses.
func (r *PlanResult) Missed(pt *Point) []string {
	var missed []string
	for g, gl := range r.Goals {
		if _, _, ok := gl.Judge(pt.Values[g]); !ok {
			missed = append(missed, gl.Metric)
		}
	}
	return missed
}

// writePoints writes every evaluated point, ordered by the searched
// values, with each clause's mean and bound.
func (r *PlanResult) writePoints(w io.Writer) error {
	header := []string{"#"}
	if r.Find != "" {
		header = append(header, r.Find)
	}
	for _, a := range r.Axes {
		header = append(header, results.ShortKey(a.Key))
	}
	for _, g := range r.Goals {
		b := "upper"
		if !g.Less {
			b = "lower"
		}
		if r.Reps == 1 {
			header = append(header, g.Metric)
		} else {
			header = append(header, g.Metric+" mean → "+b+" bound")
		}
	}
	if r.Maximize != "" {
		h := r.Maximize + " mean"
		if r.Reps > 1 {
			h += " ± 95%"
		}
		header = append(header, h)
	}
	header = append(header, "meets goal")
	t := report.NewTable(w, 0, header...)
	pts := append([]*Point(nil), r.Points...)
	slices.SortStableFunc(pts, func(a, b *Point) int {
		switch {
		case cheaper(a.X, b.X):
			return -1
		case cheaper(b.X, a.X):
			return 1
		}
		return 0
	})
	for _, pt := range pts {
		row := []string{strconv.Itoa(pt.Order)}
		for _, kv := range pt.Params {
			row = append(row, kv.Value)
		}
		for g, gl := range r.Goals {
			cell := gl.Format(pt.Mean[g])
			if r.Reps > 1 && !math.IsInf(pt.Mean[g], 0) {
				cell += " → " + gl.Format(pt.Bound[g])
			}
			row = append(row, cell)
		}
		if r.Maximize != "" {
			g := Goal{Metric: r.Maximize}
			cell := g.Format(pt.ObjMean)
			if r.Reps > 1 {
				cell += " ± " + g.Format(pt.ObjHalf)
			}
			row = append(row, cell)
		}
		verdict := "yes"
		if !pt.OK {
			verdict = "no: " + strings.Join(r.Missed(pt), ", ")
		}
		row = append(row, verdict)
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  (# is the order in which the points were evaluated)")
	return nil
}
