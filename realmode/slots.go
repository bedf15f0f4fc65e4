package realmode

import (
	"context"
	"sync"

	"github.com/tsim-dev/tsim/model"
)

// sem is model.Slots, the FIFO hand-off core both executors share, behind
// a mutex: a counting semaphore that serves its waiters strictly first
// come, first served, with cancellation (connections aside, which net/http
// queues itself). Go's channels and sync.Mutex are not FIFO-fair, so each
// waiter has a channel of its own, closed when Slots hands it a permit.
type sem struct {
	mu sync.Mutex
	s  *model.Slots

	// onChange, if set, runs with mu held after the permits in use or the
	// waiters changed.
	onChange func(inUse, waiting int)
}

// waiter is one queued acquisition.
type waiter struct {
	model.Waiter
	ch chan struct{} // closed when the permit is granted
}

// newWaiter returns a waiter for Slots.
func newWaiter() *waiter {
	w := &waiter{ch: make(chan struct{})}
	w.Owner = w
	return w
}

// wake is Slots.Grant for real: the waiter's goroutine goes on.
func wake(w *model.Waiter) { close(w.Owner.(*waiter).ch) }

// newSem returns a semaphore of the given capacity; 0 means no limit, as in
// the model.
func newSem(limit int) *sem {
	s := &sem{s: model.NewSlots(max(limit, 0))}
	s.s.Grant = wake
	s.s.OnChange = func() {
		if s.onChange != nil {
			s.onChange(s.s.InUse, s.s.Waiting)
		}
	}
	return s
}

// begin takes a permit now (nil) or queues and returns the waiter to pass
// to wait. Splitting the two lets a caller take the decision while it holds
// a lock of its own (admission does, like the simulator's synchronous
// advance).
func (s *sem) begin() *waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.s.TryAcquire() {
		return nil
	}
	w := newWaiter()
	s.s.Acquire(&w.Waiter)
	return w
}

// wait blocks until w is granted (nil) or ctx ends (its cause). A permit
// granted while the waiter was giving up is passed on to the next waiter.
func (s *sem) wait(ctx context.Context, w *waiter) error {
	return awaitGrant(ctx, &s.mu, w)
}

// awaitGrant is wait on any Slots guarded by mu.
func awaitGrant(ctx context.Context, mu *sync.Mutex, w *waiter) error {
	if w == nil {
		return nil
	}
	select {
	case <-w.ch:
		w.TakeGrant() // nobody else touches w once it is granted
		return nil
	case <-ctx.Done():
	}
	mu.Lock()
	w.Cancel()
	mu.Unlock()
	return context.Cause(ctx)
}

// acquire takes a permit, waiting in FIFO order; it fails only when ctx ends.
func (s *sem) acquire(ctx context.Context) error { return s.wait(ctx, s.begin()) }

// release returns a permit.
func (s *sem) release() {
	s.mu.Lock()
	s.s.Release()
	s.mu.Unlock()
}

// snapshot returns the permits in use and the live waiters.
func (s *sem) snapshot() (inUse, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.InUse, s.s.Waiting
}

// free reports whether a permit is free.
func (s *sem) free() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.s.Free()
}
