package experiments

import (
	"math"
	"strconv"
	"testing"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/simmode"
)

// The stories of the contention mechanisms (issue 24): when more
// concurrency hurts.

// sweepRuns runs the scenarios of file whose variant is one of variants
// (all when none is given) and whose first sweep value passes keep (nil:
// every one), once each at the file's seed; it returns them by variant, in
// sweep order, with their sweep values.
func sweepRuns(t *testing.T, file string, keep func(x float64) bool, variants ...string) map[string][]sweepRun {
	t.Helper()
	x := loadStory(t, file)
	want := map[string]bool{}
	for _, v := range variants {
		want[v] = true
	}
	out := map[string][]sweepRun{}
	for i := 0; i < x.NumScenarios(); i++ {
		sc, err := x.Scenario(i)
		if err != nil {
			t.Fatal(err)
		}
		if len(variants) > 0 && !want[sc.Variant] {
			continue
		}
		v, err := strconv.ParseFloat(sc.Params[0].Value, 64)
		if err != nil {
			t.Fatal(err)
		}
		if keep != nil && !keep(v) {
			continue
		}
		res, err := simmode.Run(&sc.Topology, model.Options{Seed: x.Seed})
		if err != nil {
			t.Fatal(err)
		}
		out[sc.Variant] = append(out[sc.Variant], sweepRun{x: v, run: res})
	}
	return out
}

type sweepRun struct {
	x   float64
	run *results.Run
}

// TestWCF4UnlimitedThrottles: WCF 4's defaults post, "If there are too
// much concurrent execution happening, a lot of contention and
// bookkeeping would happen and thus it would hurt the performance of the
// system" (no figure: shape only). With the throttles at int.MaxValue the
// throughput of a CPU-bound service rises, peaks and falls as users grow;
// the Universal Scalability Law fits the curve (R² ≥ 0.95) and puts its
// peak N* within one step of the geometric sweep (a factor 1.25) of the
// measured peak; past the peak per-call bookkeeping dominates (what tsim
// explain names); WCF's own throttles keep the throughput up.
func TestWCF4UnlimitedThrottles(t *testing.T) {
	const file = "wcf4-unlimited-throttles.toml"
	last := 222.0
	runs := sweepRuns(t, file, nil, "unlimited")
	line := runs["unlimited"]
	if len(line) < 15 {
		t.Fatalf("unlimited: %d sweep points, want the file's 19", len(line))
	}
	var pts []results.USLPoint
	peak := 0
	for i, p := range line {
		if !p.run.Requests.Conserved() {
			t.Fatalf("unlimited, %v users: counts do not add up: %+v", p.x, p.run.Requests)
		}
		pts = append(pts, results.USLPoint{X: p.x, Y: p.run.ThroughputPerS, YLo: p.run.ThroughputPerS, YHi: p.run.ThroughputPerS})
		if p.run.ThroughputPerS > line[peak].run.ThroughputPerS {
			peak = i
		}
	}
	xPeak, top := line[peak].x, line[peak].run.ThroughputPerS
	end := line[len(line)-1]
	// Rising, peaking, falling: the peak is inside the sweep and the last
	// point well below it.
	if peak == 0 || peak == len(line)-1 || end.run.ThroughputPerS > 0.5*top {
		t.Errorf("unlimited: peak %.0f/s at %v users (of %v–%v), %.0f/s at %v; want an inner peak and at most half of it at the end",
			top, xPeak, line[0].x, end.x, end.run.ThroughputPerS, end.x)
	}
	u, err := analysis.FitUSL(pts)
	if err != nil {
		t.Fatal(err)
	}
	step := 1.25 // the sweep's factor: its resolution around any point
	t.Logf("USL: σ %.4g κ %.4g λ %.1f/s, N* %.1f (measured peak %v users, %.0f/s), R² %.3f", u.Sigma, u.Kappa, u.Lambda, u.NStar, xPeak, top, u.R2)
	if u.R2 < 0.95 {
		t.Errorf("USL fit R² %.3f, want ≥ 0.95", u.R2)
	}
	if r := u.NStar / xPeak; !(r <= step*1.0001 && r >= 1/(step*1.0001)) {
		t.Errorf("USL N* %.1f is %.2f× the measured peak at %v users: want within the sweep's step (×%v)", u.NStar, r, xPeak, step)
	}
	// Past the peak, what grows with concurrency: bookkeeping dominates.
	if m, share, ok := analysis.Dominant(end.run); !ok || m.Name != "per-call bookkeeping" || share < 0.3 {
		t.Errorf("at %v users the dominant mechanism is %q (%.0f%% %s), want per-call bookkeeping, ≥ 30%%", end.x, m.Name, 100*share, m.Of)
	}
	// WCF's throttles hold the calls in progress, and the cost, down.
	at := func(x float64) bool { return x == last }
	other := sweepRuns(t, file, at, "wcf4", "wcf35")
	w4, w35 := other["wcf4"][0].run, other["wcf35"][0].run
	if end.x != last || w4.ThroughputPerS < 1.5*end.run.ThroughputPerS || w35.ThroughputPerS < w4.ThroughputPerS {
		t.Errorf("at %v users: unlimited %.0f/s, wcf4 %.0f/s, wcf35 %.0f/s; want wcf4 ≥ 1.5× unlimited and wcf35 ≥ wcf4",
			last, end.run.ThroughputPerS, w4.ThroughputPerS, w35.ThroughputPerS)
	}
	if o := tierOf(t, w4, "service").OutstandingMax; o > 64 {
		t.Errorf("wcf4: %v calls outstanding at most, want ≤ 64", o)
	}
}

