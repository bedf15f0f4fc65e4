package model

import (
	"math"
	"time"
)

// ThreadPool is a CLR-like thread pool, the same for both executors:
// Slots whose limit is the number of threads that exist. Threads up to Min
// are created on demand. Above Min, with InjectCLR, a starved pool (work
// queued, no idle thread) gets one new thread per gate tick (GateDelay,
// ~500 ms), the first tick one GateDelay after starvation began; with
// InjectNone threads are created on demand up to Max. Threads above Min
// that stayed idle for a whole IdleTimeout retire.
//
// The pool decides; its executor keeps time: it calls GateTick and
// RetireTick when the delays the pool asked for (ArmGate, ArmRetire) have
// passed, with the (simulated) instant. A new injection rule (the CLR 4
// hill-climbing controller) is a change to GateTick and injectionDue
// alone.
//
// A "thread" is a slot: the simulator's request holds it for as long as
// the modelled request would hold its thread, as real mode's goroutine
// does.
type ThreadPool struct {
	Slots
	Spec    Pool
	Threads int

	// ArmGate asks for GateTick after d; ArmRetire for RetireTick after
	// d. OnGrow is called after Threads changed.
	ArmGate, ArmRetire func(d time.Duration)
	OnGrow             func()

	gateArmed, retireArmed bool
	minIdle                int           // fewest idle threads since the last retire check
	created                time.Duration // when the last thread above Min was injected
}

// NewThreadPool returns a pool of spec with no thread yet.
func NewThreadPool(spec Pool) *ThreadPool {
	p := &ThreadPool{Spec: spec}
	p.Limit = -1 // no thread yet; -1 keeps Slots from treating 0 as unlimited
	return p
}

// Busy is the threads in use; Queued the requests waiting for one.
func (p *ThreadPool) Busy() int   { return p.InUse }
func (p *ThreadPool) Queued() int { return p.Waiting }

// Acquire takes a thread now (creating one if it may) and returns true, or
// queues w (see Slots.Acquire).
func (p *ThreadPool) Acquire(w *Waiter) bool {
	if p.InUse >= p.Threads && p.Waiting == 0 && p.canCreateNow() {
		p.add()
	}
	if p.InUse < p.Threads && p.Waiting == 0 {
		p.InUse++
		p.changed()
		return true
	}
	p.Slots.Acquire(w)
	p.starved()
	return false
}

// Rejects reports whether a request asking for its first thread now is
// turned away: the pool's queue is bounded (Pool.BoundedQueue), no thread
// is free or can be created at once, and the queue is full.
func (p *ThreadPool) Rejects() bool {
	if !p.Spec.BoundedQueue {
		return false
	}
	if p.Waiting == 0 && (p.InUse < p.Threads || p.canCreateNow()) {
		return false
	}
	return p.Waiting >= p.Spec.QueueLimit
}

// Release returns a thread to the pool.
func (p *ThreadPool) Release() {
	p.Slots.Release()
	p.noteIdle()
}

func (p *ThreadPool) canCreateNow() bool {
	if p.Threads >= p.Spec.Max {
		return false
	}
	return p.Threads < p.Spec.Min || p.Spec.Injection == InjectNone
}

func (p *ThreadPool) add() {
	p.Threads++
	p.syncLimit()
	if p.OnGrow != nil {
		p.OnGrow()
	}
}

// syncLimit mirrors the thread count into the slots' limit; with no thread
// at all the limit is -1, since 0 would mean unlimited.
func (p *ThreadPool) syncLimit() {
	p.Limit = p.Threads
	if p.Threads == 0 {
		p.Limit = -1
	}
}

// starved creates what may be created now and arms the gate when work
// still waits.
func (p *ThreadPool) starved() {
	for p.Waiting > 0 && p.canCreateNow() {
		p.add()
		p.grant()
		p.changed()
	}
	if p.Waiting > 0 && !p.gateArmed && p.Threads < p.Spec.Max {
		p.gateArmed = true
		p.ArmGate(p.Spec.GateDelay)
	}
}

func (p *ThreadPool) noteIdle() {
	idle := p.Threads - p.InUse
	if idle < p.minIdle {
		p.minIdle = idle
	}
	if p.Threads > p.Spec.Min && !p.retireArmed && p.Spec.IdleTimeout > 0 {
		p.minIdle = idle
		p.retireArmed = true
		p.ArmRetire(p.Spec.IdleTimeout)
	}
}

// GateTick is the CLR gate thread's tick at now: a thread more if
// ShouldInject and the injection rule allow; the gate ticks again while
// work waits.
func (p *ThreadPool) GateTick(now time.Duration) {
	p.gateArmed = false
	if ShouldInject(p.Threads, p.InUse, p.Spec.Max, p.Waiting) && p.injectionDue(now) {
		p.created = now
		p.add()
		p.grant()
		p.changed()
	}
	if p.Waiting > 0 && p.Threads < p.Spec.Max {
		p.gateArmed = true
		p.ArmGate(p.Spec.GateDelay)
	}
}

// RetireTick retires the threads above Min that stayed idle since the
// last check; it checks again while threads above Min remain.
func (p *ThreadPool) RetireTick(now time.Duration) {
	p.retireArmed = false
	n := min(p.minIdle, p.Threads-p.InUse, p.Threads-p.Spec.Min)
	if n > 0 && p.Waiting == 0 {
		p.Threads -= n
		p.syncLimit()
		p.changed()
		if p.OnGrow != nil {
			p.OnGrow()
		}
	}
	p.minIdle = p.Threads - p.InUse
	if p.Threads > p.Spec.Min {
		p.retireArmed = true
		p.ArmRetire(p.Spec.IdleTimeout)
	}
}

// injectionDue applies InjectCLR2's growing delay between injected threads
// (SSCLI 2.0 SufficientDelaySinceLastSample: 500 ms × 1.1^(threads − min)).
func (p *ThreadPool) injectionDue(now time.Duration) bool {
	if p.Spec.Injection != InjectCLR2 || p.Threads <= p.Spec.Min {
		return true
	}
	need := float64(p.Spec.GateDelay) * math.Pow(1.1, float64(p.Threads-p.Spec.Min))
	return float64(now-p.created) >= need
}
