package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/runner"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// Options adjust a fit; the zero value fits as the specification says.
type Options struct {
	// HoldOut names targets the fit leaves out and predicts, as if they
	// said use = "predict".
	HoldOut []string
	// MaxEvaluations, Replications and Seed replace the specification's
	// (and the experiment's) when > 0.
	MaxEvaluations int
	Replications   int
	Seed           uint64
	// Workers is how many runs go at once; 0 is GOMAXPROCS.
	Workers int
	// ReadFile reads the files the experiment names (a topology by path,
	// an empirical distribution), relative to it, to check the fitted
	// experiment; nil: the experiment names none.
	ReadFile func(name string) ([]byte, error)
	// Progress, if set, is called after each new evaluation with the
	// evaluations done, the budget, and the best objective so far.
	Progress func(done, budget int, best float64)
}

// Z is the standard normal quantile of the 95% intervals.
const Z = 1.959964

// Result is what a fit found.
type Result struct {
	Spec         *Spec
	Name         string // the experiment's name
	Replications int
	Seed         uint64 // replication k of every evaluation runs at runner.ReplicationSeed(Seed, k)
	// Evaluations counts the distinct inputs the search simulated, of
	// Budget, and Probes those simulated after it to measure the
	// sensitivities; Starts the Nelder–Mead runs.
	Evaluations, Budget, Probes, Starts int
	Inputs                              []Input
	// Targets are every target, the fitted first, in the specification's
	// order within each group.
	Targets []TargetResult
	// Chi2 is the sum of the fitted targets' squared residuals, each in
	// units of its standard error (its tolerance / Z and the simulation's
	// own); DoF the fitted targets less the inputs. Inflation is the
	// factor (χ²/DoF when above 1) by which the inputs' covariance was
	// widened for a misfit.
	Chi2      float64
	DoF       int
	Inflation float64
	// Set are the fitted inputs as key paths and values; Experiment the
	// experiment's text with them written in (nil if they could not be
	// written into it: Notes says why).
	Set        []format.Param
	Experiment []byte
	Notes      []string
}

// Input is one fitted input.
type Input struct {
	Free  *Free
	Value float64 // in the template's unit
	Text  string  // as written in the experiment
	// Lo and Hi bound its 95% interval (within the range); Pinned is false
	// when the targets do not pin it (the interval is then the range).
	Lo, Hi  float64
	Pinned  bool
	AtBound bool // the fit ended at an end of the range
	// SetBy is the fitted target that carries most of the information
	// about the input, and Share that share (0 to 1).
	SetBy string
	Share float64
}

// TargetResult is one target at the fitted inputs.
type TargetResult struct {
	Target  *Target
	Fitted  bool    // used to set the inputs (otherwise predicted)
	Model   float64 // the mean over the replications (NaN if the runs have no such figure)
	SimHalf float64 // the replications' own 95% half-width
	// Lo and Hi bound the 95% interval of the model's value, from the
	// inputs' intervals and the simulation's noise (infinite when an input
	// it depends on is not pinned).
	Lo, Hi float64
	// Residual is (Model − Value) / Tolerance.
	Residual float64
	// Elasticity is, per input, the % change of the metric for a 1%
	// change of the input (NaN where the metric is 0).
	Elasticity []float64
	Verdict    string
}

// Verdicts of a target.
const (
	Reproduced = "reproduced"      // within the figure's tolerance, from pinned inputs
	NotPinned  = "not pinned"      // within the tolerance, but an input it depends on is not pinned: no prediction
	Consistent = "within interval" // outside the tolerance, inside the prediction's (finite) interval widened by it
	Missed     = "missed"          // neither
)

// Fit searches the free inputs of x that best match s's targets. text is
// the experiment file's text, into which the fitted values are written.
// x must be the experiment s was checked against (Spec.Check). When ctx
// is cancelled the runs under way stop and Fit returns an error wrapping
// ctx.Err().
func Fit(ctx context.Context, x *format.Experiment, text []byte, s *Spec, opt Options) (*Result, error) {
	f, err := newFitter(ctx, x, s, opt)
	if err != nil {
		return nil, err
	}
	best, err := f.search()
	if err != nil {
		return nil, err
	}
	return f.result(best, text)
}

