package realmode

import (
	"context"
	"math"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// pool is a CLR-like thread pool, mirroring the model's threadPool: a FIFO
// semaphore whose capacity is the number of threads that exist. Threads up
// to Min are created on demand; above Min, with InjectCLR, a starved pool
// (work queued, no idle thread) gets one thread per gate tick, decided by
// model.ShouldInject (with InjectCLR2, only once the growing delay since
// the last one has passed); with InjectNone threads are created on demand up to
// Max. Threads above Min idle for a whole IdleTimeout retire.
//
// A "thread" here is a permit, not an OS thread: the request's goroutine
// holds it for as long as the modelled request would hold its thread.
type pool struct {
	rt      *runner
	spec    model.Pool
	s       *sem
	threads int

	created     time.Duration // real instant the last thread above Min was injected (InjectCLR2)
	gateArmed   bool
	retireArmed bool
	minIdle     int
	gateCh      chan struct{}
	retireCh    chan struct{}

	// onChange reports (busy, threads, waiting) deltas to the tier's levels.
	onChange func(dBusy, dThreads, dWaiting int)
	repBusy  int
	repThr   int
	repWait  int
}

func newPool(rt *runner, spec model.Pool) *pool {
	p := &pool{rt: rt, spec: spec, s: &sem{limit: 0}, gateCh: make(chan struct{}, 1), retireCh: make(chan struct{}, 1)}
	p.s.onChange = func(int, int) { p.report() }
	return p
}

// report passes changes of the pool's counts to the tier (s.mu held).
func (p *pool) report() {
	b, t, w := p.s.inUse, p.threads, p.s.waiting
	if p.onChange != nil && (b != p.repBusy || t != p.repThr || w != p.repWait) {
		p.onChange(b-p.repBusy, t-p.repThr, w-p.repWait)
	}
	p.repBusy, p.repThr, p.repWait = b, t, w
}

func (p *pool) canCreateNowLocked() bool {
	if p.threads >= p.spec.Max {
		return false
	}
	return p.threads < p.spec.Min || p.spec.Injection == model.InjectNone
}

func (p *pool) addLocked() {
	p.threads++
	p.s.limit = p.threads
	p.report()
}

// begin takes a thread now (nil) or queues for one (see sem.begin).
func (p *pool) begin() *waiter {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inUse >= p.threads && s.waiting == 0 && p.canCreateNowLocked() {
		p.addLocked()
	}
	if s.tryLocked() {
		return nil
	}
	w := s.enqueueLocked()
	p.starvedLocked()
	return w
}

// beginBounded is begin for a request's first thread: when the pool's queue
// is bounded and full (model.Pool.BoundedQueue) it takes nothing and
// reports the request rejected, as the model's threadPool.rejects.
func (p *pool) beginBounded() (w *waiter, rejected bool) {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inUse >= p.threads && s.waiting == 0 && p.canCreateNowLocked() {
		p.addLocked()
	}
	if s.tryLocked() {
		return nil, false
	}
	if p.spec.BoundedQueue && s.waiting >= p.spec.QueueLimit {
		return nil, true
	}
	w = s.enqueueLocked()
	p.starvedLocked()
	return w, false
}

func (p *pool) wait(ctx context.Context, w *waiter) error { return p.s.wait(ctx, w) }

func (p *pool) acquire(ctx context.Context) error { return p.wait(ctx, p.begin()) }

// release returns a thread to the pool.
func (p *pool) release() {
	s := p.s
	s.mu.Lock()
	s.releaseLocked()
	p.noteIdleLocked()
	s.mu.Unlock()
}

// busy returns the threads in use.
func (p *pool) busy() int {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	return p.s.inUse
}

// starvedLocked creates what may be created now and arms the gate when
// work still waits.
func (p *pool) starvedLocked() {
	s := p.s
	for s.waiting > 0 && p.canCreateNowLocked() {
		p.addLocked()
		s.grantLocked()
		s.changed()
	}
	if s.waiting > 0 && !p.gateArmed && p.threads < p.spec.Max {
		p.gateArmed = true
		p.gateCh <- struct{}{}
	}
}

func (p *pool) noteIdleLocked() {
	idle := p.threads - p.s.inUse
	if idle < p.minIdle {
		p.minIdle = idle
	}
	if p.threads > p.spec.Min && !p.retireArmed && p.spec.IdleTimeout > 0 {
		p.minIdle = idle
		p.retireArmed = true
		p.retireCh <- struct{}{}
	}
}

// gateLoop is the CLR gate thread: once armed it ticks every GateDelay
// while work waits, asking model.ShouldInject whether to add a thread.
func (p *pool) gateLoop(ctx context.Context) {
	delay := p.spec.GateDelay
	if delay <= 0 {
		delay = 500 * time.Millisecond
	}
	clk := p.rt.clk
	for {
		select {
		case <-p.gateCh:
		case <-ctx.Done():
			return
		}
		for again := true; again; {
			if clk.sleep(ctx, delay) != nil {
				return
			}
			s := p.s
			s.mu.Lock()
			if model.ShouldInject(p.threads, s.inUse, p.spec.Max, s.waiting) && p.injectionDueLocked(clk.now()) {
				p.created = clk.now()
				p.addLocked()
				s.grantLocked()
				s.changed()
			}
			again = s.waiting > 0 && p.threads < p.spec.Max
			if !again {
				p.gateArmed = false
			}
			s.mu.Unlock()
		}
	}
}

// injectionDueLocked applies InjectCLR2's growing delay between injected
// threads (model threadPool.injectionDue: GateDelay × 1.1^(threads − Min)
// since the last one).
func (p *pool) injectionDueLocked(now time.Duration) bool {
	if p.spec.Injection != model.InjectCLR2 || p.threads <= p.spec.Min {
		return true
	}
	need := float64(p.rt.clk.toReal(p.spec.GateDelay)) * math.Pow(1.1, float64(p.threads-p.spec.Min))
	return float64(now-p.created) >= need
}

// retireLoop retires threads above Min that stayed idle for a whole
// IdleTimeout (the model's evRetire).
func (p *pool) retireLoop(ctx context.Context) {
	clk := p.rt.clk
	for {
		select {
		case <-p.retireCh:
		case <-ctx.Done():
			return
		}
		for again := true; again; {
			if clk.sleep(ctx, p.spec.IdleTimeout) != nil {
				return
			}
			s := p.s
			s.mu.Lock()
			n := min(p.minIdle, p.threads-s.inUse, p.threads-p.spec.Min)
			if n > 0 && s.waiting == 0 {
				p.threads -= n
				s.setLimitLocked(p.threads)
			}
			p.minIdle = p.threads - s.inUse
			again = p.threads > p.spec.Min
			if !again {
				p.retireArmed = false
			}
			s.mu.Unlock()
		}
	}
}
