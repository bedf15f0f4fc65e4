package simmode

import (
	"github.com/tsim-dev/tsim/sim"
)

// waitRec is one waiter in a slots queue. It lives inside the waiting
// entity (a request waits for one thing at a time), so waiting allocates
// nothing once the queue has grown.
type waitRec struct {
	h      sim.Handler
	kind   int32
	arg    any
	active bool
	q      *slots
	since  sim.Time
	ticket uint64 // which queue entry is live; older entries of a reused record are stale
	lane   int    // per-connection slots: the connection it holds or waits for
	// granted: the slot was handed over and the grant event is on its way.
	// An owner that ends in between gives the slot back (giveBack).
	granted bool
}

type ticket struct {
	w *waitRec
	t uint64
}

func (t ticket) live(s *slots) bool { return t.w.active && t.w.q == s && t.w.ticket == t.t }

// slots is the one template for every counted resource (connections, WCF
// throttles, locks, proxies): a count, a limit and a FIFO of waiters. A
// freed slot is handed to the next waiter that is still waiting before the
// count drops (net/http's MaxConnsPerHost discipline): the grant is
// delivered as a ClassRelease event at the same instant, so it beats any
// timeout or new arrival at that instant.
type slots struct {
	e       *sim.Engine
	limit   int // 0 = unlimited
	inUse   int
	ring    // FIFO of waiters
	tickets uint64
	waiting int // live waiters (ring.n counts abandoned ones too)

	// onChange is called after inUse or waiting changed (for levels).
	onChange func()

	// lanes, if set, replace the single FIFO: one queue per slot (see
	// newLaneSlots); order, for a large pool, keeps them in the order the
	// pick goes by.
	lanes []lane
	order *laneOrder
}

// lane is one connection of a per-connection pool and the calls bound to it.
type lane struct {
	busy bool
	ring
	live int
}

// idle reports whether a call can have the connection now.
func (l *lane) idle() bool { return !l.busy && l.live == 0 }

// laneScanMax is the largest per-connection pool that acquireLane scans;
// larger ones (a limit of thousands: wcf-async-module-10k) keep their
// connections in a laneOrder, which picks the same connection in
// O(log n) instead of O(n).
var laneScanMax = 32 // a variable for the test that compares the two

// laneOrder is a binary min-heap of a pool's connections in the order the
// scan picks them: idle ones first, then fewer calls bound, then the lower
// index, so that its root is the scan's pick.
type laneOrder struct {
	h   []int32 // connection indices
	pos []int32 // pos[k] is k's index in h
}

// newLaneOrder returns the order of n idle connections: by index, which
// is a heap already.
func newLaneOrder(n int) *laneOrder {
	o := &laneOrder{h: make([]int32, n), pos: make([]int32, n)}
	for k := range n {
		o.h[k], o.pos[k] = int32(k), int32(k)
	}
	return o
}

// before reports whether connection a goes before b.
func laneBefore(lanes []lane, a, b int32) bool {
	la, lb := &lanes[a], &lanes[b]
	if ia, ib := la.idle(), lb.idle(); ia != ib {
		return ia
	}
	if la.live != lb.live {
		return la.live < lb.live
	}
	return a < b
}

// fix restores the order after connection k changed.
func (o *laneOrder) fix(lanes []lane, k int) {
	h := o.h
	i := int(o.pos[k])
	x := h[i]
	for i > 0 { // up
		p := (i - 1) / 2
		if !laneBefore(lanes, x, h[p]) {
			break
		}
		h[i] = h[p]
		o.pos[h[i]] = int32(i)
		i = p
	}
	for { // down
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if c+1 < len(h) && laneBefore(lanes, h[c+1], h[c]) {
			c++
		}
		if !laneBefore(lanes, h[c], x) {
			break
		}
		h[i] = h[c]
		o.pos[h[i]] = int32(i)
		i = c
	}
	h[i] = x
	o.pos[x] = int32(i)
}

// ring is a FIFO of tickets in a growable ring buffer whose length is 0 or
// a power of two.
type ring struct {
	q       []ticket
	head, n int
}

func newSlots(e *sim.Engine, limit int) *slots { return &slots{e: e, limit: limit} }

// newLaneSlots is System.Net's connection group (throttle-facts §1): when
// every connection is busy, a request is bound to the connection with the
// fewest waiters and written only when that connection finishes, even if
// another one frees first (head-of-line blocking).
func newLaneSlots(e *sim.Engine, limit int) *slots {
	s := &slots{e: e, limit: limit, lanes: make([]lane, limit)}
	if limit > laneScanMax {
		s.order = newLaneOrder(limit)
	}
	return s
}

func (s *slots) free() bool { return s.limit == 0 || s.inUse < s.limit }

// acquire takes a slot now and returns true, or queues w and returns false;
// w's handler then gets (kind, arg) when the slot is handed over.
func (s *slots) acquire(w *waitRec, h sim.Handler, kind int32, arg any) bool {
	if s.lanes != nil {
		return s.acquireLane(w, h, kind, arg)
	}
	if s.free() && s.waiting == 0 {
		s.inUse++
		s.changed()
		return true
	}
	w.h, w.kind, w.arg, w.active, w.q, w.since = h, kind, arg, true, s, s.e.Now()
	s.tickets++
	w.ticket = s.tickets
	s.push(ticket{w, w.ticket})
	s.waiting++
	s.changed()
	return false
}

