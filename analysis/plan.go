package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/runner"
)

// PlanOptions say what Plan searches and how.
type PlanOptions struct {
	// Path is the file the experiment was read from, for the text and the
	// messages; its stem names an unnamed experiment.
	Path string
	// Goal is the goal, every clause of which must hold (see ParseGoal).
	Goal []Goal
	// Vary are the settings to search, or Find ("users" or "rate") the
	// load instead: the most users (closed load) or the highest arrival
	// rate (open load) the configuration holds within the goal.
	Vary []*Axis
	Find string
	// Users or Rate, when > 0, run every point at that constant load
	// (load.users or load.rate set and the file's schedule dropped);
	// otherwise the file's load, schedule and all, is used.
	Users int
	Rate  float64
	// Variant is the variant to start from; "" is the file's first.
	Variant string
	// Set is applied at every point, and Duration, when not "", replaces
	// the file's duration.
	Set      []format.Param
	Duration string
	// Reps is the number of replications per point; 0 is the file's, at
	// least 3. Seed, when not nil, replaces the file's seed as the first
	// replication's.
	Reps int
	Seed *uint64
	// Search is how Vary is searched: "auto" (or ""), "bisect" or "grid".
	// Auto bisects one integer range of a capacity setting (Axis.Monotone)
	// and tries a grid otherwise.
	Search string
	// Workers is how many replications run at once; 0 is GOMAXPROCS.
	Workers int
	// Executor runs the replications; nil is runner.Sim{}.
	Executor runner.Executor
}

// The search methods of a PlanResult.
const (
	MethodBisect = "bisect" // bisection over one integer capacity range
	MethodGrid   = "grid"   // every combination of the axes' values
	MethodLoad   = "load"   // the most load: doubling (or halving) to bracket, then bisection
)

// Point is one evaluated configuration.
type Point struct {
	Order  int            // 1-based evaluation order
	Params []format.Param // the searched values (or the load)
	X      []float64      // their numeric values
	Values [][]float64    // per goal clause, per replication
	Mean   []float64      // per goal clause, across replications
	Bound  []float64      // per goal clause: the one-sided confidence bound judged
	OK     bool           // every clause holds
}

// PlanResult is what Plan found, with every point it evaluated.
type PlanResult struct {
	Name, Path string
	Variant    string
	Goals      []Goal
	Axes       []*Axis // the searched settings; none for MethodLoad
	Find       string  // "users" or "rate" for MethodLoad
	Method     string  // MethodBisect, MethodGrid or MethodLoad
	Reps       int
	Seed       uint64        // the first replication's; replication k's is runner.ReplicationSeed(Seed, k)
	Duration   time.Duration // simulated at each point
	// Fixed is applied at every point: PlanOptions.Set, the duration and
	// the constant load; Load says how the load is set.
	Fixed []format.Param
	Load  string
	// Start is, for MethodLoad, the file's peak load, where the search
	// starts.
	Start float64
	// Points are every evaluated configuration, in evaluation order.
	Points []*Point
	// Found says whether anything met the goal; Best is then the answer's
	// point, and Answer its value on the first axis or the load (NaN
	// when there is no answer or, for a grid of several keys, it is not
	// one number). Capped is true when the most load allowed (1e6) meets
	// the goal.
	Found  bool
	Best   *Point
	Answer float64
	Capped bool
	// AnswerText says the answer (or why there is none) in a sentence,
	// AnswerLabel marks it in a picture, and XLabel names the searched
	// value.
	AnswerText, AnswerLabel, XLabel string
}

// A LoadKindError is Plan's error when the options fix or search users
// for an open load, or a rate for a closed one.
type LoadKindError struct {
	Path   string
	Closed bool // the load is closed (users with think time); otherwise open (arrivals per second)
}

func (e *LoadKindError) Error() string {
	if e.Closed {
		return e.Path + ": the load is closed (users with think time): give users, not a rate"
	}
	return e.Path + ": the load is open (arrivals per second): give a rate, not users"
}

// A KeyError is Plan's error when a key of PlanOptions.Vary cannot be set
// in the variant.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string { return "vary " + e.Key + ": " + e.Err.Error() }
func (e *KeyError) Unwrap() error { return e.Err }

