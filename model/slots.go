package model

// Slots is the one FIFO hand-off core behind every counted resource of
// both executors (connections, thread pools, WCF throttles, sessions,
// locks, proxies, a balancer's door): a count, a limit and a FIFO of
// waiters. A freed slot is handed to the next waiter that is still waiting
// before the count drops (net/http's MaxConnsPerHost discipline); a waiter
// that gave up is skipped.
//
// Slots decides who holds what; waking the owner of a waiter it hands a
// slot to is the executor's (Grant): the simulator schedules an event at
// the same instant, real mode closes a channel. Slots has no clock, no
// lock and no goroutine: real mode calls it under a mutex of its own.
type Slots struct {
	Limit   int // 0 = no limit; < 0 = no slot at all (a pool without threads)
	InUse   int
	Waiting int // live waiters (the ring may also hold stale ones)

	// Grant is called for each waiter handed a slot, while Slots is being
	// changed (the executor wakes its owner). OnChange is called after
	// InUse or Waiting changed (for levels).
	Grant    func(w *Waiter)
	OnChange func()

	ring    // FIFO of waiters
	tickets uint64
	// lanes, if set, replace the single FIFO: one queue per slot (see
	// NewConnectionGroup); order, for a large pool, keeps them in the
	// order the pick goes by.
	lanes []lane
	order *laneOrder
}

// Waiter is one place in a Slots queue. It lives in the waiting request
// (the simulator reuses one from wait to wait, since a request waits for
// one thing at a time), so waiting allocates nothing once a queue has
// grown.
type Waiter struct {
	// Owner is the executor's record of the waiting request, for Grant.
	Owner  any
	q      *Slots
	ticket uint64 // which queue entry is live; older entries of a reused Waiter are stale
	lane   int    // per-connection slots: the connection it holds or waits for
	active bool   // in a queue
	// granted: handed a slot its owner has not taken up yet (the
	// simulator's grant event is on its way; real mode's owner has not
	// woken). An owner that ends meanwhile gives it back (Cancel).
	granted bool
}

// Waiting reports whether w is in a queue.
func (w *Waiter) Waiting() bool { return w.active }

// Lane is the connection w holds or waits for, in a connection group.
func (w *Waiter) Lane() int { return w.lane }

// TakeGrant is the owner taking up the slot it was handed; it reports
// false when there was none (it was given back meanwhile).
func (w *Waiter) TakeGrant() bool {
	if !w.granted {
		return false
	}
	w.granted = false
	return true
}

// Leave takes w out of its queue (its owner gave up); it reports whether
// w was waiting.
func (w *Waiter) Leave() bool { return w.active && w.q.Abandon(w) }

// Cancel is the owner giving up: it leaves its queue, or gives back a slot
// it was handed and has not taken up (to the next waiter). It reports
// whether a slot was given back.
func (w *Waiter) Cancel() (gaveBack bool) {
	w.Leave()
	if !w.granted {
		return false
	}
	w.granted = false
	if w.q.lanes != nil {
		w.q.ReleaseLane(w.lane)
	} else {
		w.q.Release()
	}
	return true
}

type ticket struct {
	w *Waiter
	t uint64
}

func (t ticket) live(s *Slots) bool { return t.w.active && t.w.q == s && t.w.ticket == t.t }

// NewSlots returns slots of the given limit (0: none).
func NewSlots(limit int) *Slots { return &Slots{Limit: limit} }

// NewConnectionGroup is System.Net's connection group (docs/dotnet.md
// §1.5): when every connection is busy, a request is bound to the
// connection with the fewest waiters and written only when that connection
// finishes, even if another one frees first (head-of-line blocking).
//
// Its connections are made as they are first needed (the first idle one
// in index order is always the next unused one), so memory follows the
// connections used, not the limit: a limit of 2,147,483,647 costs what a
// limit of 10 does under the same load.
func NewConnectionGroup(limit int) *Slots {
	if limit <= 0 {
		panic("model: a connection group needs a limit")
	}
	s := &Slots{Limit: limit, lanes: []lane{}}
	if limit > laneScanMax {
		s.order = &laneOrder{}
	}
	return s
}

// PerConnection reports whether s is a connection group (ReleaseLane).
func (s *Slots) PerConnection() bool { return s.lanes != nil }

// Free reports whether a slot is free.
func (s *Slots) Free() bool { return s.Limit == 0 || s.InUse < s.Limit }

// TryAcquire takes a slot if one is free and nobody waits.
func (s *Slots) TryAcquire() bool {
	if s.lanes == nil && s.Free() && s.Waiting == 0 {
		s.InUse++
		s.changed()
		return true
	}
	return false
}

// Acquire takes a slot now and returns true, or queues w and returns
// false; Grant gets w when a slot is handed to it.
func (s *Slots) Acquire(w *Waiter) bool {
	if s.lanes != nil {
		return s.acquireLane(w)
	}
	if s.Free() && s.Waiting == 0 {
		s.InUse++
		s.changed()
		return true
	}
	s.queue(w)
	s.push(ticket{w, w.ticket})
	s.Waiting++
	s.changed()
	return false
}

// queue marks w waiting in s, with a new ticket.
func (s *Slots) queue(w *Waiter) {
	w.active, w.q = true, s
	s.tickets++
	w.ticket = s.tickets
}

// Release frees one slot, handing it to the next live waiter if any.
func (s *Slots) Release() {
	if s.lanes != nil {
		panic("model: Release on a connection group; use ReleaseLane")
	}
	if s.InUse <= 0 {
		panic("model: release of a free slot")
	}
	s.InUse--
	s.grant()
	s.changed()
}