// newFitter prepares a fit: its seeds, budget and the scenarios the
// targets need.
func newFitter(ctx context.Context, x *format.Experiment, s *Spec, opt Options) (*fitter, error) {
	for _, h := range opt.HoldOut {
		if !slices.ContainsFunc(s.Targets, func(t Target) bool { return t.Name == h }) {
			var ns []string
			for _, t := range s.Targets {
				ns = append(ns, t.Name)
			}
			return nil, fmt.Errorf("--hold-out %q: no such target (targets: %s)", h, strings.Join(ns, ", "))
		}
	}
	f := &fitter{ctx: ctx, x: x, s: s, cache: map[string]*point{}}
	f.reps = s.Replications
	if f.reps == 0 {
		f.reps = max(x.Replications, 2)
	}
	if opt.Replications > 0 {
		f.reps = opt.Replications
	}
	f.seed = x.Seed
	if s.Seed != 0 {
		f.seed = s.Seed
	}
	if opt.Seed != 0 {
		f.seed = opt.Seed
	}
	f.budget = s.MaxEvaluations
	if opt.MaxEvaluations > 0 {
		f.budget = opt.MaxEvaluations
	}
	f.workers = opt.Workers
	if f.workers <= 0 {
		f.workers = runtime.GOMAXPROCS(0)
	}
	f.progress = opt.Progress
	f.readFile = opt.ReadFile
	for i := range s.Targets {
		t := &s.Targets[i]
		use := !t.Predict && !slices.Contains(opt.HoldOut, t.Name)
		f.use = append(f.use, use)
		f.tc = append(f.tc, f.caseOf(t.Variant, t.Set))
		rc := -1
		if t.RelativeTo != "" {
			rc = f.caseOf(t.RelativeTo, t.Set)
		}
		f.rc = append(f.rc, rc)
		if t.metric.needsPoints() {
			f.cases[f.tc[i]].points = true
			if rc >= 0 {
				f.cases[rc].points = true
			}
		}
	}
	if !slices.Contains(f.use, true) {
		return nil, errors.New("every target is held out or predicted: none is left to fit")
	}
	return f, nil
}

// fitter is one fit under way.
type fitter struct {
	ctx      context.Context
	x        *format.Experiment
	s        *Spec
	reps     int
	seed     uint64
	budget   int
	workers  int
	progress func(done, budget int, best float64)
	readFile func(name string) ([]byte, error)

	cases []fitCase
	tc    []int  // each target's case
	rc    []int  // each target's relative_to case, or -1
	use   []bool // each target: used in the fit

	mu       sync.Mutex
	cache    map[string]*point
	evals    int
	calls    int // objective calls, cached or not
	bestSeen float64
	starts   int
	err      error
}

// fitCase is one scenario the targets need: a variant with settings.
type fitCase struct {
	variant string
	set     []format.Param
	points  bool // a target reads its clients' requests
}

func (f *fitter) caseOf(variant string, set []format.Param) int {
	for i, c := range f.cases {
		if c.variant == variant && slices.Equal(c.set, set) {
			return i
		}
	}
	f.cases = append(f.cases, fitCase{variant: variant, set: set})
	return len(f.cases) - 1
}

// point is one evaluated setting of the inputs.
type point struct {
	u      []float64 // in [0, 1], from the rounded values
	values []float64 // in the templates' units
	set    []format.Param
	// per target: the replications' values, their mean and the standard
	// error of the mean
	reps [][]float64
	mean []float64
	se   []float64
	obj  float64
}

