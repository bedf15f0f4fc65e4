package analysis

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
	"github.com/tsim-dev/tsim/sim"
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

	// MaxLoad, when > 0, is the most load Find tries (users, or requests
	// per second); 0 lets LoadCap choose it from the operational laws.
	MaxLoad float64
	// Maximize, when not "", searches the one axis of Vary for the value
	// with the highest mean of this metric, "goodput" or "throughput",
	// among the values that meet Goal (which may then be empty): the peak
	// of the curve, not the smallest value that meets a goal.
	Maximize string
	// OnPoint, when not nil, is called with each point as soon as its
	// replications have all run and it is judged, from the goroutine
	// that called Plan, in the order the points finish (Point.Order and
	// PlanResult.Points keep the order in which they were started). A
	// command prints the search as it goes with it.
	OnPoint func(*Point)
	// Warn, when not nil, receives what Plan warns about before it
	// searches: a grid of more than MaxQuietGrid points, tried one by one.
	Warn func(string)
}

// MaxQuietGrid is the largest grid Plan searches without a warning.
const MaxQuietGrid = 256

// ErrInterrupted is Plan's error when its context is cancelled: the
// result returned with it holds the points that finished.
var ErrInterrupted = errors.New("interrupted")

// The search methods of a PlanResult.
const (
	MethodBisect = "bisect"   // bisection over one integer capacity range, or a long list of its values
	MethodGrid   = "grid"     // every combination of the axes' values
	MethodLoad   = "load"     // the most load: doubling (or halving) to bracket, then bisection
	MethodMax    = "maximize" // the value with the highest mean of a metric: the grid, then a bisection on the slope around its best
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
	// Objective, when the search maximises a metric (PlanOptions.Maximize),
	// is its value per replication, ObjMean their mean and ObjHalf the
	// 95% Student t half-width of the mean (0 with one replication).
	Objective        []float64
	ObjMean, ObjHalf float64

	left int // replications not run yet
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
	// starts; Cap the most load it tries and CapWhy how Cap was chosen.
	Start  float64
	Cap    float64
	CapWhy string
	// Maximize is the metric maximised (MethodMax), or "", and USL the
	// Universal Scalability Law fitted to the evaluated points' means
	// (nil when it could not be: fewer than 3 values, one below 1).
	Maximize string
	USL      *results.USL
	// Points are every evaluated configuration, in evaluation order.
	Points []*Point
	// Found says whether anything met the goal; Best is then the answer's
	// point, and Answer its value on the first axis or the load (NaN
	// when there is no answer or, for a grid of several keys, it is not
	// one number). Capped is true when the most load tried (Cap) meets
	// the goal: the goal holds up to the cap.
	Found  bool
	Best   *Point
	Answer float64
	Capped bool
	// Interrupted is true when the context was cancelled: Points are
	// those that finished, and there is no answer.
	Interrupted bool
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
	case opt.Maximize != "" && opt.Maximize != "goodput" && opt.Maximize != "throughput":
		return nil, fmt.Errorf("plan: Maximize must be goodput or throughput, got %s", excerpt(opt.Maximize))
	case opt.Maximize != "" && (len(opt.Vary) != 1 || opt.Find != ""):
		return nil, errors.New("plan: Maximize searches one setting: give one Vary (and no Find)")
	case opt.Maximize != "" && !opt.Vary[0].Numeric():
		return nil, fmt.Errorf("plan: Maximize needs numeric values of %s", opt.Vary[0].Key)
	case len(opt.Goal) == 0 && opt.Maximize == "":
		return nil, errors.New("plan: no goal")
	case !(opt.MaxLoad >= 0) || math.IsInf(opt.MaxLoad, 0):
		return nil, fmt.Errorf("plan: MaxLoad must be a finite number ≥ 0 (0: chosen from the bounds), got %v", opt.MaxLoad)
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
		Reps: max(x.Replications, 3), Seed: x.Seed, Answer: math.NaN(), Load: "the file's load", Maximize: opt.Maximize}
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
		r.Load = fmt.Sprintf("%s requests/s, constant", results.FmtRate(opt.Rate))
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
	p := &planner{ctx: ctx, x: x, r: r, unset: unset, ex: ex, workers: workers, cache: map[string]*Point{}, onPoint: opt.OnPoint}
	switch {
	case opt.Find != "":
		r.Method = MethodLoad
		err = p.findLoad(model.Analyse(&base.Topology), opt.MaxLoad)
	case opt.Maximize != "":
		r.Method = MethodMax
		err = p.maximize(opt.Vary[0])
	case CanBisect(opt.Vary) && (search == MethodBisect || search == "auto" && opt.Vary[0].Monotone()):
		r.Method = MethodBisect
		err = p.bisect(opt.Vary[0])
	case search == "auto" && len(opt.Vary) == 1 && opt.Vary[0].Monotone() && len(opt.Vary[0].Values) > 16 && opt.Vary[0].Numeric():
		// A long list of a capacity setting: bisected over its values in
		// order, not tried one by one.
		r.Method = MethodBisect
		err = p.bisectList(opt.Vary[0])
	default:
		r.Method = MethodGrid
		if n := gridSize(opt.Vary); n > MaxQuietGrid && opt.Warn != nil {
			opt.Warn(fmt.Sprintf("the grid has %s points, each simulated %d times (about %s requests in all): every point is tried, one after the other%s",
				fmtCount(n), r.Reps, fmtCount(n*float64(r.Reps)*base.EstimatedRequests()), gridAdvice(opt.Vary)))
		}
		err = p.grid(opt.Vary)
	}
	if errors.Is(err, ErrInterrupted) {
		// Keep what finished: the points whose replications all ran.
		done := r.Points[:0]
		for _, pt := range r.Points {
			if pt.Mean != nil {
				done = append(done, pt)
			}
		}
		r.Points, r.Interrupted = done, true
		r.Found, r.Best, r.Answer, r.Capped, r.AnswerLabel = false, nil, math.NaN(), false, ""
		r.AnswerText = fmt.Sprintf("interrupted after %d finished points", len(done))
		return r, ErrInterrupted
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// gridSize is the number of points of a grid of axes.
func gridSize(axes []*Axis) float64 {
	n := 1.0
	for _, a := range axes {
		n *= float64(len(a.Values))
	}
	return n
}

// gridAdvice says how a big grid could be made smaller.
func gridAdvice(axes []*Axis) string {
	for _, a := range axes {
		if len(a.Values) > 16 && !a.Ints {
			if a.Monotone() && len(axes) == 1 {
				return "; a list of a capacity setting is bisected with --search auto"
			}
			return fmt.Sprintf("; a range (%s=LO..HI) tries LO, the powers of two between and HI", a.Key)
		}
	}
	return ""
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
	onPoint func(*Point)
}

func paramsKey(ps []format.Param) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Key + "=" + p.Value + "\x00")
	}
	return b.String()
}