// Plan searches x for the smallest setting of opt.Vary that meets
// opt.Goal, or the most load (opt.Find) the configuration holds, by
// simulating. Each point runs opt.Reps replications with the seeds of
// 'tsim run' (the same at every point: common random numbers) on
// opt.Executor, and a clause holds when its one-sided 95% bound across
// them does (Goal.Judge).
//
// Bisection tries the top of the range first (if it misses, nothing in
// the range meets the goal), then the bottom, then the middle of the
// bracket; a grid evaluates every combination and answers the cheapest
// (the smallest in the first key, then the second, ...); the load search
// doubles (or halves) from the file's peak to bracket the answer, then
// bisects to one user or to 1% of the rate.
//
// A result with Found false is not an error. When ctx is cancelled no new
// replication starts and Plan returns an error.
func Plan(ctx context.Context, x *format.Experiment, opt PlanOptions) (*PlanResult, error) {
	search := opt.Search
	if search == "" {
		search = "auto"
	}
	switch {
	case len(opt.Goal) == 0:
		return nil, errors.New("plan: no goal")
	case len(opt.Vary) == 0 && opt.Find == "":
		return nil, errors.New("plan: nothing to search: give Vary or Find")
	case len(opt.Vary) > 0 && opt.Find != "":
		return nil, errors.New("plan: Find searches the load of one configuration, not Vary")
	case opt.Find != "" && opt.Find != "users" && opt.Find != "rate":
		return nil, fmt.Errorf("plan: Find must be users or rate, got %q", opt.Find)
	case opt.Users > 0 && opt.Rate > 0:
		return nil, errors.New("plan: Users and Rate: give one")
	case opt.Find == "users" && opt.Users > 0, opt.Find == "rate" && opt.Rate > 0:
		return nil, fmt.Errorf("plan: Find %s searches the load: do not also fix it", opt.Find)
	case search != "auto" && search != MethodBisect && search != MethodGrid:
		return nil, fmt.Errorf("plan: Search must be auto, bisect or grid, got %q", search)
	case search == MethodBisect && !CanBisect(opt.Vary):
		return nil, errors.New("plan: bisection needs one integer range to vary")
	}
	r := &PlanResult{Name: x.Name, Path: opt.Path, Variant: opt.Variant, Goals: opt.Goal, Axes: opt.Vary, Find: opt.Find,
		Reps: max(x.Replications, 3), Seed: x.Seed, Answer: math.NaN(), Load: "the file's load"}
	if r.Name == "" {
		r.Name = runner.Stem(opt.Path)
	}
	if r.Variant == "" {
		r.Variant = x.Variants[0]
	}
	if opt.Reps > 0 {
		r.Reps = opt.Reps
	}
	if opt.Seed != nil {
		r.Seed = *opt.Seed
	}
	r.Fixed = append(r.Fixed, opt.Set...)
	if opt.Duration != "" {
		r.Fixed = append(r.Fixed, format.Param{Key: "duration", Value: opt.Duration})
	}
	base, err := x.ScenarioWith(r.Variant, r.Fixed, nil)
	if err != nil {
		return nil, err
	}
	r.Duration = base.Topology.Duration
	closed := base.Topology.Load.Kind == model.LoadClosed
	switch {
	case (opt.Users > 0 || opt.Find == "users") && !closed:
		return nil, &LoadKindError{Path: opt.Path, Closed: false}
	case (opt.Rate > 0 || opt.Find == "rate") && closed:
		return nil, &LoadKindError{Path: opt.Path, Closed: true}
	}
	var unset []string
	switch {
	case opt.Users > 0:
		r.Fixed = append(r.Fixed, format.Param{Key: "load.users", Value: strconv.Itoa(opt.Users)})
		unset = append(unset, "load.users_schedule")
		r.Load = fmt.Sprintf("%d users, constant", opt.Users)
	case opt.Rate > 0:
		r.Fixed = append(r.Fixed, format.Param{Key: "load.rate", Value: strconv.FormatFloat(opt.Rate, 'g', -1, 64)})
		unset = append(unset, "load.rate_schedule")
		r.Load = fmt.Sprintf("%s requests/s, constant", report.FmtRate(opt.Rate))
	case opt.Find == "users":
		unset = append(unset, "load.users_schedule")
		r.Load = "users searched, constant at each point"
	case opt.Find == "rate":
		unset = append(unset, "load.rate_schedule")
		r.Load = "rate searched, constant at each point"
	}
	// Every searched key must be settable: try the first value of each.
	for _, a := range opt.Vary {
		if _, err := x.ScenarioWith(r.Variant, append(append([]format.Param(nil), r.Fixed...), format.Param{Key: a.Key, Value: a.Values[0]}), unset); err != nil {
			return nil, &KeyError{Key: a.Key, Err: err}
		}
	}

	ex := opt.Executor
	if ex == nil {
		ex = runner.Sim{}
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if !ex.Parallel() {
		workers = 1
	}
	p := &planner{ctx: ctx, x: x, r: r, unset: unset, ex: ex, workers: workers, cache: map[string]*Point{}}
	switch {
	case opt.Find != "":
		r.Method = MethodLoad
		err = p.findLoad(model.Analyse(&base.Topology))
	case CanBisect(opt.Vary) && (search == MethodBisect || search == "auto" && opt.Vary[0].Monotone()):
		r.Method = MethodBisect
		err = p.bisect(opt.Vary[0])
	default:
		r.Method = MethodGrid
		err = p.grid(opt.Vary)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// planner evaluates points: every replication of a point with the seeds of
// 'tsim run', all in parallel.
type planner struct {
	ctx     context.Context
	x       *format.Experiment
	r       *PlanResult
	unset   []string
	ex      runner.Executor
	workers int
	cache   map[string]*Point
}

func paramsKey(ps []format.Param) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Key + "=" + p.Value + "\x00")
	}
	return b.String()
}

