package sim

import (
	"sort"
	"testing"
	"time"
)

type recorder struct{ got []int32 }

func (r *recorder) OnEvent(e *Engine, kind int32, arg any) { r.got = append(r.got, kind) }

// TestCalendarAgainstSortedSlice drives the calendar with random pushes,
// pops and cancels and compares every pop with a naive sorted-slice
// reference, verifying the heap after every operation.
func TestCalendarAgainstSortedSlice(t *testing.T) {
	type ref struct {
		at    Time
		class Class
		seq   int
		kind  int32
		id    EventID
	}
	rng := NewStreams(7).Stream("calendar-test")
	var c calendar
	var live []ref
	seq := 0
	for op := 0; op < 200000; op++ {
		switch r := rng.IntN(10); {
		case r < 5 || len(live) == 0:
			at := Time(rng.IntN(1000)) // many ties on purpose
			class := Class(rng.IntN(int(numClasses)))
			seq++
			id := c.push(at, class, nil, int32(seq), nil)
			live = append(live, ref{at, class, seq, int32(seq), id})
		case r < 8:
			sort.Slice(live, func(i, j int) bool {
				a, b := live[i], live[j]
				if a.at != b.at {
					return a.at < b.at
				}
				if a.class != b.class {
					return a.class < b.class
				}
				return a.seq < b.seq
			})
			at, class, _, kind, _ := c.pop()
			want := live[0]
			live = live[1:]
			if at != want.at || class != want.class || kind != want.kind {
				t.Fatalf("op %d: pop = (%d,%d,%d), want (%d,%d,%d)", op, at, class, kind, want.at, want.class, want.kind)
			}
			if c.cancel(want.id) {
				t.Fatalf("op %d: cancelling a popped event succeeded", op)
			}
		default:
			i := rng.IntN(len(live))
			if !c.cancel(live[i].id) {
				t.Fatalf("op %d: cancel of pending event failed", op)
			}
			if c.cancel(live[i].id) {
				t.Fatalf("op %d: second cancel succeeded", op)
			}
			live = append(live[:i], live[i+1:]...)
		}
		if err := c.verify(); err != nil {
			t.Fatalf("op %d: %v", op, err)
		}
		if c.len() != len(live) {
			t.Fatalf("op %d: len %d, want %d", op, c.len(), len(live))
		}
	}
}

// TestTieOrder pins the documented order at one instant: releases, then
// completions, then timeouts, then arrivals, then samples; FIFO within a class.
func TestTieOrder(t *testing.T) {
	e := New(1)
	r := &recorder{}
	e.Schedule(time.Second, ClassSample, r, 50, nil)
	e.Schedule(time.Second, ClassArrival, r, 40, nil)
	e.Schedule(time.Second, ClassTimeout, r, 30, nil)
	e.Schedule(time.Second, ClassCompletion, r, 20, nil)
	e.Schedule(time.Second, ClassRelease, r, 10, nil)
	e.Schedule(time.Second, ClassRelease, r, 11, nil)
	e.Schedule(time.Second-1, ClassSample, r, 1, nil)
	e.Run(MaxTime)
	want := []int32{1, 10, 11, 20, 30, 40, 50}
	if len(r.got) != len(want) {
		t.Fatalf("got %v, want %v", r.got, want)
	}
	for i := range want {
		if r.got[i] != want[i] {
			t.Fatalf("got %v, want %v", r.got, want)
		}
	}
	if e.Now() != Time(time.Second) {
		t.Fatalf("now = %v, want 1s", e.Now())
	}
}

type chain struct{ n, max int }

func (c *chain) OnEvent(e *Engine, kind int32, arg any) {
	c.n++
	if c.n < c.max {
		id := e.Schedule(time.Millisecond, ClassTimeout, c, 0, nil) // a timeout that never fires
		e.Schedule(time.Microsecond, ClassCompletion, c, 0, nil)
		e.Cancel(id)
	}
}

func TestNoAllocationInSteadyState(t *testing.T) {
	e := New(1)
	c := &chain{max: 1 << 62}
	e.Schedule(0, ClassArrival, c, 0, c)
	e.Run(Time(time.Second)) // warm the free list
	allocs := testing.AllocsPerRun(100, func() {
		e.Run(e.Now().Add(time.Millisecond))
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per 1000 events, want 0", allocs)
	}
}

func TestRunHorizonAndStop(t *testing.T) {
	e := New(1)
	c := &chain{max: 10}
	e.Schedule(0, ClassArrival, c, 0, nil)
	e.Run(Time(5 * time.Microsecond))
	if c.n != 6 || e.Now() != Time(5*time.Microsecond) {
		t.Fatalf("after Run(5µs): n=%d now=%v", c.n, e.Now())
	}
	e.Run(MaxTime)
	if c.n != 10 {
		t.Fatalf("n = %d, want 10", c.n)
	}
	if e.Pending() != 0 {
		t.Fatalf("pending = %d", e.Pending())
	}
}

func TestStreamsIndependentOfOtherPaths(t *testing.T) {
	a := NewStreams(42).Stream("tier/be/cpu")
	b := NewStreams(42).Stream("tier/be/cpu")
	c := NewStreams(42).Stream("tier/fe/cpu")
	d := NewStreams(43).Stream("tier/be/cpu")
	same, diffPath, diffSeed := true, 0, 0
	for i := 0; i < 100; i++ {
		x, y, z, w := a.Uint64(), b.Uint64(), c.Uint64(), d.Uint64()
		same = same && x == y
		if x != z {
			diffPath++
		}
		if x != w {
			diffSeed++
		}
	}
	if !same || diffPath < 99 || diffSeed < 99 {
		t.Fatalf("same=%v diffPath=%d diffSeed=%d", same, diffPath, diffSeed)
	}
}

func TestFromSeconds(t *testing.T) {
	cases := []struct {
		in   float64
		want time.Duration
	}{
		{0.0015, 1500 * time.Microsecond},
		{-1, 0},
		{1e30, time.Duration(1<<63 - 1)},
		{1.0000000004, time.Second},
		{1.0000000006, time.Second + 1},
	}
	for _, c := range cases {
		if got := FromSeconds(c.in); got != c.want {
			t.Errorf("FromSeconds(%v) = %v, want %v", c.in, got, c.want)
		}
	}
	if got := MaxTime.Add(time.Second); got != MaxTime {
		t.Errorf("MaxTime+1s = %v", got)
	}
}

func BenchmarkCalendarHold(b *testing.B) {
	// The classic "hold" model: a calendar of 10,000 pending events; each
	// step pops the earliest and pushes a new one a random span later.
	e := New(1)
	rng := e.Stream("bench")
	h := &holdHandler{rng: rng}
	for i := 0; i < 10000; i++ {
		e.Schedule(time.Duration(rng.ExpFloat64()*1e9), ClassArrival, h, 0, nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Step(MaxTime)
	}
}

type holdHandler struct{ rng *Stream }

func (h *holdHandler) OnEvent(e *Engine, kind int32, arg any) {
	e.Schedule(time.Duration(h.rng.ExpFloat64()*1e9), ClassArrival, h, 0, nil)
}
