package sim

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
// list, so steady-state scheduling allocates nothing.
type slot struct {
	h    Handler
	arg  any
	kind int32
	pos  int32  // index in the heap, -1 when free
	gen  uint32 // bumped on every reuse; EventIDs carry it
}

// entry is one heap element: the ordering key and the slot it refers to.
type entry struct {
	at   Time
	key  uint64 // class<<56 | insertion sequence
	slot int32
}

func (a *entry) less(b *entry) bool {
	return a.at < b.at || (a.at == b.at && a.key < b.key)
}

const seqBits = 56

// calendar is an index-tracked 4-ary min-heap of events. A 4-ary heap does
// fewer cache-missing levels than a binary one for the same comparisons.
type calendar struct {
	heap  []entry
	slots []slot
	free  []int32
	seq   uint64
}

func (c *calendar) len() int { return len(c.heap) }

func (c *calendar) push(at Time, class Class, h Handler, kind int32, arg any) EventID {
	var s int32
	if n := len(c.free); n > 0 {
		s = c.free[n-1]
		c.free = c.free[:n-1]
	} else {
		c.slots = append(c.slots, slot{})
		s = int32(len(c.slots) - 1)
	}
	sl := &c.slots[s]
	sl.gen++
	if sl.gen == 0 { // never hand out the zero generation
		sl.gen = 1
	}
	sl.h, sl.arg, sl.kind = h, arg, kind
	c.seq++
	if c.seq >= 1<<seqBits {
		panic("sim: event sequence overflow")
	}
	i := len(c.heap)
	c.heap = append(c.heap, entry{at: at, key: uint64(class)<<seqBits | c.seq, slot: s})
	sl.pos = int32(i)
	c.up(i)
	return EventID{slot: s, gen: sl.gen}
}

// pop removes the earliest event and returns its time, class and payload.
// The slot is released before the handler runs, so the handler may schedule.
func (c *calendar) pop() (at Time, class Class, h Handler, kind int32, arg any) {
	top := c.heap[0]
	c.removeAt(0)
	sl := &c.slots[top.slot]
	h, kind, arg = sl.h, sl.kind, sl.arg
	c.release(top.slot)
	return top.at, Class(top.key >> seqBits), h, kind, arg
}

func (c *calendar) release(s int32) {
	sl := &c.slots[s]
	sl.h, sl.arg, sl.pos = nil, nil, -1
	c.free = append(c.free, s)
}

// cancel removes the event named by id if it is still scheduled.
func (c *calendar) cancel(id EventID) bool {
	if id.gen == 0 || int(id.slot) >= len(c.slots) {
		return false
	}
	sl := &c.slots[id.slot]
	if sl.gen != id.gen || sl.pos < 0 {
		return false
	}
	c.removeAt(int(sl.pos))
	c.release(id.slot)
	return true
}

// pending reports whether id is still scheduled, and when.
func (c *calendar) pending(id EventID) (Time, bool) {
	if id.gen == 0 || int(id.slot) >= len(c.slots) {
		return 0, false
	}
	sl := &c.slots[id.slot]
	if sl.gen != id.gen || sl.pos < 0 {
		return 0, false
	}
	return c.heap[sl.pos].at, true
}

func (c *calendar) removeAt(i int) {
	last := len(c.heap) - 1
	if i != last {
		c.heap[i] = c.heap[last]
		c.slots[c.heap[i].slot].pos = int32(i)
	}
	c.heap = c.heap[:last]
	if i < last {
		if !c.down(i) {
			c.up(i)
		}
	}
}

func (c *calendar) up(i int) {
	h := c.heap
	x := h[i]
	for i > 0 {
		p := (i - 1) / 4
		if !x.less(&h[p]) {
			break
		}
		h[i] = h[p]
		c.slots[h[i].slot].pos = int32(i)
		i = p
	}
	h[i] = x
	c.slots[x.slot].pos = int32(i)
}

// down sifts element i down; it reports whether it moved.
func (c *calendar) down(i0 int) bool {
	h := c.heap
	n := len(h)
	i := i0
	x := h[i]
	for {
		first := 4*i + 1
		if first >= n {
			break
		}
		m := first
		end := first + 4
		if end > n {
			end = n
		}
		for j := first + 1; j < end; j++ {
			if h[j].less(&h[m]) {
				m = j
			}
		}
		if !h[m].less(&x) {
			break
		}
		h[i] = h[m]
		c.slots[h[i].slot].pos = int32(i)
		i = m
	}
	h[i] = x
	c.slots[x.slot].pos = int32(i)
	return i > i0
}

// verify checks the heap property and the slot back-pointers. Tests call it
// after every operation.
func (c *calendar) verify() error {
	for i := range c.heap {
		if p := (i - 1) / 4; i > 0 && c.heap[i].less(&c.heap[p]) {
			return errHeap{i}
		}
		if c.slots[c.heap[i].slot].pos != int32(i) {
			return errHeap{i}
		}
	}
	return nil
}

type errHeap struct{ i int }

func (e errHeap) Error() string { return "calendar: heap invariant broken at index " + itoa(e.i) }

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}
