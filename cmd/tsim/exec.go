package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/realmode"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// An executor runs one replication of one scenario. Modes are executors:
// "sim" is the discrete-event engine; "real" runs the same compiled
// topology with goroutines, sockets and timers on loopback (realmode).
type executor interface {
	run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error)
	// parallel reports whether replications may run side by side: real
	// runs may not, since they would compete for the machine they measure.
	parallel() bool
}

type simExecutor struct{}

func (simExecutor) run(_ context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	opt.Seed = seed
	return model.Run(top, opt)
}

func (simExecutor) parallel() bool { return true }

// realExecutor runs for real; timeScale is real seconds per simulated
// second (0: realmode chooses).
type realExecutor struct {
	timeScale float64
	cpu       realmode.CPUDiscipline
}

func (x realExecutor) run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	return realmode.Run(ctx, top, realmode.Options{Seed: seed, TimeScale: x.timeScale, CPU: x.cpu})
}

// cpuDisciplines are the values of --cpu. The default is processor
// sharing, the simulator's own discipline, so that validate compares the
// model with itself run for real; "cores" holds a core permit per demand,
// first come first served, whose means agree for exponential demands but
// whose percentiles differ by discipline (realmode's package doc).
var cpuDisciplines = map[string]realmode.CPUDiscipline{"sharing": realmode.CPUSharing, "cores": realmode.CPUCores}

func parseCPU(s string) (realmode.CPUDiscipline, error) {
	d, ok := cpuDisciplines[s]
	if !ok {
		return 0, fmt.Errorf("--cpu must be sharing or cores, got %q", s)
	}
	return d, nil
}

func (realExecutor) parallel() bool { return false }

// modes lists the valid values of --mode.
var modes = []string{"sim", "real"}

// executorFor returns the executor of a mode. The mode has been checked
// against modes.
func executorFor(mode string, timeScale float64, cpu realmode.CPUDiscipline) (executor, error) {
	switch mode {
	case "sim":
		return simExecutor{}, nil
	case "real":
		return realExecutor{timeScale, cpu}, nil
	}
	return nil, fmt.Errorf("unknown mode %q", mode)
}

// replicationSeed is the master seed of replication k of an experiment
// whose seed is seed. Replication 0 uses the seed itself, so that any
// replication can be replayed alone with --seed and --reps 1; the others
// scramble (seed, k) with SplitMix64, so that the replications of nearby
// seeds do not overlap. Every variant and sweep point uses the same seeds:
// their replication k see common random numbers.
func replicationSeed(seed uint64, k int) uint64 { return sim.DeriveSeed(seed, uint64(k)) }

// plan is one experiment to run, with the command line's overrides applied.
type plan struct {
	path  string // as given on the command line
	stem  string // file name without extension: the output subdirectory
	out   string // output directory, DIR/<stem>
	x     *format.Experiment
	seed  uint64
	reps  int
	mode  string
	shard shard // which work items this process runs; the zero value is all
}

func (p *plan) sweep() bool { return len(p.x.Sweep) > 0 }

// seeds returns the master seed of every replication.
func (p *plan) seeds() []uint64 {
	s := make([]uint64, p.reps)
	for k := range s {
		s[k] = replicationSeed(p.seed, k)
	}
	return s
}

// items is the number of work items: every replication of every scenario.
// Item k is replication k mod reps of scenario k / reps, so items are in
// scenario order, and each scenario's replications in order.
func (p *plan) items() int { return p.x.NumScenarios() * p.reps }

// maxCDFCurves bounds the scenarios of a sweep whose latency distributions
// are kept for latency-cdf.png; more curves would not be readable.
const maxCDFCurves = 10

// scenarioResult is one scenario with all its replications run.
type scenarioResult struct {
	index   int
	variant string
	params  []format.Param
	agg     aggregate
	// first is replication 0, kept with its time series and latency points
	// for the pictures when the experiment has no sweep; nil otherwise.
	first *results.Run
}

// experimentResult is what one experiment's run produced. A scenario that
// did not finish (the run was interrupted) is nil.
type experimentResult struct {
	plan      *plan
	scenarios []*scenarioResult
	finished  int
}

func (r *experimentResult) complete() bool { return r.finished == len(r.scenarios) }

