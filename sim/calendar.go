package sim

import (
	"math/bits"
	"strconv"
	"time"
)

// Class orders events that fall on the same instant. Lower classes run first.
type Class uint8

// Event classes, in the order they run at one instant (see the package doc).
const (
	ClassRelease    Class = iota // a resource is freed
	ClassCompletion              // a service, wait or call completes
	ClassTimeout                 // a deadline expires (loses to a completion at the same instant)
	ClassArrival                 // a new request or an acquisition attempt
	ClassSample                  // observers: see the state after everything else at the instant
	numClasses
)

// EventID names a scheduled event so that it can be cancelled. The zero
// EventID names no event; cancelling it (or an event that already ran or was
// cancelled) does nothing.
type EventID struct {
	slot int32
	gen  uint32
}

// Valid reports whether id was returned by Schedule (it may since have run).
func (id EventID) Valid() bool { return id.gen != 0 }

// A Handler reacts to the events it scheduled. kind and arg are what was
// passed to Schedule; arg is typically a pointer, which boxes without
// allocating.
type Handler interface {
	OnEvent(e *Engine, kind int32, arg any)
}

// slot holds a scheduled event's payload. Slots are recycled through a free
// list, so steady-state scheduling allocates nothing. A slot's generation
// is bumped when it is released, so the EventIDs and lane references that
// carry the old generation go stale at once: an ID names a scheduled event
// exactly when its generation is its slot's.
type slot struct {
	h    Handler
	arg  any
	at   Time   // a lane event's instant (a heap event's is heap[pos].at)
	key  uint64 // a lane event's ordering key
	kind int32
	// pos is the index in the heap, posLane for an event queued in a lane,
	// posFree for a representative out of the heap; on the free list, 1 +
	// the next free slot (0: none).
	pos  int32
	gen  uint32 // odd, so never 0 (the zero EventID names nothing)
	lane int32  // 1 + index of the lane of a lane event or a lane's representative; 0 otherwise
}

const (
	posFree = -1
	posLane = -2
	posNow  = -3 // in a now queue (see calendar)
)

// entry is one heap element: the ordering key and the slot it refers to.
// It holds no pointers, so sifting it costs no write barriers.
type entry struct {
	at   Time
	key  uint64 // class<<56 | insertion sequence
	slot int32
}

func (a *entry) less(b *entry) bool {
	return a.at < b.at || (a.at == b.at && a.key < b.key)
}

// before is a.less(b) as 0 or 1, without branches: the borrow out of the
// 128-bit subtraction (a.at, a.key) − (b.at, b.key), instants being
// non-negative.
func before(a, b *entry) uint64 {
	_, borrow := bits.Sub64(a.key, b.key, 0)
	_, borrow = bits.Sub64(uint64(a.at), uint64(b.at), borrow)
	return borrow
}

const seqBits = 56

// calendar is an index-tracked 4-ary min-heap of events, plus lanes (see
// Lane) whose events wait outside the heap. A 4-ary heap does fewer
// cache-missing levels than a binary one for the same comparisons.
//
// Events are ordered by (time, class, sequence), the sequence being taken
// from one counter when an event is scheduled, wherever it then waits: a
// lane event carries the key it would have had in the heap, and a lane's
// representative carries its head's, so the order in which events run is
// the same as if every event were in the heap.
//
// Events scheduled with no delay wait in now queues, one FIFO per class,
// outside the heap: they fall due at the current instant, after the events
// already due then in their class and before every later one, so a FIFO per
// class keeps them in key order, and the earliest of them is the head of the
// lowest non-empty class. The clock cannot move on while one is queued (each
// is due before any later event), so they never go stale by time; the run
// loop takes the earlier of that head and the heap's root. Zero-delay events
// (a slot handed to its next waiter, the reply going back to a caller) are a
// fifth of a request's events; this spares each a sift up to the root and
// one down, and changes no order.
type calendar struct {
	heap    []entry
	slots   []slot
	free    int32 // 1 + the first slot of the free list; 0 when it is empty
	seq     uint64
	lanes   []*Lane
	groups  []*Group
	now     [numClasses]nowQueue
	nowMask uint8 // bit k: now[k] holds references (perhaps only cancelled ones)
	nowLive int   // live events in the now queues
	clock   Time  // the engine's clock, as of the last event run
}