// Abandon removes w from the queue (its owner gave up). It reports whether
// w was still waiting.
func (s *Slots) Abandon(w *Waiter) bool {
	if !w.active || w.q != s {
		return false
	}
	if s.lanes != nil {
		s.lanes[w.lane].live--
		s.reorder(w.lane)
	}
	w.active = false
	s.Waiting--
	s.changed()
	return true
}

// SetLimit changes the limit (threads injected or retired) and grants
// what it frees.
func (s *Slots) SetLimit(limit int) {
	s.Limit = limit
	s.grant()
	s.changed()
}

// grant hands free slots to the oldest live waiters.
func (s *Slots) grant() {
	for s.Waiting > 0 && s.Free() {
		t := s.pop()
		if !t.live(s) {
			continue
		}
		s.Waiting--
		s.InUse++
		s.handTo(t.w)
	}
	// Drop abandoned records at the head so the ring does not fill with them.
	for s.n > 0 && !s.q[s.head].live(s) {
		s.pop()
	}
}

// handTo gives w the slot it waited for.
func (s *Slots) handTo(w *Waiter) {
	w.active = false
	w.granted = true
	if s.Grant != nil {
		s.Grant(w)
	}
}

func (s *Slots) changed() {
	if (s.Limit > 0 && s.InUse > s.Limit) || (s.Limit < 0 && s.InUse > 0) || s.Waiting < 0 || s.InUse < 0 {
		panic("model: slots invariant broken")
	}
	if s.OnChange != nil {
		s.OnChange()
	}
}

// ---------------------------------------------------------------------------
// connection groups

// lane is one connection of a connection group and the calls bound to it.
type lane struct {
	busy bool
	ring
	live int
}

// idle reports whether a call can have the connection now.
func (l *lane) idle() bool { return !l.busy && l.live == 0 }

// bound is the number of calls bound to connection k: the one it carries
// and those waiting for it.
func (s *Slots) bound(k int) int {
	l := &s.lanes[k]
	if l.busy {
		return l.live + 1
	}
	return l.live
}

// LaneState reports whether connection k is busy and how many calls wait
// for it (tests).
func (s *Slots) LaneState(k int) (busy bool, bound int) {
	if k >= len(s.lanes) {
		return false, 0 // not made yet: idle
	}
	return s.lanes[k].busy, s.lanes[k].live
}

// Lanes is how many connections of a connection group have been made.
func (s *Slots) Lanes() int { return len(s.lanes) }

// PickLane is the connection of a group of n that a call is bound to: the
// first idle one (bound(k) == 0: no call on it or waiting for it), or else
// the first of those with the fewest calls bound. Both executors' groups
// pick with it (the simulator's large groups keep a heap in the same
// order: laneOrder).
func PickLane(n int, bound func(k int) int) int {
	best, least := -1, 0
	for k := range n {
		b := bound(k)
		if b == 0 {
			return k
		}
		if best < 0 || b < least {
			best, least = k, b
		}
	}
	return best
}

// acquireLane binds w to the first idle connection, or else to the first
// of those with the fewest calls bound (PickLane). The connections not
// made yet are idle and come after those made, so the first idle one is a
// made one if any is, and otherwise the next to make.
func (s *Slots) acquireLane(w *Waiter) bool {
	best := -1
	if s.order != nil {
		if len(s.order.h) > 0 {
			best = int(s.order.h[0])
		}
	} else {
		best = PickLane(len(s.lanes), s.bound)
	}
	if best >= 0 && s.lanes[best].idle() {
		s.takeLane(w, best)
		return true
	}
	if len(s.lanes) < s.Limit {
		s.takeLane(w, s.addLane())
		return true
	}
	s.queue(w)
	w.lane = best
	s.lanes[best].push(ticket{w, w.ticket})
	s.lanes[best].live++
	s.reorder(best)
	s.Waiting++
	s.changed()
	return false
}

// addLane makes the next connection, idle, and returns its index.
func (s *Slots) addLane() int {
	k := len(s.lanes)
	s.lanes = append(s.lanes, lane{})
	if o := s.order; o != nil {
		// Last in the heap; takeLane's reorder puts it in its place.
		o.pos = append(o.pos, int32(len(o.h)))
		o.h = append(o.h, int32(k))
	}
	return k
}

// takeLane gives idle connection k to w.
func (s *Slots) takeLane(w *Waiter, k int) {
	s.lanes[k].busy = true
	s.reorder(k)
	s.InUse++
	w.lane = k
	s.changed()
}

// reorder notes that connection k changed (busy, or calls bound).
func (s *Slots) reorder(k int) {
	if s.order != nil {
		s.order.fix(s.lanes, k)
	}
}

// ReleaseLane frees connection k, writing the next request bound to it.
func (s *Slots) ReleaseLane(k int) {
	l := &s.lanes[k]
	for l.n > 0 {
		t := l.pop()
		if !t.live(s) {
			continue
		}
		l.live--
		s.reorder(k)
		s.Waiting--
		s.handTo(t.w)
		s.changed()
		return
	}
	l.busy = false
	s.reorder(k)
	s.InUse--
	s.changed()
}

// laneScanMax is the largest connection group that acquireLane scans;
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

// laneBefore reports whether connection a goes before b.
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
// a power of two, so that wrapping around is a mask rather than a division
// (this runs for every wait for a slot).
type ring struct {
	q       []ticket
	head, n int
}

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
