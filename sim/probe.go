package sim

import (
	"fmt"
	"time"
)

// Probe calls a function at evenly spaced instants of virtual time, to sample
// a time series (queue lengths, utilisation per interval, ...). Its events are
// ClassSample, so at each instant it sees the state after every other event
// at that instant.
//
// A running probe always has its next tick scheduled, so the calendar never
// empties: drive the engine with a finite horizon (Engine.Run(until)), or
// Stop the probe, or Run will not return.
type Probe struct {
	e       *Engine
	every   time.Duration
	fn      func(now Time)
	next    EventID
	stopped bool
}

// StartProbe schedules fn(now) at start, start+every, start+2·every, ... on e
// until the probe is stopped. start must not be before e.Now() and every must
// be positive; either mistake panics. Ticks allocate nothing.
func StartProbe(e *Engine, start Time, every time.Duration, fn func(now Time)) *Probe {
	if every <= 0 {
		panic(fmt.Sprintf("sim: StartProbe: period must be positive, got %v", every))
	}
	p := &Probe{e: e, every: every, fn: fn}
	p.next = e.ScheduleAt(start, ClassSample, p, 0, nil)
	return p
}

// OnEvent runs one tick and schedules the next. It implements Handler.
func (p *Probe) OnEvent(e *Engine, _ int32, _ any) {
	if p.stopped {
		return
	}
	now := e.Now()
	p.fn(now)
	if p.stopped || now.Add(p.every) == MaxTime { // fn stopped it, or time ran out
		return
	}
	p.next = e.Schedule(p.every, ClassSample, p, 0, nil)
}

// Stop cancels the remaining ticks. Stopping twice, or from inside fn, is
// fine.
func (p *Probe) Stop() {
	p.stopped = true
	p.e.Cancel(p.next)
}