// nowQueue is a FIFO of references to zero-delay events of one class, in a
// ring whose length is 0 or a power of two; cancelled events stay until they
// reach the head.
type nowQueue struct {
	q       []laneRef
	head, n int
}

// len returns how many events are scheduled: the heap's, less the lanes'
// representatives, plus the lanes' live events.
func (c *calendar) len() int {
	n := len(c.heap) + c.nowLive
	for _, l := range c.lanes {
		if l.m > 0 {
			n--
		}
		n += l.live
	}
	for _, g := range c.groups {
		if len(g.heap) > 0 {
			n += len(g.heap) - 1
		}
	}
	return n
}

// alloc takes a slot off the free list.
func (c *calendar) alloc() int32 {
	if f := c.free; f != 0 {
		c.free = c.slots[f-1].pos
		return f - 1
	}
	return c.newSlot()
}

// newSlot grows the slot table by one slot (kept out of line so that the
// common path of push spills nothing).
//
//go:noinline
func (c *calendar) newSlot() int32 {
	c.slots = append(c.slots, slot{gen: 1, pos: posFree})
	return int32(len(c.slots) - 1)
}

//go:noinline
func (c *calendar) growHeap() {
	c.heap = append(c.heap, entry{})[:len(c.heap)]
}

// release voids a slot's generation and puts it on the free list. The slot
// keeps its handler and argument until it is reused: that holds on to at
// most as many objects as the calendar ever held events, and spares every
// event two write barriers.
func (c *calendar) release(s int32) {
	sl := &c.slots[s]
	sl.gen += 2 // stays odd
	sl.lane = 0
	sl.pos = c.free
	c.free = s + 1
}

// nextKey takes the next insertion sequence number for class.
func (c *calendar) nextKey(class Class) uint64 {
	c.seq++
	if c.seq >= 1<<seqBits {
		seqOverflow()
	}
	return uint64(class)<<seqBits | c.seq
}

func seqOverflow() { panic("sim: event sequence overflow") }

// push schedules an event at base.after(d): Schedule passes (now, d),
// the others (at, 0), so that Schedule is one call.
func (c *calendar) push(base Time, d time.Duration, class Class, h Handler, kind int32, arg any) EventID {
	if d <= 0 && base == c.clock {
		return c.pushNow(base, class, h, kind, arg)
	}
	if c.free == 0 || len(c.heap) == cap(c.heap) {
		return c.pushGrow(base, d, class, h, kind, arg)
	}
	// alloc, nextKey and insert, by hand, with no call on the way while
	// the arguments are live: this is the hottest path of all.
	s := c.free - 1
	sl := &c.slots[s]
	c.free = sl.pos
	sl.h, sl.arg, sl.kind = h, arg, kind
	c.seq++
	if c.seq >= 1<<seqBits {
		seqOverflow()
	}
	i := len(c.heap)
	c.heap = c.heap[:i+1]
	x := entry{at: base.after(d), key: uint64(class)<<seqBits | c.seq, slot: s}
	id := EventID{slot: s, gen: sl.gen}
	if i > 0 {
		// The first step of up, inline: most events fall due after their
		// parent's, and in a small calendar the parent is the root.
		h := c.heap
		if p := (i - 1) / 4; x.less(&h[p]) {
			h[i] = h[p]
			c.slots[h[i].slot].pos = int32(i)
			if i = p; i > 0 {
				c.up(i, x)
				return id
			}
		}
	}
	c.heap[i] = x
	sl.pos = int32(i)
	return id
}

// pushGrow makes room for one more event, then pushes it.
//
//go:noinline
func (c *calendar) pushGrow(base Time, d time.Duration, class Class, h Handler, kind int32, arg any) EventID {
	if c.free == 0 {
		s := c.newSlot()
		c.slots[s].pos = 0 // the end of the free list
		c.free = s + 1
	}
	if len(c.heap) == cap(c.heap) {
		c.growHeap()
	}
	return c.push(base, d, class, h, kind, arg)
}

// insert adds x to the heap.
func (c *calendar) insert(x entry) {
	i := len(c.heap)
	if i == cap(c.heap) {
		c.growHeap()
	}
	c.heap = c.heap[:i+1]
	c.up(i, x)
}

