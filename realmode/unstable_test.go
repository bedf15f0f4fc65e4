package realmode

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestUnstableOpenLoadStops is the simulator's test of the same name for
// real: an M/M/1 server (10 ms demands, μ = 100/s) under arrivals at
// 150/s grows its queue by 50 a second. With the bound lowered to 200 (the
// real bound, 10,000 or more, would take minutes), the run stops once 400
// are in flight, with the simulator's outcome, every request accounted
// for, and the goroutines bounded: the run holds about 400 requests, not
// the 3,000 a minute would pile up.
func TestUnstableOpenLoadStops(t *testing.T) {
	testStableBound = 200
	defer func() { testStableBound = 0 }()
	top := caseMMcAt(150)
	top.Tiers[0].Cores = 1
	top.Tiers[0].Steps[0] = cpuExp(10 * time.Millisecond)
	top.Duration = time.Minute
	before := runtime.NumGoroutine()
	var peak int
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
				peak = max(peak, runtime.NumGoroutine())
			}
		}
	}()
	res, info, err := RunWithInfo(context.Background(), top, Options{Seed: 1, TimeScale: 1})
	close(done)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s\n%+v in %.1f s simulated (%v real); goroutines %d before, at most %d during; notes %q",
		res.Unstable, res.Requests, res.Duration, info.Real, before, peak, info.Notes)
	if !strings.HasPrefix(res.Unstable, "unstable: ") || !strings.Contains(res.Unstable, "grew past 200 at t=") {
		t.Fatalf("outcome %q, want unstable: … grew past 200 …", res.Unstable)
	}
	if res.Duration >= top.Duration.Seconds() || !res.Requests.Conserved() {
		t.Errorf("duration %.1f s, counts %+v: want a run stopped early with every request accounted for", res.Duration, res.Requests)
	}
	if res.Requests.InFlight > 400+2*watchEvery || info.Shed > 0 {
		t.Errorf("%d in flight, %d shed at the stop: want about 400, none shed", res.Requests.InFlight, info.Shed)
	}
	if peak > before+20*(400+2*watchEvery) {
		t.Errorf("%d goroutines during the run: not bounded by the requests in flight", peak)
	}
}

// TestStableOpenLoadNotFlagged: the same server at 40/s (ρ = 0.4) runs to
// its end under the same lowered bound.
func TestStableOpenLoadNotFlagged(t *testing.T) {
	testStableBound = 200
	defer func() { testStableBound = 0 }()
	top := caseMMcAt(40)
	top.Tiers[0].Cores = 1
	top.Tiers[0].Steps[0] = cpuExp(10 * time.Millisecond)
	top.Duration = 5 * time.Second
	res, err := Run(context.Background(), top, Options{Seed: 1, TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unstable != "" || res.Duration != top.Duration.Seconds() {
		t.Errorf("stopped at %.1f s: %q", res.Duration, res.Unstable)
	}
}

// TestUnstableBeforeWarmup: stopped before its warm-up ends, the run's
// warm-up ends at the stop, and the counts add up.
func TestUnstableBeforeWarmup(t *testing.T) {
	testStableBound = 200
	defer func() { testStableBound = 0 }()
	top := caseMMcAt(150)
	top.Tiers[0].Cores = 1
	top.Tiers[0].Steps[0] = cpuExp(10 * time.Millisecond)
	top.Duration, top.Warmup = time.Minute, 50*time.Second
	res, err := Run(context.Background(), top, Options{Seed: 1, TimeScale: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unstable == "" || res.Warmup > res.Duration || res.Duration > 40 || !res.Requests.Conserved() {
		t.Errorf("warm-up %.1f s, duration %.1f s, counts %+v, outcome %q", res.Warmup, res.Duration, res.Requests, res.Unstable)
	}
}
