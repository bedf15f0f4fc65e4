package model

import (
	"math"
	"testing"
	"time"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// TestSchedulerInflation checks the factor against its formula at named
// points: none up to one runnable thread per core, then 1 + (s + r(k−1))/q.
func TestSchedulerInflation(t *testing.T) {
	s := Scheduler{On: true, Quantum: 100 * time.Millisecond, SwitchCost: time.Millisecond, RefillCost: 2 * time.Millisecond}
	cases := []struct {
		n, cores int
		want     float64
	}{
		{0, 2, 1}, {1, 2, 1}, {2, 2, 1}, // at most one per core: no forced switch
		{4, 2, 1 + (1+2*1)/100.0},   // k = 2
		{8, 2, 1 + (1+2*3)/100.0},   // k = 4
		{3, 2, 1 + (1+2*0.5)/100.0}, // k = 1.5
	}
	for _, c := range cases {
		if got := s.Inflation(c.n, c.cores); !near(got, c.want, 1e-12) {
			t.Errorf("Inflation(%d, %d) = %v, want %v", c.n, c.cores, got, c.want)
		}
	}
	off := s
	off.On = false
	if got := off.Inflation(100, 1); got != 1 {
		t.Errorf("off: Inflation = %v, want 1", got)
	}
	// The saturated throughput it implies falls as 1/k: c/(d·(1 + …)).
	prev := math.Inf(1)
	for n := 3; n <= 40; n++ {
		x := 2 / s.Inflation(n, 2)
		if !(x < prev) {
			t.Fatalf("saturated throughput does not fall at n = %d: %v after %v", n, x, prev)
		}
		prev = x
	}
}

// TestHandoffDelay: one wake-up on an idle machine, scaled by the
// acquisitions and by processor sharing once the woken thread has to
// share the cores.
func TestHandoffDelay(t *testing.T) {
	h := Handoff{Convoy: true, Wake: 10 * time.Microsecond}
	cases := []struct {
		acq, behind, n, cores int
		want                  time.Duration
	}{
		{1, 0, 0, 2, 10 * time.Microsecond},
		{0, 1, 1, 2, 10 * time.Microsecond},   // 0 acquisitions is one; 2 runnable on 2 cores
		{1, 0, 3, 2, 20 * time.Microsecond},   // the woken thread is the 4th on 2 cores
		{100, 1, 0, 1, time.Millisecond},      // others behind: every acquisition a hand-off
		{100, 0, 0, 1, 10 * time.Microsecond}, // none behind: the one hand-off
		{3, 2, 5, 2, 90 * time.Microsecond},   // 3 × 10 µs × 6/2
	}
	for _, c := range cases {
		if got := h.Delay(c.acq, c.behind, c.n, c.cores); got != c.want {
			t.Errorf("Delay(%d, %d, %d, %d) = %v, want %v", c.acq, c.behind, c.n, c.cores, got, c.want)
		}
	}
	if got := (&Handoff{Wake: time.Second}).Delay(1, 1, 0, 1); got != 0 {
		t.Errorf("convoy off: Delay = %v, want 0", got)
	}
	// A convoyed lock's throughput, 1/(hold + delay), against the closed
	// form for a lock held 1 ms by requests that take it 10 times.
	hold := time.Millisecond
	d := h.Delay(10, 1, 0, 4)
	if x, want := 1/(hold+d).Seconds(), 1/(0.001+10*10e-6); !near(x, want, 1e-9) {
		t.Errorf("convoyed lock: %v/s, want %v/s", x, want)
	}
}

func TestBookkeepingCPU(t *testing.T) {
	b := Bookkeeping{PerCall: 50 * time.Microsecond}
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{0, 0}, {1, 0}, {2, 50 * time.Microsecond}, {11, 500 * time.Microsecond}} {
		if got := b.CPU(c.n); got != c.want {
			t.Errorf("CPU(%d) = %v, want %v", c.n, got, c.want)
		}
	}
	// USL's shape in closed form: with N outstanding on c cores, a
	// CPU-bound call of demand D completes at c/(D + b(N−1)) a second.
	if (&Bookkeeping{}).On() || (&Bookkeeping{}).CPU(100) != 0 {
		t.Error("zero Bookkeeping is not off")
	}
}

