package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"math"

	"github.com/tsim-dev/tsim/sim"
)

// threadPool is a CLR-like thread pool: a slots whose limit is the number of
// threads that exist. Threads up to Min are created on demand. Above Min,
// with InjectCLR, a starved pool (work queued, no idle thread) gets one new
// thread per gate tick (GateDelay, ~500 ms), the first tick one GateDelay
// after starvation began; with InjectNone threads are created on demand up
// to Max. Threads above Min that stayed idle for a whole IdleTimeout retire.
type threadPool struct {
	spec    model.Pool
	s       *slots
	threads int
	gate    sim.EventID
	retire  sim.EventID
	minIdle int // fewest idle threads since the last retire check
	onGrow  func()
	created sim.Time // when the last thread above Min was injected
}

const (
	evGate int32 = iota
	evRetire
)

func newThreadPool(e *sim.Engine, spec model.Pool) *threadPool {
	p := &threadPool{spec: spec}
	p.s = newSlots(e, 0)
	p.s.limit = -1 // no thread yet; -1 keeps slots from treating 0 as unlimited
	return p
}

func (p *threadPool) busy() int    { return p.s.inUse }
func (p *threadPool) waiting() int { return p.s.waiting }

// acquire takes a thread or queues w (see slots.acquire).
func (p *threadPool) acquire(w *waitRec, h sim.Handler, kind int32, arg any) bool {
	if p.s.inUse >= p.threads && p.s.waiting == 0 && p.canCreateNow() {
		p.add()
	}
	if p.s.inUse < p.threads && p.s.waiting == 0 {
		p.s.inUse++
		p.s.changed()
		return true
	}
	p.s.acquire(w, h, kind, arg)
	p.starved()
	return false
}

// rejects reports whether a request asking for its first thread now is
// turned away: the pool's queue is bounded (Pool.BoundedQueue), no thread
// is free or can be created at once, and the queue is full.
func (p *threadPool) rejects() bool {
	if !p.spec.BoundedQueue {
		return false
	}
	if p.s.waiting == 0 && (p.s.inUse < p.threads || p.canCreateNow()) {
		return false
	}
	return p.s.waiting >= p.spec.QueueLimit
}

func (p *threadPool) canCreateNow() bool {
	if p.threads >= p.spec.Max {
		return false
	}
	return p.threads < p.spec.Min || p.spec.Injection == model.InjectNone
}

func (p *threadPool) add() {
	p.threads++
	p.syncLimit()
	if p.onGrow != nil {
		p.onGrow()
	}
}

// syncLimit mirrors the thread count into the slots limit; with no thread
// at all the limit is -1, since 0 would mean unlimited.
func (p *threadPool) syncLimit() {
	p.s.limit = p.threads
	if p.threads == 0 {
		p.s.limit = -1
	}
}

// release returns a thread to the pool.
func (p *threadPool) release() {
	p.s.release()
	p.noteIdle()
}

func (p *threadPool) abandon(w *waitRec) bool { return p.s.abandon(w) }

// starved arms the gate when work waits and no thread can be created now.
func (p *threadPool) starved() {
	for p.s.waiting > 0 && p.canCreateNow() {
		p.add()
		p.s.grant()
		p.s.changed()
	}
	if p.s.waiting > 0 && !p.gate.Valid() && p.threads < p.spec.Max {
		p.gate = p.s.e.Schedule(p.spec.GateDelay, sim.ClassArrival, p, evGate, nil)
	}
}

func (p *threadPool) noteIdle() {
	idle := p.threads - p.s.inUse
	if idle < p.minIdle {
		p.minIdle = idle
	}
	if p.threads > p.spec.Min && !p.retire.Valid() && p.spec.IdleTimeout > 0 {
		p.minIdle = idle
		p.retire = p.s.e.Schedule(p.spec.IdleTimeout, sim.ClassArrival, p, evRetire, nil)
	}
}

func (p *threadPool) OnEvent(e *sim.Engine, kind int32, arg any) {
	switch kind {
	case evGate:
		p.gate = sim.EventID{}
		if model.ShouldInject(p.threads, p.s.inUse, p.spec.Max, p.s.waiting) && p.injectionDue(e.Now()) {
			p.created = e.Now()
			p.add()
			p.s.grant()
			p.s.changed()
		}
		if p.s.waiting > 0 && p.threads < p.spec.Max {
			p.gate = e.Schedule(p.spec.GateDelay, sim.ClassArrival, p, evGate, nil)
		}
	case evRetire:
		p.retire = sim.EventID{}
		n := p.minIdle
		if idle := p.threads - p.s.inUse; idle < n {
			n = idle
		}
		if over := p.threads - p.spec.Min; n > over {
			n = over
		}
		if n > 0 && p.s.waiting == 0 {
			p.threads -= n
			p.syncLimit()
			p.s.changed()
			if p.onGrow != nil {
				p.onGrow()
			}
		}
		p.minIdle = p.threads - p.s.inUse
		if p.threads > p.spec.Min {
			p.retire = e.Schedule(p.spec.IdleTimeout, sim.ClassArrival, p, evRetire, nil)
		}
	}
}

// injectionDue applies InjectCLR2's growing delay between injected threads
// (SSCLI 2.0 SufficientDelaySinceLastSample: 500 ms × 1.1^(threads − min)).
func (p *threadPool) injectionDue(now sim.Time) bool {
	if p.spec.Injection != model.InjectCLR2 || p.threads <= p.spec.Min {
		return true
	}
	need := float64(p.spec.GateDelay) * math.Pow(1.1, float64(p.threads-p.spec.Min))
	return float64(now.Sub(p.created)) >= need
}
