package tsim

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/input"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/realmode"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

// Experiment is a loaded, validated experiment file: one system under one
// load, with its variants and sweep points.
type Experiment struct {
	x       *format.Experiment
	path    string
	sources []runner.SourceFile
}

// Load reads and validates the experiment file at path. Files it names
// (topologies given as paths, empirical distributions) are read relative
// to the file's directory. The error, if any, names the file and line of
// every problem found.
//
// Reading is bounded and confined: the experiment and the files it names
// must be regular files within the limits of package input, and named
// files must lie inside the experiment's folder.
func Load(path string) (*Experiment, error) {
	x, src, err := runner.LoadSourcesFrom(path, input.Options{})
	if err != nil {
		return nil, err
	}
	return &Experiment{x: x, path: path, sources: src}, nil
}

// LoadBytes validates an experiment given as TOML text; name is used in
// messages and as the experiment's file name. An experiment loaded so may
// not name other files (an empirical distribution, a topology by path); a
// topology by name, such as topology = "pipeline", is fine.
func LoadBytes(name string, data []byte) (*Experiment, error) {
	x, err := runner.LoadSources([]runner.SourceFile{{Name: name, Content: string(data)}})
	if err != nil {
		return nil, err
	}
	return &Experiment{x: x, path: name, sources: []runner.SourceFile{{Name: name, Content: string(data)}}}, nil
}

// Name is the experiment's name: its name key, or the file's stem.
func (e *Experiment) Name() string {
	if e.x.Name != "" {
		return e.x.Name
	}
	return runner.Stem(e.path)
}

// Description is the experiment's description key.
func (e *Experiment) Description() string { return e.x.Description }

