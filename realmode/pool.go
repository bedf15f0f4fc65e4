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

	gateCh, retireCh chan time.Duration // the (simulated) instant of the next tick
	at               time.Duration      // the instant of the pool's current call (mu held)

	// onChange reports (busy, threads, waiting) deltas to the tier's levels.
	onChange func(dBusy, dThreads, dWaiting int)
	repBusy  int
	repThr   int
	repWait  int
}

// newTierPool returns tier t's pool called name ("worker", "io"). The
// CLR 4 controller draws its sample intervals from the stream
// tier/<tier>/<name>/hillclimbing (the simulator's) and reads the tier's
// CPU at its gate ticks.
func newTierPool(rt *runner, t *tierRT, name string, spec model.Pool) *pool {
	var rnd model.Rand
	if spec.Injection == model.InjectCLR4 {
		rnd = rt.streams.Stream("tier/" + t.spec.Name + "/" + name + "/hillclimbing")
	}
	p := &pool{rt: rt, tp: model.NewThreadPool(spec, rnd), gateCh: make(chan time.Duration, 1), retireCh: make(chan time.Duration, 1)}
	p.tp.Grant = wake
	p.tp.OnChange, p.tp.OnGrow = p.report, p.report
	p.tp.ArmGate = func(d time.Duration) { p.gateCh <- p.at + d }
	p.tp.ArmRetire = func(d time.Duration) { p.retireCh <- p.at + d }
	if rnd != nil {
		p.tp.CPU = cpuReader(&t.lv[model.LvCPU], t.spec.Cores)
	}
	return p
}

// cpuReader returns the CPU use in percent of cores, from the tier's CPU
// level, since its previous call (or the level's warm-up reset, if that
// came later). It reads the level at the real instant; now (simulated) is
// not needed, as both ends of the span are read the same way.
func cpuReader(lv *level, cores int) func(now time.Duration) int {
	var from time.Duration
	var area0 float64
	return func(time.Duration) int {
		lv.mu.Lock()
		now := lv.clk.now()
		lv.advanceLocked(now)
		area, start, last := lv.area, lv.start, lv.last
		lv.mu.Unlock()
		if start > from {
			from, area0 = start, 0
		}
		a, span := area-area0, last-from
		from, area0 = last, area
		if span <= 0 || cores <= 0 {
			return 0
		}
		return int(100 * a / (float64(span) * float64(cores)))
	}
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
	if p.tp.Acquire(&w.Waiter, p.now()) {
		return nil
	}
	return w
}

// now is the simulated instant, which becomes the instant of the pool's
// current call (mu held).
func (p *pool) now() time.Duration {
	p.at = p.rt.clk.toSim(p.rt.clk.now())
	return p.at
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
	if p.tp.Acquire(&w.Waiter, p.now()) {
		return nil, false
	}
	return w, false
}

func (p *pool) wait(ctx context.Context, w *waiter) error { return awaitGrant(ctx, &p.mu, w) }

func (p *pool) acquire(ctx context.Context) error { return p.wait(ctx, p.begin()) }

// release returns a thread to the pool.
func (p *pool) release() {
	p.mu.Lock()
	p.tp.Release(p.now())
	p.mu.Unlock()
}

// busy returns the threads in use.
func (p *pool) busy() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tp.InUse
}

// ticks runs the pool's gate and retire ticks until ctx ends: each waits
// for the instant the pool asked for (the instant of the call that armed
// it plus the delay) and calls the pool at that instant, as the simulator
// does, however late the goroutine wakes: a gate that ticks every 500 ms
// sees 500 ms between its ticks, not 500 ms and the wake-up latency (the
// CLR 4 gate's starvation test compares the two).
func (p *pool) ticks(ctx context.Context, arm <-chan time.Duration, tick func(*model.ThreadPool, time.Duration)) {
	clk := p.rt.clk
	for {
		var at time.Duration
		select {
		case at = <-arm:
		case <-ctx.Done():
			return
		}
		if clk.sleepUntil(ctx, clk.toReal(at)) != nil {
			return
		}
		p.mu.Lock()
		p.at = at
		tick(p.tp, at)
		p.mu.Unlock()
	}
}

// gateLoop is the CLR gate thread (model.ThreadPool.GateTick).
func (p *pool) gateLoop(ctx context.Context) { p.ticks(ctx, p.gateCh, (*model.ThreadPool).GateTick) }

// retireLoop retires idle threads (model.ThreadPool.RetireTick).
func (p *pool) retireLoop(ctx context.Context) {
	p.ticks(ctx, p.retireCh, (*model.ThreadPool).RetireTick)
}
