package runner

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/realmode"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// An Executor runs one replication of one scenario. Modes are executors:
// "sim" is the discrete-event engine; "real" runs the same compiled
// topology with goroutines, sockets and timers on loopback (realmode).
type Executor interface {
	Run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error)
	// parallel reports whether replications may run side by side: real
	// runs may not, since they would compete for the machine they measure.
	Parallel() bool
}

type Sim struct{}

func (Sim) Run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	opt.Seed = seed
	return simmode.RunContext(ctx, top, opt)
}

func (Sim) Parallel() bool { return true }

// Real runs for real; timeScale is real seconds per simulated
// second (0: realmode chooses).
type Real struct {
	timeScale float64
	cpu       realmode.CPUDiscipline
}

func (x Real) Run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	top, err := simmode.ResolveWarmup(ctx, top, seed) // the simulator's automatic warm-up, for both
	if err != nil {
		return nil, err
	}
	return realmode.Run(ctx, top, realmode.Options{Seed: seed, TimeScale: x.timeScale, CPU: x.cpu})
}

// CPUDisciplines are the values of --cpu. The default is processor
// sharing, the simulator's own discipline, so that validate compares the
// model with itself run for real; "cores" holds a core permit per demand,
// first come first served, whose means agree for exponential demands but
// whose percentiles differ by discipline (realmode's package doc).
var CPUDisciplines = map[string]realmode.CPUDiscipline{"sharing": realmode.CPUSharing, "cores": realmode.CPUCores}

func ParseCPU(s string) (realmode.CPUDiscipline, error) {
	d, ok := CPUDisciplines[s]
	if !ok {
		return 0, fmt.Errorf("--cpu must be sharing or cores, got %q", s)
	}
	return d, nil
}

func (Real) Parallel() bool { return false }

// modes lists the valid values of --mode.
var Modes = []string{"sim", "real"}

// ExecutorFor returns the Executor of a mode. The mode has been checked
// against modes.
func ExecutorFor(mode string, timeScale float64, cpu realmode.CPUDiscipline) (Executor, error) {
	switch mode {
	case "sim":
		return Sim{}, nil
	case "real":
		return Real{timeScale, cpu}, nil
	}
	return nil, fmt.Errorf("unknown mode %q", mode)
}

// ReplicationSeed is the master seed of replication k of an experiment
// whose seed is seed. Replication 0 uses the seed itself, so that any
// replication can be replayed alone with --seed and --reps 1; the others
// scramble (seed, k) with SplitMix64, so that the replications of nearby
// seeds do not overlap. Every variant and sweep point uses the same seeds:
// their replication k see common random numbers.
func ReplicationSeed(seed uint64, k int) uint64 { return sim.DeriveSeed(seed, uint64(k)) }

// Plan is one experiment to run, with the command line's overrides applied.
type Plan struct {
	Path  string // the experiment file, as given
	Stem  string // file name without extension: the output subdirectory
	Out   string // output directory, DIR/<stem>
	X     *format.Experiment
	Seed  uint64
	Reps  int
	Mode  string // "sim" or "real"
	Shard Shard  // which work items this process runs; the zero value is all
	// PerReplica: the reports show every machine of a farm (besides the
	// file's report.per_replica).
	PerReplica bool
	// Set are settings applied to every scenario on top of the file's
	// (key paths as in a sweep, such as "tier.web.calls.maxconnection");
	// the command line's and the library's overrides.
	Set []format.Param
	// Sources are the experiment file and every file it read, as they
	// were read; a shard's manifest carries them.
	Sources []SourceFile
}

// Overrides are what a command line sets on top of the files.
type Overrides struct {
	Seed    *uint64 // nil: each file's seed
	Reps    int     // 0: each file's replications
	Mode    string
	Shard   Shard
	OutDir  string // results go to OutDir/<file stem>
	Workers int
	Input   input.Options // limits and confinement of the files read
	// PerReplica: report every machine of a farm (tsim run --per-replica).
	PerReplica bool
}

// PlanFiles loads every file and returns its plan, or every problem found:
// a file that does not load, a name that gives no output directory of its
// own, two files that would write to one directory.
func PlanFiles(files []string, o Overrides) ([]*Plan, []error) {
	var plans []*Plan
	var errs []error
	for _, f := range files {
		x, src, err := LoadSourcesFrom(f, o.Input)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p := &Plan{Path: f, Stem: Stem(f), X: x, Seed: x.Seed, Reps: x.Replications, Mode: o.Mode, Shard: o.Shard, Sources: src, PerReplica: o.PerReplica}
		if err := CheckStem(p.Stem); err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", f, err))
			continue
		}
		if o.Seed != nil {
			p.Seed = *o.Seed
		}
		if o.Reps > 0 {
			p.Reps = o.Reps
		}
		p.Out = filepath.Join(o.OutDir, p.Stem)
		for _, q := range plans {
			if q.Out == p.Out {
				errs = append(errs, fmt.Errorf("%s and %s would both write to %s; rename one or run them separately", q.Path, p.Path, p.Out))
			}
		}
		plans = append(plans, p)
	}
	return plans, errs
}

// Lock takes the plan's output directory (its shard's, for a shard) for
// this process, before anything runs; see atomicio.Lock.
func (p *Plan) Lock() (*atomicio.Dir, error) {
	root, name := filepath.Dir(p.Out), p.Stem
	if p.Shard.Sharded() {
		root, name = p.Out, p.Shard.DirName()
	}
	d, err := atomicio.Lock(root, name)
	if err != nil {
		return nil, fmt.Errorf("%s: output: %v", p.Path, err)
	}
	return d, nil
}