// eval evaluates the given configurations (those not evaluated yet) and
// returns their points. Each point is judged, and given to onPoint, as
// soon as its replications have all run. A cancelled context starts no
// new replication and returns ErrInterrupted once those under way end.
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
		pt := &Point{Order: len(r.Points) + 1, Params: ps, X: xs[i], Values: make([][]float64, len(r.Goals)), left: r.Reps}
		for g := range pt.Values {
			pt.Values[g] = make([]float64, r.Reps)
		}
		if r.Maximize != "" {
			pt.Objective = make([]float64, r.Reps)
		}
		r.Points = append(r.Points, pt)
		p.cache[paramsKey(ps)] = pt
		out[i] = pt
		for k := range r.Reps {
			jobs = append(jobs, job{pt, &sc, k})
		}
	}
	if len(jobs) == 0 {
		return out, nil
	}
	type failure struct {
		job int
		err error
	}
	ch := make(chan int)
	finished := make(chan *Point)
	failed := make(chan failure, len(jobs))
	var mu sync.Mutex // guards Point.left
	var wg sync.WaitGroup
	for range min(p.workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ji := range ch {
				j := jobs[ji]
				seed := runner.ReplicationSeed(r.Seed, j.rep)
				run, err := p.ex.Run(p.ctx, &j.sc.Topology, seed, model.Options{NoSeries: true, MaxPoints: 1})
				if err == nil && p.ctx.Err() != nil {
					err = ErrInterrupted // a run cut short is no replication
				}
				if err != nil {
					failed <- failure{ji, fmt.Errorf("%s: %s, replication %d (seed %d): %w", r.Path, runner.ScenarioName(r.Variant, j.pt.Params), j.rep+1, seed, err)}
					continue
				}
				for g, gl := range r.Goals {
					j.pt.Values[g][j.rep] = gl.Of(run)
				}
				if r.Maximize != "" {
					j.pt.Objective[j.rep] = Goal{Metric: r.Maximize}.Of(run)
				}
				mu.Lock()
				j.pt.left--
				last := j.pt.left == 0
				mu.Unlock()
				if last {
					finished <- j.pt
				}
			}
		}()
	}
	go func() {
		defer close(ch)
		for ji := range jobs {
			select {
			case ch <- ji:
			case <-p.ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(finished)
	}()
	for pt := range finished {
		p.judge(pt)
		if p.onPoint != nil {
			p.onPoint(pt)
		}
	}
	close(failed)
	first := failure{job: len(jobs)}
	for f := range failed {
		if f.job < first.job && !errors.Is(f.err, ErrInterrupted) && p.ctx.Err() == nil {
			first = f
		}
	}
	if p.ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	if first.err != nil {
		return nil, first.err
	}
	return out, nil
}

// judge sets a point's means and bounds, and whether it meets the goal.
func (p *planner) judge(pt *Point) {
	r := p.r
	pt.OK = true
	pt.Mean, pt.Bound = make([]float64, 0, len(r.Goals)), make([]float64, 0, len(r.Goals))
	for g, gl := range r.Goals {
		m, b, ok := gl.Judge(pt.Values[g])
		pt.Mean = append(pt.Mean, m)
		pt.Bound = append(pt.Bound, b)
		pt.OK = pt.OK && ok
	}
	if r.Maximize != "" {
		var t sim.Tally
		for _, v := range pt.Objective {
			t.Add(v)
		}
		pt.ObjMean = t.Mean()
		if n := len(pt.Objective); n > 1 {
			pt.ObjHalf = sim.TQuantile(0.95, n-1) * math.Sqrt(t.Variance()/float64(n))
		}
	}
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
	at := func(i int) (string, float64) { v := a.Lo + i; return strconv.Itoa(v), float64(v) }
	return p.bisectOver(a.Key, a.Hi-a.Lo+1, at, func(best int) {
		v := a.Lo + best
		r.AnswerLabel = fmt.Sprintf("answer: %d", v)
		r.AnswerText = fmt.Sprintf("%s = %d, the smallest value that meets the goal", a.Key, v)
		if best > 0 {
			r.AnswerText += fmt.Sprintf(" (%d misses it)", v-1)
		} else {
			r.AnswerText += " (the bottom of the range)"
		}
	}, fmt.Sprintf("nothing in %d..%d meets the goal: even %s = %d misses it", a.Lo, a.Hi, a.Key, a.Hi))
}

// bisectList finds the smallest of a list of values of a capacity setting
// that meets the goal, as bisect does over a range: the values sorted,
// the largest tried first, then the smallest, then the middle of the
// bracket.
func (p *planner) bisectList(a *Axis) error {
	r := p.r
	idx := make([]int, len(a.Values))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(a.Nums[i], a.Nums[j]) })
	at := func(i int) (string, float64) { return a.Values[idx[i]], a.Nums[idx[i]] }
	last := a.Values[idx[len(idx)-1]]
	return p.bisectOver(a.Key, len(idx), at, func(best int) {
		v, _ := at(best)
		r.AnswerLabel = "answer: " + v
		r.AnswerText = fmt.Sprintf("%s = %s, the smallest of the %d listed values that meets the goal", a.Key, v, len(idx))
		if best > 0 {
			below, _ := at(best - 1)
			r.AnswerText += fmt.Sprintf(" (%s misses it)", below)
		} else {
			r.AnswerText += " (the smallest listed)"
		}
	}, fmt.Sprintf("none of the %d listed values meets the goal: even %s = %s misses it", len(idx), a.Key, last))
}

