package tsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/loadtest"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

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

// Modes are the modes a run may use.
var Modes = []Mode{Sim, Real}

// Outputs chooses the kinds of file a run writes; see report.Outputs.
type Outputs = report.Outputs

// ParseOutputs reads a list such as "json,csv" (tsim run --outputs).
func ParseOutputs(s string) (Outputs, error) { return report.ParseOutputs(s) }

// Shard is which work items of an experiment a process runs (tsim run
// --shard i/n); the zero value is all of them.
type Shard = runner.Shard

// ParseShard reads "i/n", 0 ≤ i < n.
func ParseShard(s string) (Shard, error) { return runner.ParseShard(s) }

// Options control a run. The zero value runs the file as it is, on the
// simulator, on all cores, writing no files.
type Options struct {
	// Seed, when not nil, replaces the file's seed.
	Seed *uint64
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
	// CPU is, in Real mode, how demands share the cores: "sharing" (the
	// default, the simulator's processor sharing) or "cores".
	CPU string
	// Workers is how many replications run at once in Sim mode; zero
	// means GOMAXPROCS.
	Workers int
	// PerReplica: the reports show every machine of a farm.
	PerReplica bool
	// OutputDir, if set, receives the files tsim run writes, under
	// OutputDir/<file stem>/, of the kinds in Outputs (all when zero).
	OutputDir string
	Outputs   Outputs
	// Shard, if set, runs only that shard's items and writes them for
	// tsim merge under OutputDir/<file stem>/shard-i-of-n/ (RunAll).
	Shard Shard
	// Version is tsim's version recorded in a shard's manifest; "" is
	// Version().
	Version string
	// Keep: the files of the run before move to
	// OutputDir/<file stem>/history/<n> before this run's are written
	// (tsim diff DIR compares the two).
	Keep bool
	// Measured, if set, is a load test's results each experiment's
	// variants are compared with (ReadMeasured; not with a sweep or a
	// shard).
	Measured *Measured
	// Total, if set, is told how many replications RunAll will run;
	// Started is called as each experiment starts, and Progress after each
	// replication (from any goroutine).
	Total    func(items int)
	Started  func(e *Experiment)
	Progress func()
}

func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return runtime.GOMAXPROCS(0)
}

func (o *Options) executor() (runner.Executor, error) {
	mode := o.Mode
	if mode == "" {
		mode = Sim
	}
	cpu := o.CPU
	if cpu == "" {
		cpu = "sharing"
	}
	disc, err := runner.ParseCPU(cpu)
	if err != nil {
		return nil, err
	}
	return runner.ExecutorFor(string(mode), o.TimeScale, disc)
}

// plan is the one place the root package builds a runner.Plan.
func (o *Options) plan(e *Experiment) (*runner.Plan, error) {
	return runner.NewPlan(e.l, runner.Options{Seed: o.Seed, Reps: o.Replications, Mode: string(o.Mode), Shard: o.Shard,
		OutDir: o.OutputDir, PerReplica: o.PerReplica, Set: o.Set})
}

// Result is what a run produced: every scenario (variant at a sweep
// point) aggregated over its replications, with 95% confidence
// half-widths when there are two or more.
type Result struct {
	*results.Experiment
	path string
	// runs are each finished scenario's replications, without their time
	// series and latency points, for Check (a Result of Run only).
	runs map[int][]*results.Run
	// Notes are what Run could not add to the result, each naming the
	// experiment: a measurement (Options.Measured) a sweep has no run to
	// compare with, a USL fit that failed. RunAll hands them on as
	// Finished.Warnings.
	Notes []string
}