// pushNow schedules an event at at, the current instant, in its class's
// now queue (push sends there what falls due now).
func (c *calendar) pushNow(at Time, class Class, h Handler, kind int32, arg any) EventID {
	s := c.alloc()
	sl := &c.slots[s]
	sl.h, sl.arg, sl.kind = h, arg, kind
	sl.at, sl.key, sl.pos = at, c.nextKey(class), posNow
	q := &c.now[class]
	if q.n == len(q.q) {
		q.grow()
	}
	q.q[(q.head+q.n)&(len(q.q)-1)] = laneRef{s, sl.gen}
	q.n++
	c.nowMask |= 1 << class
	c.nowLive++
	return EventID{slot: s, gen: sl.gen}
}

func (q *nowQueue) grow() {
	n := max(2*len(q.q), 16)
	nq := make([]laneRef, n)
	for i := range q.n {
		nq[i] = q.q[(q.head+i)&(len(q.q)-1)]
	}
	q.q, q.head = nq, 0
}

// nowHead returns the slot of the earliest live event of the now queues,
// or -1 if there is none, dropping the cancelled references at their heads.
func (c *calendar) nowHead() int32 {
	for c.nowMask != 0 {
		k := bits.TrailingZeros8(c.nowMask)
		q := &c.now[k]
		r := q.q[q.head]
		if c.slots[r.slot].gen == r.gen {
			return r.slot
		}
		c.dropNow(k)
	}
	return -1
}

// dropNow removes the head of now queue k.
func (c *calendar) dropNow(k int) {
	q := &c.now[k]
	q.q[q.head] = laneRef{}
	q.head = (q.head + 1) & (len(q.q) - 1)
	if q.n--; q.n == 0 {
		c.nowMask &^= 1 << k
	}
}

// takeNow takes s, the live head nowHead returned, off its now queue, if it
// is due before the heap's root and no later than until.
func (c *calendar) takeNow(s int32, until Time) bool {
	sl := &c.slots[s]
	if sl.at > until {
		return false
	}
	if len(c.heap) > 0 {
		if top := &c.heap[0]; top.at < sl.at || top.at == sl.at && top.key < sl.key {
			return false
		}
	}
	c.dropNow(int(sl.key >> seqBits))
	c.nowLive--
	return true
}

// next removes the earliest event due no later than until and returns it,
// skipping (without returning) what lanes left behind: cancelled heads and
// representatives that must move on. The event's slot is released before
// its handler runs, so the handler may schedule.
func (c *calendar) next(until Time) (at Time, key uint64, h Handler, kind int32, arg any, ok bool) {
	for {
		if c.nowMask != 0 {
			if s := c.nowHead(); s >= 0 && c.takeNow(s, until) {
				sl := &c.slots[s]
				c.release(s)
				return sl.at, sl.key, sl.h, sl.kind, sl.arg, true
			}
		}
		if len(c.heap) == 0 {
			break
		}
		top := &c.heap[0]
		at, key = top.at, top.key
		if at > until {
			break
		}
		s := top.slot
		sl := &c.slots[s]
		if sl.lane == 0 {
			c.removeTop()
		} else if sl.lane < 0 {
			s = c.groups[-sl.lane-1].due()
			sl = &c.slots[s]
		} else if s = c.lanes[sl.lane-1].due(at, key); s >= 0 {
			// A lane's representative stood for its head.
			sl = &c.slots[s]
		} else {
			continue // it moved on
		}
		c.release(s)
		return at, key, sl.h, sl.kind, sl.arg, true
	}
	return 0, 0, nil, 0, nil, false
}

// pop removes the earliest event and returns its time, class and payload.
func (c *calendar) pop() (at Time, class Class, h Handler, kind int32, arg any) {
	at, key, h, kind, arg, ok := c.next(MaxTime)
	if !ok {
		panic("sim: pop of an empty calendar")
	}
	return at, Class(key >> seqBits), h, kind, arg
}

// cancel removes the event named by id if it is still scheduled.
func (c *calendar) cancel(id EventID) bool {
	sl, ok := c.live(id)
	if !ok {
		return false
	}
	if sl.pos == posLane {
		l := c.lanes[sl.lane-1]
		c.release(id.slot)
		l.cancelled()
		return true
	}
	if sl.pos == posNow {
		c.release(id.slot) // its reference goes when it reaches the head
		c.nowLive--
		return true
	}
	if sl.lane < 0 {
		c.groups[-sl.lane-1].cancel(id.slot)
		c.release(id.slot)
		return true
	}
	c.removeAt(int(sl.pos))
	c.release(id.slot)
	return true
}

