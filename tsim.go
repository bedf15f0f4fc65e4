package tsim

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"

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
func Load(path string) (*Experiment, error) {
	x, src, err := runner.LoadSourcesFrom(path)
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
	res, err := runner.Execute(ctx, p, ex, workers, nil)
	if err != nil {
		return nil, err
	}
	r := &Result{res}
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
