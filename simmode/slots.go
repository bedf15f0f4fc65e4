package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// slots are model.Slots, the FIFO hand-off core both executors share, on
// the calendar: a slot handed to a waiter is delivered as a ClassRelease
// event at the same instant, so it beats any timeout or new arrival at
// that instant.
type slots = model.Slots

// waitRec is a request's place in a queue: the model's Waiter and the
// event its grant is delivered as. It lives inside the waiting entity (a
// request waits for one thing at a time), so waiting allocates nothing
// once the queue has grown.
type waitRec struct {
	model.Waiter
	h    sim.Handler
	kind int32
	arg  any
}

// acquire takes a slot of s now and returns true, or queues and returns
// false; h then gets (kind, arg) when the slot is handed over.
func (w *waitRec) acquire(s *slots, h sim.Handler, kind int32, arg any) bool {
	w.on(h, kind, arg)
	return s.Acquire(&w.Waiter)
}

// on names the event the grant is delivered as.
func (w *waitRec) on(h sim.Handler, kind int32, arg any) *model.Waiter {
	w.h, w.kind, w.arg, w.Owner = h, kind, arg, w
	return &w.Waiter
}

// deliver is Slots.Grant on the calendar.
func deliver(e *sim.Engine) func(*model.Waiter) {
	return func(mw *model.Waiter) {
		w := mw.Owner.(*waitRec)
		h, k, a := w.h, w.kind, w.arg
		w.h, w.arg = nil, nil
		e.Schedule(0, sim.ClassRelease, h, k, a)
	}
}

func newSlots(e *sim.Engine, limit int) *slots {
	s := model.NewSlots(limit)
	s.Grant = deliver(e)
	return s
}

// newLaneSlots is a connection group (model.NewConnectionGroup).
func newLaneSlots(e *sim.Engine, limit int) *slots {
	s := model.NewConnectionGroup(limit)
	s.Grant = deliver(e)
	return s
}
