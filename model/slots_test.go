package model

import (
	"testing"

	"github.com/tsim-dev/tsim/sim"
)

// grants records the waiters handed a slot, by the name their Owner holds.
type grants struct{ got []int32 }

func (g *grants) on(s *Slots) *Slots {
	s.Grant = func(w *Waiter) { g.got = append(g.got, w.Owner.(int32)) }
	return s
}

// waiter is a Waiter named for the grants.
func waiter(name int32) *Waiter { return &Waiter{Owner: name} }

// TestPerConnectionQueues pins System.Net's head-of-line blocking: with
// both connections busy, C is bound to connection 0 and D to connection 1
// (the fewest waiters); when connection 1 frees first, D goes, not C.
func TestPerConnectionQueues(t *testing.T) {
	g := &grants{}
	s := g.on(NewConnectionGroup(2))
	a, b, c, d := waiter('A'), waiter('B'), waiter('C'), waiter('D')
	if !s.Acquire(a) || !s.Acquire(b) {
		t.Fatal("A and B should get idle connections")
	}
	if a.Lane() != 0 || b.Lane() != 1 {
		t.Fatalf("lanes A=%d B=%d", a.Lane(), b.Lane())
	}
	if s.Acquire(c) || s.Acquire(d) {
		t.Fatal("C and D should wait")
	}
	if c.Lane() != 0 || d.Lane() != 1 {
		t.Fatalf("bound lanes C=%d D=%d, want 0 and 1", c.Lane(), d.Lane())
	}
	s.ReleaseLane(1)
	if len(g.got) != 1 || g.got[0] != 'D' {
		t.Fatalf("after connection 1 frees: granted %q, want D (C waits behind A)", g.got)
	}
	// A waiter that gives up leaves its connection's queue; the connection
	// then goes idle when freed.
	c.Leave()
	s.ReleaseLane(0)
	if len(g.got) != 1 || s.InUse != 1 || s.Waiting != 0 {
		t.Fatalf("granted %q inUse %d waiting %d", g.got, s.InUse, s.Waiting)
	}
	// The idle connection 0 is taken at once by the next caller.
	f := waiter('F')
	if !s.Acquire(f) || f.Lane() != 0 {
		t.Fatalf("F should take idle connection 0, got lane %d", f.Lane())
	}
}

func TestSharedQueueHandsToStillWaiting(t *testing.T) {
	g := &grants{}
	s := g.on(NewSlots(1))
	a, b, c := waiter('A'), waiter('B'), waiter('C')
	s.Acquire(a)
	s.Acquire(b)
	s.Acquire(c)
	b.Leave() // B gave up: the freed slot goes to C
	s.Release()
	if len(g.got) != 1 || g.got[0] != 'C' || s.InUse != 1 {
		t.Fatalf("granted %q, inUse %d", g.got, s.InUse)
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
		s *Slots
		w []*Waiter // w[i]: the i-th acquisition's
	}
	g := &grants{}
	pools := make([]*pool, 2)
	for i, limit := range []int{1 << 30, 0} { // scan, then order
		laneScanMax = limit
		pools[i] = &pool{s: g.on(NewConnectionGroup(n))}
		laneScanMax = 32
	}
	if pools[0].s.order != nil || pools[1].s.order == nil {
		t.Fatal("the pools are not one scanned and one ordered")
	}
	holding, waiting, bound := 0, 0, 0
	for op := range 20000 {
		r := rng.IntN(10)
		switch {
		case r < 5: // a call wants a connection
			var got [2]int
			var ok [2]bool
			for i, p := range pools {
				w := waiter(int32(op))
				p.w = append(p.w, w)
				ok[i] = p.s.Acquire(w)
				got[i] = w.Lane()
			}
			if got[0] != got[1] || ok[0] != ok[1] {
				t.Fatalf("op %d: scan binds to %d (%v), order to %d (%v)", op, got[0], ok[0], got[1], ok[1])
			}
			if !ok[0] {
				bound++
			}
		case r < 8: // a busy connection finishes its call
			k := rng.IntN(n)
			if busy, _ := pools[0].s.LaneState(k); !busy {
				continue
			}
			for _, p := range pools {
				p.s.ReleaseLane(k)
			}
			holding++
		default: // a bound call gives up
			i := rng.IntN(len(pools[0].w))
			for _, p := range pools {
				if p.w[i].Leave() {
					waiting++
				}
			}
		}
		for k := range n {
			ab, al := pools[0].s.LaneState(k)
			bb, bl := pools[1].s.LaneState(k)
			if ab != bb || al != bl {
				t.Fatalf("op %d: connection %d differs: scan %v/%d, order %v/%d", op, k, ab, al, bb, bl)
			}
		}
	}
	if bound < 1000 || holding < 1000 || waiting < 100 {
		t.Fatalf("%d calls bound, %d releases, %d give-ups: the test no longer exercises a full pool", bound, holding, waiting)
	}
}

// A connection group of the largest limit the format allows costs what a
// small one does: its connections are made as they are used (a limit of
// 10⁸ once allocated 5.6 GB per calling machine). Ten calls at once make
// ten connections, and the eleventh, after one freed, reuses it.
func TestConnectionGroupGrowsWithUse(t *testing.T) {
	for _, limit := range []int{10, 1<<31 - 1} {
		allocs := testing.AllocsPerRun(20, func() {
			s := NewConnectionGroup(limit)
			for i := range 10 {
				if !s.Acquire(waiter(int32(i))) {
					t.Fatal("a call waited with connections free")
				}
			}
			s.ReleaseLane(3)
			if w := waiter(10); !s.Acquire(w) || w.Lane() != 3 || s.Lanes() != 10 {
				t.Fatalf("the eleventh call got connection %d of %d made, want 3 of 10", w.Lane(), s.Lanes())
			}
		})
		if allocs > 40 {
			t.Errorf("limit %d: %.0f allocations for ten connections", limit, allocs)
		}
	}
}