// rateWindows is the client's completions per second in windows of w
// seconds from 0 to the end of r.
func rateWindows(r *results.Run, w float64) []float64 {
	out := make([]float64, int(math.Ceil(r.Duration/w)))
	for _, p := range r.Points {
		if i := int(p.T / w); i < len(out) && p.Outcome == results.Completed {
			out[i] += 1 / w
		}
	}
	return out
}

// TestTraceLockConvoy: the Trace post (002). Its figures: without the
// three Trace calls 5.7 ms a test (fitted, by hidden-cpu-costs.fit);
// with them at most 23 tests/s (fitted: the trace's CPU; a maximum:
// ±20 %), then a test rate that degrades while the users increase and the
// CPU's spike (predicted: shape only) and tests "around 36 seconds" at the
// end (fitted: the acquisitions; ±10 %). tsim explain names the lock
// convoy.
func TestTraceLockConvoy(t *testing.T) {
	runs := runStory(t, "trace-lock-convoy.toml", 0)
	rel, tr := runs["release"], runs["tracing-in-hot-path"]
	if m := rel.Latency.Mean; math.Abs(m-0.0057) > 0.05*0.0057 {
		t.Errorf("release: %.2f ms a test, want 5.7 ms ±5%%", 1000*m)
	}
	for name, r := range runs {
		if !r.Requests.Conserved() {
			t.Fatalf("%s: counts do not add up: %+v", name, r.Requests)
		}
	}
	w := rateWindows(tr, 5)
	peak, at := 0.0, 0
	for i, x := range w {
		if x > peak {
			peak, at = x, i
		}
	}
	late := 0.0
	for _, x := range w[len(w)-24:] { // the last 2 minutes, 200 users
		late += x / 24
	}
	t.Logf("tracing: peak %.1f tests/s at %d s, %.2f/s in the last 2 min, mean test %.1f s there", peak, 5*at, late, meanLatency(tr, 480, 600))
	if math.Abs(peak-23) > 0.20*23 {
		t.Errorf("tracing: at most %.1f tests/s (5-s windows), want 23 ±20%% (a maximum)", peak)
	}
	// Degrading while the users increase: the peak comes before the last
	// third of the ramp, and the rate at 200 users is under a third of it.
	if 5*at > 320 || late > peak/3 {
		t.Errorf("tracing: peak at %d s, %.2f/s at the end against %.1f; want a peak before 320 s and under a third of it at the end", 5*at, late, peak)
	}
	// "The spike in the CPU" (shape only; the header: rising to ~80 %,
	// falling to ~20 % once the convoy forms): the busiest 30 s at least
	// 70 %, the last 2 min under 30 %.
	cpu := func(from, to float64) float64 {
		return storyCMean(t, tr, "app", from, to, func(s results.TierSample) float64 { return s.CPU })
	}
	top := 0.0
	for a := 0.0; a < 600; a += 30 {
		top = math.Max(top, cpu(a, a+30))
	}
	if end := cpu(480, 600); top < 70 || end > 30 {
		t.Errorf("tracing: CPU at most %.0f%% (30-s windows), %.0f%% in the last 2 min; want a spike past 70%% falling under 30%%", top, end)
	}
	if m := meanLatency(tr, 480, 600); math.Abs(m-36) > 0.1*36 {
		t.Errorf("tracing: %.1f s a test at 200 users, want around 36 s (±10%%)", m)
	}
	if m, share, ok := analysis.Dominant(tr); !ok || m.Name != "a lock convoy" || share < 0.5 {
		t.Errorf("tracing: dominant mechanism %q (%.0f%%), want the lock convoy, ≥ 50%%", m.Name, 100*share)
	}
}

