package simmode

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

// A large per-connection pool keeps its connections in a laneOrder rather
// than scanning them; it binds every call to the connection the scan
// would, through random acquisitions, releases (handing over to the next
// bound call) and calls that give up.
func TestLaneOrderPicksAsTheScan(t *testing.T) {
	const n = 40
	rng := sim.NewStreams(5).Stream("lane-order")
	type pool struct {
		e *sim.Engine
		s *slots
		w []*waitRec // w[i]: the i-th acquisition's record
	}
	pools := make([]*pool, 2)
	for i, limit := range []int{1 << 30, 0} { // scan, then order
		laneScanMax = limit
		e := sim.New(1)
		pools[i] = &pool{e: e, s: newLaneSlots(e, n)}
		laneScanMax = 32
	}
	if pools[0].s.order != nil || pools[1].s.order == nil {
		t.Fatal("the pools are not one scanned and one ordered")
	}
	g := &grants{}
	holding, waiting, bound := 0, 0, 0
	for op := range 20000 {
		r := rng.IntN(10)
		for _, p := range pools {
			p.e.Run(sim.MaxTime) // deliver the grants
		}
		switch {
		case r < 5: // a call wants a connection
			var got [2]int
			var ok [2]bool
			for i, p := range pools {
				w := &waitRec{}
				p.w = append(p.w, w)
				ok[i] = p.s.acquire(w, g, int32(op), nil)
				got[i] = w.lane
			}
			if got[0] != got[1] || ok[0] != ok[1] {
				t.Fatalf("op %d: scan binds to %d (%v), order to %d (%v)", op, got[0], ok[0], got[1], ok[1])
			}
			if !ok[0] {
				bound++
			}
		case r < 8: // a busy connection finishes its call
			k := rng.IntN(n)
			if !pools[0].s.lanes[k].busy {
				continue
			}
			for _, p := range pools {
				p.s.releaseLane(k)
			}
			holding++
		default: // a bound call gives up
			i := rng.IntN(len(pools[0].w))
			for _, p := range pools {
				if p.s.abandon(p.w[i]) {
					waiting++
				}
			}
		}
		for k := range n {
			a, b := pools[0].s.lanes[k], pools[1].s.lanes[k]
			if a.busy != b.busy || a.live != b.live {
				t.Fatalf("op %d: connection %d differs: scan %v/%d, order %v/%d", op, k, a.busy, a.live, b.busy, b.live)
			}
		}
	}
	if bound < 1000 || holding < 1000 || waiting < 100 {
		t.Fatalf("%d calls bound, %d releases, %d give-ups: the test no longer exercises a full pool", bound, holding, waiting)
	}
}
