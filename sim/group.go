package sim

import (
	"strconv"
	"time"
)

// Group schedules events of one class in a heap of their own, with only
// the earliest of them in the calendar's heap (its representative): the
// think times of a population of users, say. A calendar's cost per event
// grows with the depth of its heap, and thousands of users thinking for a
// second make it deep for every other event, although each request sees
// only one of them fall due; in a Group, the events that come and go
// around a request (completions at the CPU, hand-offs) sift a shallow heap,
// and only the group's own events sift the deep one.
//
// A group's events run in exactly the order, and with the place among
// other events at the same instant, that Schedule would have given them:
// each carries the key it would have had in the calendar's heap, and the
// representative always carries the group's least, so what a run does is
// the same event for event (a test compares whole runs with and without).
// Their EventIDs work with Engine.Cancel, Engine.When and
// Engine.Reschedule (which moves the event to the calendar's heap) like
// any other.
//
// A Group belongs to its Engine; make one per population with
// Engine.NewGroup.
type Group struct {
	c     *calendar
	e     *Engine
	class Class
	id    int32 // the slots' lane field: -(1 + index in calendar.groups)
	rep   int32 // the slot of the representative, in the calendar's heap while the group is not empty
	heap  []entry
}

// NewGroup returns a group whose events run in class class.
func (e *Engine) NewGroup(class Class) *Group {
	if class >= numClasses {
		panic("sim: unknown event class")
	}
	c := &e.cal
	g := &Group{c: c, e: e, class: class}
	c.groups = append(c.groups, g)
	g.id = -int32(len(c.groups))
	g.rep = c.alloc()
	c.slots[g.rep].lane = g.id
	c.slots[g.rep].pos = posFree
	return g
}

// Schedule arranges for h.OnEvent(e, kind, arg) to run after delay d
// (negative delays count as zero), as Engine.Schedule(d, class, h, kind,
// arg) would.
func (g *Group) Schedule(d time.Duration, h Handler, kind int32, arg any) EventID {
	c := g.c
	s := c.alloc()
	sl := &c.slots[s]
	sl.h, sl.arg, sl.kind, sl.lane = h, arg, kind, g.id
	x := entry{at: g.e.now.after(d), key: c.nextKey(g.class), slot: s}
	i := len(g.heap)
	g.heap = append(g.heap, entry{})
	siftUp(g.heap, c.slots, i, x)
	if sl.pos == 0 {
		g.follow()
	}
	return EventID{slot: s, gen: sl.gen}
}

// follow puts the representative at the (at, key) of the group's least
// event, or takes it out of the calendar's heap when the group is empty.
func (g *Group) follow() {
	c := g.c
	rp := &c.slots[g.rep]
	if len(g.heap) == 0 {
		if rp.pos >= 0 {
			c.removeAt(int(rp.pos))
			rp.pos = posFree
		}
		return
	}
	x := entry{at: g.heap[0].at, key: g.heap[0].key, slot: g.rep}
	if rp.pos < 0 {
		c.insert(x)
		return
	}
	i := int(rp.pos)
	if x.less(&c.heap[i]) {
		c.up(i, x)
	} else {
		c.down(i, x)
	}
}

// due is the representative at the root of the calendar's heap coming up:
// it takes the group's least event out of the group, moves the
// representative on to the next (or out of the heap) and returns the
// event's slot.
func (g *Group) due() int32 {
	s := g.heap[0].slot
	g.removeAt(0)
	g.follow()
	return s
}

// removeAt removes the i-th event of the group's heap.
func (g *Group) removeAt(i int) { g.heap = heapRemove(g.heap, g.c.slots, i) }

// cancel removes the group's event in slot s.
func (g *Group) cancel(s int32) {
	i := int(g.c.slots[s].pos)
	g.removeAt(i)
	if i == 0 {
		g.follow()
	}
}

// verify checks the group's heap, its slots and its representative.
func (g *Group) verify(k int) error {
	c := g.c
	for i := range g.heap {
		if p := (i - 1) / 4; i > 0 && g.heap[i].less(&g.heap[p]) {
			return errCalendar("calendar: group " + strconv.Itoa(k) + ": heap invariant broken at index " + strconv.Itoa(i))
		}
		sl := &c.slots[g.heap[i].slot]
		if sl.pos != int32(i) || sl.lane != g.id {
			return errCalendar("calendar: group " + strconv.Itoa(k) + ": event not marked as queued in it")
		}
	}
	rp := c.slots[g.rep].pos
	if (len(g.heap) > 0) != (rp >= 0) {
		return errCalendar("calendar: group " + strconv.Itoa(k) + ": representative in the heap iff events queued")
	}
	if rp >= 0 {
		if e := c.heap[rp]; e.at != g.heap[0].at || e.key != g.heap[0].key {
			return errCalendar("calendar: group " + strconv.Itoa(k) + ": representative is not its least event")
		}
	}
	return nil
}
