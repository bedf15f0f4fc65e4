package simmode

import (
	"math"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// The contention mechanisms against their closed forms, over long runs
// with random demands: what model/contention.go says each costs in steady
// state, the simulator measures (99 % confidence over 8 replications, or
// within a stated tolerance where no randomness reaches the figure or the
// form is a mean-value one).

// ctClosed is n users that never think calling tier q, measured after 5 s
// for 60 s: the tier always holds all n requests.
func ctClosed(n int, q model.Tier) *model.Topology {
	return &model.Topology{
		Duration: 65 * time.Second, Warmup: 5 * time.Second, SampleEvery: time.Minute, Tiers: []model.Tier{q},
		Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: float64(n)}}, Think: sim.Const(0), Call: model.Call{Target: 0}},
	}
}

// ctVerify runs top over 8 seeds and checks each figure's mean against
// its closed form: within the 99 % interval, or within tol (relative)
// where the interval is narrower (a figure no randomness reaches).
func ctVerify(t *testing.T, name string, top *model.Topology, tol float64, checks ...thCheck) {
	t.Helper()
	vals := make([][]float64, len(checks))
	for k := 1; k <= 8; k++ {
		res, err := Run(top, model.Options{Seed: uint64(k), NoSeries: true, MaxPoints: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Requests.Conserved() {
			t.Fatalf("%s: counts do not add up: %+v", name, res.Requests)
		}
		for i, c := range checks {
			vals[i] = append(vals[i], c.get(res))
		}
	}
	for i, c := range checks {
		m, h := sim.MeanCI(vals[i], 0.99)
		h = max(h, tol*math.Abs(c.want))
		if math.Abs(m-c.want) > h {
			t.Errorf("%s: %s %.5f ± %.5f does not cover the closed form's %.5f", name, c.name, m, h, c.want)
		}
		t.Logf("%s: %-28s sim %.5f ± %.5f  closed form %.5f", name, c.name, m, h, c.want)
	}
}

func throughput(r *results.Run) float64 { return r.ThroughputPerS }

func TestContentionClosedForms(t *testing.T) {
	if testing.Short() {
		t.Skip("long runs (-short)")
	}
	t.Parallel()
	demand := sim.Exp(10 * time.Millisecond)

	// Context switches: 8 runnable on 1 core inflate the work by
	// 1 + (1 ms + 0.5 ms · 7) / 20 ms = 1.225 (Scheduler.Inflation), so
	// the core completes 1 / (10 ms · 1.225) = 81.6 requests a second and
	// loses 1 − 1/1.225 of its time to switching.
	sched := modeltest.Tier("svc", 1, modeltest.CPUOf(demand))
	sched.Contention.Sched = model.Scheduler{On: true, Quantum: 20 * time.Millisecond, SwitchCost: time.Millisecond, RefillCost: 500 * time.Microsecond}
	f := sched.Contention.Sched.Inflation(8, 1)
	ctVerify(t, "context switches", ctClosed(8, sched), 0.005,
		thCheck{"throughput", throughput, 1 / (0.010 * f)},
		thCheck{"context_switch_cpu_share", func(r *results.Run) float64 { return tier0(r).SwitchCPUShare }, 1 - 1/f})

	// Bookkeeping: a call pays 1 ms of CPU for every other call
	// outstanding when it decodes (Bookkeeping.CPU); a call still decoding
	// is not yet outstanding (WCF's Calls Outstanding). Under processor
	// sharing each of the 7 others is in its operation for the share
	// D/(D+b) of its time, so the mean bookkeeping b a call pays solves
	// b = 1 ms · 7 · D/(D+b) with D = 10 ms: b = (−D + √(D² + 4·7·D·1 ms))/2
	// = 4.75 ms, 1/(D+b) = 67.8 calls a second, b/(D+b) of the core on
	// bookkeeping. That is a mean-value form (it takes the others' phases
	// as independent of the call's own), so it is held to 1 %, not exact.
	book := modeltest.Tier("svc", 1, modeltest.CPUOf(demand))
	book.Contention.Bookkeeping = model.Bookkeeping{PerCall: time.Millisecond}
	b := (-0.010 + math.Sqrt(0.010*0.010+4*7*0.010*0.001)) / 2
	ctVerify(t, "bookkeeping", ctClosed(8, book), 0.01,
		thCheck{"throughput", throughput, 1 / (0.010 + b)},
		thCheck{"bookkeeping_cpu_share", func(r *results.Run) float64 { return tier0(r).BookkeepingCPUShare }, b / (0.010 + b)})

	// Paging: 8 requests of 100 MB against 500 MB, a paging factor of 2:
	// work slows by 1 + 2 · 300/800 = 1.75 (Memory.Slowdown).
	page := modeltest.Tier("svc", 1, modeltest.CPUOf(demand))
	page.MemoryPerRequest = 100 << 20
	page.Contention.Memory = model.Memory{Limit: 500 << 20, OnFull: model.MemoryPage, PagingFactor: 2}
	s := page.Contention.Memory.Slowdown(800 << 20)
	ctVerify(t, "paging", ctClosed(8, page), 0.005,
		thCheck{"throughput", throughput, 1 / (0.010 * s)},
		thCheck{"paging_cpu_share", func(r *results.Run) float64 { return tier0(r).PagingCPUShare }, 1 - 1/s})

	// A lock convoy: 8 requests for a lock held 10 ms (waiting, no CPU)
	// that each take it 5 times; with others always behind, every
	// hand-off pays 5 wake-ups of 1 ms (Handoff.Delay): the lock passes
	// 1 / 15 ms times a second and stands idle a third of the time.
	lk := modeltest.Lock(0)
	lk.Acquires = 5
	convoy := modeltest.Tier("svc", 8, lk, modeltest.Wait(10*time.Millisecond), modeltest.Unlock(0))
	convoy.Contention.Handoff = model.Handoff{Convoy: true, Wake: time.Millisecond}
	ctVerify(t, "lock convoy", ctClosed(8, convoy), 0.005,
		thCheck{"throughput", throughput, 1 / 0.015},
		thCheck{"lock_handoff_share", func(r *results.Run) float64 { return tier0(r).LockHandoffShare }, 5.0 / 15})

	// Garbage collection: Poisson arrivals at 100/s allocating 64 KB each
	// on a gen-0 budget of 1 MB collect 6.25 times a second; with pauses of
	// 8 ms the process spends 6.25 × 8 ms = 5 % of its time in GC
	// (GC.TimeInGC), whatever its load (4 cores, 25 % busy).
	gc := modeltest.Tier("svc", 4, modeltest.CPUOf(demand))
	gc.Contention.GC = model.GC{Mode: model.GCWorkstation, AllocPerRequest: 64 << 10, Gen0Budget: 1 << 20, Pause: 8 * time.Millisecond}
	open := thOpenTop(100, 200*time.Second, gc)
	open.Warmup, open.Duration = 10*time.Second, 210*time.Second
	ctVerify(t, "garbage collection", open, 0,
		thCheck{"gen0 collections/s", func(r *results.Run) float64 { return float64(tier0(r).Gen0Collections) / 200 }, 100 * 64.0 / 1024},
		thCheck{"% time in GC", func(r *results.Run) float64 { return tier0(r).GCTimePercent }, 100 * gc.Contention.GC.TimeInGC(100*64<<10, 0)})
}
