package sim

import (
	"fmt"
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
	if d < 0 {
		d = 0
	}
	return e.cal.push(e.now.Add(d), class, h, kind, arg)
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
	return e.cal.push(at, class, h, kind, arg)
}

// Cancel removes a scheduled event. It reports whether the event was still
// pending; cancelling an event that ran or was cancelled is a no-op.
func (e *Engine) Cancel(id EventID) bool { return e.cal.cancel(id) }

// When returns the instant a pending event will run, and whether it is pending.
func (e *Engine) When(id EventID) (Time, bool) { return e.cal.pending(id) }

// Stop makes Run return after the current event.
func (e *Engine) Stop() { e.stopped = true }

// Step runs the next event, if any is due no later than until. It reports
// whether an event ran.
func (e *Engine) Step(until Time) bool {
	if e.cal.len() == 0 || e.cal.heap[0].at > until {
		return false
	}
	at, class, h, kind, arg := e.cal.pop()
	e.now = at
	e.events++
	e.mix(uint64(at))
	e.mix(uint64(class)<<32 | uint64(uint32(kind)))
	h.OnEvent(e, kind, arg)
	return true
}

// Run executes events in order until the calendar is empty, Stop is called,
// or the next event lies after until. The clock is then advanced to until
// (unless stopped or until is MaxTime), so time-weighted statistics can be
// closed at the horizon.
func (e *Engine) Run(until Time) {
	e.stopped = false
	for !e.stopped && e.Step(until) {
	}
	if !e.stopped && until != MaxTime && until > e.now {
		e.now = until
	}
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
