package sim

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Engine is a discrete-event simulation: a clock, a calendar and the random
// streams of one run. The zero value is not usable; call New.
type Engine struct {
	now     Time
	cal     calendar
	streams Streams
	events  uint64 // events executed
	hash    uint64 // running FNV-style hash over (time, class, kind) of executed events
	stopped bool
	intr    atomic.Bool // set by Interrupt, from any goroutine
}

// New returns an engine at time 0 whose random streams derive from seed.
func New(seed uint64) *Engine {
	return &Engine{streams: NewStreams(seed), hash: fnvOffset}
}

// Now returns the current virtual time.
func (e *Engine) Now() Time { return e.now }

// Seed returns the master seed.
func (e *Engine) Seed() uint64 { return e.streams.Seed() }

// Stream returns the random stream named path (see Streams.Stream).
func (e *Engine) Stream(path string) *Stream { return e.streams.Stream(path) }

// Events returns how many events have run.
func (e *Engine) Events() uint64 { return e.events }

// Pending returns how many events are scheduled.
func (e *Engine) Pending() int { return e.cal.len() }

// TraceHash returns a hash of the sequence of (time, class, kind) of every
// event that has run. Two runs with equal hashes ran the same events in the
// same order; the determinism checks compare it.
func (e *Engine) TraceHash() uint64 { return e.hash }

// Schedule arranges for h.OnEvent(e, kind, arg) to run after delay d
// (negative delays count as zero).
func (e *Engine) Schedule(d time.Duration, class Class, h Handler, kind int32, arg any) EventID {
	return e.cal.push(e.now, d, class, h, kind, arg)
}

// after is now.Add(d) for the delays of Schedule: negative counts as zero,
// and it saturates at MaxTime.
func (t Time) after(d time.Duration) Time {
	at := t + Time(max(d, 0))
	if at < t {
		at = MaxTime
	}
	return at
}

// ScheduleAt arranges for h.OnEvent(e, kind, arg) to run at instant at. An
// instant in the past is an internal error.
func (e *Engine) ScheduleAt(at Time, class Class, h Handler, kind int32, arg any) EventID {
	if at < e.now {
		panic(fmt.Sprintf("sim: ScheduleAt(%v) is before now (%v)", at, e.now))
	}
	if class >= numClasses {
		panic("sim: unknown event class")
	}
	return e.cal.push(at, 0, class, h, kind, arg)
}

// Cancel removes a scheduled event. It reports whether the event was still
// pending; cancelling an event that ran or was cancelled is a no-op.
func (e *Engine) Cancel(id EventID) bool { return e.cal.cancel(id) }

// When returns the instant a pending event will run, and whether it is pending.
func (e *Engine) When(id EventID) (Time, bool) { return e.cal.pending(id) }

// Reschedule moves the pending event id to run after delay d from now
// (negative delays count as zero) instead, in class class, as if it were
// cancelled and scheduled again with the same handler, kind and arg: it
// goes after the events already scheduled for the same instant and class.
// It returns the ID that names the event from now on, and false (and does
// nothing) if id was not pending.
func (e *Engine) Reschedule(id EventID, d time.Duration, class Class) (EventID, bool) {
	if d < 0 {
		d = 0
	}
	if class >= numClasses {
		panic("sim: unknown event class")
	}
	at := e.now.Add(d)
	if e.cal.move(id, at, class) {
		return id, true
	}
	sl, ok := e.cal.live(id)
	if !ok {
		return EventID{}, false
	}
	// A lane event: take it out of its lane and into the heap.
	h, kind, arg := sl.h, sl.kind, sl.arg
	e.cal.cancel(id)
	return e.cal.push(at, 0, class, h, kind, arg), true
}

// Stop makes Run return after the current event.
func (e *Engine) Stop() { e.stopped = true }

// Interrupt makes a Run under way return soon (within interruptEvery
// events) without advancing the clock to its horizon, and every later Run
// return at once. Unlike every other method, it may be called from any
// goroutine, any number of times: it is how a run is cancelled from outside
// (a signal, a context). Interrupted reports it afterwards.
func (e *Engine) Interrupt() { e.intr.Store(true) }

// Interrupted reports whether Interrupt has been called.
func (e *Engine) Interrupted() bool { return e.intr.Load() }

// interruptEvery is how many events Run executes between two looks at the
// interrupt flag: often enough to stop within about a millisecond, seldom
// enough to cost nothing measurable.
const interruptEvery = 1 << 12

// Step runs the next event, if any is due no later than until. It reports
// whether an event ran.
func (e *Engine) Step(until Time) bool { return e.run(until, 1) == 1 }

// Run executes events in order until the calendar is empty, Stop is called,
// the engine is interrupted, or the next event lies after until. The clock
// is then advanced to until (unless stopped, interrupted or until is
// MaxTime), so time-weighted statistics can be closed at the horizon.
func (e *Engine) Run(until Time) {
	e.stopped = false
	for !e.intr.Load() {
		if e.run(until, interruptEvery) < interruptEvery || e.stopped {
			break
		}
	}
	if !e.stopped && !e.intr.Load() && until != MaxTime && until > e.now {
		e.now = until
		e.cal.clock = until
	}
}

// run executes up to n events due no later than until, and fewer if the
// calendar runs out of them or an event calls Stop; it returns how many ran.
// Step and Run share it, so that the loop over events calls nothing but the
// sift and the handlers.
func (e *Engine) run(until Time, n int) int {
	c := &e.cal
	done := 0
	for done < n {
		// The event to run: the head of the now queues if it is due before
		// the heap's root, else the root (or what a lane or group's
		// representative stands for).
		s := int32(-1)
		var at Time
		var key uint64
		if c.nowMask != 0 {
			if h := c.nowHead(); h >= 0 && c.takeNow(h, until) {
				s, at, key = h, c.slots[h].at, c.slots[h].key
			}
		}
		if s < 0 {
			if len(c.heap) == 0 {
				break
			}
			top := &c.heap[0]
			at, key, s = top.at, top.key, top.slot
			if at > until {
				break
			}
			if lane := c.slots[s].lane; lane == 0 {
				last := len(c.heap) - 1
				x := c.heap[last]
				c.heap = c.heap[:last]
				if last > 1 {
					c.down(0, x)
				} else if last == 1 {
					c.heap[0] = x
					c.slots[x.slot].pos = 0
				}
			} else if lane < 0 {
				s = c.groups[-lane-1].due() // the representative stood for its group's least
			} else if s = c.lanes[lane-1].due(at, key); s < 0 {
				continue // it moved on
			} // else the representative stood for its lane's head
		}
		sl := &c.slots[s]
		h, kind, arg := sl.h, sl.kind, sl.arg
		c.release(s) // before the handler runs, so that it may schedule
		e.now, c.clock = at, at
		e.events++
		e.mix(uint64(at))
		e.mix(key>>seqBits<<32 | uint64(uint32(kind)))
		h.OnEvent(e, kind, arg)
		done++
		if e.stopped {
			break
		}
	}
	return done
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func (e *Engine) mix(v uint64) {
	// Word-wise FNV-style mixing: cheap, and enough to tell two event
	// sequences apart (it is a check, not a cryptographic digest).
	h := (e.hash ^ v) * fnvPrime
	e.hash = h ^ h>>29
}