// Scenario resolves scenario i of the plan: the file's, with Set applied.
func (p *Plan) Scenario(i int) (format.Scenario, error) {
	sc, err := p.X.Scenario(i)
	if err != nil || len(p.Set) == 0 {
		return sc, err
	}
	set := append(append([]format.Param(nil), sc.Params...), p.Set...)
	over, err := p.X.ScenarioWith(sc.Variant, set, nil)
	if err != nil {
		return sc, err
	}
	over.Index, over.Params = sc.Index, sc.Params
	return over, nil
}

func (p *Plan) sweep() bool { return len(p.X.Sweep) > 0 }

// seeds returns the master seed of every replication.
func (p *Plan) Seeds() []uint64 {
	s := make([]uint64, p.Reps)
	for k := range s {
		s[k] = ReplicationSeed(p.Seed, k)
	}
	return s
}

// items is the number of work items: every replication of every scenario.
// Item k is replication k mod reps of scenario k / reps, so items are in
// scenario order, and each scenario's replications in order.
func (p *Plan) Items() int { return p.X.NumScenarios() * p.Reps }

// TestHookJobDone, if set, is called after each replication is collected;
// tests use it to interrupt a run at a known point.
var TestHookJobDone func()

// Item is one finished work Item: replication rep of scenario sc.
type Item struct {
	Index    int // Rep + reps × scenario index
	Scenario *format.Scenario
	Rep      int
	Run      *results.Run
}

// A Sink takes the finished items of a run, in Item order (with gaps where
// a run was interrupted). It is called from one goroutine.
type Sink interface {
	Take(it Item) error
}

// execute runs every scenario of p, each p.Reps times, on workers
// goroutines, and aggregates the replications scenario by scenario. Each
// replication has its own engine and nothing is shared between them, so
// the results do not depend on the number of workers or on the order in
// which replications finish.
//
// When ctx is cancelled no new replication starts and those running stop (the
// simulator looks every few thousand events); the scenarios whose replications
// all finished are returned. A failed replication stops the run and is
// returned as the error.
func Execute(ctx context.Context, p *Plan, ex Executor, workers int, progress func()) (*results.Experiment, error) {
	agg := NewAggregator(p)
	err := RunItems(ctx, p, ex, workers, progress, agg)
	return agg.res, err
}

// ExecuteAll runs plans as Execute runs each, one after the other on the
// same workers, except that the next plan starts as soon as every
// replication of the one before is running: the workers that the end of
// an experiment leaves idle (its last replications, one scenario's
// replications longer than the rest) go to the next instead of waiting.
// At most one plan a worker and one more are started and not yet handed
// on. Each replication still has its own engine, so the results are
// Execute's.
//
// started, if not nil, is called as a plan starts. finished is called in
// plan order, from one goroutine, with what Execute would have returned
// for the plan, or with nil and nil for a plan that never started because
// ctx was cancelled; when it returns false, the plans still running stop
// and finished is not called again. Executors that do not run in parallel
// (real mode) run one plan at a time.
func ExecuteAll(ctx context.Context, plans []*Plan, ex Executor, workers int, progress func(), started func(*Plan), finished func(*Plan, *results.Experiment, error) bool) {
	ctx, cancel := context.WithCancel(ctx)
	if !ex.Parallel() {
		workers = 1
	}
	running := make(chan struct{}, max(workers, 1))
	// Plans started and not yet handed to finished: a plan waiting for
	// finished holds its results, so they are bounded too.
	ahead := make(chan struct{}, cap(running)+1)
	type outcome struct {
		res *results.Experiment
		err error
	}
	outs := make([]chan outcome, len(plans))
	for i := range outs {
		outs[i] = make(chan outcome, 1)
	}
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait() // no goroutine outlives the call
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, p := range plans {
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
			}
			if ctx.Err() != nil {
				outs[i] <- outcome{}
				continue
			}
			if started != nil {
				started(p)
			}
			next, ended := make(chan struct{}), make(chan struct{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(ended)
				agg := NewAggregator(p)
				err := runItems(ctx, p, ex, running, progress, agg, func() { close(next) })
				outs[i] <- outcome{agg.res, err}
			}()
			if ex.Parallel() {
				<-next
			} else {
				<-ended
			}
		}
	}()
	for i, p := range plans {
		o := <-outs[i]
		if !finished(p, o.res, o.err) {
			return
		}
		select {
		case <-ahead:
		default: // a plan that never started took no place
		}
	}
}

// RunItems runs the work items of p that p.Shard owns and hands them to
// s in Item order. Items are dispatched in order and at most window of them
// are out (running, or finished and waiting for an earlier one), so that
// memory stays bounded whatever the number of scenarios: a scenario's
// replications are aggregated (or written) and dropped as soon as the items
// before them are. Scenarios are resolved one at a time as workers become
// free, so that a large sweep never holds all its topologies.
func RunItems(ctx context.Context, p *Plan, ex Executor, workers int, progress func(), s Sink) error {
	if !ex.Parallel() {
		workers = 1
	}
	return runItems(ctx, p, ex, make(chan struct{}, workers), progress, s, nil)
}

