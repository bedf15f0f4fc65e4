package model

import (
	"testing"

	"github.com/tsim-dev/tsim/sim"
)

type grants struct{ got []int32 }

func (g *grants) OnEvent(e *sim.Engine, kind int32, arg any) { g.got = append(g.got, kind) }

// TestPerConnectionQueues pins System.Net's head-of-line blocking: with
// both connections busy, C is bound to connection 0 and D to connection 1
// (the fewest waiters); when connection 1 frees first, D goes, not C.
func TestPerConnectionQueues(t *testing.T) {
	e := sim.New(1)
	s := newLaneSlots(e, 2)
	g := &grants{}
	var a, b, c, d waitRec
	if !s.acquire(&a, g, 'A', nil) || !s.acquire(&b, g, 'B', nil) {
		t.Fatal("A and B should get idle connections")
	}
	if a.lane != 0 || b.lane != 1 {
		t.Fatalf("lanes A=%d B=%d", a.lane, b.lane)
	}
	if s.acquire(&c, g, 'C', nil) || s.acquire(&d, g, 'D', nil) {
		t.Fatal("C and D should wait")
	}
	if c.lane != 0 || d.lane != 1 {
		t.Fatalf("bound lanes C=%d D=%d, want 0 and 1", c.lane, d.lane)
	}
	s.releaseLane(1)
	e.Run(sim.MaxTime)
	if len(g.got) != 1 || g.got[0] != 'D' {
		t.Fatalf("after connection 1 frees: granted %q, want D (C waits behind A)", g.got)
	}
	// A waiter that gives up leaves its connection's queue; the connection
	// then goes idle when freed.
	s.abandon(&c)
	s.releaseLane(0)
	e.Run(sim.MaxTime)
	if len(g.got) != 1 || s.inUse != 1 || s.waiting != 0 {
		t.Fatalf("granted %q inUse %d waiting %d", g.got, s.inUse, s.waiting)
	}
	// The idle connection 0 is taken at once by the next caller.
	var f waitRec
	if !s.acquire(&f, g, 'F', nil) || f.lane != 0 {
		t.Fatalf("F should take idle connection 0, got lane %d", f.lane)
	}
}

func TestSharedQueueHandsToStillWaiting(t *testing.T) {
	e := sim.New(1)
	s := newSlots(e, 1)
	g := &grants{}
	var a, b, c waitRec
	s.acquire(&a, g, 'A', nil)
	s.acquire(&b, g, 'B', nil)
	s.acquire(&c, g, 'C', nil)
	s.abandon(&b) // B gave up: the freed slot goes to C
	s.release()
	e.Run(sim.MaxTime)
	if len(g.got) != 1 || g.got[0] != 'C' || s.inUse != 1 {
		t.Fatalf("granted %q, inUse %d", g.got, s.inUse)
	}
}