// move reschedules the pending heap event id to at with a new key, as a
// cancel and a push would, in one sift. It reports whether id was pending
// in the heap.
func (c *calendar) move(id EventID, at Time, class Class) bool {
	sl, ok := c.live(id)
	if !ok || sl.pos < 0 || sl.lane < 0 {
		return false
	}
	i := int(sl.pos)
	x := entry{at: at, key: c.nextKey(class), slot: id.slot}
	if x.less(&c.heap[i]) {
		c.up(i, x)
	} else {
		c.down(i, x)
	}
	return true
}

// live returns id's slot if id names a scheduled event.
func (c *calendar) live(id EventID) (*slot, bool) {
	if uint(id.slot) >= uint(len(c.slots)) {
		return nil, false
	}
	sl := &c.slots[id.slot]
	if sl.gen != id.gen {
		return nil, false
	}
	return sl, true
}

// pending reports whether id is still scheduled, and when.
func (c *calendar) pending(id EventID) (Time, bool) {
	sl, ok := c.live(id)
	if !ok {
		return 0, false
	}
	if sl.pos == posLane || sl.pos == posNow {
		return sl.at, true
	}
	if sl.lane < 0 {
		return c.groups[-sl.lane-1].heap[sl.pos].at, true
	}
	return c.heap[sl.pos].at, true
}

// removeTop removes the heap's root.
func (c *calendar) removeTop() {
	last := len(c.heap) - 1
	x := c.heap[last]
	c.heap = c.heap[:last]
	if last > 0 {
		c.down(0, x)
	}
}

func (c *calendar) removeAt(i int) { c.heap = heapRemove(c.heap, c.slots, i) }

// heapRemove removes the i-th entry of the 4-ary heap h and returns the
// shorter heap.
func heapRemove(h []entry, slots []slot, i int) []entry {
	last := len(h) - 1
	x := h[last]
	h = h[:last]
	if i == last {
		return h
	}
	if x.less(&h[i]) {
		siftUp(h, slots, i, x)
	} else {
		siftDown(h, slots, i, x)
	}
	return h
}

// up puts x, which belongs at or above the hole at i, in its place.
func (c *calendar) up(i int, x entry) { siftUp(c.heap, c.slots, i, x) }

// down puts x, which belongs at or below the hole at i, in its place.
func (c *calendar) down(i int, x entry) { siftDown(c.heap, c.slots, i, x) }

// siftUp puts x, which belongs at or above the hole at i of the 4-ary heap
// h, in its place, keeping the heap positions of the slots it moves.
func siftUp(h []entry, slots []slot, i int, x entry) {
	for i > 0 {
		p := (i - 1) / 4
		if !x.less(&h[p]) {
			break
		}
		h[i] = h[p]
		slots[h[i].slot].pos = int32(i)
		i = p
	}
	h[i] = x
	slots[x.slot].pos = int32(i)
}

// siftDown puts x, which belongs at or below the hole at i of the 4-ary
// heap h, in its place, keeping the heap positions of the slots it moves.
func siftDown(h []entry, slots []slot, i int, x entry) {
	n := len(h)
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		// The least of up to four children, without a branch per
		// comparison: which child wins is a coin toss the branch
		// predictor loses half the time.
		m := first
		if first+4 <= n {
			// All four: a tournament of two independent comparisons and a
			// final, with one bounds check.
			k := h[first : first+4 : first+4]
			a := int(before(&k[1], &k[0]))
			b := 2 + int(before(&k[3], &k[2]))
			m += a + (b-a)*int(before(&k[b], &k[a]))
		} else {
			for j := first + 1; j < n; j++ {
				m += (j - m) * int(before(&h[j], &h[m]))
			}
		}
		if !h[m].less(&x) {
			break
		}
		h[i] = h[m]
		slots[h[i].slot].pos = int32(i)
		i = m
	}
	h[i] = x
	slots[x.slot].pos = int32(i)
}

