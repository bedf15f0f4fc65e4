package tsim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/results"
)

// PlanOptions say what Plan searches; see analysis.PlanOptions (Path is
// the experiment's).
type PlanOptions = analysis.PlanOptions

// PlanResult is what Plan found, with every point it evaluated; see
// analysis.PlanResult. Its WriteText prints what tsim plan prints.
type PlanResult struct {
	*analysis.PlanResult
}

// ErrInterrupted is Plan's error when ctx was cancelled; the result then
// holds the points evaluated.
var ErrInterrupted = analysis.ErrInterrupted

// Goal is one clause of a goal such as "p99<2s,timeouts=0"; see
// analysis.ParseGoal.
type Goal = analysis.Goal

// ParseGoal reads a goal (tsim plan --goal).
func ParseGoal(s string) ([]Goal, error) { return analysis.ParseGoal(s) }

// Axis is one setting Plan varies (tsim plan --vary KEY=LO..HI).
type Axis = analysis.Axis

// ParseVary reads a --vary KEY=LO..HI or KEY=A,B,C.
func ParseVary(s string) (*Axis, error) { return analysis.ParseVary(s) }

// ParseVaries reads tsim plan's --vary flags, each given once.
func ParseVaries(vs []string) ([]*Axis, error) {
	var axes []*Axis
	for _, v := range vs {
		a, err := ParseVary(v)
		if err != nil {
			return nil, fmt.Errorf("--vary %v", err)
		}
		for _, b := range axes {
			if b.Key == a.Key {
				return nil, fmt.Errorf("--vary %s given twice", a.Key)
			}
		}
		axes = append(axes, a)
	}
	return axes, nil
}

// ParseSets reads --set KEY=VALUE flags.
func ParseSets(sets []string) ([]Param, error) {
	var ps []Param
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--set %q: want KEY=VALUE", s)
		}
		ps = append(ps, Param{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
	}
	return ps, nil
}

// CanBisect reports whether axes can be searched by bisection.
func CanBisect(axes []*Axis) bool { return analysis.CanBisect(axes) }

// Plan searches for the smallest setting that meets a goal (bisection on
// capacity settings, a grid otherwise), or for the most users or the
// highest rate a configuration holds, judging goals on one-sided 95%
// bounds across replications. When ctx is cancelled it returns, with the
// error, what it found so far (nil when it evaluated nothing): the points
// it evaluated.
func Plan(ctx context.Context, e *Experiment, opt PlanOptions) (*PlanResult, error) {
	if opt.Path == "" {
		opt.Path = e.Path()
	}
	r, err := analysis.Plan(ctx, e.l.X, opt)
	var lk *analysis.LoadKindError
	var ke *analysis.KeyError
	switch {
	case errors.As(err, &lk) && lk.Closed:
		err = fmt.Errorf("%s: the load is closed (users with think time); use --users or --find users", lk.Path)
	case errors.As(err, &lk):
		err = fmt.Errorf("%s: the load is open (arrivals per second); use --rate or --find rate", lk.Path)
	case errors.As(err, &ke):
		err = fmt.Errorf("--vary: %v", ke.Err)
	}
	if r == nil {
		return nil, err
	}
	return &PlanResult{r}, err
}

// WriteFiles writes plan.png (in out's formats), the search (a panel per
// clause of the goal, the metric against the first searched value), and
// plan.html, the goal, every evaluated point and the search as
// interactive charts, into out; warnings say why the picture was not
// drawn.
func (r *PlanResult) WriteFiles(out *Output) (written, warnings []string, err error) {
	pic := picture{stem: "plan"}
	fig, err := planFigure(r.PlanResult)
	if err != nil {
		warnings = append(warnings, fmt.Sprintf("plan.png not drawn: %v", err))
	} else {
		pic.pages = []*plots.Figure{fig}
	}
	if written, err = writePictures(out, pic); err != nil {
		return written, warnings, err
	}
	if err := writePage(out, htmlreport.PlanFileName, htmlreport.PlanPage(planPage(r.PlanResult))); err != nil {
		return written, warnings, err
	}
	return append(written, htmlreport.PlanFileName), warnings, nil
}

// planFigure draws the search: a panel per clause, the metric against the
// first searched value (a line per value of the second key, if any).
func planFigure(r *analysis.PlanResult) (*plots.Figure, error) {
	if len(r.Axes) > 0 && !r.Axes[0].Numeric() {
		return nil, fmt.Errorf("%s is not numeric", r.Axes[0].Key)
	}
	var panels []plots.PlanPanel
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range r.Points {
		lo, hi = math.Min(lo, pt.X[0]), math.Max(hi, pt.X[0])
	}
	for g, gl := range r.Goals {
		label, scale := gl.Axis()
		pn := plots.PlanPanel{Metric: label, Goal: gl.Limit * scale, GoalLabel: "goal: " + gl.Text}
		byLabel := map[string]int{}
		for _, pt := range r.Points {
			if math.IsInf(pt.Mean[g], 0) {
				continue // no request completed: no latency to draw
			}
			var parts []string
			for _, kv := range pt.Params[1:] {
				parts = append(parts, results.ShortKey(kv.Key)+"="+kv.Value)
			}
			l := strings.Join(parts, ", ")
			i, ok := byLabel[l]
			if !ok {
				i = len(pn.Series)
				byLabel[l] = i
				pn.Series = append(pn.Series, plots.PlanSeries{Label: l})
			}
			s := &pn.Series[i]
			s.X = append(s.X, pt.X[0])
			s.Y = append(s.Y, pt.Mean[g]*scale)
			s.Bound = append(s.Bound, pt.Bound[g]*scale)
			s.OK = append(s.OK, pt.OK)
		}
		if len(pn.Series) > 0 {
			panels = append(panels, pn)
		}
	}
	if r.Maximize != "" && r.Best != nil {
		// The maximised metric, its peak drawn as the line.
		g := analysis.Goal{Metric: r.Maximize}
		label, _ := g.Axis()
		pn := plots.PlanPanel{Metric: label, Goal: r.Best.ObjMean, GoalLabel: "peak: " + g.Format(r.Best.ObjMean)}
		var s plots.PlanSeries
		for _, pt := range r.Points {
			s.X, s.Y = append(s.X, pt.X[0]), append(s.Y, pt.ObjMean)
			s.Bound, s.OK = append(s.Bound, pt.ObjMean-pt.ObjHalf), append(s.OK, pt.OK)
		}
		pn.Series = []plots.PlanSeries{s}
		panels = append([]plots.PlanPanel{pn}, panels...)
	}
	what := analysis.GoalText(r.Goals, ", ")
	if r.Maximize != "" {
		what = "the most " + r.Maximize
		if len(r.Goals) > 0 {
			what += " with " + analysis.GoalText(r.Goals, ", ")
		}
	}
	title := fmt.Sprintf("%s: plan for %s, variant %s", r.Name, what, r.Variant)
	return plots.Plan(title, r.XLabel, lo > 0 && hi/lo >= 20, panels, r.Answer, r.AnswerLabel)
}