// at rounds u to the values written and evaluates them (from the cache if
// they were simulated before).
func (f *fitter) at(u []float64) (*point, error) {
	p := &point{}
	for j := range f.s.Free {
		fr := &f.s.Free[j]
		v := fr.fromUnit(u[j])
		p.values = append(p.values, v)
		p.u = append(p.u, fr.toUnit(v))
		p.set = append(p.set, format.Param{Key: fr.Key, Value: fr.text(v)})
	}
	var key strings.Builder
	for _, kv := range p.set {
		key.WriteString(kv.Value)
		key.WriteByte(0)
	}
	f.mu.Lock()
	f.calls++
	if q, ok := f.cache[key.String()]; ok {
		f.mu.Unlock()
		return q, nil
	}
	f.mu.Unlock()
	if err := f.simulate(p); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.cache[key.String()] = p
	f.evals++
	if f.evals == 1 || p.obj < f.bestSeen {
		f.bestSeen = p.obj
	}
	done, best := f.evals, f.bestSeen
	f.mu.Unlock()
	if f.progress != nil {
		f.progress(done, f.budget, best)
	}
	return p, nil
}

// simulate runs every case at p's inputs, each replication at its seed.
func (f *fitter) simulate(p *point) error {
	y, err := f.x.WithBase(baseParams(f.s.Free, p.set))
	if err != nil {
		return fmt.Errorf("at %s: %v", paramText(p.set), err)
	}
	tops := make([]model.Topology, len(f.cases))
	for c, fc := range f.cases {
		sc, err := y.ScenarioWith(fc.variant, variantParams(f.s.Free, p.set, fc.variant, fc.set), nil)
		if err != nil {
			return fmt.Errorf("at %s: %v", paramText(p.set), oneLine(err))
		}
		tops[c] = sc.Topology
	}
	// values[c][k][i]: target i's metric in case c, replication k (only
	// the targets of case c are filled).
	nt := len(f.s.Targets)
	values := make([][][]float64, len(f.cases))
	for c := range values {
		values[c] = make([][]float64, f.reps)
	}
	type item struct{ c, k int }
	items := make(chan item)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range min(f.workers, len(f.cases)*f.reps) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range items {
				opt := model.Options{Seed: runner.ReplicationSeed(f.seed, it.k), NoSeries: true}
				if f.cases[it.c].points {
					opt.MaxPoints = maxPoints
				}
				r, err := simmode.RunContext(f.ctx, &tops[it.c], opt)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				vs := make([]float64, nt)
				for i := range f.s.Targets {
					t := &f.s.Targets[i]
					vs[i] = math.NaN()
					if f.tc[i] == it.c || f.rc[i] == it.c {
						vs[i] = t.metric.of(r, t.Window)
					}
				}
				values[it.c][it.k] = vs
			}
		}()
	}
	for c := range f.cases {
		for k := range f.reps {
			if f.ctx.Err() != nil {
				break
			}
			items <- item{c, k}
		}
	}
	close(items)
	wg.Wait()
	if err := f.ctx.Err(); err != nil {
		return fmt.Errorf("fit stopped: %w", err)
	}
	if firstErr != nil {
		return fmt.Errorf("at %s: %w", paramText(p.set), firstErr)
	}
	for i := range f.s.Targets {
		xs := make([]float64, f.reps)
		for k := range f.reps {
			xs[k] = values[f.tc[i]][k][i]
			if f.rc[i] >= 0 {
				xs[k] /= values[f.rc[i]][k][i]
			}
		}
		p.reps = append(p.reps, xs)
		m, se := meanSE(xs)
		p.mean = append(p.mean, m)
		p.se = append(p.se, se)
	}
	p.obj = f.objective(p)
	return nil
}

// maxPoints keeps every request's point of a run of up to a few hours at
// hundreds of requests a second, for the clients.* metrics.
const maxPoints = 4 << 20

func meanSE(xs []float64) (mean, se float64) {
	var t sim.Tally
	for _, x := range xs {
		if !finite(x) {
			return math.NaN(), math.NaN()
		}
		t.Add(x)
	}
	if t.Count() < 2 {
		return t.Mean(), 0
	}
	return t.Mean(), math.Sqrt(t.Variance() / float64(t.Count()))
}

// missing is the squared residual charged for a figure the runs do not
// have (a latency of no completed request): a hundred tolerances.
const missing = 1e4

// objective is the fitted targets' sum of squared residuals in
// tolerances.
func (f *fitter) objective(p *point) float64 {
	var s float64
	for i, t := range f.s.Targets {
		if !f.use[i] {
			continue
		}
		if !finite(p.mean[i]) {
			s += missing
			continue
		}
		r := (p.mean[i] - t.Value) / t.Tolerance
		s += r * r
	}
	return s
}

