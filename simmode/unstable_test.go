package simmode

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// mm1 is an M/M/1 queue with no limit anywhere: one core serving
// exponential demands of mean 100 ms (μ = 10/s) to Poisson arrivals at
// ρ·μ, for a simulated day.
func mm1(rho float64) *model.Topology {
	unlimited := model.Pool{Min: 1, Max: 1 << 20, Injection: model.InjectNone}
	return &model.Topology{
		Duration: 24 * time.Hour,
		Tiers: []model.Tier{{Name: "server", Cores: 1, CostMultiplier: 1, Worker: unlimited, IO: unlimited,
			Steps: []model.Step{{Kind: model.StepCPU, Demand: sim.Exp(100 * time.Millisecond)}}}},
		Load: model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: 10 * rho}}, Call: model.Call{Target: 0}},
	}
}

// TestUnstableOpenLoadStops: at ρ = 1.5 the queue of an M/M/1 server
// grows by 5 requests a second for as long as the run lasts (432,000 in a
// day). The run stops once 20,000 are in flight, twice the bound, with an
// outcome that says so and puts the excess near 50%; every request is
// accounted for; the run allocates a bounded amount of memory (it held
// about 432,000 requests before); and the same seed gives the same result.
func TestUnstableOpenLoadStops(t *testing.T) {
	top := mm1(1.5)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res, err := Run(top, model.Options{Seed: 1})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%s\n%+v, %.0f s simulated, %d MB allocated", res.Unstable, res.Requests, res.Duration, alloc>>20)
	if !strings.HasPrefix(res.Unstable, "unstable: requests in flight grew past 10000 at t=") {
		t.Fatalf("outcome %q, want unstable: requests in flight grew past 10000 …", res.Unstable)
	}
	// 20,000 more arrivals than completions at 5/s: about 4,000 s.
	if res.Duration < 2000 || res.Duration > 8000 {
		t.Errorf("stopped at %.0f s, want about 4,000 s", res.Duration)
	}
	if res.Requests.InFlight < 20000 || res.Requests.InFlight > 20000+watchEvery {
		t.Errorf("%d in flight at the stop, want 20,000 (+ at most %d)", res.Requests.InFlight, watchEvery)
	}
	if !res.Requests.Conserved() {
		t.Errorf("requests not conserved: %+v", res.Requests)
	}
	// The excess from the rates measured while the queue doubled: over
	// ~2,000 s, arrivals 15/s ± 0.2 and completions 10/s ± 0.15.
	var excess, arr, done float64
	if _, err := fmtSscanf(res.Unstable, &excess, &arr, &done); err != nil {
		t.Fatalf("outcome %q: %v", res.Unstable, err)
	}
	if excess < 40 || excess > 60 || arr < 14 || arr > 16 || done < 9.4 || done > 10.6 {
		t.Errorf("excess %.0f%%, arrivals %.2f/s, completions %.2f/s: want about 50%%, 15/s, 10/s", excess, arr, done)
	}
	if alloc > 256<<20 {
		t.Errorf("the run allocated %d MB, want a bounded amount (under 256 MB)", alloc>>20)
	}
	again, err := Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res, again) {
		t.Error("the same seed gave another result")
	}
}

// fmtSscanf reads the excess and the two rates out of an outcome.
func fmtSscanf(s string, excess, arr, done *float64) (int, error) {
	_, rest, _ := strings.Cut(s, "by about ")
	return sscanf(rest, "%f%% (arrivals %f/s, completions %f/s)", excess, arr, done)
}

// TestStableLoadsAreNotFlagged: ρ = 0.8 for a simulated day (the queue
// passes a few dozen at most), and a minute at ρ = 1.5 followed by ρ =
// 0.5 (a passing backlog of about 300), and a closed load of 12,000 users
// (no think time: all of them in flight at once, above the floor) run to their end
// unflagged.
func TestStableLoadsAreNotFlagged(t *testing.T) {
	surge := mm1(1.5)
	surge.Duration = time.Hour
	surge.Load.Rate = model.Schedule{{At: 0, Value: 15}, {At: time.Minute, Value: 15}, {At: time.Minute, Value: 5}}
	closed := mm1(1)
	closed.Duration = 2 * time.Minute
	closed.Tiers[0].Cores = 200
	closed.Load = model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: 12000}}, Call: model.Call{Target: 0}}
	for _, tc := range []struct {
		name string
		top  *model.Topology
	}{{"ρ = 0.8", mm1(0.8)}, {"a surge", surge}, {"12,000 users", closed}} {
		res, err := Run(tc.top, model.Options{Seed: 1, NoSeries: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Unstable != "" || res.Duration != tc.top.Duration.Seconds() {
			t.Errorf("%s: stopped at %.0f s of %v: %q", tc.name, res.Duration, tc.top.Duration, res.Unstable)
		}
	}
}

func sscanf(s, f string, a ...any) (int, error) { return fmt.Sscanf(s, f, a...) }

// TestUnstableBeforeWarmup: a run that becomes unstable before its
// warm-up ends stops all the same; the warm-up ends at the stop, so
// nothing is measured and every request still under way is in flight at
// both ends of the (empty) measured period: the counts add up.
func TestUnstableBeforeWarmup(t *testing.T) {
	top := mm1(1.5)
	top.Warmup = 2 * time.Hour
	res, err := Run(top, model.Options{Seed: 1, NoSeries: true})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Requests
	if res.Unstable == "" || res.Warmup != res.Duration || res.Duration > 8000 {
		t.Fatalf("warm-up %.0f s, duration %.0f s, outcome %q: want a stop before the 7,200 s warm-up, which ends there", res.Warmup, res.Duration, res.Unstable)
	}
	if !c.Conserved() || c.Generated != 0 || c.InFlightAtWarmup != c.InFlight || res.GoodputPerS != 0 {
		t.Errorf("counts %+v, goodput %v: want nothing measured, every request in flight", c, res.GoodputPerS)
	}
}