// TestSyncThousandsOfThreads: "WCF Request Throttling and Server
// Scalability" (Dong, 2008): several thousand slow requests on as many
// ASP.NET worker threads, "Each thread would hold a fair amount of system
// resource, i.e., memory. It would cause the service to be very slow to
// respond" (no figure: shape only). With the memory mechanism the 3,000
// threads' stacks do not fit, the process pages and the calls take
// several times their ~10 s; without it (what tsim showed before) and
// with the asynchronous module every call takes its ~10 s.
func TestSyncThousandsOfThreads(t *testing.T) {
	runs := runStory(t, "sync-thousands-of-threads.toml", 0)
	sync, off, async := runs["sync-module"], runs["sync-module-memory-off"], runs["async-module"]
	for name, r := range runs {
		if !r.Requests.Conserved() {
			t.Fatalf("%s: counts do not add up: %+v", name, r.Requests)
		}
	}
	s, a := tierOf(t, sync, "svc"), tierOf(t, async, "svc")
	t.Logf("sync-module: %.1f calls/s, %.1f s a call, %.0f MB committed, %.0f%% of the CPU lost to paging; memory off: %.1f/s, %.1f s; async: %.1f/s, %.1f s, %.0f MB",
		sync.ThroughputPerS, sync.Latency.Mean, s.CommittedMaxMB, 100*s.PagingCPUShare, off.ThroughputPerS, off.Latency.Mean, async.ThroughputPerS, async.Latency.Mean, a.CommittedMaxMB)
	// Fine without the mechanism, and with the asynchronous module: every
	// call in its ~10 s.
	for name, r := range map[string]*results.Run{"sync-module-memory-off": off, "async-module": async} {
		if m := r.Latency.Mean; m < 9 || m > 11 {
			t.Errorf("%s: %.1f s a call, want the partner's ~10 s", name, m)
		}
	}
	// "Very slow to respond": the stacks past the memory, paging, and
	// calls at least three times as long.
	if s.CommittedMaxMB < 3000 || a.CommittedMaxMB > 2048 || s.PagingCPUShare < 0.5 {
		t.Errorf("committed %.0f MB (sync), %.0f MB (async) against 2,048; paging %.0f%%: want the sync module's stacks past the limit, the async module's under it", s.CommittedMaxMB, a.CommittedMaxMB, 100*s.PagingCPUShare)
	}
	if sync.Latency.Mean < 3*off.Latency.Mean || sync.ThroughputPerS > off.ThroughputPerS/3 {
		t.Errorf("sync-module: %.1f s a call, %.1f/s; want ≥ 3× the %.1f s and ≤ a third of the %.1f/s without the memory mechanism", sync.Latency.Mean, sync.ThroughputPerS, off.Latency.Mean, off.ThroughputPerS)
	}
	// "a real asynchronous design": the same load on a few threads.
	if a.ThreadsMax > 8 || a.WorkerBusyMax != 0 {
		t.Errorf("async-module: %.0f threads at most, %.0f worker threads busy; want a few I/O threads and no worker held", a.ThreadsMax, a.WorkerBusyMax)
	}
	if m, _, ok := analysis.Dominant(sync); !ok || m.Name != "paging" {
		t.Errorf("sync-module: the dominant mechanism is %q, want paging", m.Name)
	}
}