// acquireLane binds w to the first idle connection, or else to the first
// of those with the fewest calls bound.
func (s *slots) acquireLane(w *waitRec, h sim.Handler, kind int32, arg any) bool {
	best := -1
	if s.order != nil {
		best = int(s.order.h[0])
		if l := &s.lanes[best]; l.idle() {
			s.takeLane(w, best)
			return true
		}
	} else {
		for k := range s.lanes {
			l := &s.lanes[k]
			if l.idle() {
				s.takeLane(w, k)
				return true
			}
			if best < 0 || l.live < s.lanes[best].live {
				best = k
			}
		}
	}
	w.h, w.kind, w.arg, w.active, w.q, w.since, w.lane = h, kind, arg, true, s, s.e.Now(), best
	s.tickets++
	w.ticket = s.tickets
	s.lanes[best].push(ticket{w, w.ticket})
	s.lanes[best].live++
	s.reorder(best)
	s.waiting++
	s.changed()
	return false
}

// takeLane gives idle connection k to w.
func (s *slots) takeLane(w *waitRec, k int) {
	s.lanes[k].busy = true
	s.reorder(k)
	s.inUse++
	w.lane = k
	s.changed()
}

// reorder notes that connection k changed (busy, or calls bound).
func (s *slots) reorder(k int) {
	if s.order != nil {
		s.order.fix(s.lanes, k)
	}
}

// releaseLane frees connection k, writing the next request bound to it.
func (s *slots) releaseLane(k int) {
	l := &s.lanes[k]
	for l.n > 0 {
		t := l.pop()
		if !t.live(s) {
			continue
		}
		w := t.w
		w.active = false
		w.granted = true
		l.live--
		s.reorder(k)
		s.waiting--
		h, kd, a := w.h, w.kind, w.arg
		w.h, w.arg = nil, nil
		s.e.Schedule(0, sim.ClassRelease, h, kd, a)
		s.changed()
		return
	}
	l.busy = false
	s.reorder(k)
	s.inUse--
	s.changed()
}

// abandon removes w from the queue (its owner gave up). It reports whether
// w was still waiting.
func (s *slots) abandon(w *waitRec) bool {
	if !w.active || w.q != s {
		return false
	}
	if s.lanes != nil {
		s.lanes[w.lane].live--
		s.reorder(w.lane)
	}
	w.active = false
	w.h, w.arg = nil, nil
	s.waiting--
	s.changed()
	return true
}

// giveBack returns a slot that was handed to w but not yet delivered (its
// owner ended at the same instant). It reports whether there was one.
func (w *waitRec) giveBack() bool {
	if !w.granted {
		return false
	}
	w.granted = false
	if w.q.lanes != nil {
		w.q.releaseLane(w.lane)
	} else {
		w.q.release()
	}
	return true
}

// release frees one slot, handing it to the next live waiter if any.
func (s *slots) release() {
	if s.lanes != nil {
		panic("model: release on per-connection slots; use releaseLane")
	}
	if s.inUse <= 0 {
		panic("model: release of a free slot")
	}
	s.inUse--
	s.grant()
	s.changed()
}

// setLimit changes the limit (thread injection) and grants what it frees.
func (s *slots) setLimit(limit int) {
	s.limit = limit
	s.grant()
	s.changed()
}

func (s *slots) grant() {
	for s.waiting > 0 && s.free() {
		t := s.pop()
		if !t.live(s) {
			continue
		}
		w := t.w
		w.active = false
		w.granted = true
		s.waiting--
		s.inUse++
		h, k, a := w.h, w.kind, w.arg
		w.h, w.arg = nil, nil
		s.e.Schedule(0, sim.ClassRelease, h, k, a)
	}
	// Drop abandoned records at the head so the ring does not fill with them.
	for s.n > 0 && !s.q[s.head].live(s) {
		s.pop()
	}
}

func (s *slots) changed() {
	if (s.limit > 0 && s.inUse > s.limit) || (s.limit < 0 && s.inUse > 0) || s.waiting < 0 || s.inUse < 0 {
		panic("model: slots invariant broken")
	}
	if s.onChange != nil {
		s.onChange()
	}
}

// The ring's length is 0 or a power of two, so that wrapping around is a
// mask rather than a division (this runs for every wait for a slot).
func (r *ring) push(t ticket) {
	if r.n == len(r.q) {
		nq := make([]ticket, max(2*len(r.q), 4))
		for i := 0; i < r.n; i++ {
			nq[i] = r.q[(r.head+i)&(len(r.q)-1)]
		}
		r.q, r.head = nq, 0
	}
	r.q[(r.head+r.n)&(len(r.q)-1)] = t
	r.n++
}

func (r *ring) pop() ticket {
	t := r.q[r.head]
	r.q[r.head] = ticket{}
	r.head = (r.head + 1) & (len(r.q) - 1)
	r.n--
	return t
}