func paramText(set []format.Param) string {
	s := make([]string, len(set))
	for i, kv := range set {
		s[i] = kv.Key + " = " + kv.Value
	}
	return strings.Join(s, ", ")
}

// search runs Nelder–Mead from the first start, then from quasi-random
// starts (a Halton sequence, the same every time), then once more from
// the best with a small simplex, within the budget; integer inputs are
// then tried one step either way.
func (f *fitter) search() (*point, error) {
	d := len(f.s.Free)
	start := make([]float64, d)
	for j := range f.s.Free {
		fr := &f.s.Free[j]
		start[j] = fr.toUnit(fr.startValue())
	}
	best, err := f.at(start)
	if err != nil {
		return nil, err
	}
	consider := func(p *point) {
		if p != nil && p.obj < best.obj {
			best = p
		}
	}
	runs := f.s.Restarts + 1
	for r := 0; r <= runs; r++ {
		left := f.budget - f.evals
		if left <= 0 {
			break
		}
		from, size := start, 0.25
		switch {
		case r == runs: // the polish
			from, size = best.u, 0.05
		case r > 0:
			from = halton(r, d)
		}
		share := left / (runs + 1 - r)
		if r == runs {
			share = left
		}
		p, err := f.nelderMead(from, size, max(share, d+2))
		if err != nil {
			return nil, err
		}
		consider(p)
	}
	// Integer inputs: a step either way while it helps.
	for changed := true; changed && f.evals < f.budget; {
		changed = false
		for j, fr := range f.s.Free {
			if !fr.Integer {
				continue
			}
			for _, step := range []float64{-1, 1} {
				v := best.values[j] + step
				if v < fr.Min || v > fr.Max || f.evals >= f.budget {
					continue
				}
				u := slices.Clone(best.u)
				u[j] = fr.toUnit(v)
				p, err := f.at(u)
				if err != nil {
					return nil, err
				}
				if p.obj < best.obj {
					best, changed = p, true
				}
			}
		}
	}
	return best, nil
}

// nelderMead minimises from u0 with gonum's Nelder–Mead, from an initial
// simplex of the given size (in the unit cube), within budget new
// evaluations; outside the cube the objective is its value at the nearest
// point of it plus a penalty that grows with the distance. It stops when
// the budget is spent, the context is cancelled, a run fails, or the best
// value has not improved by more than 1e-3 (relative and absolute) in
// 10·(d+1) iterations. The evaluations run one at a time (gonum's
// NelderMead asks for one point at a time), so the same specification and
// seed visit the same points.
func (f *fitter) nelderMead(u0 []float64, size float64, budget int) (*point, error) {
	f.starts++
	stop := f.evals + budget
	var best *point
	var failed error
	fn := func(z []float64) float64 {
		if failed != nil {
			return math.Inf(1)
		}
		u := make([]float64, len(z))
		var pen float64
		for j, v := range z {
			u[j] = min(max(v, 0), 1)
			pen += (v - u[j]) * (v - u[j])
		}
		p, err := f.at(u)
		if err != nil {
			failed = err
			return math.Inf(1)
		}
		if best == nil || p.obj < best.obj {
			best = p
		}
		return p.obj + 1e3*pen*(1+p.obj)
	}
	status := func() (optimize.Status, error) {
		switch {
		case failed != nil:
			return optimize.Failure, failed
		case f.ctx.Err() != nil:
			return optimize.Failure, f.ctx.Err()
		case f.evals >= stop:
			return optimize.FunctionEvaluationLimit, nil
		}
		return optimize.NotTerminated, nil
	}
	stopped := func() error {
		if failed != nil {
			return failed
		}
		if e := f.ctx.Err(); e != nil {
			return fmt.Errorf("fit stopped: %w", e)
		}
		return nil
	}
	// The initial simplex: u0 and a step of size along each axis, towards
	// the middle of the cube (gonum's own steps only upwards, out of the
	// cube from a start at its top).
	d := len(u0)
	verts := make([][]float64, d+1)
	vals := make([]float64, d+1)
	verts[0] = slices.Clone(u0)
	for j := range d {
		v := slices.Clone(u0)
		if v[j] > 0.5 {
			v[j] -= size
		} else {
			v[j] += size
		}
		verts[j+1] = v
	}
	for i := range verts {
		if s, _ := status(); s != optimize.NotTerminated {
			return best, stopped()
		}
		vals[i] = fn(verts[i])
	}
	if err := stopped(); err != nil {
		return nil, err
	}
	_, err := optimize.Minimize(
		optimize.Problem{Func: fn, Status: status},
		u0,
		&optimize.Settings{
			InitValues: &optimize.Location{F: vals[0]},
			Converger:  &optimize.FunctionConverge{Absolute: 1e-3, Relative: 1e-3, Iterations: 10 * (d + 1)},
		},
		// The classic coefficients (reflection 1, expansion 2, contraction
		// and shrink ½), not gonum's dimension-adaptive defaults: on the
		// crack incident's fit (3 inputs, 50 evaluations) the adaptive ones
		// ended at χ² 6.70 and 6.57 at seeds 1 and 2, the classic ones at
		// 3.47 and 3.21.
		&optimize.NelderMead{InitialVertices: verts, InitialValues: vals, Reflection: 1, Expansion: 2, Contraction: 0.5, Shrink: 0.5},
	)
	if e := stopped(); e != nil {
		return nil, e
	}
	if err != nil {
		return nil, fmt.Errorf("Nelder–Mead: %w", err)
	}
	return best, nil
}