// TestGCAllocate steps a collector through named allocations.
func TestGCAllocate(t *testing.T) {
	g := GC{Mode: GCWorkstation, Gen0Budget: 1000, Pause: time.Millisecond, PausePerThread: 10 * time.Microsecond, FullEvery: 3, FullPause: 50 * time.Millisecond}
	var st GCState
	steps := []struct {
		bytes     int64
		threads   int
		pause     time.Duration
		allocated int64
		colls     int64
	}{
		{400, 10, 0, 400, 0},
		{500, 10, 0, 900, 0},
		{100, 10, 1100 * time.Microsecond, 0, 1},                    // exactly the budget: one gen-0 collection
		{1500, 0, time.Millisecond, 500, 2},                         // one more, half a budget left
		{600, 2, 50*time.Millisecond + 20*time.Microsecond, 100, 3}, // the 3rd is a full collection
		{2000, 0, 2 * time.Millisecond, 100, 5},                     // two at once
	}
	for i, s := range steps {
		p := g.Allocate(&st, s.bytes, s.threads)
		if p != s.pause || st.Allocated != s.allocated || st.Collections != s.colls {
			t.Errorf("step %d: pause %v allocated %d collections %d; want %v %d %d", i, p, st.Allocated, st.Collections, s.pause, s.allocated, s.colls)
		}
	}
	if st.Full != 1 {
		t.Errorf("full collections %d, want 1", st.Full)
	}
	// Concurrent workstation: a full collection blocks only for its suspensions.
	gc := g
	gc.Mode = GCWorkstationConcurrent
	if p := gc.PauseOf(true, 0); p != time.Millisecond {
		t.Errorf("concurrent full pause %v, want 1ms", p)
	}
	off := GC{Gen0Budget: 1}
	if p := off.Allocate(&GCState{}, 1e9, 1); p != 0 {
		t.Errorf("mode off: pause %v", p)
	}
}

// TestTimeInGCClosedForm: the fraction of time in GC is collections per
// second × pause; the collector's own count over a long allocation
// sequence lands on it.
func TestTimeInGCClosedForm(t *testing.T) {
	g := GC{Mode: GCServer, Gen0Budget: 4 << 20, Pause: 2 * time.Millisecond, PausePerThread: 5 * time.Microsecond}
	rate := 100e6 // bytes/s
	threads := 40
	want := rate / float64(4<<20) * (2e-3 + 40*5e-6)
	if got := g.TimeInGC(rate, threads); !near(got, want, 1e-12) {
		t.Fatalf("TimeInGC = %v, want %v", got, want)
	}
	// Allocate 64 KB at a time for 100 s.
	var st GCState
	chunk := int64(64 << 10)
	n := int64(rate*100) / chunk
	for i := int64(0); i < n; i++ {
		g.Allocate(&st, chunk, threads)
	}
	if got := st.Paused.Seconds() / 100; !near(got, want, 1e-3) {
		t.Errorf("paused %v of 100 s, want %v", got, want)
	}
	if got, want := float64(st.Collections)/100, rate/float64(4<<20); !near(got, want, 1e-3) {
		t.Errorf("%v collections/s, want %v", got, want)
	}
}

func TestMemory(t *testing.T) {
	m := Memory{Limit: 1000, Base: 100, StackPerThread: 10, PagingFactor: 50}
	if got := m.Committed(20, 5, 40); got != 100+200+200 {
		t.Fatalf("Committed = %d", got)
	}
	for _, c := range []struct {
		committed int64
		want      float64
	}{{500, 1}, {1000, 1}, {1250, 1 + 50*250.0/1250}, {2000, 26}} {
		if got := m.Slowdown(c.committed); !near(got, c.want, 1e-12) {
			t.Errorf("Slowdown(%d) = %v, want %v", c.committed, got, c.want)
		}
	}
	if m.Fails(5000) {
		t.Error("a paging process fails")
	}
	f := m
	f.OnFull = MemoryFail
	if f.Fails(1000) || !f.Fails(1001) || f.Slowdown(5000) != 1 {
		t.Error("a failing process: fails at 1000, passes 1001, or pages")
	}
	if (&Memory{}).On() || (&Memory{}).Slowdown(1e12) != 1 || (&Memory{OnFull: MemoryFail}).Fails(1e12) {
		t.Error("zero Memory is not off")
	}
}

func TestContentionOff(t *testing.T) {
	var c Contention
	if c.On() {
		t.Fatal("zero Contention is on")
	}
	if s := c.CPUSlowdown(1000, 1, 1<<40); s != 1 {
		t.Errorf("CPUSlowdown = %v", s)
	}
}
