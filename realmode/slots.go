package realmode

import (
	"context"
	"math"
	"sync"
)

// unlimited is the capacity of a semaphore without a limit.
const unlimited = math.MaxInt

// sem is a counting semaphore that serves its waiters strictly first come,
// first served, with cancellation: the real executor's version of the
// model's slots (connections aside, which net/http queues itself). Go's
// channels and sync.Mutex are not FIFO-fair, so waiters queue as records,
// each with its own channel, and a freed permit is handed to the oldest
// waiter that is still waiting before the count drops (net/http's
// MaxConnsPerHost discipline, as in model.slots).
type sem struct {
	mu      sync.Mutex
	limit   int // capacity; unlimited for none
	inUse   int
	q       []*waiter
	head    int
	waiting int // live waiters (q may also hold ones that gave up)

	// onChange, if set, runs with mu held after inUse or waiting changed.
	onChange func(inUse, waiting int)
}

// waiter is one queued acquisition.
type waiter struct {
	ch      chan struct{} // closed when the permit is granted
	granted bool
	gone    bool // gave up before the grant
}

// newSem returns a semaphore of the given capacity; 0 means no limit, as in
// the model.
func newSem(limit int) *sem {
	if limit <= 0 {
		limit = unlimited
	}
	return &sem{limit: limit}
}

func (s *sem) changed() {
	if s.onChange != nil {
		s.onChange(s.inUse, s.waiting)
	}
}

// tryLocked takes a permit at once if one is free and nobody waits.
func (s *sem) tryLocked() bool {
	if s.inUse < s.limit && s.waiting == 0 {
		s.inUse++
		s.changed()
		return true
	}
	return false
}

// enqueueLocked queues a new waiter at the tail.
func (s *sem) enqueueLocked() *waiter {
	w := &waiter{ch: make(chan struct{})}
	if s.head > 64 && s.head*2 > len(s.q) {
		n := copy(s.q, s.q[s.head:])
		clear(s.q[n:])
		s.q, s.head = s.q[:n], 0
	}
	s.q = append(s.q, w)
	s.waiting++
	s.changed()
	return w
}

// begin takes a permit now (nil) or queues and returns the waiter to pass
// to wait. Splitting the two lets a caller take the decision while it holds
// a lock of its own (admission does, like the model's synchronous advance).
func (s *sem) begin() *waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tryLocked() {
		return nil
	}
	return s.enqueueLocked()
}

// wait blocks until w is granted (nil) or ctx ends (its cause). A permit
// granted while the waiter was giving up is passed on to the next waiter.
func (s *sem) wait(ctx context.Context, w *waiter) error {
	if w == nil {
		return nil
	}
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.granted {
		s.releaseLocked()
	} else {
		w.gone = true
		s.waiting--
		s.changed()
	}
	return context.Cause(ctx)
}

// acquire takes a permit, waiting in FIFO order; it fails only when ctx ends.
func (s *sem) acquire(ctx context.Context) error { return s.wait(ctx, s.begin()) }

// release returns a permit.
func (s *sem) release() {
	s.mu.Lock()
	s.releaseLocked()
	s.mu.Unlock()
}

func (s *sem) releaseLocked() {
	if s.inUse <= 0 {
		panic("realmode: release of a free permit")
	}
	s.inUse--
	s.grantLocked()
	s.changed()
}

// setLimitLocked changes the capacity (thread injection and retirement) and
// grants what it frees.
func (s *sem) setLimitLocked(limit int) {
	s.limit = limit
	s.grantLocked()
	s.changed()
}

// grantLocked hands free permits to the oldest live waiters.
func (s *sem) grantLocked() {
	for s.waiting > 0 && s.inUse < s.limit {
		w := s.q[s.head]
		s.q[s.head] = nil
		s.head++
		if w.gone {
			continue
		}
		w.granted = true
		s.waiting--
		s.inUse++
		close(w.ch)
	}
	for s.head < len(s.q) && s.q[s.head].gone {
		s.q[s.head] = nil
		s.head++
	}
	if s.head == len(s.q) {
		s.q, s.head = s.q[:0], 0
	}
}

// snapshot returns the permits in use and the live waiters.
func (s *sem) snapshot() (inUse, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inUse, s.waiting
}