// halton is point r of the Halton sequence in d dimensions.
func halton(r, d int) []float64 {
	primes := []int{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}
	u := make([]float64, d)
	for j := range u {
		b := primes[j%len(primes)]
		fr, x := 1.0, 0.0
		for i := r; i > 0; i /= b {
			fr /= float64(b)
			x += fr * float64(i%b)
		}
		u[j] = x
	}
	return u
}

// result measures the sensitivities at the best point and writes the
// report's figures and the fitted experiment.
func (f *fitter) result(best *point, text []byte) (*Result, error) {
	s := f.s
	d, nt := len(s.Free), len(s.Targets)
	searched := f.evals
	// D[i][j]: d(target i)/d(u_j), by differences of rounded values.
	D := make([][]float64, nt)
	for i := range D {
		D[i] = make([]float64, d)
	}
	for j := range s.Free {
		lo, hi, err := f.neighbours(best, j)
		if err != nil {
			return nil, err
		}
		du := hi.u[j] - lo.u[j]
		for i := range D {
			D[i][j] = (hi.mean[i] - lo.mean[i]) / du
			if !finite(D[i][j]) {
				D[i][j] = 0
			}
		}
	}
	sigma := make([]float64, nt)
	for i, t := range s.Targets {
		se := best.se[i]
		if !finite(se) {
			se = 0
		}
		sigma[i] = math.Hypot(t.Tolerance/Z, se)
	}
	var fitIdx []int
	for i := range s.Targets {
		if f.use[i] {
			fitIdx = append(fitIdx, i)
		}
	}
	// J = D / sigma over the fitted targets; its SVD gives the inputs'
	// covariance (JᵀJ)⁺ and says which directions no target pins.
	J := mat.NewDense(len(fitIdx), d, nil)
	var chi2 float64
	for r, i := range fitIdx {
		for j := range d {
			J.Set(r, j, D[i][j]/sigma[i])
		}
		if finite(best.mean[i]) {
			z := (best.mean[i] - s.Targets[i].Value) / sigma[i]
			chi2 += z * z
		} else {
			chi2 += missing
		}
	}
	res := &Result{Spec: s, Name: f.x.Name, Replications: f.reps, Seed: f.seed, Evaluations: searched, Probes: f.evals - searched, Budget: f.budget,
		Starts: f.starts, Chi2: chi2, DoF: len(fitIdx) - d, Inflation: 1, Set: best.set}
	if res.Name == "" {
		res.Name = strings.TrimSuffix(f.x.File, ".toml")
	}
	if res.DoF > 0 && chi2/float64(res.DoF) > 1 {
		res.Inflation = chi2 / float64(res.DoF)
	}
	cov := newCovariance(J, res.Inflation)

	for j := range s.Free {
		fr := &s.Free[j]
		in := Input{Free: fr, Value: best.values[j], Text: best.set[j].Value, Lo: fr.Min, Hi: fr.Max}
		in.AtBound = best.values[j] == fr.Min || best.values[j] == fr.Max
		if v := cov.at(j); finite(v) {
			h := Z * math.Sqrt(v)
			if best.u[j]-h > 0 || best.u[j]+h < 1 {
				in.Pinned = true
				in.Lo, in.Hi = fr.fromUnitExact(best.u[j]-h), fr.fromUnitExact(best.u[j]+h)
			}
		}
		var tot float64
		for r := range fitIdx {
			tot += J.At(r, j) * J.At(r, j)
		}
		for r, i := range fitIdx {
			if sh := J.At(r, j) * J.At(r, j) / tot; tot > 0 && sh > in.Share {
				in.Share, in.SetBy = sh, s.Targets[i].Name
			}
		}
		res.Inputs = append(res.Inputs, in)
	}
	for _, fitted := range []bool{true, false} {
		for i := range s.Targets {
			if f.use[i] != fitted {
				continue
			}
			t := &s.Targets[i]
			tr := TargetResult{Target: t, Fitted: fitted, Model: best.mean[i], SimHalf: simHalf(best.reps[i])}
			tr.Residual = (tr.Model - t.Value) / t.Tolerance
			v := cov.of(D[i])
			half := Z * math.Sqrt(v+sq(best.se[i]))
			tr.Lo, tr.Hi = tr.Model-half, tr.Model+half
			for j := range s.Free {
				tr.Elasticity = append(tr.Elasticity, s.Free[j].elasticity(D[i][j], best.values[j], tr.Model))
			}
			switch {
			case !finite(tr.Model):
				tr.Verdict = Missed
			case math.Abs(tr.Model-t.Value) <= t.Tolerance && !finite(half):
				tr.Verdict = NotPinned
			case math.Abs(tr.Model-t.Value) <= t.Tolerance:
				tr.Verdict = Reproduced
			case finite(half) && math.Abs(tr.Model-t.Value) <= math.Hypot(half, t.Tolerance):
				tr.Verdict = Consistent
			default:
				tr.Verdict = Missed
			}
			res.Targets = append(res.Targets, tr)
		}
	}
	if text != nil {
		out, err := writeFitted(f.x, text, f.readFile, s.Free, best.set, res.header())
		if err != nil {
			res.Notes = append(res.Notes, "the fitted experiment was not written: "+err.Error()+"; set the fitted values by hand")
		} else {
			res.Experiment = out
		}
	}
	return res, nil
}

