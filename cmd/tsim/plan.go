package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/runner"
)

var cmdPlan = &command{
	Name:      "plan",
	UsageLine: "FILE --goal GOAL (--vary KEY=LO..HI... | --find users|rate [--max-load L]) [--maximize goodput|throughput] [--users N | --rate R] [--variant NAME] [--set KEY=VALUE]... [--reps N] [--seed N] [--search auto|bisect|grid] [--duration D] [-o DIR] [--quiet]",
	Short:     "find the smallest settings that meet a goal, or the most load a setting holds",
	Long:      helpText("plan"),
	Run:       runPlan,
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runPlan(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	allowOutside(fs)
	goalFlag := fs.String("goal", "", "")
	var varies, sets multiFlag
	fs.Var(&varies, "vary", "")
	fs.Var(&sets, "set", "")
	find := fs.String("find", "", "")
	users := fs.Int("users", 0, "")
	rate := fs.Float64("rate", 0, "")
	variant := fs.String("variant", "", "")
	reps := fs.Int("reps", 0, "")
	seed := fs.Uint64("seed", 0, "")
	search := fs.String("search", "auto", "")
	duration := fs.String("duration", "", "")
	outDir := fs.String("o", "out", "")
	quiet := fs.Bool("quiet", false, "")
	maxLoad := fs.Float64("max-load", 0, "")
	maximize := fs.String("maximize", "", "")
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	switch {
	case len(files) == 0:
		return c.usageError(e, "no experiment file given")
	case len(files) > 1:
		return c.usageError(e, "one experiment file at a time, got %d", len(files))
	case *goalFlag == "" && *maximize == "":
		return c.usageError(e, "no --goal given (such as --goal \"p99<1s,timeouts<0.1%%\")")
	case *maximize != "" && *maximize != "goodput" && *maximize != "throughput":
		return c.usageError(e, "--maximize must be goodput or throughput, got %q", *maximize)
	case *maximize != "" && (len(varies) != 1 || *find != ""):
		return c.usageError(e, "--maximize searches one setting: give one --vary KEY=LO..HI (and no --find)")
	case set["max-load"] && (*find == "" || !(*maxLoad > 0) || math.IsInf(*maxLoad, 0)):
		return c.usageError(e, "--max-load bounds --find: give it with --find, a number > 0, got %v", *maxLoad)
	case len(varies) == 0 && *find == "":
		return c.usageError(e, "nothing to search: give --vary KEY=LO..HI, or --find users (or rate)")
	case len(varies) > 0 && *find != "":
		return c.usageError(e, "--find searches the load of one configuration: give it with --variant and --set, not --vary")
	case *find != "" && *find != "users" && *find != "rate":
		return c.usageError(e, "--find must be users or rate, got %q", *find)
	case set["users"] && set["rate"]:
		return c.usageError(e, "--users and --rate: give one (users for closed loads, rate for open ones)")
	case set["users"] && *users < 1:
		return c.usageError(e, "--users must be at least 1, got %d", *users)
	case set["rate"] && !(*rate > 0):
		return c.usageError(e, "--rate must be > 0, got %v", *rate)
	case *find == "users" && set["users"], *find == "rate" && set["rate"]:
		return c.usageError(e, "--find %s searches the load: do not also fix it with --%s", *find, *find)
	case set["reps"] && format.CheckReplications(*reps) != nil:
		return c.usageError(e, "--reps %v", format.CheckReplications(*reps))
	case *search != "auto" && *search != "bisect" && *search != "grid":
		return c.usageError(e, "--search must be auto, bisect or grid, got %q", *search)
	}
	opt := analysis.PlanOptions{Find: *find, Users: *users, Rate: *rate, Variant: *variant, Reps: *reps, Duration: *duration,
		Search: *search, Workers: numWorkers(), MaxLoad: *maxLoad, Maximize: *maximize,
		Warn: func(s string) { c.errorf(e, "warning: %s", s) }}
	var err error
	if *goalFlag != "" {
		if opt.Goal, err = analysis.ParseGoal(*goalFlag); err != nil {
			return c.usageError(e, "%v", err)
		}
	}
	for _, v := range varies {
		a, err := analysis.ParseVary(v)
		if err != nil {
			return c.usageError(e, "--vary %v", err)
		}
		for _, b := range opt.Vary {
			if b.Key == a.Key {
				return c.usageError(e, "--vary %s given twice", a.Key)
			}
		}
		opt.Vary = append(opt.Vary, a)
	}
	if *search == "bisect" && !analysis.CanBisect(opt.Vary) {
		return c.usageError(e, "--search bisect needs one --vary with an integer range (KEY=LO..HI)")
	}

	opt.Path = files[0]
	x, err := runner.LoadFile(opt.Path, inputOptions(fs))
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	if set["seed"] {
		opt.Seed = seed
	}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return c.usageError(e, "--set %q: want KEY=VALUE", s)
		}
		opt.Set = append(opt.Set, format.Param{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
	}
	r, err := analysis.Plan(ctx, x, opt)
	if errors.Is(err, analysis.ErrInterrupted) && r != nil {
		// What finished is printed: the points evaluated before the signal.
		var out bytes.Buffer
		if werr := r.WriteText(&out); werr == nil {
			e.stdout.Write(out.Bytes())
		}
		c.errorf(e, "interrupted; the points that finished are above")
		return exitFailure
	}
	var lk *analysis.LoadKindError
	var ke *analysis.KeyError
	switch {
	case errors.As(err, &lk) && lk.Closed:
		c.errorf(e, "%s: the load is closed (users with think time); use --users or --find users", lk.Path)
	case errors.As(err, &lk):
		c.errorf(e, "%s: the load is open (arrivals per second); use --rate or --find rate", lk.Path)
	case errors.As(err, &ke):
		c.errorf(e, "--vary: %v", ke.Err)
	case err != nil:
		c.errorf(e, "%v", err)
	}
	if err != nil {
		return exitFailure
	}
	var out bytes.Buffer
	if err := r.WriteText(&out); err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	fig, err := planFigure(r)
	if err != nil {
		fmt.Fprintf(&out, "plan.png not drawn: %v\n", err)
	} else {
		written, err := report.WriteFigure(filepath.Join(*outDir, runner.Stem(opt.Path)), "plan.png", fig)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		if !*quiet {
			fmt.Fprintf(&out, "wrote %s\n", written)
		}
	}
	e.stdout.Write(out.Bytes())
	if !r.Found {
		return exitFailure
	}
	return exitOK
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
				parts = append(parts, report.ShortKey(kv.Key)+"="+kv.Value)
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