// done returns the finished scenarios in index order.
func (r *experimentResult) done() []*scenarioResult {
	var out []*scenarioResult
	for _, s := range r.scenarios {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// testHookJobDone, if set, is called after each replication is collected;
// tests use it to interrupt a run at a known point.
var testHookJobDone func()

// item is one finished work item: replication rep of scenario sc.
type item struct {
	index int // rep + reps × scenario index
	sc    *format.Scenario
	rep   int
	run   *results.Run
}

// A sink takes the finished items of a run, in item order (with gaps where
// a run was interrupted). It is called from one goroutine.
type sink interface {
	take(it item) error
}

// execute runs every scenario of p, each p.reps times, on workers
// goroutines, and aggregates the replications scenario by scenario. Each
// replication has its own engine and nothing is shared between them, so
// the results do not depend on the number of workers or on the order in
// which replications finish.
//
// When ctx is cancelled no new replication starts; those running finish,
// and the scenarios whose replications all finished are returned. A failed
// replication stops the run and is returned as the error.
func execute(ctx context.Context, p *plan, ex executor, workers int, progress func()) (*experimentResult, error) {
	agg := newAggregator(p)
	err := runItems(ctx, p, ex, workers, progress, agg)
	return agg.res, err
}

// runItems runs the work items of p that p.shard owns and hands them to
// s in item order. Items are dispatched in order and at most window of them
// are out (running, or finished and waiting for an earlier one), so that
// memory stays bounded whatever the number of scenarios: a scenario's
// replications are aggregated (or written) and dropped as soon as the items
// before them are. Scenarios are resolved one at a time as workers become
// free, so that a large sweep never holds all its topologies.
func runItems(ctx context.Context, p *plan, ex executor, workers int, progress func(), s sink) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !ex.parallel() {
		workers = 1
	}
	window := 4*workers + p.reps
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
		for i := range p.x.NumScenarios() {
			if !p.shard.ownsAny(i*p.reps, p.reps) {
				continue
			}
			sc, err := p.x.Scenario(i)
			if err != nil {
				dispatchErr = fmt.Errorf("%s: scenario %d: %w", p.path, i, err)
				cancel()
				return
			}
			for k := range p.reps {
				if !p.shard.owns(i*p.reps + k) {
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
			for j := range jobs {
				if ctx.Err() != nil {
					continue
				}
				opt := model.Options{NoSeries: p.sweep() || j.rep > 0}
				r, err := ex.run(ctx, &j.sc.Topology, replicationSeed(p.seed, j.rep), opt)
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

	// Items finish in any order; they are handed on in item order.
	waiting := map[int]item{}
	next := p.shard.first()
	var runErr error
	deliver := func(it item) {
		delete(waiting, it.index)
		<-tokens
		if runErr == nil {
			if err := s.take(it); err != nil {
				runErr = err
				cancel()
			}
		}
	}
	for d := range out {
		if d.err != nil {
			if runErr == nil {
				seed := replicationSeed(p.seed, d.rep)
				runErr = fmt.Errorf("%s: %s, replication %d (seed %d): %w\n(replay it alone: tsim run %s --seed %d --reps 1)",
					p.path, scenarioName(d.sc.Variant, d.sc.Params), d.rep+1, seed, d.err, p.path, seed)
				cancel()
			}
			continue
		}
		k := d.sc.Index*p.reps + d.rep
		waiting[k] = item{index: k, sc: d.sc, rep: d.rep, run: d.run}
		for {
			it, ok := waiting[next]
			if !ok {
				break
			}
			deliver(it)
			next = p.shard.after(next)
		}
		if progress != nil {
			progress()
		}
		if testHookJobDone != nil {
			testHookJobDone()
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

// aggregator is the sink of a run (or a merge) that keeps results: it
// collects each scenario's replications, aggregates them when the last one
// arrives and keeps only the aggregate (and, without a sweep, the first
// replication for the pictures).
type aggregator struct {
	p    *plan
	res  *experimentResult
	sc   *format.Scenario // the scenario being collected
	runs []*results.Run
	got  int
}

func newAggregator(p *plan) *aggregator {
	return &aggregator{p: p, res: &experimentResult{plan: p, scenarios: make([]*scenarioResult, p.x.NumScenarios())}}
}

func (a *aggregator) take(it item) error {
	if a.sc == nil || it.sc.Index != a.sc.Index {
		// A scenario left incomplete by an interruption is dropped.
		a.sc, a.runs, a.got = it.sc, make([]*results.Run, a.p.reps), 0
	}
	if a.runs[it.rep] == nil {
		a.got++
	}
	a.runs[it.rep] = it.run
	if a.got == a.p.reps {
		a.res.scenarios[a.sc.Index] = finishScenario(a.p, a.sc, a.runs, len(a.res.scenarios))
		a.res.finished++
		a.sc, a.runs, a.got = nil, nil, 0
	}
	return nil
}

// finishScenario aggregates a scenario's replications and keeps what the
// pictures need of its first replication.
func finishScenario(p *plan, sc *format.Scenario, runs []*results.Run, n int) *scenarioResult {
	s := &scenarioResult{index: sc.Index, variant: sc.Variant, params: sc.Params, agg: aggregateRuns(runs)}
	if !p.sweep() {
		s.first = runs[0]
	}
	if p.sweep() && n > maxCDFCurves {
		s.agg.quantiles = nil
	}
	return s
}

// scenarioName names a scenario in messages: the variant and its sweep
// values, as "fixed, tier.fe.calls.maxconnection=8".
func scenarioName(variant string, params []format.Param) string {
	parts := []string{"variant " + variant}
	for _, kv := range params {
		parts = append(parts, kv.Key+"="+kv.Value)
	}
	return strings.Join(parts, ", ")
}