// verify checks the heap property, the slot back-pointers, the lanes'
// representatives and the count of scheduled events. Tests call it after
// every operation.
func (c *calendar) verify() error {
	reps := 0
	for i := range c.heap {
		if p := (i - 1) / 4; i > 0 && c.heap[i].less(&c.heap[p]) {
			return errHeap{i}
		}
		if c.slots[c.heap[i].slot].pos != int32(i) {
			return errHeap{i}
		}
		if c.slots[c.heap[i].slot].lane != 0 {
			reps++
		}
	}
	want := 0
	for k, l := range c.lanes {
		if err := l.verify(k); err != nil {
			return err
		}
		if l.m > 0 {
			want++
		}
	}
	for k, g := range c.groups {
		if err := g.verify(k); err != nil {
			return err
		}
		if len(g.heap) > 0 {
			want++
		}
	}
	if reps != want {
		return errCalendar("calendar: representatives in the heap are not those of the non-empty lanes and groups")
	}
	live := 0
	for k := range c.now {
		q := &c.now[k]
		if (q.n > 0) != (c.nowMask&(1<<k) != 0) {
			return errCalendar("calendar: now queue " + strconv.Itoa(k) + ": mask is off")
		}
		var prev *slot
		for i := range q.n {
			r := q.q[(q.head+i)&(len(q.q)-1)]
			sl := &c.slots[r.slot]
			if sl.gen != r.gen {
				continue
			}
			live++
			if sl.pos != posNow || int(sl.key>>seqBits) != k {
				return errCalendar("calendar: now queue " + strconv.Itoa(k) + ": event not marked as queued in it")
			}
			if prev != nil && (sl.at != prev.at || sl.key < prev.key) {
				return errCalendar("calendar: now queue " + strconv.Itoa(k) + ": FIFO out of order")
			}
			prev = sl
		}
	}
	if live != c.nowLive {
		return errCalendar("calendar: now queues: live count is off")
	}
	return nil
}

type errHeap struct{ i int }

func (e errHeap) Error() string {
	return "calendar: heap invariant broken at index " + strconv.Itoa(e.i)
}

type errCalendar string

func (e errCalendar) Error() string { return string(e) }

// ---------------------------------------------------------------------------
// lanes

// Lane schedules events that each run a fixed delay after they are
// scheduled, in one class: request deadlines, say. Since the clock never
// goes back, a lane's events fall due in the order they were scheduled, so
// the lane keeps them in a FIFO and only its head in the calendar's heap;
// cancelling one (what happens to the deadline of almost every request) costs
// O(1) and never touches the heap. A lane's events have the place among
// other events at the same instant that Schedule would have given them, and
// their EventIDs work with Engine.Cancel and Engine.When like any other.
//
// A Lane belongs to its Engine; make one per distinct delay with
// Engine.NewLane.
type Lane struct {
	c     *calendar
	e     *Engine
	delay time.Duration
	class Class
	rep   int32 // the slot of the representative, in the heap while the FIFO is not empty

	// FIFO of references to the lane's events, cancelled ones included
	// until they reach the head or the FIFO is compacted.
	q       []laneRef // len is 0 or a power of two
	head, m int
	live    int // events in the FIFO not cancelled
}

type laneRef struct {
	slot int32
	gen  uint32
}

// NewLane returns a lane whose events run delay after they are scheduled
// (a negative delay counts as zero), in class class.
func (e *Engine) NewLane(delay time.Duration, class Class) *Lane {
	if class >= numClasses {
		panic("sim: unknown event class")
	}
	if delay < 0 {
		delay = 0
	}
	c := &e.cal
	l := &Lane{c: c, e: e, delay: delay, class: class}
	c.lanes = append(c.lanes, l)
	l.rep = c.alloc()
	c.slots[l.rep].lane = int32(len(c.lanes))
	return l
}

// Delay returns the lane's delay.
func (l *Lane) Delay() time.Duration { return l.delay }

// Schedule arranges for h.OnEvent(e, kind, arg) to run the lane's delay from
// now, as Engine.Schedule(l.Delay(), class, h, kind, arg) would.
func (l *Lane) Schedule(h Handler, kind int32, arg any) EventID {
	c := l.c
	s := c.alloc()
	sl := &c.slots[s]
	sl.h, sl.arg, sl.kind = h, arg, kind
	sl.at, sl.key = l.e.now.Add(l.delay), c.nextKey(l.class)
	sl.pos, sl.lane = posLane, c.slots[l.rep].lane
	l.live++
	if l.m == len(l.q) {
		l.grow()
	}
	l.q[(l.head+l.m)&(len(l.q)-1)] = laneRef{s, sl.gen}
	l.m++
	if l.m == 1 {
		c.insert(entry{at: sl.at, key: sl.key, slot: l.rep})
	}
	return EventID{slot: s, gen: sl.gen}
}

