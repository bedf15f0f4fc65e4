package modeltest

import (
	"fmt"
	"math"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// contentionTables are the step tables of the five contention mechanisms
// (model/contention.go): a burst of users against one tier, the latencies
// every executor must give ("/failed" for a failed request), worked out
// by hand, and each mechanism's counters: the counts in both executors,
// the shares of the run exactly in the simulator's (tol 0).
var contentionTables = func() []StepTable {
	var out []StepTable
	add := func(name string, n int, horizon time.Duration, cpu bool, want string, tr model.Tier, check func(t *results.Tier, r *results.Run, exact bool) []string) {
		st := StepTable{Name: "contention: " + name, Top: func() *model.Topology { return Burst(n, 0, horizon, tr) }, Want: want, Sharing: cpu}
		if check != nil {
			st.Check = func(r *results.Run, tol float64) []string { return check(&r.Tiers[0], r, tol == 0) }
		}
		out = append(out, st)
	}
	// share checks a share of the run, in the simulator's run only: real
	// mode measures it on the wall clock.
	share := func(what string, got func(*results.Tier) float64, want float64) func(*results.Tier, *results.Run, bool) []string {
		return func(t *results.Tier, _ *results.Run, exact bool) []string {
			if g := got(t); exact && math.Abs(g-want) > 1e-6*max(1, want) {
				return []string{fmt.Sprintf("%s %v, want %v", what, g, want)}
			}
			return nil
		}
	}

	// Context switches: 1 core, a quantum of 100 ms, a switch of 10 ms and
	// a refill of 10 ms per other runnable thread; demands of 1 s. One
	// request alone: 1 s. Two: k = 2, work × (1 + (10 + 10)/100) = 1.2,
	// both end at 2.4 s. Four: × 1.4, all end at 5.6 s.
	sched := Tier("svc", 1, CPU(time.Second))
	sched.Contention.Sched = model.Scheduler{On: true, Quantum: 100 * time.Millisecond, SwitchCost: 10 * time.Millisecond, RefillCost: 10 * time.Millisecond}
	add("context switches, 1 request", 1, 3*time.Second, true, "1", sched, nil)
	add("context switches, 2 requests", 2, 4*time.Second, true, "2.4 2.4", sched, nil)
	// 5.6 s of the core busy, 1 − 1/1.4 of it lost; a 10 s run.
	add("context switches, 4 requests", 4, 8*time.Second, true, "5.6 5.6 5.6 5.6", sched,
		share("switching share", func(t *results.Tier) float64 { return t.SwitchCPUShare }, 5.6*(1-1/1.4)/10))

	// Lock hand-off: a lock held 1 s, a wake-up of 100 ms, 8 idle cores.
	// The first takes it free (1 s); the second is handed it at 1 s and
	// works from 1.1 s (2.1 s); the third from 2.2 s (3.2 s). A stretch
	// that takes the lock 3 times pays 3 wake-ups when another still waits
	// behind it (the second: from 1.3 s, 2.3 s), one when none does (the
	// third: from 2.4 s, 3.4 s).
	lockT := func(acquires int) model.Tier {
		l := Lock(0)
		l.Acquires = acquires
		tr := Tier("svc", 8, l, Wait(time.Second), Unlock(0))
		tr.Contention.Handoff = model.Handoff{Convoy: true, Wake: 100 * time.Millisecond}
		return tr
	}
	// Two hand-offs of 100 ms in the 7 s run.
	add("lock hand-off", 3, 5*time.Second, false, "1 2.1 3.2", lockT(1),
		share("hand-off share", func(t *results.Tier) float64 { return t.LockHandoffShare }, 0.2/7))
	add("lock hand-off, 3 acquisitions", 3, 6*time.Second, false, "1 2.3 3.4", lockT(3), nil)
	// The singleton's instance lock (InstanceContextMode Single,
	// ConcurrencyMode Single) hands over the same way.
	single := Tier("svc", 8, Wait(time.Second))
	single.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.SingleInstance, Concurrency: model.ConcurrencySingle}
	single.Contention.Handoff = model.Handoff{Convoy: true, Wake: 100 * time.Millisecond}
	add("singleton lock hand-off", 3, 5*time.Second, false, "1 2.1 3.2", single, nil)

	// Garbage collection: 1 core, two CPU steps of 1 s, the second
	// allocating 150 KB; a gen-0 budget of 250 KB and a pause of 500 ms.
	// Both requests share the core to 2 s; the second's allocation at 2 s
	// exhausts the budget: the process stops to 2.5 s, then both share the
	// core again and end at 4.5 s (one collection).
	gc := Tier("svc", 1, CPU(time.Second), CPU(time.Second))
	gc.Steps[1].Alloc = 150 << 10
	gc.Contention.GC = model.GC{Mode: model.GCWorkstation, Gen0Budget: 250 << 10, Pause: 500 * time.Millisecond}
	// One pause of 0.5 s in the 8 s run.
	add("garbage collection", 2, 6*time.Second, true, "4.5 4.5", gc, func(t *results.Tier, r *results.Run, exact bool) []string {
		if t.Gen0Collections != 1 {
			return []string{fmt.Sprintf("%d collections, want 1", t.Gen0Collections)}
		}
		return share("% time in GC / 100", func(t *results.Tier) float64 { return t.GCTimePercent / 100 }, 0.5/8)(t, r, exact)
	})

	// Memory: requests of 100 MB. A failing process of 250 MB takes two;
	// the third fails at once (OutOfMemory). A paging process of 150 MB
	// with two requests (200 MB) slows its work by 1 + 2 × 50/200 = 1.5:
	// two demands of 1 s on one core end at 3 s.
	fail := Tier("svc", 8, Wait(time.Second))
	fail.MemoryPerRequest = 100 << 20
	fail.Contention.Memory = model.Memory{Limit: 250 << 20, OnFull: model.MemoryFail}
	add("memory: OutOfMemory", 3, 3*time.Second, false, "0/failed 1 1", fail, func(t *results.Tier, r *results.Run, _ bool) []string {
		if t.OutOfMemory != 1 || r.Requests.Failed != 1 || t.CommittedMaxMB != 200 {
			return []string{fmt.Sprintf("out_of_memory %d, failed %d, committed max %v MB; want 1, 1, 200", t.OutOfMemory, r.Requests.Failed, t.CommittedMaxMB)}
		}
		return nil
	})
	page := Tier("svc", 1, CPU(time.Second))
	page.MemoryPerRequest = 100 << 20
	page.Contention.Memory = model.Memory{Limit: 150 << 20, OnFull: model.MemoryPage, PagingFactor: 2}
	add("memory: paging", 2, 5*time.Second, true, "3 3", page,
		share("paging share", func(t *results.Tier) float64 { return t.PagingCPUShare }, 3*(1-1/1.5)/7))

	// Bookkeeping: 100 ms of CPU per other outstanding call, 1 core,
	// demands of 1 s. The first call decodes with none outstanding and
	// starts its 1 s; the other two each decode with one outstanding
	// (100 ms). Three on the core: the decodings end at 0.3 s; the first
	// has 0.9 s left, the others 1 s: it ends at 3 s, they at 3.2 s.
	book := Tier("svc", 1, CPU(time.Second))
	book.Contention.Bookkeeping = model.Bookkeeping{PerCall: 100 * time.Millisecond}
	// 200 ms of bookkeeping on 1 core over 7 s.
	add("bookkeeping", 3, 5*time.Second, true, "3 3.2 3.2", book,
		share("bookkeeping share", func(t *results.Tier) float64 { return t.BookkeepingCPUShare }, 0.2/7))
	return out
}()
