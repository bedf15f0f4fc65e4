package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

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