// Variants lists the names of the experiment's variants, "base" first
// when the file has no variants.
func (e *Experiment) Variants() []string {
	var out []string
	for i := range e.x.NumScenarios() {
		sc, err := e.x.Scenario(i)
		if err != nil {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != sc.Variant {
			out = append(out, sc.Variant)
		}
	}
	return out
}

// Format is the experiment as package format holds it, for the lower
// layers (runner, analysis, model).
func (e *Experiment) Format() *format.Experiment { return e.x }

// Param is one setting: a key path of the experiment format and its value,
// written as in TOML or bare ("8", "0.5", "150ms", "exp(1s)").
type Param = results.Param

// Mode is the executor a run uses.
type Mode string

const (
	// Sim runs on the discrete-event simulator: same seed, same bytes.
	Sim Mode = "sim"
	// Real runs every tier as a net/http server on 127.0.0.1 and every
	// call as real HTTP, with demands as scaled sleeps; see package
	// realmode. Replications run one at a time and vary a little.
	Real Mode = "real"
)

// Options control a run. The zero value runs the file as it is, on the
// simulator, on all cores, writing no files.
type Options struct {
	// Seed replaces the file's seed when non-zero.
	Seed uint64
	// Replications replaces the file's replications when > 0.
	Replications int
	// Set are settings applied to every variant and sweep point on top of
	// the file's, e.g. {Key: "load.users", Value: "500"}.
	Set []Param
	// Mode is Sim (the default) or Real.
	Mode Mode
	// TimeScale is, in Real mode, real seconds per simulated second; zero
	// chooses one (10 ms of real time per smallest mean demand, within
	// two minutes a run).
	TimeScale float64
	// Workers is how many replications run at once in Sim mode; zero
	// means GOMAXPROCS.
	Workers int
	// OutputDir, if set, receives the files tsim run writes, under
	// OutputDir/<file stem>/, of the kinds in Outputs (all when zero).
	OutputDir string
	Outputs   report.Outputs
}

// Result is what a run produced: every scenario (variant at a sweep
// point) aggregated over its replications, with 95% confidence
// half-widths when there are two or more.
type Result struct {
	*results.Experiment
	// runs are each finished scenario's replications, without their time
	// series and latency points, for Check.
	runs map[int][]*results.Run
}

// Run runs every scenario of e the experiment's number of times and
// aggregates the replications. The same experiment, options and seed give
// the same result, whatever the number of workers. When ctx is cancelled,
// the replications under way stop and Run returns what finished together
// with an error wrapping ctx.Err(); Result.Complete then reports false.
func Run(ctx context.Context, e *Experiment, opt Options) (*Result, error) {
	mode := opt.Mode
	if mode == "" {
		mode = Sim
	}
	ex, err := runner.ExecutorFor(string(mode), opt.TimeScale, realmode.CPUSharing)
	if err != nil {
		return nil, err
	}
	p := &runner.Plan{Path: e.path, Stem: runner.Stem(e.path), X: e.x, Seed: e.x.Seed, Reps: e.x.Replications, Mode: string(mode), Set: opt.Set}
	if opt.Seed != 0 {
		p.Seed = opt.Seed
	}
	if opt.Replications > 0 {
		p.Reps = opt.Replications
	}
	if err := runner.CheckStem(p.Stem); err != nil {
		return nil, fmt.Errorf("%s: %v", e.path, err)
	}
	if _, err := p.Scenario(0); err != nil {
		return nil, err
	}
	var dir *atomicio.Dir
	if opt.OutputDir != "" {
		p.Out = opt.OutputDir + "/" + p.Stem
		if dir, err = atomicio.Lock(opt.OutputDir, p.Stem); err != nil {
			return nil, err
		}
		defer dir.Unlock()
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	agg := runner.NewAggregator(p)
	keep := &keeper{agg: agg, runs: map[int][]*results.Run{}}
	if err := runner.RunItems(ctx, p, ex, workers, nil, keep); err != nil && ctx.Err() == nil {
		return nil, err
	}
	res := agg.Result()
	r := &Result{Experiment: res, runs: keep.runs}
	if dir != nil && res.Finished > 0 {
		kinds := opt.Outputs
		if kinds == (report.Outputs{}) {
			kinds = report.All
		}
		if _, _, err := report.WriteOutputs(dir.Path, res, kinds); err != nil {
			return r, fmt.Errorf("%s: writing results: %w", e.path, err)
		}
	}
	if !res.Complete() {
		cause := ctx.Err()
		if cause == nil {
			cause = errors.New("stopped")
		}
		return r, fmt.Errorf("%s: %w", runner.DescribeMissing(p, res), cause)
	}
	return r, nil
}

// Variant returns the first finished scenario of the named variant (with
// a sweep, its first point), or nil.
func (r *Result) Variant(name string) *results.Scenario {
	for _, sc := range r.Done() {
		if sc.Variant == name {
			return sc
		}
	}
	return nil
}

// Table writes the tables tsim run prints.
func (r *Result) Table() string {
	var b strings.Builder
	if err := report.PrintReport(&b, r.Experiment); err != nil {
		return err.Error()
	}
	return b.String()
}

// SummaryJSON is the result as tsim run's summary.json.
func (r *Result) SummaryJSON() ([]byte, error) { return report.SummaryJSON(r.Experiment) }

// keeper is the sink of Run: the aggregator, and each replication's
// headline figures for Check.
type keeper struct {
	agg  *runner.Aggregator
	runs map[int][]*results.Run
}

func (k *keeper) Take(it runner.Item) error {
	head := *it.Run
	head.Series, head.Points, head.Quantiles = nil, nil, nil
	k.runs[it.Scenario.Index] = append(k.runs[it.Scenario.Index], &head)
	return k.agg.Take(it)
}

// Check judges a goal, such as "p99<2s,timeouts=0", on every finished
// scenario: each clause must hold for the one-sided 95% Student t bound
// across the replications (the value itself with one replication), as tsim
// plan judges it. The error says, for each clause and scenario that misses,
// the mean, the bound and the limit; nil means every clause holds
// everywhere. See analysis.ParseGoal for the clauses.
func (r *Result) Check(goal string) error {
	gs, err := analysis.ParseGoal(goal)
	if err != nil {
		return err
	}
	var miss []string
	for _, sc := range r.Done() {
		runs := r.runs[sc.Index]
		name := runner.ScenarioName(sc.Variant, sc.Params)
		for _, g := range gs {
			xs := make([]float64, len(runs))
			for i, run := range runs {
				xs[i] = g.Of(run)
			}
			mean, bound, ok := g.Judge(xs)
			if ok {
				continue
			}
			if g.None {
				miss = append(miss, fmt.Sprintf("%s: %s does not hold: %s on average over %d replications",
					name, g.Text, g.Format(mean), len(xs)))
				continue
			}
			miss = append(miss, fmt.Sprintf("%s: %s does not hold: %s on average, %s at the %.0f%% confidence bound over %d replications",
				name, g.Text, g.Format(mean), g.Format(bound), 100*analysis.Level, len(xs)))
		}
	}
	if !r.Complete() {
		miss = append(miss, fmt.Sprintf("only %d of %d scenarios finished", r.Finished, len(r.Scenarios)))
	}
	if len(miss) > 0 {
		return errors.New(strings.Join(miss, "\n"))
	}
	return nil
}

// Explanation is what Explain found; see analysis.Explanation.
type Explanation = analysis.Explanation

// Explain bounds every throttle of e by the operational laws, simulates
// each variant once, says where the response time went and which limit
// binds, and proposes the smallest change that moves the bottleneck, and
// what binds next. Its WriteText prints what tsim explain prints.
func Explain(ctx context.Context, e *Experiment) (*Explanation, error) {
	return analysis.Explain(ctx, e.x, analysis.ExplainOptions{Path: e.path})
}

// PlanOptions say what Plan searches; see analysis.PlanOptions.
type PlanOptions = analysis.PlanOptions

// PlanResult is what Plan found; see analysis.PlanResult.
type PlanResult = analysis.PlanResult

// Plan searches for the smallest setting that meets a goal (bisection on
// capacity settings, a grid otherwise), or for the most users or the
// highest rate a configuration holds, judging goals on one-sided 95%
// bounds across replications. Goals come from analysis.ParseGoal, axes
// from analysis.ParseVary.
func Plan(ctx context.Context, e *Experiment, opt PlanOptions) (*PlanResult, error) {
	if opt.Path == "" {
		opt.Path = e.path
	}
	return analysis.Plan(ctx, e.x, opt)
}