func (l *Lane) grow() {
	n := 2 * len(l.q)
	if n == 0 {
		n = 16
	}
	q := make([]laneRef, n)
	for i := range l.m {
		q[i] = l.q[(l.head+i)&(len(l.q)-1)]
	}
	l.q, l.head = q, 0
}

func (l *Lane) isLive(r laneRef) bool { return l.c.slots[r.slot].gen == r.gen }

// dropStale removes cancelled events from the head of the FIFO.
func (l *Lane) dropStale() {
	for l.m > 0 && !l.isLive(l.q[l.head]) {
		l.q[l.head] = laneRef{}
		l.head = (l.head + 1) & (len(l.q) - 1)
		l.m--
	}
}

// due is the representative (at the root of the heap, with key at, key)
// coming up. If the head of the FIFO is the event it stands for, due takes
// that event off the FIFO, moves the representative on to the next head
// (or out of the heap) and returns the event's slot. Otherwise it moves the
// representative to the live head, or out of the heap, and returns -1.
func (l *Lane) due(at Time, key uint64) int32 {
	c := l.c
	l.dropStale()
	s := int32(-1)
	if l.m > 0 {
		if sl := &c.slots[l.q[l.head].slot]; sl.at == at && sl.key == key {
			s = l.q[l.head].slot
			l.q[l.head] = laneRef{}
			l.head = (l.head + 1) & (len(l.q) - 1)
			l.m--
			l.live--
			l.dropStale()
		}
	}
	l.follow()
	return s
}

// follow puts the representative at the FIFO's head's (at, key), or takes it
// out of the heap when the FIFO is empty. The head only ever moves on, so
// the representative only moves later.
func (l *Lane) follow() {
	c := l.c
	i := int(c.slots[l.rep].pos)
	if l.m == 0 {
		c.removeAt(i)
		c.slots[l.rep].pos = posFree
		return
	}
	sl := &c.slots[l.q[l.head].slot]
	if e := c.heap[i]; e.at != sl.at || e.key != sl.key {
		c.down(i, entry{at: sl.at, key: sl.key, slot: l.rep})
	}
}

// cancelled notes that one of the lane's events was cancelled; when most of
// the FIFO is cancelled events, it compacts it, so that a lane holds
// memory in proportion to its live events, not to its rate times its delay.
func (l *Lane) cancelled() {
	l.live--
	if l.m < 64 || l.m < 4*l.live {
		return
	}
	k := 0
	for i := range l.m {
		r := l.q[(l.head+i)&(len(l.q)-1)]
		if l.isLive(r) {
			l.q[(l.head+k)&(len(l.q)-1)] = r
			k++
		}
	}
	for i := k; i < l.m; i++ {
		l.q[(l.head+i)&(len(l.q)-1)] = laneRef{}
	}
	l.m = k
	l.follow()
}

// verify checks the lane's FIFO order, live count and representative.
func (l *Lane) verify(k int) error {
	c := l.c
	live := 0
	var prev *slot
	for i := range l.m {
		r := l.q[(l.head+i)&(len(l.q)-1)]
		if !l.isLive(r) {
			continue
		}
		live++
		sl := &c.slots[r.slot]
		if sl.pos != posLane || sl.lane != int32(k+1) {
			return errCalendar("calendar: lane " + strconv.Itoa(k) + ": event not marked as queued in it")
		}
		if prev != nil && (sl.at < prev.at || sl.at == prev.at && sl.key < prev.key) {
			return errCalendar("calendar: lane " + strconv.Itoa(k) + ": FIFO out of order")
		}
		prev = sl
	}
	if live != l.live {
		return errCalendar("calendar: lane " + strconv.Itoa(k) + ": live count is off")
	}
	rp := c.slots[l.rep].pos
	if (l.m > 0) != (rp >= 0) {
		return errCalendar("calendar: lane " + strconv.Itoa(k) + ": representative in the heap iff events queued")
	}
	if l.m > 0 {
		h := c.slots[l.q[l.head].slot]
		if e := c.heap[rp]; l.isLive(l.q[l.head]) && (e.at > h.at || e.at == h.at && e.key > h.key) {
			return errCalendar("calendar: lane " + strconv.Itoa(k) + ": representative after its head")
		}
	}
	return nil
}
