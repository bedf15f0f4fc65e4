package sim

import (
	"fmt"
	"math"
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
			id := c.push(at, 0, class, nil, int32(seq), nil)
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

// TestCalendarWithLanesAgainstSortedSlice mixes heap events (a third of
// them at the current instant), lane events
// (lanes with equal and distinct delays, so that lane events tie with each
// other and with heap events), pops, cancels, Reschedule and When, and
// compares every pop with a sorted-slice reference ordered by (time, class,
// sequence), the sequence counted as Schedule counts it. It verifies the
// heap and the lanes after every operation.
func TestCalendarWithLanesAndGroupsAgainstSortedSlice(t *testing.T) {
	type ref struct {
		at    Time
		class Class
		seq   int
		kind  int32
		id    EventID
	}
	rng := NewStreams(11).Stream("calendar-lanes-test")
	e := New(1)
	c := &e.cal
	lanes := []*Lane{
		e.NewLane(5, ClassTimeout),
		e.NewLane(5, ClassTimeout),
		e.NewLane(0, ClassRelease),
		e.NewLane(300, ClassCompletion),
		e.NewLane(300, ClassTimeout),
	}
	groups := []*Group{e.NewGroup(ClassArrival), e.NewGroup(ClassCompletion), e.NewGroup(ClassArrival)}
	less := func(a, b ref) bool {
		if a.at != b.at {
			return a.at < b.at
		}
		if a.class != b.class {
			return a.class < b.class
		}
		return a.seq < b.seq
	}
	var live []ref // kept sorted
	insert := func(x ref) {
		i := sort.Search(len(live), func(i int) bool { return less(x, live[i]) })
		live = append(live, ref{})
		copy(live[i+1:], live[i:])
		live[i] = x
	}
	seq, kind := 0, int32(0)
	compactions, grouped := 0, 0
	for op := 0; op < 300000; op++ {
		// Alternate phases that fill the calendar (and the lanes past
		// their compaction threshold) and phases that drain it.
		filling := op/3000%2 == 0
		r := rng.IntN(20)
		switch {
		case len(live) == 0:
			r = 0
		case filling && r >= 12 && r < 14:
			r = 15 // cancel rather than pop: lanes fill with cancelled events
		case !filling && r < 10:
			r += 10
		}
		queued := 0
		for _, l := range lanes {
			queued += l.m
		}
		switch {
		case r < 4:
			at := e.now + Time(rng.IntN(400)) // many ties on purpose
			if rng.IntN(3) == 0 {
				at = e.now
			}
			class := Class(rng.IntN(int(numClasses)))
			seq++
			kind++
			if at == e.now && rng.IntN(2) == 0 {
				// Schedule with no delay: a now queue.
				insert(ref{at, class, seq, kind, e.Schedule(0, class, nil, kind, nil)})
				break
			}
			insert(ref{at, class, seq, kind, c.push(at, 0, class, nil, kind, nil)})
		case r < 10 && r >= 7:
			g := groups[rng.IntN(len(groups))]
			d := time.Duration(rng.IntN(400))
			if rng.IntN(4) == 0 {
				d = 0
			}
			seq++
			kind++
			insert(ref{e.now.Add(d), g.class, seq, kind, g.Schedule(d, nil, kind, nil)})
		case r < 10:
			l := lanes[rng.IntN(len(lanes))]
			seq++
			kind++
			insert(ref{e.now.Add(l.Delay()), l.class, seq, kind, l.Schedule(nil, kind, nil)})
		case r < 14:
			if sl, ok := c.live(live[0].id); ok && sl.lane < 0 {
				grouped++
			}
			at, key, _, k, _, ok := c.next(MaxTime)
			want := live[0]
			live = live[1:]
			if !ok || at != want.at || Class(key>>seqBits) != want.class || k != want.kind {
				t.Fatalf("op %d: next = (%d,%d,%d,%v), want (%d,%d,%d)", op, at, key>>seqBits, k, ok, want.at, want.class, want.kind)
			}
			e.now, c.clock = at, at
			if c.cancel(want.id) {
				t.Fatalf("op %d: cancelling a popped event succeeded", op)
			}
			if _, ok := c.pending(want.id); ok {
				t.Fatalf("op %d: a popped event is pending", op)
			}
		case r < 18:
			i := rng.IntN(len(live))
			if !c.cancel(live[i].id) {
				t.Fatalf("op %d: cancel of pending event failed", op)
			}
			if c.cancel(live[i].id) {
				t.Fatalf("op %d: second cancel succeeded", op)
			}
			live = append(live[:i], live[i+1:]...)
			after := 0
			for _, l := range lanes {
				after += l.m
			}
			if after < queued-1 {
				compactions++
			}
		case r < 19:
			i := rng.IntN(len(live))
			x := live[i]
			if at, ok := c.pending(x.id); !ok || at != x.at {
				t.Fatalf("op %d: When = %v %v, want %v", op, at, ok, x.at)
			}
			d := time.Duration(rng.IntN(400))
			if rng.IntN(3) == 0 {
				d = 0
			}
			class := Class(rng.IntN(int(numClasses)))
			id, ok := e.Reschedule(x.id, d, class)
			if !ok {
				t.Fatalf("op %d: Reschedule of a pending event failed", op)
			}
			seq++
			live = append(live[:i], live[i+1:]...)
			insert(ref{e.now.Add(d), class, seq, x.kind, id})
		default:
			if _, ok := e.Reschedule(EventID{}, 0, ClassRelease); ok {
				t.Fatalf("op %d: Reschedule of the zero EventID succeeded", op)
			}
		}
		if err := c.verify(); err != nil {
			t.Fatalf("op %d: %v", op, err)
		}
		if c.len() != len(live) {
			t.Fatalf("op %d: len %d, want %d", op, c.len(), len(live))
		}
	}
	if compactions < 10 {
		t.Fatalf("%d lane compactions: the test no longer exercises them", compactions)
	}
	if grouped == 0 {
		t.Fatal("no group events ran: the test no longer exercises groups")
	}
	t.Logf("%d lane compactions", compactions)
}

// A lane whose events are nearly all cancelled holds memory in proportion
// to its live events, not to its rate times its delay.
func TestLaneMemoryFollowsLiveEvents(t *testing.T) {
	e := New(1)
	l := e.NewLane(time.Hour, ClassTimeout)
	r := &recorder{}
	var keep []EventID
	for i := 0; i < 1_000_000; i++ {
		id := l.Schedule(r, int32(i), nil)
		if i%1000 == 0 {
			keep = append(keep, id)
		} else {
			e.Cancel(id)
		}
		e.now++
	}
	if err := e.cal.verify(); err != nil {
		t.Fatal(err)
	}
	if n := len(l.q); n > 8*len(keep)+256 {
		t.Fatalf("lane FIFO of %d entries for %d live events", n, len(keep))
	}
	if e.Pending() != len(keep) {
		t.Fatalf("pending %d, want %d", e.Pending(), len(keep))
	}
	e.Run(MaxTime)
	if len(r.got) != len(keep) {
		t.Fatalf("%d events ran, want %d", len(r.got), len(keep))
	}
	for i, k := range r.got {
		if k != int32(1000*i) {
			t.Fatalf("event %d has kind %d, want %d", i, k, 1000*i)
		}
	}
}

// Lane events keep the place Schedule would give them among events at the
// same instant and class: here a lane deadline scheduled between two
// ordinary timeouts due at the same instant runs between them.
func TestLaneTieOrder(t *testing.T) {
	e := New(1)
	r := &recorder{}
	l := e.NewLane(time.Second, ClassTimeout)
	e.Schedule(time.Second, ClassTimeout, r, 1, nil)
	l.Schedule(r, 2, nil)
	cancelled := l.Schedule(r, 99, nil)
	e.Schedule(time.Second, ClassTimeout, r, 3, nil)
	e.Schedule(time.Second, ClassCompletion, r, 0, nil)
	l.Schedule(r, 4, nil)
	e.Cancel(cancelled)
	e.Run(MaxTime)
	want := []int32{0, 1, 2, 3, 4}
	if len(r.got) != len(want) {
		t.Fatalf("got %v, want %v", r.got, want)
	}
	for i := range want {
		if r.got[i] != want[i] {
			t.Fatalf("got %v, want %v", r.got, want)
		}
	}
	if e.Events() != uint64(len(want)) {
		t.Fatalf("events = %d, want %d (a cancelled lane event is no event)", e.Events(), len(want))
	}
}

// Events scheduled for the current instant run in (time, class, sequence)
// order with those scheduled for it earlier.
func TestScheduleNowTieOrder(t *testing.T) {
	e := New(1)
	r := &recorder{}
	at := &scheduleAt{r: r}
	e.Schedule(time.Second, ClassArrival, at, 0, nil) // at 1 s, schedules 10, 30, 50, 70 and 99 for then
	e.Schedule(time.Second, ClassCompletion, r, 20, nil)
	e.Schedule(time.Second, ClassTimeout, r, 40, nil)
	e.Schedule(time.Second, ClassArrival, r, 60, nil)
	e.Run(MaxTime)
	// At 1 s: Completion 20 and Timeout 40 before the Arrival (0) that
	// schedules more for 1 s (lower classes); then its Release 10 and
	// Completion 30 (lower classes than the rest), then
	// Arrival 60 before Arrival 50 (same class, scheduled earlier), then
	// Sample 70; the cancelled Timeout 99 never.
	want := []int32{20, 40, 0, 10, 30, 60, 50, 70}
	if len(r.got) != len(want) {
		t.Fatalf("got %v, want %v", r.got, want)
	}
	for i := range want {
		if r.got[i] != want[i] {
			t.Fatalf("got %v, want %v", r.got, want)
		}
	}
	if e.Events() != uint64(len(want)) {
		t.Fatalf("events = %d, want %d", e.Events(), len(want))
	}
}

type scheduleAt struct{ r *recorder }

func (s *scheduleAt) OnEvent(e *Engine, kind int32, arg any) {
	s.r.got = append(s.r.got, kind)
	e.Schedule(0, ClassSample, s.r, 70, nil)
	e.Schedule(0, ClassArrival, s.r, 50, nil)
	e.Schedule(0, ClassCompletion, s.r, 30, nil)
	id := e.Schedule(0, ClassTimeout, s.r, 99, nil)
	e.Schedule(0, ClassRelease, s.r, 10, nil)
	e.Cancel(id)
}

// Interrupt, called from another goroutine, stops a Run that would never
// end, and every later Run returns at once.
func TestInterrupt(t *testing.T) {
	e := New(1)
	c := &chain{max: 1 << 62}
	e.Schedule(0, ClassArrival, c, 0, nil)
	started := make(chan struct{})
	p := StartProbe(e, 0, time.Microsecond, func(Time) {
		select {
		case <-started:
		default:
			close(started)
		}
	})
	defer p.Stop()
	go func() {
		<-started
		e.Interrupt()
	}()
	e.Run(MaxTime)
	if !e.Interrupted() {
		t.Fatal("Run returned without being interrupted")
	}
	n := e.Events()
	e.Run(MaxTime)
	if e.Events() != n {
		t.Fatalf("Run after Interrupt ran %d events", e.Events()-n)
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
	// The classic "hold" model: a calendar of n pending events; each step
	// pops the earliest and pushes a new one a random span later. 2 is the
	// size of M/M/1's calendar, 18 the reference pipeline's.
	for _, n := range []int{2, 18, 100, 10000} {
		b.Run(fmt.Sprintf("pending=%d", n), func(b *testing.B) {
			e := New(1)
			rng := e.Stream("bench")
			h := &holdHandler{rng: rng}
			for i := 0; i < n; i++ {
				e.Schedule(time.Duration(rng.ExpFloat64()*1e9), ClassArrival, h, 0, nil)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e.Step(MaxTime)
			}
		})
	}
}

// BenchmarkCalendarTimeouts is a request's worth of calendar work in a
// closed system of 100 users: a deadline in a lane, cancelled when the
// request completes (almost always), around a hold model of the other
// events.
func BenchmarkCalendarTimeouts(b *testing.B) {
	e := New(1)
	rng := e.Stream("bench")
	h := &timeoutHandler{rng: rng, lane: e.NewLane(20*time.Second, ClassTimeout)}
	for i := 0; i < 100; i++ {
		h.start(e)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Step(MaxTime)
	}
}

type timeoutHandler struct {
	rng  *Stream
	lane *Lane
}

// timeoutReq is one request: its deadline's EventID.
type timeoutReq struct{ deadline EventID }

func (h *timeoutHandler) start(e *Engine) { h.restart(e, &timeoutReq{}) }

func (h *timeoutHandler) restart(e *Engine, r *timeoutReq) {
	r.deadline = h.lane.Schedule(h, 1, r)
	e.Schedule(time.Duration(h.rng.ExpFloat64()*1e9), ClassCompletion, h, 0, r)
}

func (h *timeoutHandler) OnEvent(e *Engine, kind int32, arg any) {
	if kind == 1 {
		return // timed out (hardly ever): its completion still restarts it
	}
	r := arg.(*timeoutReq)
	e.Cancel(r.deadline)
	h.restart(e, r)
}

type holdHandler struct{ rng *Stream }

func (h *holdHandler) OnEvent(e *Engine, kind int32, arg any) {
	e.Schedule(time.Duration(h.rng.ExpFloat64()*1e9), ClassArrival, h, 0, nil)
}

// FromSeconds rounds exactly as math.Round does, half away from zero, on
// random spans of every magnitude and on the halfway cases.
func TestFromSecondsRoundsAsMathRound(t *testing.T) {
	ref := func(s float64) time.Duration {
		switch {
		case !(s > 0):
			return 0
		case s >= maxDurationSeconds:
			return time.Duration(math.MaxInt64)
		}
		return time.Duration(math.Round(s * 1e9))
	}
	rng := NewStreams(3).Stream("from-seconds")
	check := func(s float64) {
		if got, want := FromSeconds(s), ref(s); got != want {
			t.Fatalf("FromSeconds(%v) = %d, want %d", s, got, want)
		}
	}
	for i := 0; i < 1_000_000; i++ {
		check(math.Ldexp(rng.Float64(), rng.IntN(100)-60))
		check(math.Float64frombits(rng.Uint64() >> 1)) // any positive float
	}
	for _, x := range []float64{0.5, 1.5, 2.5, 1<<52 - 0.5, 1 << 52, 1<<52 + 1, 1<<53 + 2, 0.49999999999999994, 4503599627370495.5} {
		check(x / 1e9)
		check(math.Nextafter(x, 0) / 1e9)
		check(math.Nextafter(x, math.Inf(1)) / 1e9)
	}
	for _, s := range []float64{maxDurationSeconds, math.Nextafter(maxDurationSeconds, 0), 9.2e9, math.Inf(1), math.NaN(), -0.0, 5e-324} {
		check(s)
	}
}