// bisectOver bisects n ordered values of key (at gives the i-th, as
// written and as a number) for the smallest that meets the goal; found
// says the answer, whose index it is given; none is the answer text when
// even the largest misses.
func (p *planner) bisectOver(key string, n int, at func(i int) (string, float64), found func(best int), none string) error {
	r := p.r
	r.XLabel = key
	eval := func(i int) (*Point, error) {
		v, x := at(i)
		return p.evalOne([]format.Param{{Key: key, Value: v}}, x)
	}
	answer := func(pt *Point, i int) error {
		r.Found, r.Best, r.Answer = true, pt, pt.X[0]
		found(i)
		return nil
	}
	hi, err := eval(n - 1)
	if err != nil {
		return err
	}
	if !hi.OK {
		r.AnswerText = none
		return nil
	}
	if n == 1 {
		return answer(hi, 0)
	}
	lo, err := eval(0)
	if err != nil {
		return err
	}
	if lo.OK {
		return answer(lo, 0)
	}
	l, h := 0, n-1 // l misses, h meets
	best := hi
	for h-l > 1 {
		m := l + (h-l)/2
		pt, err := eval(m)
		if err != nil {
			return err
		}
		if pt.OK {
			h, best = m, pt
		} else {
			l = m
		}
	}
	return answer(best, h)
}

