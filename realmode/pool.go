package realmode

import (
	"context"
	"sync"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// pool is a model.ThreadPool, the CLR-like pool both executors share,
// behind a mutex, whose gate and retire ticks are goroutines that sleep
// the (scaled) delays the pool asks for.
//
// A "thread" here is a permit, not an OS thread: the request's goroutine
// holds it for as long as the modelled request would hold its thread.
type pool struct {
	rt *runner
	mu sync.Mutex
	tp *model.ThreadPool

	gateCh, retireCh chan time.Duration // the delay to the next tick

	// onChange reports (busy, threads, waiting) deltas to the tier's levels.
	onChange func(dBusy, dThreads, dWaiting int)
	repBusy  int
	repThr   int
	repWait  int
}

func newPool(rt *runner, spec model.Pool) *pool {
	p := &pool{rt: rt, tp: model.NewThreadPool(spec), gateCh: make(chan time.Duration, 1), retireCh: make(chan time.Duration, 1)}
	p.tp.Grant = wake
	p.tp.OnChange, p.tp.OnGrow = p.report, p.report
	p.tp.ArmGate = func(d time.Duration) { p.gateCh <- d }
	p.tp.ArmRetire = func(d time.Duration) { p.retireCh <- d }
	return p
}

// report passes changes of the pool's counts to the tier (mu held).
func (p *pool) report() {
	b, t, w := p.tp.InUse, p.tp.Threads, p.tp.Waiting
	if p.onChange != nil && (b != p.repBusy || t != p.repThr || w != p.repWait) {
		p.onChange(b-p.repBusy, t-p.repThr, w-p.repWait)
	}
	p.repBusy, p.repThr, p.repWait = b, t, w
}

// begin takes a thread now (nil) or queues for one (see sem.begin).
func (p *pool) begin() *waiter {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := newWaiter()
	if p.tp.Acquire(&w.Waiter) {
		return nil
	}
	return w
}

// beginBounded is begin for a request's first thread: when the pool's queue
// is bounded and full (model.ThreadPool.Rejects) it takes nothing and
// reports the request rejected.
func (p *pool) beginBounded() (w *waiter, rejected bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tp.Rejects() {
		return nil, true
	}
	w = newWaiter()
	if p.tp.Acquire(&w.Waiter) {
		return nil, false
	}
	return w, false
}

func (p *pool) wait(ctx context.Context, w *waiter) error { return awaitGrant(ctx, &p.mu, w) }

func (p *pool) acquire(ctx context.Context) error { return p.wait(ctx, p.begin()) }

// release returns a thread to the pool.
func (p *pool) release() {
	p.mu.Lock()
	p.tp.Release()
	p.mu.Unlock()
}

// busy returns the threads in use.
func (p *pool) busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tp.InUse
}

// ticks runs the pool's gate and retire ticks until ctx ends: each sleeps
// the delay the pool asked for, then calls the pool at that (simulated)
// instant.
func (p *pool) ticks(ctx context.Context, arm <-chan time.Duration, tick func(*model.ThreadPool, time.Duration)) {
	clk := p.rt.clk
	for {
		var d time.Duration
		select {
		case d = <-arm:
		case <-ctx.Done():
			return
		}
		if clk.sleep(ctx, d) != nil {
			return
		}
		p.mu.Lock()
		tick(p.tp, clk.toSim(clk.now()))
		p.mu.Unlock()
	}
}

// gateLoop is the CLR gate thread (model.ThreadPool.GateTick).
func (p *pool) gateLoop(ctx context.Context) { p.ticks(ctx, p.gateCh, (*model.ThreadPool).GateTick) }

// retireLoop retires idle threads (model.ThreadPool.RetireTick).
func (p *pool) retireLoop(ctx context.Context) {
	p.ticks(ctx, p.retireCh, (*model.ThreadPool).RetireTick)
}