// eval evaluates the given configurations (those not evaluated yet) and
// returns their points.
func (p *planner) eval(configs [][]format.Param, xs [][]float64) ([]*Point, error) {
	r := p.r
	out := make([]*Point, len(configs))
	type job struct {
		pt  *Point
		sc  *format.Scenario
		rep int
	}
	var jobs []job
	for i, ps := range configs {
		if pt := p.cache[paramsKey(ps)]; pt != nil {
			out[i] = pt
			continue
		}
		sc, err := p.x.ScenarioWith(r.Variant, append(append([]format.Param(nil), r.Fixed...), ps...), p.unset)
		if err != nil {
			return nil, err
		}
		pt := &Point{Order: len(r.Points) + 1, Params: ps, X: xs[i], Values: make([][]float64, len(r.Goals))}
		for g := range pt.Values {
			pt.Values[g] = make([]float64, r.Reps)
		}
		r.Points = append(r.Points, pt)
		p.cache[paramsKey(ps)] = pt
		out[i] = pt
		for k := range r.Reps {
			jobs = append(jobs, job{pt, &sc, k})
		}
	}
	ch := make(chan job)
	errs := make(chan error, len(jobs))
	var wg sync.WaitGroup
	for range min(p.workers, max(len(jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if p.ctx.Err() != nil {
					continue
				}
				seed := runner.ReplicationSeed(r.Seed, j.rep)
				run, err := p.ex.Run(p.ctx, &j.sc.Topology, seed, model.Options{NoSeries: true, MaxPoints: 1})
				if err != nil {
					errs <- fmt.Errorf("%s: %s, replication %d (seed %d): %w", r.Path, runner.ScenarioName(r.Variant, j.pt.Params), j.rep+1, seed, err)
					continue
				}
				for g, gl := range r.Goals {
					j.pt.Values[g][j.rep] = gl.Of(run)
				}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	if err := p.ctx.Err(); err != nil {
		return nil, errors.New("interrupted")
	}
	for _, pt := range out {
		if pt.Mean != nil {
			continue
		}
		pt.OK = true
		for g, gl := range r.Goals {
			m, b, ok := gl.Judge(pt.Values[g])
			pt.Mean = append(pt.Mean, m)
			pt.Bound = append(pt.Bound, b)
			pt.OK = pt.OK && ok
		}
	}
	return out, nil
}

func (p *planner) evalOne(ps []format.Param, x float64) (*Point, error) {
	pts, err := p.eval([][]format.Param{ps}, [][]float64{{x}})
	if err != nil {
		return nil, err
	}
	return pts[0], nil
}

// bisect finds the smallest value of an integer axis that meets the goal,
// assuming that a larger value never misses it where a smaller one meets
// it.
func (p *planner) bisect(a *Axis) error {
	r := p.r
	r.XLabel = a.Key
	at := func(v int) (*Point, error) {
		return p.evalOne([]format.Param{{Key: a.Key, Value: strconv.Itoa(v)}}, float64(v))
	}
	found := func(pt *Point) error {
		best := int(pt.X[0])
		r.Found, r.Best, r.Answer = true, pt, pt.X[0]
		r.AnswerLabel = fmt.Sprintf("answer: %d", best)
		r.AnswerText = fmt.Sprintf("%s = %d, the smallest value that meets the goal", a.Key, best)
		if best > a.Lo {
			r.AnswerText += fmt.Sprintf(" (%d misses it)", best-1)
		} else {
			r.AnswerText += " (the bottom of the range)"
		}
		return nil
	}
	hi, err := at(a.Hi)
	if err != nil {
		return err
	}
	if !hi.OK {
		r.AnswerText = fmt.Sprintf("nothing in %d..%d meets the goal: even %s = %d misses it", a.Lo, a.Hi, a.Key, a.Hi)
		return nil
	}
	if a.Lo == a.Hi {
		return found(hi)
	}
	lo, err := at(a.Lo)
	if err != nil {
		return err
	}
	if lo.OK {
		return found(lo)
	}
	l, h := a.Lo, a.Hi // l misses, h meets
	best := hi
	for h-l > 1 {
		m := l + (h-l)/2
		pt, err := at(m)
		if err != nil {
			return err
		}
		if pt.OK {
			h, best = m, pt
		} else {
			l = m
		}
	}
	return found(best)
}

// grid evaluates every combination of the axes' values and answers the
// cheapest that meets the goal: the smallest in the first axis, then the
// second, and so on.
func (p *planner) grid(axes []*Axis) error {
	r := p.r
	r.XLabel = axes[0].Key
	var configs [][]format.Param
	var xs [][]float64
	idx := make([]int, len(axes))
	for {
		var ps []format.Param
		var x []float64
		for i, a := range axes {
			ps = append(ps, format.Param{Key: a.Key, Value: a.Values[idx[i]]})
			x = append(x, a.Nums[idx[i]])
		}
		configs, xs = append(configs, ps), append(xs, x)
		i := len(axes) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(axes[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	pts, err := p.eval(configs, xs)
	if err != nil {
		return err
	}
	var best *Point
	for _, pt := range pts {
		if pt.OK && (best == nil || cheaper(pt.X, best.X)) {
			best = pt
		}
	}
	if best == nil {
		r.AnswerText = "no point of the grid meets the goal"
		return nil
	}
	r.Found, r.Best = true, best
	var kv []string
	for _, ps := range best.Params {
		kv = append(kv, ps.Key+" = "+ps.Value)
	}
	r.AnswerText = strings.Join(kv, ", ") + ", the cheapest point of the grid that meets the goal"
	if len(axes) == 1 {
		r.Answer = best.X[0]
		r.AnswerLabel = "answer: " + best.Params[0].Value
	}
	return nil
}

// cheaper compares two grid points lexicographically.
func cheaper(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// maxLoad is the most users, or requests per second, findLoad tries.
const maxLoad = 1e6

// findLoad finds the most users (or the highest rate) that meets the goal:
// exponential search from the file's peak for a bracket, then bisection,
// to one user or to 1% of the rate.
func (p *planner) findLoad(a model.Analysis) error {
	r := p.r
	users := r.Find == "users"
	key, start, unit := "load.rate", a.Rate, " requests/s"
	r.XLabel = "arrival rate (requests/s)"
	if users {
		key, start, unit = "load.users", a.Users, " users"
		r.XLabel = "users"
	}
	r.Start = start
	fmtLoad := func(v float64) string {
		if users {
			return strconv.Itoa(int(v))
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	at := func(v float64) (*Point, error) {
		return p.evalOne([]format.Param{{Key: key, Value: fmtLoad(v)}}, v)
	}
	found := func(pt *Point, capped bool) error {
		best := pt.X[0]
		r.Found, r.Best, r.Answer, r.Capped = true, pt, best, capped
		r.AnswerLabel = "answer: " + fmtCount(best) + unit
		r.AnswerText = fmt.Sprintf("the configuration holds %s%s within the goal", fmtCount(best), unit)
		switch {
		case capped:
			r.AnswerText += " (the search stops there)"
		case users:
			r.AnswerText += fmt.Sprintf("; at %s it misses", fmtCount(best+1))
		default:
			r.AnswerText += " (to 1%)"
		}
		return nil
	}
	if users {
		start = math.Max(1, math.Round(start))
	}
	pt, err := at(start)
	if err != nil {
		return err
	}
	var lo, hi float64 // lo meets, hi misses
	var best *Point
	if pt.OK {
		lo, best = start, pt
		for {
			next := math.Min(2*lo, maxLoad)
			if next == lo {
				return found(best, true)
			}
			pt, err := at(next)
			if err != nil {
				return err
			}
			if !pt.OK {
				hi = next
				break
			}
			lo, best = next, pt
		}
	} else {
		hi = start
		smallest := 1.0
		if !users {
			smallest = start / 1024
		}
		for {
			next := hi / 2
			if users {
				next = math.Floor(next)
			}
			if next < smallest {
				r.AnswerText = "even the smallest load tried misses the goal"
				return nil
			}
			pt, err := at(next)
			if err != nil {
				return err
			}
			if pt.OK {
				lo, best = next, pt
				break
			}
			hi = next
		}
	}
	for {
		if users && hi-lo <= 1 {
			break
		}
		if !users && hi/lo <= 1.01 {
			break
		}
		m := (lo + hi) / 2
		if users {
			m = math.Floor(m)
		} else {
			m, _ = strconv.ParseFloat(fmtLoad(m), 64)
		}
		pt, err := at(m)
		if err != nil {
			return err
		}
		if pt.OK {
			lo, best = m, pt
		} else {
			hi = m
		}
	}
	return found(best, false)
}