// maximize finds the value of one numeric axis with the highest mean of
// the metric r.Maximize among the values that meet the goal: every value
// of the axis's grid first (for a range: LO, the powers of two between
// and HI), then, for an integer range, a bisection on the slope between
// the best value's neighbours (is the metric at m below that at m+1?),
// assuming the curve rises to one peak and falls (or flattens) past it.
// The answer is the best of every evaluated value; with noise near a flat
// peak, any value within the confidence interval of the best is as good.
func (p *planner) maximize(a *Axis) error {
	r := p.r
	r.XLabel = a.Key
	var configs [][]format.Param
	var xs [][]float64
	for i, v := range a.Values {
		configs = append(configs, []format.Param{{Key: a.Key, Value: v}})
		xs = append(xs, []float64{a.Nums[i]})
	}
	pts, err := p.eval(configs, xs)
	if err != nil {
		return err
	}
	score := func(pt *Point) float64 {
		if !pt.OK {
			return math.Inf(-1)
		}
		return pt.ObjMean
	}
	best := bestOf(pts, score)
	if best == nil {
		r.AnswerText = "no value of " + a.Key + " meets the goal"
		return nil
	}
	if a.Ints {
		// The neighbours of the best grid value bracket the peak.
		sorted := slices.Clone(pts)
		slices.SortStableFunc(sorted, func(x, y *Point) int { return cmp.Compare(x.X[0], y.X[0]) })
		k := slices.Index(sorted, best)
		l, h := int(best.X[0]), int(best.X[0])
		if k > 0 {
			l = int(sorted[k-1].X[0])
		}
		if k+1 < len(sorted) {
			h = int(sorted[k+1].X[0])
		}
		at := func(v int) (*Point, error) {
			return p.evalOne([]format.Param{{Key: a.Key, Value: strconv.Itoa(v)}}, float64(v))
		}
		for h-l > 1 {
			m := l + (h-l)/2
			pm, err := at(m)
			if err != nil {
				return err
			}
			pn, err := at(m + 1)
			if err != nil {
				return err
			}
			if score(pm) < score(pn) {
				l = m + 1
			} else {
				h = m
			}
		}
		if _, err := at(l); err != nil {
			return err
		}
		best = bestOf(r.Points, score)
	}
	r.Found, r.Best, r.Answer = true, best, best.X[0]
	v := best.Params[0].Value
	g := Goal{Metric: r.Maximize}
	r.AnswerLabel = "peak: " + v
	r.AnswerText = fmt.Sprintf("%s = %s gives the most %s of the values tried, %s (± %s, 95%%)", a.Key, v, r.Maximize, g.Format(best.ObjMean), g.Format(best.ObjHalf))
	if len(r.Goals) > 0 {
		r.AnswerText += " among those that meet the goal"
	}
	// The smallest value as good within the best's interval: where the
	// curve flattens.
	var knee *Point
	for _, pt := range r.Points {
		if pt.OK && pt.ObjMean >= best.ObjMean-best.ObjHalf && (knee == nil || pt.X[0] < knee.X[0]) {
			knee = pt
		}
	}
	if knee != nil && knee.X[0] < best.X[0] {
		r.AnswerText += fmt.Sprintf("; from %s = %s the %s is within that interval of it", a.Key, knee.Params[0].Value, r.Maximize)
	}
	// The law fitted to the means: where the curve's peak lies between
	// the points tried, and how sure that is.
	var curve []results.USLPoint
	for _, pt := range r.Points {
		if pt.ObjMean > 0 {
			curve = append(curve, results.USLPoint{X: pt.X[0], Y: pt.ObjMean, YLo: math.Max(pt.ObjMean-pt.ObjHalf, 0), YHi: pt.ObjMean + pt.ObjHalf})
		}
	}
	slices.SortStableFunc(curve, func(p, q results.USLPoint) int { return cmp.Compare(p.X, q.X) })
	if u, err := FitUSL(curve); err == nil {
		u.XLabel, u.YLabel = a.Key, g.Metric+" (requests/s)"
		r.USL = u
		if u.NStar > 0 {
			r.AnswerText += fmt.Sprintf("; the Universal Scalability Law fitted to the points puts the peak at %s = %.3g", a.Key, u.NStar)
			if !u.NStarCI.None() {
				r.AnswerText += fmt.Sprintf(" [%.3g, %.3g]", u.NStarCI.Lo, u.NStarCI.Hi)
			}
			r.AnswerText += fmt.Sprintf(" (σ = %.3g, κ = %.3g, R² = %.3f)", u.Sigma, u.Kappa, u.R2)
		} else {
			r.AnswerText += fmt.Sprintf("; the Universal Scalability Law fitted to the points finds no peak (σ = %.3g, κ ≈ 0, R² = %.3f)", u.Sigma, u.R2)
		}
	}
	lo, hi := slices.Min(a.Nums), slices.Max(a.Nums)
	switch best.X[0] {
	case hi:
		r.AnswerText += "; it is the largest value tried: the " + r.Maximize + " may rise beyond it"
	case lo:
		r.AnswerText += "; it is the smallest value tried"
	}
	return nil
}