// runItems is RunItems with its workers taking a token of running from
// running (whose capacity is the number of workers) for each replication,
// so that several runs may share them, and dispatched, if not nil, called
// once every item is running or finished, or the dispatch stopped.
func runItems(ctx context.Context, p *Plan, ex Executor, running chan struct{}, progress func(), s Sink, dispatched func()) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := cap(running)
	window := 4*workers + p.Reps
	tokens := make(chan struct{}, window)

	type job struct {
		sc  *format.Scenario
		rep int
	}
	type done struct {
		job
		run *results.Run
		err error
	}
	jobs := make(chan job)
	out := make(chan done)

	var dispatchErr error
	go func() {
		defer close(jobs)
		if dispatched != nil {
			defer dispatched()
		}
		for i := range p.X.NumScenarios() {
			if !p.Shard.ownsAny(i*p.Reps, p.Reps) {
				continue
			}
			sc, err := p.Scenario(i)
			if err != nil {
				dispatchErr = fmt.Errorf("%s: scenario %d: %w", p.Path, i, err)
				cancel()
				return
			}
			for k := range p.Reps {
				if !p.Shard.owns(i*p.Reps + k) {
					continue
				}
				select {
				case tokens <- struct{}{}:
				case <-ctx.Done():
					return
				}
				select {
				case jobs <- job{&sc, k}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()

	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				// The token first: a job handed out is a job running.
				running <- struct{}{}
				j, ok := <-jobs
				if !ok {
					<-running
					return
				}
				if ctx.Err() != nil {
					<-running
					continue
				}
				opt := model.Options{NoSeries: p.sweep() || j.rep > 0}
				r, err := runSafely(ctx, ex, &j.sc.Topology, ReplicationSeed(p.Seed, j.rep), opt)
				<-running
				if r != nil && opt.NoSeries {
					// Only the first replication of a variant is drawn.
					r.Points = nil
				}
				out <- done{j, r, err}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()

	// Items finish in any order; they are handed on in Item order.
	waiting := map[int]Item{}
	next := p.Shard.first()
	var runErr error
	deliver := func(it Item) {
		delete(waiting, it.Index)
		<-tokens
		if runErr == nil {
			if err := s.Take(it); err != nil {
				runErr = err
				cancel()
			}
		}
	}
	for d := range out {
		if d.err != nil {
			if parent.Err() != nil && errors.Is(d.err, parent.Err()) {
				continue // stopped by the caller: not finished, not failed
			}
			if runErr == nil {
				seed := ReplicationSeed(p.Seed, d.rep)
				runErr = fmt.Errorf("%s: %s, replication %d (seed %d): %w\n(replay it alone: tsim run %s --seed %d --reps 1)",
					p.Path, ScenarioName(d.sc.Variant, d.sc.Params), d.rep+1, seed, d.err, p.Path, seed)
				cancel()
			}
			continue
		}
		k := d.sc.Index*p.Reps + d.rep
		waiting[k] = Item{Index: k, Scenario: d.sc, Rep: d.rep, Run: d.run}
		for {
			it, ok := waiting[next]
			if !ok {
				break
			}
			deliver(it)
			next = p.Shard.after(next)
		}
		if progress != nil {
			progress()
		}
		if TestHookJobDone != nil {
			TestHookJobDone()
		}
	}
	// Interrupted: what finished after a gap is handed on too, in order.
	rest := make([]int, 0, len(waiting))
	for k := range waiting {
		rest = append(rest, k)
	}
	sort.Ints(rest)
	for _, k := range rest {
		deliver(waiting[k])
	}
	if runErr != nil {
		return runErr
	}
	return dispatchErr
}

// Aggregator is the Sink of a run (or a merge) that keeps results: it
// collects each scenario's replications, aggregates them when the last one
// arrives and keeps only the aggregate (and, without a sweep, the first
// replication for the pictures).
type Aggregator struct {
	p    *Plan
	res  *results.Experiment
	sc   *format.Scenario // the scenario being collected
	runs []*results.Run
	got  int
}

func NewAggregator(p *Plan) *Aggregator {
	return &Aggregator{p: p, res: p.newExperiment()}
}

// Result is what the aggregator has collected so far.
func (a *Aggregator) Result() *results.Experiment { return a.res }

// newExperiment is the empty result of p: its description, seeds and
// sweep axes, with no scenario finished.
func (p *Plan) newExperiment() *results.Experiment {
	r := &results.Experiment{
		Name:             p.X.Name,
		Description:      p.X.Description,
		File:             filepath.ToSlash(p.Path),
		Stem:             p.Stem,
		Seed:             p.Seed,
		Replications:     p.Reps,
		ReplicationSeeds: p.Seeds(),
		Mode:             p.Mode,
		PerReplica:       p.X.PerReplica || p.PerReplica,
		Scenarios:        make([]*results.Scenario, p.X.NumScenarios()),
	}
	if r.Name == "" {
		r.Name = p.Stem
	}
	for _, ax := range p.X.Sweep {
		r.Sweep = append(r.Sweep, results.Axis{Key: ax.Key, Values: ax.Values})
	}
	return r
}

// Stem is a file's name without its directory and extension: the name of
// an experiment's output directory.
func Stem(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

func (a *Aggregator) Take(it Item) error {
	if a.sc == nil || it.Scenario.Index != a.sc.Index {
		// A scenario left incomplete by an interruption is dropped.
		a.sc, a.runs, a.got = it.Scenario, make([]*results.Run, a.p.Reps), 0
	}
	if a.runs[it.Rep] == nil {
		a.got++
	}
	a.runs[it.Rep] = it.Run
	if a.got == a.p.Reps {
		a.res.Scenarios[a.sc.Index] = finishScenario(a.p, a.sc, a.runs, len(a.res.Scenarios))
		a.res.Finished++
		a.sc, a.runs, a.got = nil, nil, 0
	}
	return nil
}

// finishScenario aggregates a scenario's replications and keeps what the
// pictures need of its first replication.
func finishScenario(p *Plan, sc *format.Scenario, runs []*results.Run, n int) *results.Scenario {
	s := &results.Scenario{Index: sc.Index, Variant: sc.Variant, Params: sc.Params, Agg: aggregateRuns(runs)}
	if !p.sweep() {
		s.First = runs[0]
	}
	if p.sweep() && n > results.MaxCDFCurves {
		s.Agg.Quantiles = nil
	}
	return s
}

// ScenarioName names a scenario in messages: the variant and its sweep
// values, as "fixed, tier.fe.calls.maxconnection=8".
func ScenarioName(variant string, params []format.Param) string {
	parts := []string{"variant " + variant}
	for _, kv := range params {
		parts = append(parts, kv.Key+"="+kv.Value)
	}
	return strings.Join(parts, ", ")
}

const ciLevel = 0.95

// halfWidth is the confidence half-width of the mean of xs, or nil.
func halfWidth(xs []float64) *float64 {
	if len(xs) < 2 {
		return nil
	}
	_, h := sim.MeanCI(xs, ciLevel)
	if math.IsNaN(h) || math.IsInf(h, 0) {
		return nil
	}
	return &h
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// aggregateRuns summarises the replications of one scenario, in
// replication order.
func aggregateRuns(runs []*results.Run) results.Aggregate {
	a := results.Aggregate{FirstTimeoutS: -1}
	var dur, warm, thr, good, tor, rej []float64
	var withLat []*results.Run
	for _, r := range runs {
		dur = append(dur, r.Duration)
		warm = append(warm, r.Warmup)
		thr = append(thr, r.ThroughputPerS)
		good = append(good, r.GoodputPerS)
		tor = append(tor, r.TimeoutRate)
		rej = append(rej, r.RejectRate)
		a.Requests = a.Requests.Add(r.Requests)
		a.Events += r.Events
		if r.FirstTimeout >= 0 && (a.FirstTimeoutS < 0 || r.FirstTimeout < a.FirstTimeoutS) {
			a.FirstTimeoutS = r.FirstTimeout
		}
		if r.GoodputPerS > 0 {
			withLat = append(withLat, r)
		}
	}
	a.DurationS, a.WarmupS, a.ThroughputPerS, a.GoodputPerS = mean(dur), mean(warm), mean(thr), mean(good)
	a.TimeoutRate, a.RejectRate = mean(tor), mean(rej)

	var lmean, lp99 []float64
	for _, r := range withLat {
		lmean = append(lmean, r.Latency.Mean)
		lp99 = append(lp99, r.Latency.P99)
	}
	if k := float64(len(withLat)); k > 0 {
		l := &a.Latency
		b := &a.Breakdown
		for _, r := range withLat {
			l.Mean += r.Latency.Mean / k
			l.P50 += r.Latency.P50 / k
			l.P90 += r.Latency.P90 / k
			l.P99 += r.Latency.P99 / k
			l.P999 += r.Latency.P999 / k
			l.Max = math.Max(l.Max, r.Latency.Max)
			o := r.Breakdown
			b.ConnWait += o.ConnWait / k
			b.AdmissionWait += o.AdmissionWait / k
			b.ThreadWait += o.ThreadWait / k
			b.ThrottleWait += o.ThrottleWait / k
			b.LockWait += o.LockWait / k
			b.CPUWait += o.CPUWait / k
			b.CPU += o.CPU / k
			b.ExternalWait += o.ExternalWait / k
			b.Network += o.Network / k
			b.Other += o.Other / k
		}
		var nq float64
		for _, r := range withLat {
			if len(r.Quantiles) == 0 {
				continue
			}
			if a.Quantiles == nil {
				a.Quantiles = make([]float64, len(r.Quantiles))
			}
			if len(r.Quantiles) != len(a.Quantiles) {
				continue
			}
			nq++
			for i, v := range r.Quantiles {
				a.Quantiles[i] += v
			}
		}
		for i := range a.Quantiles {
			a.Quantiles[i] /= nq
		}
	}
	a.Latency.None = len(withLat) == 0
	a.Tiers = aggregateTiers(runs)
	a.Calls = aggregateCalls(runs)
	if len(runs[0].Replicas) > 0 {
		machines := make([][]results.Tier, len(runs))
		balancers := make([][]results.Balancer, len(runs))
		for i, r := range runs {
			machines[i], balancers[i] = r.Replicas, r.Balancers
		}
		a.Replicas = results.MeanTiers(machines)
		a.ReplicaCalls = aggregateCallsOf(runs, func(r *results.Run) []results.Call { return r.ReplicaCalls }, runs[0].ReplicaNames)
		a.Balancers = results.MeanBalancers(balancers)
	}
	if len(runs) > 1 {
		a.CI = &results.Intervals{
			Level:          ciLevel,
			ThroughputPerS: halfWidth(thr),
			GoodputPerS:    halfWidth(good),
			LatencyMeanS:   halfWidth(lmean),
			LatencyP99S:    halfWidth(lp99),
			TimeoutRate:    halfWidth(tor),
		}
	}
	return a
}

// aggregateTiers averages each tier's counters over the replications
// (results.MeanTiers says how).
func aggregateTiers(runs []*results.Run) []results.Tier {
	tiers := make([][]results.Tier, len(runs))
	for i, r := range runs {
		tiers[i] = r.Tiers
	}
	return results.MeanTiers(tiers)
}

// aggregateCalls averages each caller→callee pair over the replications.
// A run lists a pair when it is first used, so pairs are matched by (from,
// to, occurrence) rather than by position, and listed in tier order: the
// load's calls first, then by caller and callee.
func aggregateCalls(runs []*results.Run) []results.Call {
	return aggregateCallsOf(runs, func(r *results.Run) []results.Call { return r.Calls }, nil)
}

// aggregateCallsOf is aggregateCalls of the rows calls picks from each
// run; names, if given, order the callers and callees (else the run's
// TierNames).
func aggregateCallsOf(runs []*results.Run, calls func(*results.Run) []results.Call, names []string) []results.Call {
	type key struct {
		from, to string
		nth      int
	}
	var keys []key
	sums := map[key]*results.Call{}
	waits := map[key]int{}
	n := float64(len(runs))
	for _, r := range runs {
		seen := map[[2]string]int{}
		for _, c := range calls(r) {
			pair := [2]string{c.From, c.To}
			k := key{c.From, c.To, seen[pair]}
			seen[pair]++
			s := sums[k]
			if s == nil {
				s = &results.Call{From: c.From, To: c.To, Limit: c.Limit, Resolution: c.Resolution}
				sums[k] = s
				keys = append(keys, k)
			}
			s.InUseMean += c.InUseMean / n
			s.InUseMax = math.Max(s.InUseMax, c.InUseMax)
			s.WaitingMean += c.WaitingMean / n
			s.WaitingMax = math.Max(s.WaitingMax, c.WaitingMax)
			if c.Calls > 0 {
				s.WaitMean += c.WaitMean
				s.WaitP99 += c.WaitP99
				waits[k]++
			}
			s.Calls += c.Calls
			s.TimedOut += c.TimedOut
			s.Rejected += c.Rejected
			s.Failed += c.Failed
			s.Retries += c.Retries
			s.Proxies += c.Proxies
			s.FactoryHits += c.FactoryHits
			s.FactoriesBuilt += c.FactoriesBuilt
			s.FactoriesPurged += c.FactoriesPurged
			s.NegotiationTimedOut += c.NegotiationTimedOut
			s.NegotiationFailed += c.NegotiationFailed
		}
	}
	order := map[string]int{"load": -1}
	if names == nil {
		names = runs[0].TierNames
	}
	for i, name := range names {
		order[name] = i
	}
	rank := func(k key) [3]int { return [3]int{order[k.from], order[k.to], k.nth} }
	sortStable(keys, func(a, b key) bool {
		ra, rb := rank(a), rank(b)
		for i := range ra {
			if ra[i] != rb[i] {
				return ra[i] < rb[i]
			}
		}
		return false
	})
	out := make([]results.Call, 0, len(keys))
	for _, k := range keys {
		c := *sums[k]
		if w := waits[k]; w > 0 {
			c.WaitMean /= float64(w)
			c.WaitP99 /= float64(w)
		}
		out = append(out, c)
	}
	return out
}

// sortStable is an insertion sort: the lists are a handful of calls.
func sortStable[T any](xs []T, less func(a, b T) bool) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && less(xs[j], xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// Sharding: "tsim run FILE --shard i/n" runs the work items k with
// k mod n = i, where Item k is replication k mod reps of scenario k / reps,
// and writes each finished Item as one JSON line of
// DIR/<stem>/shard-i-of-n/items.jsonl, in Item order, as soon as the items
// before it are written. When the shard ends it writes shard.json, the
// Manifest: the experiment's files and their hash, the seed, the number of
// replications and items, and whether the shard finished. "tsim merge"
// reads the shards of an experiment back in Item order and aggregates them
// exactly as "tsim run" does, so that the merged files are the bytes an
// unsharded run writes.

// shard is which work items one process runs: those k with k mod n = i.
// The zero value (n = 0) runs every Item.
type Shard struct{ i, n int }

func (s Shard) sharded() bool { return s.n > 1 }

// Sharded reports whether s runs only some of the items.
func (s Shard) Sharded() bool { return s.sharded() }

// Index and Of are i and n of shard i/n.
func (s Shard) Index() int { return s.i }

// Of is n of shard i/n.
func (s Shard) Of() int { return s.n }

// Count is the number of the first total items the shard owns.
func (s Shard) Count(total int) int { return s.count(total) }

func (s Shard) owns(k int) bool { return s.n <= 1 || k%s.n == s.i }

// ownsAny reports whether the shard owns any of the count items from start.
func (s Shard) ownsAny(start, count int) bool {
	if s.n <= 1 || count >= s.n {
		return count > 0
	}
	for k := start; k < start+count; k++ {
		if s.owns(k) {
			return true
		}
	}
	return false
}

// first is the shard's first Item; after(k) the one after its Item k.
func (s Shard) first() int {
	if s.n <= 1 {
		return 0
	}
	return s.i
}

func (s Shard) after(k int) int {
	if s.n <= 1 {
		return k + 1
	}
	return k + s.n
}

// count is the number of the first total items the shard owns.
func (s Shard) count(total int) int {
	if s.n <= 1 {
		return total
	}
	if s.i >= total {
		return 0
	}
	return (total-1-s.i)/s.n + 1
}

func (s Shard) dirName() string { return fmt.Sprintf("shard-%d-of-%d", s.i, s.n) }

// ParseShard reads "i/n" with 0 ≤ i < n.
func ParseShard(v string) (Shard, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard wants i/n with 0 ≤ i < n (the shard number counts from 0, as JOB_COMPLETION_INDEX does), got %q", v)
	}
	return Shard{i, n}, nil
}

// shardFormat names the layout of shard directories; merge refuses others.
const shardFormat = "tsim-shard/1"

// Manifest is shard.json.
type Manifest struct {
	Format       string `json:"format"`
	TsimVersion  string `json:"tsim_version"`
	File         string `json:"file"`   // the experiment file as given to tsim run
	SHA256       string `json:"sha256"` // of the experiment file and the files it read
	Seed         uint64 `json:"seed"`
	Replications int    `json:"replications"`
	Mode         string `json:"mode"`
	Shard        int    `json:"shard"`
	Shards       int    `json:"shards"`
	Scenarios    int    `json:"scenarios"`
	Items        int    `json:"items"`          // work items of the whole experiment
	ItemsInShard int    `json:"items_in_shard"` // those this shard owns
	ItemsWritten int    `json:"items_written"`
	Complete     bool   `json:"complete"`
	// Sources are the experiment file and every file it read (topologies
	// given as paths, empirical distributions), so that merge needs
	// neither the files nor the directory the shards were run in.
	Sources []SourceFile `json:"sources"`
}

type SourceFile struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// SourcesHash is the SHA-256 of the experiment file and the files it read,
// each as its name and content.
func SourcesHash(src []SourceFile) string {
	h := sha256.New()
	for _, f := range src {
		fmt.Fprintf(h, "%d:%s%d:", len(f.Name), f.Name, len(f.Content))
		io.WriteString(h, f.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ItemJSON is one line of items.jsonl: a finished work Item with the parts
// of its run that summary.json leaves out.
type ItemJSON struct {
	Item        int              `json:"Item"`
	Scenario    int              `json:"scenario"`
	Replication int              `json:"replication"`
	Variant     string           `json:"variant"`
	Params      []paramJSON      `json:"params"`
	Run         *results.Run     `json:"run"`
	TierNames   []string         `json:"tier_names,omitempty"`
	Series      []results.Sample `json:"series,omitempty"`
	// ReplicaNames are the machines of the farms (Run.ReplicaNames).
	ReplicaNames []string `json:"replica_names,omitempty"`
	// Points are [t, latency, outcome] triples.
	Points    [][3]float64 `json:"points,omitempty"`
	Quantiles []float64    `json:"quantiles,omitempty"`
}

type paramJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func encodeItem(it Item) ItemJSON {
	r := it.Run
	j := ItemJSON{Item: it.Index, Scenario: it.Scenario.Index, Replication: it.Rep, Variant: it.Scenario.Variant,
		Params: []paramJSON{}, Run: r, TierNames: r.TierNames, Series: r.Series, Quantiles: r.Quantiles, ReplicaNames: r.ReplicaNames}
	for _, kv := range it.Scenario.Params {
		j.Params = append(j.Params, paramJSON{kv.Key, kv.Value})
	}
	for _, p := range r.Points {
		j.Points = append(j.Points, [3]float64{p.T, p.Latency, float64(p.Outcome)})
	}
	return j
}

func decodeItem(j ItemJSON) (Item, error) {
	r := j.Run
	if r == nil {
		return Item{}, errors.New("no run")
	}
	r.TierNames, r.Series, r.Quantiles, r.ReplicaNames = j.TierNames, j.Series, j.Quantiles, j.ReplicaNames
	for _, p := range j.Points {
		o := results.Outcome(p[2])
		if p[2] != float64(o) || o > results.Failed {
			return Item{}, fmt.Errorf("bad outcome %v", p[2])
		}
		r.Points = append(r.Points, results.Point{T: p[0], Latency: p[1], Outcome: o})
	}
	sc := &format.Scenario{Index: j.Scenario, Variant: j.Variant}
	for _, kv := range j.Params {
		sc.Params = append(sc.Params, format.Param{Key: kv.Key, Value: kv.Value})
	}
	return Item{Index: j.Item, Scenario: sc, Rep: j.Replication, Run: r}, nil
}

// shardWriter is the Sink of a sharded run: it appends each Item to
// items.jsonl as it comes.
type shardWriter struct {
	f       *os.File
	w       *bufio.Writer
	enc     *json.Encoder
	written int
}

// openShard prepares a shard's directory: the Manifest and items of an
// earlier run are removed first, so that a shard that does not finish is
// never taken for one that did.
func openShard(dir string) (*shardWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, n := range []string{"shard.json", "items.jsonl"} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	f, err := os.Create(filepath.Join(dir, "items.jsonl"))
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	return &shardWriter{f: f, w: w, enc: json.NewEncoder(w)}, nil
}

func (s *shardWriter) Take(it Item) error {
	if err := s.enc.Encode(encodeItem(it)); err != nil {
		return fmt.Errorf("writing Item %d: %w", it.Index, err)
	}
	s.written++
	// Each line reaches the file when it is written: a shard's memory
	// does not grow with its number of items.
	return s.w.Flush()
}

func (s *shardWriter) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// RunShard runs one shard of an experiment and writes its directory. It
// returns the directory and whether every Item of the shard finished.
//
// version is tsim's version, recorded in the manifest: merge refuses to
// combine shards of different versions.
func RunShard(ctxRun func(Sink) error, p *Plan, src []SourceFile, version string) (dir string, complete bool, err error) {
	dir = filepath.Join(p.Out, p.Shard.dirName())
	w, err := openShard(dir)
	if err != nil {
		return dir, false, err
	}
	runErr := ctxRun(w)
	if err := w.close(); err != nil && runErr == nil {
		runErr = err
	}
	m := Manifest{
		Format:       shardFormat,
		TsimVersion:  version,
		File:         filepath.ToSlash(p.Path),
		SHA256:       SourcesHash(src),
		Seed:         p.Seed,
		Replications: p.Reps,
		Mode:         p.Mode,
		Shard:        p.Shard.i,
		Shards:       p.Shard.n,
		Scenarios:    p.X.NumScenarios(),
		Items:        p.Items(),
		ItemsInShard: p.Shard.count(p.Items()),
		ItemsWritten: w.written,
		Sources:      src,
	}
	m.Complete = runErr == nil && m.ItemsWritten == m.ItemsInShard
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return dir, false, err
	}
	if err := atomicio.WriteFile(filepath.Join(dir, "shard.json"), append(b, '\n')); err != nil && runErr == nil {
		runErr = err
	}
	return dir, m.Complete, runErr
}

// ---------------------------------------------------------------------------
// reading shards back

// ShardDir is one shard directory and its Manifest.
type ShardDir struct {
	Dir      string
	Manifest Manifest
}

// FindShards lists the shard directories under each argument: a shard
// directory itself (it holds shard.json), an experiment's output directory
// (it holds shard-i-of-n directories) or an output root (its experiment
// directories do).
func FindShards(args []string) ([]string, error) {
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s: not a directory (give shard directories, or the -o directory of the shards)", a)
		}
		if _, err := os.Stat(filepath.Join(a, "shard.json")); err == nil {
			add(a)
			continue
		}
		var found []string
		for _, pat := range []string{"shard-*-of-*", filepath.Join("*", "shard-*-of-*")} {
			m, err := filepath.Glob(filepath.Join(a, pat, "shard.json"))
			if err != nil {
				return nil, err
			}
			found = append(found, m...)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no shards here (no shard.json in it, in shard-*-of-* or in */shard-*-of-*); was the shard interrupted?", a)
		}
		sort.Strings(found)
		for _, f := range found {
			add(filepath.Dir(f))
		}
	}
	return dirs, nil
}

func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, "shard.json"))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %v", filepath.Join(dir, "shard.json"), err)
	}
	if m.Format != shardFormat {
		return m, fmt.Errorf("%s: format %q, want %q", filepath.Join(dir, "shard.json"), m.Format, shardFormat)
	}
	return m, nil
}

// ShardGroup is the shards of one experiment, by shard number.
type ShardGroup struct {
	Stem   string
	Shards []ShardDir // by shard number once grouped
}

// GroupShards groups shard directories by experiment (the output
// directory's name) and checks that each group is one whole run: the same
// experiment files, seed, replications, mode, tsim version and number of
// shards, every shard present once and finished.
func GroupShards(dirs []string) ([]*ShardGroup, error) {
	var groups []*ShardGroup
	var errs []string
	byStem := map[string]*ShardGroup{}
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		st := Stem(m.File)
		g := byStem[st]
		if g == nil {
			g = &ShardGroup{Stem: st}
			byStem[st] = g
			groups = append(groups, g)
		}
		g.Shards = append(g.Shards, ShardDir{Dir: d, Manifest: m})
	}
	for _, g := range groups {
		ref := g.Shards[0]
		r := ref.Manifest
		for _, s := range g.Shards[1:] {
			m := s.Manifest
			var diff []string
			if m.File != r.File {
				diff = append(diff, fmt.Sprintf("file %s, not %s", m.File, r.File))
			}
			if m.SHA256 != r.SHA256 {
				diff = append(diff, fmt.Sprintf("experiment files with SHA-256 %.12s…, not %.12s… (the file changed between shards)", m.SHA256, r.SHA256))
			}
			if m.Seed != r.Seed {
				diff = append(diff, fmt.Sprintf("seed %d, not %d", m.Seed, r.Seed))
			}
			if m.Replications != r.Replications {
				diff = append(diff, fmt.Sprintf("%d replications, not %d", m.Replications, r.Replications))
			}
			if m.Mode != r.Mode {
				diff = append(diff, fmt.Sprintf("mode %s, not %s", m.Mode, r.Mode))
			}
			if m.Shards != r.Shards {
				diff = append(diff, fmt.Sprintf("%d shards, not %d", m.Shards, r.Shards))
			}
			if m.TsimVersion != r.TsimVersion {
				diff = append(diff, fmt.Sprintf("tsim version %s, not %s", m.TsimVersion, r.TsimVersion))
			}
			if len(diff) > 0 {
				errs = append(errs, fmt.Sprintf("%s does not match %s: it was run with %s; shards of one run must share the experiment, seed, replications, mode and shard count",
					s.Dir, ref.Dir, strings.Join(diff, "; ")))
			}
		}
		if len(errs) > 0 {
			continue
		}
		have := make([]*ShardDir, r.Shards)
		for i := range g.Shards {
			s := &g.Shards[i]
			switch {
			case s.Manifest.Shard < 0 || s.Manifest.Shard >= r.Shards:
				errs = append(errs, fmt.Sprintf("%s: shard %d of %d is out of range", s.Dir, s.Manifest.Shard, r.Shards))
			case have[s.Manifest.Shard] != nil:
				errs = append(errs, fmt.Sprintf("%s and %s are both shard %d/%d", have[s.Manifest.Shard].Dir, s.Dir, s.Manifest.Shard, r.Shards))
			default:
				have[s.Manifest.Shard] = s
			}
			if !s.Manifest.Complete || s.Manifest.ItemsWritten != s.Manifest.ItemsInShard {
				errs = append(errs, fmt.Sprintf("%s: shard %d/%d did not finish (%d of %d items written); run it again",
					s.Dir, s.Manifest.Shard, s.Manifest.Shards, s.Manifest.ItemsWritten, s.Manifest.ItemsInShard))
			}
		}
		var missing []string
		for i, s := range have {
			if s == nil {
				missing = append(missing, fmt.Sprintf("%d/%d", i, r.Shards))
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Sprintf("%s: missing shards %s (tsim run %s --shard %s)", g.Stem, strings.Join(missing, ", "), r.File, missing[0]))
		}
		if len(errs) == 0 {
			sorted := make([]ShardDir, len(have))
			for i, s := range have {
				sorted[i] = *s
			}
			g.Shards = sorted
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return groups, nil
}

// replay reads a group's items back in Item order — Item k from shard
// k mod n — and hands them to s. Each shard's items.jsonl is read as a
// stream, so memory does not grow with the number of items.
func Replay(g *ShardGroup, s Sink) error {
	n := len(g.Shards)
	decs := make([]*json.Decoder, n)
	for i, sd := range g.Shards {
		f, err := os.Open(filepath.Join(sd.Dir, "items.jsonl"))
		if err != nil {
			return err
		}
		defer f.Close()
		decs[i] = json.NewDecoder(bufio.NewReaderSize(f, 1<<16))
	}
	total := g.Shards[0].Manifest.Items
	for k := range total {
		sd := g.Shards[k%n]
		var j ItemJSON
		if err := decs[k%n].Decode(&j); err != nil {
			if err == io.EOF {
				err = errors.New("ends early")
			}
			return fmt.Errorf("%s: Item %d: %v", filepath.Join(sd.Dir, "items.jsonl"), k, err)
		}
		if j.Item != k {
			return fmt.Errorf("%s: Item %d where Item %d belongs", filepath.Join(sd.Dir, "items.jsonl"), j.Item, k)
		}
		it, err := decodeItem(j)
		if err != nil {
			return fmt.Errorf("%s: Item %d: %v", filepath.Join(sd.Dir, "items.jsonl"), k, err)
		}
		if err := s.Take(it); err != nil {
			return err
		}
	}
	return nil
}

// LoadFile reads and loads one experiment file. Files it refers to
// (topologies given as paths, empirical distributions) are read relative to
// the experiment file's directory.
func LoadFile(path string, opt input.Options) (*format.Experiment, error) {
	x, _, err := LoadSourcesFrom(path, opt)
	return x, err
}

// LoadSourcesFrom loads an experiment file and returns, besides, the
// file and every file it read, as they were read: a shard carries them so
// that merge can load the same experiment without them. Reading is
// bounded and confined as package input says: only regular files, within
// the size limits, named inside the experiment's folder unless
// opt.AllowOutside.
func LoadSourcesFrom(path string, opt input.Options) (*format.Experiment, []SourceFile, error) {
	data, read, err := input.Open(path, opt)
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex // scenarios may be resolved from several goroutines
	src := []SourceFile{{Name: filepath.ToSlash(path), Content: string(data)}}
	readFile := func(name string) ([]byte, error) {
		b, err := read(name)
		if err == nil {
			mu.Lock()
			if !slices.ContainsFunc(src[1:], func(f SourceFile) bool { return f.Name == name }) {
				src = append(src, SourceFile{Name: name, Content: string(b)})
			}
			mu.Unlock()
		}
		return b, err
	}
	x, err := format.LoadExperiment(path, data, readFile)
	mu.Lock()
	defer mu.Unlock()
	return x, append([]SourceFile(nil), src...), err
}

// LoadSources loads an experiment from the files a shard carries.
func LoadSources(src []SourceFile) (*format.Experiment, error) {
	if len(src) == 0 {
		return nil, errors.New("no experiment file in the shard")
	}
	readFile := func(name string) ([]byte, error) {
		for _, f := range src[1:] {
			if f.Name == name {
				return []byte(f.Content), nil
			}
		}
		return nil, fmt.Errorf("%s: not among the files the shard carries", name)
	}
	return format.LoadExperiment(src[0].Name, []byte(src[0].Content), readFile)
}

// Name is the experiment's name, or its file's stem.
func (p *Plan) Name() string {
	if p.X.Name != "" {
		return p.X.Name
	}
	return p.Stem
}

// DescribeMissing says which scenarios of an interrupted run of p did not
// finish.
func DescribeMissing(p *Plan, r *results.Experiment) string {
	var names []string
	missing := 0
	for i, s := range r.Scenarios {
		if s != nil {
			continue
		}
		missing++
		if len(names) < 3 {
			sc, err := p.Scenario(i)
			if err == nil {
				names = append(names, ScenarioName(sc.Variant, sc.Params))
			}
		}
	}
	more := ""
	if missing > len(names) {
		more = ", ..."
	}
	return fmt.Sprintf("%s: %d of %d scenarios not finished (%s%s)", p.Path, missing, len(r.Scenarios), strings.Join(names, "; "), more)
}

// Merge loads the experiment a group of shards carries and aggregates
// their items exactly as an unsharded run does. The plan's Out is empty:
// the caller chooses where to write.
func Merge(g *ShardGroup) (*Plan, *results.Experiment, error) {
	m := g.Shards[0].Manifest
	x, err := LoadSources(m.Sources)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", g.Shards[0].Dir, err)
	}
	p := &Plan{Path: filepath.FromSlash(m.File), Stem: g.Stem, X: x, Seed: m.Seed, Reps: m.Replications, Mode: m.Mode}
	if p.Items() != m.Items || x.NumScenarios() != m.Scenarios {
		return nil, nil, fmt.Errorf("%s: the shards have %d items of %d scenarios; their experiment file has %d scenarios", g.Shards[0].Dir, m.Items, m.Scenarios, x.NumScenarios())
	}
	agg := NewAggregator(p)
	if err := Replay(g, agg); err != nil {
		return nil, nil, err
	}
	res := agg.Result()
	if !res.Complete() {
		return nil, nil, fmt.Errorf("%s: %s", g.Stem, DescribeMissing(p, res))
	}
	return p, res, nil
}

// DirName is the name of a shard's directory: shard-i-of-n.
func (s Shard) DirName() string { return s.dirName() }

// CheckStem refuses an output directory name that would not be a directory
// of its own under -o: empty, ".", "..", or one that holds a separator.
func CheckStem(stem string) error {
	if stem == "" || stem == "." || stem == ".." || strings.ContainsAny(stem, `/\`) || strings.HasPrefix(stem, TempPrefixForStem) {
		return fmt.Errorf("its name gives no usable output directory name (%q); rename the file", stem)
	}
	return nil
}

// TempPrefixForStem is the prefix of temporary files in an output
// directory; no experiment may be named with it.
const TempPrefixForStem = atomicio.TempPrefix

// runSafely runs one replication and turns a panic, which is a bug in
// tsim, into an error of that replication (with the seed to replay it),
// instead of a runtime dump from a worker goroutine.
func runSafely(ctx context.Context, ex Executor, top *model.Topology, seed uint64, opt model.Options) (r *results.Run, err error) {
	defer func() {
		if v := recover(); v != nil {
			r, err = nil, fmt.Errorf("internal error: %v (a bug in tsim; please report it with the file and this seed)", v)
		}
	}()
	return ex.Run(ctx, top, seed, opt)
}