// Run runs every scenario of e the experiment's number of times and
// aggregates the replications. The same experiment, options and seed give
// the same result, whatever the number of workers. When ctx is cancelled,
// the replications under way stop and Run returns what finished together
// with an error wrapping ctx.Err(); Result.Complete then reports false.
// With opt.OutputDir it writes the result's files as tsim run does.
func Run(ctx context.Context, e *Experiment, opt Options) (*Result, error) {
	ex, err := opt.executor()
	if err != nil {
		return nil, err
	}
	opt.Shard = Shard{}
	p, err := opt.plan(e)
	if err != nil {
		return nil, err
	}
	var out *Output
	if p.Out != "" {
		if out, err = OpenOutput(opt.OutputDir, p.Stem); err != nil {
			return nil, fmt.Errorf("%s: output: %v", p.Path, err)
		}
		defer out.Close()
	}
	agg := runner.NewAggregator(p)
	keep := &keeper{agg: agg, runs: map[int][]*results.Run{}}
	if err := runner.RunItems(ctx, p, ex, opt.workers(), opt.Progress, keep); err != nil && ctx.Err() == nil {
		return nil, err
	}
	res := agg.Result()
	r := &Result{Experiment: res, path: p.Path, runs: keep.runs, Notes: attach(p, res, opt)}
	if out != nil && res.Finished > 0 {
		if _, _, err := r.WriteFiles(out, opt.Outputs); err != nil {
			return r, fmt.Errorf("%s: writing results: %w", e.Path(), err)
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

// attach adds to a finished result what Run and RunAll add to every one:
// the load test's measurement (opt.Measured) to compare with, and for a
// sweep over a concurrency-like key the USL fitted to its throughput (for
// the tables, usl.png, report.html and summary.json). It returns what it
// could not do, each line naming the experiment.
func attach(p *runner.Plan, res *results.Experiment, opt Options) []string {
	if res == nil || res.Finished == 0 {
		return nil
	}
	var notes []string
	if opt.Measured != nil && opt.Measured.r.Attach(res) == 0 {
		notes = append(notes, fmt.Sprintf("%s: a sweep keeps no run to compare with %s: --measured compares the variants of an experiment without a sweep",
			p.Path, opt.Measured.r.File))
	}
	for _, s := range analysis.AttachUSL(res) {
		notes = append(notes, p.Path+": "+s)
	}
	return notes
}

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

// Path is the experiment file the result is of, as given.
func (r *Result) Path() string { return r.path }

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

// WriteText writes the tables tsim run prints; a writer of
// report.WithWidth gets them within its width.
func (r *Result) WriteText(w io.Writer) error { return report.PrintReport(w, r.Experiment) }

// Table is the tables tsim run prints, as wide as they are.
func (r *Result) Table() string {
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		return err.Error()
	}
	return b.String()
}

// SummaryJSON is the result as tsim run's summary.json.
func (r *Result) SummaryJSON() ([]byte, error) { return report.SummaryJSON(r.Experiment) }

// WriteFiles writes the result's files of the kinds in kinds (all when
// zero) into out, each whole or not at all, and removes those of earlier
// runs it does not write again. It returns the names written and the
// pictures it could not draw.
func (r *Result) WriteFiles(out *Output, kinds Outputs) (written, warnings []string, err error) {
	if kinds == (Outputs{}) {
		kinds = report.All
	}
	return report.WriteOutputs(out.d, r.Experiment, kinds)
}

// Check judges a goal, such as "p99<2s,timeouts=0", on every finished
// scenario of a Result of Run: each clause must hold for the one-sided
// 95% Student t bound across the replications (the value itself with one
// replication), as tsim plan judges it. The error says, for each clause
// and scenario that misses, the mean, the bound and the limit; nil means
// every clause holds everywhere. See analysis.ParseGoal for the clauses.
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

// CheckReplications checks a number of replications against the format's
// limits (tsim run --reps).
func CheckReplications(n int) error { return format.CheckReplications(n) }

// Finished is one experiment of RunAll, handed on in order once its files
// are written.
type Finished struct {
	Experiment *Experiment
	// Result is what finished; nil when the experiment never started
	// (the run was interrupted first). Missing says, when not every
	// scenario finished, which did not.
	Result  *Result
	Missing string
	// The experiment's files (with Options.OutputDir): the directory, the
	// names written, the pictures that could not be drawn and the error
	// that stopped the writing.
	Dir               string
	Written, Warnings []string
	WriteErr          error
	// Kept is where the run before's files went (Options.Keep), or "".
	Kept string
	// A shard (Options.Shard): its items, and whether all finished.
	ShardItems, Items int
	ShardComplete     bool

	plan *runner.Plan
}

// RunAll runs several experiments, each as Run runs it, and hands each to
// each in order, from one goroutine. All are planned, and their output
// directories locked, before anything runs. The next experiment starts on
// the workers the last replications of the one before leave free, and an
// experiment's files are written while the next one runs; at most one
// experiment's result waits to be written, so memory stays bounded.
//
// With Options.Shard set, each experiment runs only that shard's items
// and writes them for tsim merge, one experiment after the other.
//
// RunAll returns an error when an experiment cannot be planned or its
// output directory is unusable (nothing has run then), or when a
// replication fails (the experiments after it do not run). When ctx is
// cancelled the replications under way stop, and what finished is handed
// on and written; RunAll then returns nil, and the Finished values say
// what is missing.
func RunAll(ctx context.Context, exps []*Experiment, opt Options, each func(*Finished)) error {
	ex, err := opt.executor()
	if err != nil {
		return err
	}
	var plans []*runner.Plan
	var errs []error
	for _, e := range exps {
		p, err := opt.plan(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, p)
	}
	errs = append(errs, runner.SameOutputs(plans)...)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	byPlan := map[*runner.Plan]*Experiment{}
	for i, p := range plans {
		byPlan[p] = exps[i]
	}
	// Own every output directory before simulating anything: an unusable
	// -o, or one another run is writing to, is found now, not after the
	// work.
	outs := map[*runner.Plan]*Output{}
	if opt.OutputDir != "" {
		for _, p := range plans {
			d, err := p.Lock()
			if err != nil {
				return err
			}
			outs[p] = &Output{d: d}
			defer d.Unlock()
		}
	}
	if opt.Total != nil {
		total := 0
		for _, p := range plans {
			total += p.Shard.Count(p.Items())
		}
		opt.Total(total)
	}
	started := func(p *runner.Plan) {
		if opt.Started != nil {
			opt.Started(byPlan[p])
		}
	}
	if opt.Shard.Sharded() {
		return runShards(ctx, plans, byPlan, outs, ex, opt, each)
	}

	// Results are written, and handed on, by one goroutine in experiment
	// order while the next experiment simulates.
	toWrite := make(chan *Finished, 1)
	written := make(chan struct{})
	go func() {
		defer close(written)
		for f := range toWrite {
			if out := outs[f.plan]; out != nil && f.Result != nil && f.Result.Finished > 0 {
				f.Dir = out.Path()
				if opt.Keep {
					var err error
					if f.Kept, err = out.d.Keep(htmlreport.HistoryDir, report.OutputFiles); err != nil {
						f.WriteErr = fmt.Errorf("keeping the last run: %v", err)
						each(f)
						continue
					}
				}
				var warnings []string
				f.Written, warnings, f.WriteErr = f.Result.WriteFiles(out, opt.Outputs)
				f.Warnings = append(f.Warnings, warnings...)
			}
			each(f)
		}
	}()
	var failed error
	runner.ExecuteAll(ctx, plans, ex, opt.workers(), opt.Progress, started,
		func(p *runner.Plan, res *results.Experiment, err error) bool {
			if err != nil {
				failed = err
				return false
			}
			f := &Finished{Experiment: byPlan[p], plan: p}
			f.Warnings = append(f.Warnings, attach(p, res, opt)...)
			if res != nil {
				f.Result = &Result{Experiment: res, path: p.Path}
				if !res.Complete() {
					f.Missing = runner.DescribeMissing(p, res)
				}
			} else {
				f.Missing = p.Path + ": not run"
			}
			toWrite <- f
			return true
		})
	close(toWrite)
	<-written
	return failed
}

// runShards runs each plan's shard, one after the other.
func runShards(ctx context.Context, plans []*runner.Plan, byPlan map[*runner.Plan]*Experiment, outs map[*runner.Plan]*Output,
	ex runner.Executor, opt Options, each func(*Finished)) error {
	for _, p := range plans {
		f := &Finished{Experiment: byPlan[p], Items: p.Items(), ShardItems: p.Shard.Count(p.Items())}
		if ctx.Err() != nil {
			f.Missing = p.Path + ": not run"
			each(f)
			continue
		}
		if opt.Started != nil {
			opt.Started(f.Experiment)
		}
		out := outs[p]
		if out == nil {
			return fmt.Errorf("%s: a shard needs an output directory", p.Path)
		}
		version := opt.Version
		if version == "" {
			version = Version()
		}
		complete, err := runner.RunShard(out.d, p, version, func(s runner.Sink) error {
			return runner.RunItems(ctx, p, ex, opt.workers(), opt.Progress, s)
		})
		if err != nil && ctx.Err() == nil {
			return err
		}
		f.Dir, f.ShardComplete = out.Path(), complete
		if !complete {
			f.Missing = fmt.Sprintf("%s: shard %d/%d not finished", p.Path, p.Shard.Index(), p.Shard.Of())
		}
		each(f)
	}
	return nil
}

// Measured is a load test's results: a JMeter CSV results file, a k6
// JSON output or a Gatling simulation.log (package loadtest).
type Measured struct {
	r *loadtest.Result
}

// ReadMeasured reads a load test's results (tsim run --measured): a
// regular file of at most format.MaxDataBytes.
func ReadMeasured(path string) (*Measured, error) {
	data, err := input.ReadRegular(path, format.MaxDataBytes, "load-test results")
	if err != nil {
		return nil, err
	}
	r, err := loadtest.Parse(data, path)
	if err != nil {
		return nil, err
	}
	return &Measured{r}, nil
}

// Check checks the options as tsim run takes them from its flags: the
// messages name the flags.
func (o *Options) Check() error {
	switch {
	case o.Replications != 0 && format.CheckReplications(o.Replications) != nil:
		return fmt.Errorf("--reps %v", format.CheckReplications(o.Replications))
	case o.Mode != "" && !slices.Contains(Modes, o.Mode):
		return fmt.Errorf("--mode must be one of sim, real, got %q", o.Mode)
	case o.TimeScale != 0 && (o.Mode != Real || !(o.TimeScale > 0)):
		return fmt.Errorf("--time-scale needs --mode real and a value > 0 (real seconds per simulated second), got %v", max(o.TimeScale, 0))
	case o.CPU != "" && o.Mode != Real:
		return errors.New("--cpu needs --mode real")
	case o.CPU != "" && CheckCPU(o.CPU) != nil:
		return fmt.Errorf("--cpu must be sharing or cores, got %q", o.CPU)
	case o.Outputs.Formats != "" && CheckFormats(o.Outputs.Formats) != nil:
		return fmt.Errorf("--format: %v", CheckFormats(o.Outputs.Formats))
	case o.Measured != nil && o.Shard.Sharded():
		return errors.New("--measured and --shard: a shard has no runs to compare; run unsharded to compare with a load test")
	}
	return nil
}

// CheckFormats checks a list of pictures' formats, such as "png,svg"
// (tsim run --format).
func CheckFormats(s string) error {
	_, err := plots.ParseFormats(s)
	return err
}

// CheckCPU checks a real run's CPU discipline: "sharing" or "cores".
func CheckCPU(s string) error {
	_, err := runner.ParseCPU(s)
	return err
}