// bestOf is the point of highest score, the first (in evaluation order)
// of the smallest value among equals; nil when every score is −Inf.
func bestOf(pts []*Point, score func(*Point) float64) *Point {
	var best *Point
	for _, pt := range pts {
		sc := score(pt)
		if math.IsInf(sc, -1) {
			continue
		}
		if best == nil || sc > score(best) || sc == score(best) && pt.X[0] < best.X[0] {
			best = pt
		}
	}
	return best
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

// maxLoad is the most users, or requests per second, findLoad ever
// tries, whatever the cap.
const maxLoad = 1e6

// LoadCap is the most load the search for it (PlanOptions.Find) tries
// unless told otherwise, and why: 4 × the load at which the binding
// throttle saturates by the operational laws (SaturatesAt), and at least
// twice the file's peak (start) — past saturation throughput cannot grow,
// so a goal that still holds at four times it does not depend on the
// load, and the search stops there with the verdict that the goal holds
// up to the cap. Without a binding throttle, 1,024 × the peak. Never
// more than 10^6; users are whole.
func LoadCap(a model.Analysis, start float64, users bool) (limit float64, why string) {
	unit := " requests/s"
	if users {
		unit = " users"
	}
	sat := a.SaturatesAt
	switch {
	case a.Binding != nil && sat > 0 && !math.IsInf(sat, 0):
		limit = 4 * sat
		why = fmt.Sprintf("4 × the %s%s at which %s saturates by the operational laws", fmtCount(sat), unit, a.Binding.Throttle)
		if 2*start > limit {
			limit, why = 2*start, "2 × the file's peak, above 4 × the load at which "+a.Binding.Throttle+" saturates"
		}
	default:
		limit, why = 1024*start, "1,024 × the file's peak: no throttle binds by the operational laws"
	}
	if limit > maxLoad {
		limit, why = maxLoad, fmt.Sprintf("the most tsim plan tries, %s%s", fmtCount(maxLoad), unit)
	}
	if users {
		limit = math.Max(1, math.Ceil(limit))
	}
	return limit, why
}

// findLoad finds the most users (or the highest rate) that meets the goal:
// exponential search from the file's peak for a bracket, then bisection,
// to one user or to 1% of the rate, up to a cap (maxLoad, when > 0, or
// LoadCap).
func (p *planner) findLoad(a model.Analysis, maxLoad float64) error {
	r := p.r
	users := r.Find == "users"
	key, start, unit := "load.rate", a.Rate, " requests/s"
	r.XLabel = "arrival rate (requests/s)"
	if users {
		key, start, unit = "load.users", a.Users, " users"
		r.XLabel = "users"
	}
	r.Start = start
	if maxLoad > 0 {
		r.Cap, r.CapWhy = maxLoad, "as given"
		if users {
			r.Cap = math.Max(1, math.Floor(maxLoad))
		}
	} else {
		r.Cap, r.CapWhy = LoadCap(a, start, users)
	}
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
			r.AnswerText = fmt.Sprintf("the goal holds up to the cap: %s%s, the most the search tries (%s); it may hold beyond (--max-load)",
				fmtCount(best), unit, r.CapWhy)
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
	start = math.Min(start, r.Cap)
	pt, err := at(start)
	if err != nil {
		return err
	}
	var lo, hi float64 // lo meets, hi misses
	var best *Point
	if pt.OK {
		lo, best = start, pt
		for {
			next := math.Min(2*lo, r.Cap)
			if next <= lo {
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