func sq(x float64) float64 {
	if !finite(x) {
		return 0
	}
	return x * x
}

// simHalf is the replications' 95% Student t half-width (0 with one).
func simHalf(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	_, h := sim.MeanCI(xs, 0.95)
	return h
}

// neighbours are the evaluated points one step either side of best along
// input j (best itself on a side the range or the rounding leaves no
// room on): a 5% change of a real value (a tenth of the range at most),
// one unit of an integer.
func (f *fitter) neighbours(best *point, j int) (lo, hi *point, err error) {
	fr := &f.s.Free[j]
	v := best.values[j]
	var down, up float64
	switch {
	case fr.Integer:
		down, up = v-1, v+1
	case fr.Log:
		down, up = v/1.05, v*1.05
	default:
		step := max(0.05*math.Abs(v), 0.01*(fr.Max-fr.Min))
		step = min(step, 0.1*(fr.Max-fr.Min))
		down, up = v-step, v+step
	}
	side := func(w float64) (*point, error) {
		w = min(max(fr.round(w), fr.Min), fr.Max)
		if w == v {
			return best, nil
		}
		u := slices.Clone(best.u)
		u[j] = fr.toUnit(w)
		return f.at(u)
	}
	if lo, err = side(down); err != nil {
		return nil, nil, err
	}
	if hi, err = side(up); err != nil {
		return nil, nil, err
	}
	if lo == hi { // a range of one value: nothing to differentiate
		return nil, nil, fmt.Errorf("free %q: its range leaves no room around %v", fr.Key, v)
	}
	return lo, hi, nil
}

