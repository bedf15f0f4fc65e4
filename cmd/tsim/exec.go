package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// An executor runs one replication of one scenario. Modes are executors:
// "sim" is the discrete-event engine; "real" (goroutines, sockets and
// timers on loopback) is not written yet.
type executor interface {
	run(top *model.Topology, seed uint64, opt model.Options) (*results.Run, error)
}

type simExecutor struct{}

func (simExecutor) run(top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	opt.Seed = seed
	return model.Run(top, opt)
}

// modes lists the valid values of --mode.
var modes = []string{"sim", "real"}

// executorFor returns the executor of a mode. The mode has been checked
// against modes.
func executorFor(mode string) (executor, error) {
	switch mode {
	case "sim":
		return simExecutor{}, nil
	case "real":
		return nil, errors.New("--mode real is not available yet")
	}
	return nil, fmt.Errorf("unknown mode %q", mode)
}

// replicationSeed is the master seed of replication k of an experiment
// whose seed is seed. Replication 0 uses the seed itself, so that any
// replication can be replayed alone with --seed and --reps 1; the others
// scramble (seed, k) with SplitMix64, so that the replications of nearby
// seeds do not overlap. Every variant and sweep point uses the same seeds:
// their replication k see common random numbers.
func replicationSeed(seed uint64, k int) uint64 {
	if k == 0 {
		return seed
	}
	return splitmix64(seed ^ splitmix64(uint64(k)))
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// plan is one experiment to run, with the command line's overrides applied.
type plan struct {
	path string // as given on the command line
	stem string // file name without extension: the output subdirectory
	out  string // output directory, DIR/<stem>
	x    *model.Experiment
	seed uint64
	reps int
	mode string
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

// maxCDFCurves bounds the scenarios of a sweep whose latency distributions
// are kept for latency-cdf.png; more curves would not be readable.
const maxCDFCurves = 10

// scenarioResult is one scenario with all its replications run.
type scenarioResult struct {
	index   int
	variant string
	params  []model.Param
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

// execute runs every scenario of p, each p.reps times, on workers
// goroutines. Each replication has its own engine and nothing is shared
// between them, so the results do not depend on the number of workers or
// on the order in which replications finish: each scenario's replications
// are aggregated in replication order.
//
// When ctx is cancelled no new replication starts; those running finish,
// and the scenarios whose replications all finished are returned. A failed
// replication stops the run and is returned as the error.
func execute(ctx context.Context, p *plan, ex executor, workers int, progress func()) (*experimentResult, error) {
	n := p.x.NumScenarios()
	res := &experimentResult{plan: p, scenarios: make([]*scenarioResult, n)}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type job struct {
		sc *model.Scenario
		k  int
	}
	type done struct {
		job
		run *results.Run
		err error
	}
	jobs := make(chan job)
	out := make(chan done)

	// Scenarios are resolved one at a time, in order, as workers become
	// free, so that a large sweep never holds all its topologies.
	var dispatchErr error
	go func() {
		defer close(jobs)
		for i := range n {
			sc, err := p.x.Scenario(i)
			if err != nil {
				dispatchErr = fmt.Errorf("%s: scenario %d: %w", p.path, i, err)
				return
			}
			for k := range p.reps {
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
				opt := model.Options{NoSeries: p.sweep() || j.k > 0}
				r, err := ex.run(&j.sc.Topology, replicationSeed(p.seed, j.k), opt)
				out <- done{j, r, err}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(out)
	}()

	pending := map[int][]*results.Run{}
	count := map[int]int{}
	var runErr error
	for d := range out {
		if d.err != nil {
			if runErr == nil {
				seed := replicationSeed(p.seed, d.k)
				runErr = fmt.Errorf("%s: %s, replication %d (seed %d): %w\n(replay it alone: tsim run %s --seed %d --reps 1)",
					p.path, scenarioName(d.sc.Variant, d.sc.Params), d.k+1, seed, d.err, p.path, seed)
				cancel()
			}
			continue
		}
		i := d.sc.Index
		if pending[i] == nil {
			pending[i] = make([]*results.Run, p.reps)
		}
		pending[i][d.k] = d.run
		count[i]++
		if count[i] == p.reps {
			res.scenarios[i] = finishScenario(p, d.sc, pending[i], n)
			res.finished++
			delete(pending, i)
			delete(count, i)
		}
		if progress != nil {
			progress()
		}
		if testHookJobDone != nil {
			testHookJobDone()
		}
	}
	if runErr != nil {
		return res, runErr
	}
	if dispatchErr != nil {
		return res, dispatchErr
	}
	return res, nil
}

// finishScenario aggregates a scenario's replications and keeps what the
// pictures need of its first replication.
func finishScenario(p *plan, sc *model.Scenario, runs []*results.Run, n int) *scenarioResult {
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
func scenarioName(variant string, params []model.Param) string {
	parts := []string{"variant " + variant}
	for _, kv := range params {
		parts = append(parts, kv.Key+"="+kv.Value)
	}
	return strings.Join(parts, ", ")
}