// fromUnitExact maps u onto the range without rounding.
func (f *Free) fromUnitExact(u float64) float64 {
	u = min(max(u, 0), 1)
	if f.Log {
		return f.Min * math.Pow(f.Max/f.Min, u)
	}
	return f.Min + u*(f.Max-f.Min)
}

// elasticity is the % change of a metric of value m for a 1% change of
// the input at v, from its derivative in the unit cube.
func (f *Free) elasticity(dm, v, m float64) float64 {
	if m == 0 || !finite(m) {
		return math.NaN()
	}
	var dlnv float64 // d(ln v)/du
	if f.Log {
		dlnv = math.Log(f.Max / f.Min)
	} else {
		if v == 0 {
			return math.NaN()
		}
		dlnv = (f.Max - f.Min) / v
	}
	return dm / dlnv / m
}

// covariance is (JᵀJ)⁺ times an inflation, from J's singular value
// decomposition; a direction with no singular value to speak of has an
// infinite variance.
type covariance struct {
	v     *mat.Dense // right singular vectors, by column
	s     []float64
	infl  float64
	small float64
}

func newCovariance(J *mat.Dense, inflation float64) covariance {
	_, d := J.Dims()
	var svd mat.SVD
	c := covariance{infl: inflation}
	if r, _ := J.Dims(); r == 0 || !svd.Factorize(J, mat.SVDFull) {
		c.s = make([]float64, d)
		c.v = mat.NewDense(d, d, nil)
		for j := range d {
			c.v.Set(j, j, 1)
		}
		return c
	}
	s := svd.Values(nil)
	c.s = make([]float64, d)
	copy(c.s, s)
	c.v = &mat.Dense{}
	svd.VTo(c.v)
	if len(s) > 0 {
		c.small = 1e-9 * s[0]
	}
	return c
}

// of is gᵀ Cov g for a gradient g in the unit cube: +Inf if g points
// along a direction no target pins.
func (c covariance) of(g []float64) float64 {
	var v float64
	for k := range c.s {
		var dot, norm float64
		for j := range g {
			dot += g[j] * c.v.At(j, k)
			norm += g[j] * g[j]
		}
		if dot == 0 {
			continue
		}
		if c.s[k] <= c.small || c.s[k] == 0 {
			if dot*dot > 1e-12*norm {
				return math.Inf(1)
			}
			continue
		}
		v += dot * dot / (c.s[k] * c.s[k])
	}
	return v * c.infl
}

// at is input j's variance in the unit cube.
func (c covariance) at(j int) float64 {
	g := make([]float64, len(c.s))
	g[j] = 1
	return c.of(g)
}

// String names the experiment and the fitted values.
func (r *Result) String() string {
	s := make([]string, len(r.Inputs))
	for j, in := range r.Inputs {
		s[j] = in.Free.label() + " = " + in.Text
	}
	return fmt.Sprintf("fit of %s: %s", r.Name, strings.Join(s, ", "))
}

// Score simulates x as it is (its own values, no search) with s's seeds
// and replications and gives every target its model value, residual and
// whether it lies within the figure's tolerance (Verdict Reproduced or
// Missed; no intervals). A story's test asserts its figures with it.
func Score(ctx context.Context, x *format.Experiment, s *Spec, opt Options) ([]TargetResult, error) {
	f, err := newFitter(ctx, x, s, opt)
	if err != nil {
		return nil, err
	}
	p := &point{}
	if err := f.simulate(p); err != nil {
		return nil, err
	}
	var out []TargetResult
	for i := range s.Targets {
		t := &s.Targets[i]
		tr := TargetResult{Target: t, Fitted: f.use[i], Model: p.mean[i], SimHalf: simHalf(p.reps[i]), Lo: math.NaN(), Hi: math.NaN()}
		tr.Residual = (tr.Model - t.Value) / t.Tolerance
		tr.Verdict = Missed
		if math.Abs(tr.Model-t.Value) <= t.Tolerance {
			tr.Verdict = Reproduced
		}
		out = append(out, tr)
	}
	return out, nil
}
