package experiments

import (
	"math"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// Stories of the client proxies' ChannelFactory cache and of the
// asynchronous WCF HTTP module (docs/stories.md rows 31–51).

// cacheCall is the client's call to the service in r.
func cacheCall(t *testing.T, r *results.Run) results.Call {
	t.Helper()
	for _, c := range r.Calls {
		if c.From == "client" && c.To == "svc" {
			return c
		}
	}
	t.Fatal("no client → svc call")
	return results.Call{}
}

// hitShare is the share of the new proxies whose ChannelFactory came from
// a cache.
func hitShare(t *testing.T, r *results.Run) float64 {
	t.Helper()
	c := cacheCall(t, r)
	if c.Proxies == 0 {
		t.Fatal("no proxies counted")
	}
	return float64(c.FactoryHits) / float64(c.Proxies)
}

// Seed 000, "Performance Improvement for WCF Client Proxy Creation in .NET
// 3.5 and Best Practices": the ChannelFactory cache (rows 49–51).
func TestStoryChannelFactoryCache(t *testing.T) {
	runs := runStory(t, "channelfactory-cache.toml", 20*time.Second)
	storyCClean(t, runs)
	run := func(v string) *results.Run { return storyCRun(t, runs, v) }
	net30, net35 := run("net30-per-call"), run("net35-per-call")
	// Row 49: .NET 3.0 "very expensive" — every proxy builds its factory and
	// the client's CPU saturates; 3.5 finds it in the cache.
	if h := hitShare(t, net30); h != 0 || tierOf(t, net30, "client").CPUUtil < 0.99 {
		t.Errorf(".NET 3.0: %.0f%% hits, client CPU %.0f%%; want none and saturated building factories", 100*h, 100*tierOf(t, net30, "client").CPUUtil)
	}
	if h := hitShare(t, net35); h != 1 || net35.GoodputPerS < 5*net30.GoodputPerS {
		t.Errorf(".NET 3.5: %.0f%% hits, %.0f calls/s against 3.0's %.0f; want all hits and much faster", 100*h, net35.GoodputPerS, net30.GoodputPerS)
	}
	// Approach 2 on 3.0: "you may only create it once".
	if cf := run("net30-channel-factory"); cacheCall(t, cf).FactoriesBuilt != 0 || cf.GoodputPerS != net35.GoodputPerS {
		t.Errorf("3.0 with its own ChannelFactory: %d built, %.0f calls/s; want none after warm-up and 3.5's %.0f",
			cacheCall(t, cf).FactoriesBuilt, cf.GoodputPerS, net35.GoodputPerS)
	}
	// "Reuse the same proxy ... This has the best performance."
	if sh := run("shared-opened"); sh.GoodputPerS < net35.GoodputPerS {
		t.Errorf("shared proxy %.0f calls/s, below per-call's %.0f", sh.GoodputPerS, net35.GoodputPerS)
	}
	// Row 50: "The cache size is hard-coded as 32". One thread, endpoints in
	// turn: 32 all hit, a 33rd purges the factory asked for next every time.
	if c := cacheCall(t, run("net35-32-endpoints-one-thread")); c.FactoriesBuilt != 0 || c.FactoryHits != c.Proxies {
		t.Errorf("32 endpoints: %d built, %d hits of %d; want every proxy a hit", c.FactoriesBuilt, c.FactoryHits, c.Proxies)
	}
	// (The last proxy may still be building when the run ends: not yet added.)
	if c := cacheCall(t, run("net35-33-endpoints-one-thread")); c.FactoryHits != 0 || c.FactoriesBuilt != c.Proxies || c.FactoriesPurged < c.Proxies-1 {
		t.Errorf("33 endpoints: %d hits, %d built, %d purged of %d; want every proxy to miss and purge", c.FactoryHits, c.FactoriesBuilt, c.FactoriesPurged, c.Proxies)
	}
	// 50 threads: still evicting (factories purged), though not every time.
	if c := cacheCall(t, run("net35-33-endpoints")); c.FactoriesPurged == 0 || c.FactoriesBuilt == 0 {
		t.Errorf("33 endpoints, 50 threads: %d built, %d purged; want factories evicted", c.FactoriesBuilt, c.FactoriesPurged)
	}
	// 40 endpoints at random: an LRU of 32 holds 32/40 of them (±2 points).
	figure(t, "40 random endpoints: cache hit share", hitShare(t, run("net35-40-endpoints-random")), 32.0/40, 0.025)
	// Saturated, the client's CPU is the operational bound: 2 cores over the
	// CPU a call takes, its proxy's factory included at the miss share
	// (model.Proxy.MissShare) — the simulator lands on it (±2 %).
	for _, v := range []string{"net30-per-call", "net35-40-endpoints-random"} {
		top := storyTopology(t, "channelfactory-cache.toml", v)
		a := model.Analyse(&top)
		if a.Binding.Throttle != "CPU client" {
			t.Errorf("%s: binds first %q, want the client's CPU", v, a.Binding.Throttle)
		}
		figure(t, v+": calls/s against the client CPU's bound", run(v).GoodputPerS, a.Binding.PerSec, 0.02)
	}
	// Row 51: "disabled for that proxy" — a Binding in the constructor, or
	// ClientCredentials touched before the first call: .NET 3.0's cost.
	for _, v := range []string{"net35-binding-ctor", "net35-credentials-touched"} {
		if r := run(v); hitShare(t, r) != 0 || r.GoodputPerS != net30.GoodputPerS {
			t.Errorf("%s: %.0f%% hits, %.0f calls/s; want none and .NET 3.0's %.0f", v, 100*hitShare(t, r), r.GoodputPerS, net30.GoodputPerS)
		}
	}
	// .NET 4.5's CacheSetting.AlwaysOn caches them again.
	if r := run("net45-binding-ctor-always-on"); hitShare(t, r) != 1 {
		t.Errorf("AlwaysOn: %.0f%% hits, want all", 100*hitShare(t, r))
	}
}

// Seed 000/001, "Orcas SP1 Improvement: Asynchronous WCF HTTP
// Module/Handler": WcfAsyncWebUtil /ia, /t, /t 1000 and "more than 10K
// concurrent slow requests" (rows 31–36).
func TestStoryWcfAsyncModule10k(t *testing.T) {
	runs := runStory(t, "wcf-async-module-10k.toml", 45*time.Second)
	run := func(v string) *results.Run { return storyCRun(t, runs, v) }
	syn, synT, ia, iat, k := run("sync-module"), run("sync-module-t1000"), run("ia"), run("ia-t"), run("ia-t1000")
	// Row 31: MaxConcurrentRequestsPerCpu 12 on 16 cores; the synchronous
	// module holds an ASP.NET worker thread per request (in the first
	// minute the CLR is still injecting them, ~2/s from 16).
	if s := tierOf(t, syn, "svc"); s.ExecutingMax > 192 || s.WorkerBusyMax != s.ExecutingMax || s.AppQueuedMax != 5000 {
		t.Errorf("sync module: executing max %.0f, worker threads busy max %.0f, queue max %.0f; want ≤ 192, one worker each, 5000", s.ExecutingMax, s.WorkerBusyMax, s.AppQueuedMax)
	}
	// Row 33a: "not possible with the synchronous HttpModule" — the
	// throttle raised by hand, the module still holds a worker thread per
	// request, and autoConfig's pool has 100 × 16.
	if s := tierOf(t, synT, "svc"); s.ExecutingMax != 1600 || s.WorkerBusyMax != 1600 || s.QueuedMean < 9000 {
		t.Errorf("sync module, throttle 1000: executing max %.0f, worker busy max %.0f, %.0f waiting; want 1,600, 1,600 and the rest (~10,300) waiting", s.ExecutingMax, s.WorkerBusyMax, s.QueuedMean)
	}
	// /ia alone: still 12 per CPU, but no thread held.
	if s := tierOf(t, ia, "svc"); s.ExecutingMax != 192 || s.ThreadsBusyMax > 5 {
		t.Errorf("/ia: executing max %.0f, threads busy max %.0f; want 192 and a handful", s.ExecutingMax, s.ThreadsBusyMax)
	}
	// Row 34: /t "Default is 100" per CPU.
	if s := tierOf(t, iat, "svc"); s.ExecutingMax != 1600 {
		t.Errorf("/ia /t: executing max %.0f, want 100 × 16", s.ExecutingMax)
	}
	// Row 33: /ia /t 1000, "more than 10K concurrent slow requests", and
	// "the whole stack does not hold any thread": a few threads busy.
	s := tierOf(t, k, "svc")
	if s.ExecutingMean <= 10000 || s.ExecutingMax > 16000 || s.ThreadsBusyMax > 20 || k.Requests.Rejected != 0 {
		t.Errorf("/ia /t 1000: executing mean %.0f / max %.0f, threads busy max %.0f, %d rejected; want more than 10,000 on a few threads, none refused",
			s.ExecutingMean, s.ExecutingMax, s.ThreadsBusyMax, k.Requests.Rejected)
	}
	if k.GoodputPerS < 50*syn.GoodputPerS {
		t.Errorf("/ia /t 1000: %.0f calls/s against the synchronous module's %.1f; want ≥ 50×", k.GoodputPerS, syn.GoodputPerS)
	}
	// "The only performance concern would be the memory usage": the assumed
	// 64 KB a request, for the most requests in the process (±2 %).
	figure(t, "/ia /t 1000: memory max (MB)", s.MemoryMaxMB, s.ExecutingMax*64/1024, 0.02)
}

// Seed 000/001, "WCF Request Throttling and Server Scalability" and
// "Orcas SP1 Improvement": two threads per request behind the synchronous
// module against the 3.5 SP1 asynchronous one (rows 37, 38, 42).
func TestStoryAsyncHTTPModule(t *testing.T) {
	runs := runStory(t, "async-http-module.toml", 0)
	syn, asy := storyCRun(t, runs, "sync-module"), storyCRun(t, runs, "async-module")
	s := tierOf(t, syn, "svc")
	// The posts' figures: 12 requests per CPU on 4 cores, two threads each.
	if s.ExecutingMax != 48 || s.ThreadsBusyMax != 96 || s.WorkerBusyMax != 48 || s.IOBusyMax != 48 {
		t.Errorf("sync module: executing max %.0f (want 12 × 4 = 48), threads busy max %.0f (want 96: %.0f worker + %.0f I/O)",
			s.ExecutingMax, s.ThreadsBusyMax, s.WorkerBusyMax, s.IOBusyMax)
	}
	if s.AppQueuedMax != 5000 || s.CPUUtil > 0.03 || syn.RejectRate < 0.95 {
		t.Errorf("sync module: application queue max %.0f (want 5000), CPU %.1f%%, %.1f%% rejected; want < 3%% and ≥ 95%%", s.AppQueuedMax, 100*s.CPUUtil, 100*syn.RejectRate)
	}
	if g := syn.ThroughputPerS; g < 8.5 || g > 10 {
		t.Errorf("sync module: %.2f calls/s, want ≈ 9.6 (48 / 5 s)", g)
	}
	// /ia /t 1000 and an asynchronous operation: thousands in progress on a
	// few threads ("the whole stack does not hold any thread").
	a := tierOf(t, asy, "svc")
	if a.ExecutingMean < 1800 || a.ExecutingMax < 2000 || a.ThreadsBusyMax > 10 {
		t.Errorf("async module: executing mean %.0f / max %.0f (want ≈ 2000), threads busy max %.0f (want ≤ 10)",
			a.ExecutingMean, a.ExecutingMax, a.ThreadsBusyMax)
	}
	if asy.Requests.Rejected != 0 || asy.Requests.TimedOut != 0 || asy.GoodputPerS < 390 {
		t.Errorf("async module: %.1f calls/s, %d rejected, %d timed out; want all 400/s served", asy.GoodputPerS, asy.Requests.Rejected, asy.Requests.TimedOut)
	}
	if asy.Latency.Mean > 5.3 || a.CPUUtil < 0.3 || a.CPUUtil > 0.7 {
		t.Errorf("async module: mean %.2f s (want the partner's ≈ 5 s), CPU %.0f%% (want 30–70%%)", asy.Latency.Mean, 100*a.CPUUtil)
	}
	// /ia /t 1000 with a synchronous operation: each request still holds an
	// I/O thread for its 5 s; the pool grows by injection to its 100 × 4.
	mix := storyCRun(t, runs, "async-module-sync-op")
	m := tierOf(t, mix, "svc")
	if m.IOBusyMax != 400 || m.WorkerBusyMax != 0 || m.ExecutingMax != 4000 || mix.RejectRate < 0.8 {
		t.Errorf("async module, sync operation: I/O busy max %.0f (want 400), worker busy max %.0f (want 0), executing max %.0f (want 1000 × 4), %.0f%% rejected (want ≥ 80%%)",
			m.IOBusyMax, m.WorkerBusyMax, m.ExecutingMax, 100*mix.RejectRate)
	}
	if mix.GoodputPerS < 3*syn.GoodputPerS || mix.GoodputPerS > asy.GoodputPerS/4 {
		t.Errorf("async module, sync operation: %.1f calls/s; want between sync module's ×3 (%.1f) and async's ÷4 (%.1f)",
			mix.GoodputPerS, 3*syn.GoodputPerS, asy.GoodputPerS/4)
	}
}

// Seed 000/001, "Orcas SP1 Improvement", Default Installation: the
// asynchronous module on IIS 6, "too much memory usage due to huge amount
// of pending requests" (row 36).
func TestStoryAsyncHTTPModuleMemory(t *testing.T) {
	runs := runStory(t, "async-http-module-memory.toml", 0)
	iis7, iis6 := storyCRun(t, runs, "iis7"), storyCRun(t, runs, "iis6")
	const kb = 64.0 / 1024 // MB per request
	// IIS 7: 48 admitted + 5000 queued, the rest refused; memory levels off.
	s7 := tierOf(t, iis7, "svc")
	if s7.ExecutingMax != 48 || s7.QueuedMax != 5000 || iis7.Requests.Rejected == 0 {
		t.Errorf("iis7: executing max %.0f, queued max %.0f, %d rejected; want 48, 5000 and some", s7.ExecutingMax, s7.QueuedMax, iis7.Requests.Rejected)
	}
	if want := 5048 * kb; math.Abs(s7.MemoryMaxMB-want) > 2 {
		t.Errorf("iis7: memory max %.1f MB, want ≈ %.0f MB (5048 requests × 64 KB)", s7.MemoryMaxMB, want)
	}
	if m4, m9 := storyBTier(t, iis7, 0, 400).MemoryMB, storyBTier(t, iis7, 0, 590).MemoryMB; math.Abs(m9-m4) > 1 {
		t.Errorf("iis7: memory %.0f MB at 400 s, %.0f MB at 590 s; want level", m4, m9)
	}
	// IIS 6: nothing refused, memory grows at ~17 requests/s × 64 KB.
	s6 := tierOf(t, iis6, "svc")
	if iis6.Requests.Rejected != 0 || s6.ExecutingMax < 10000 {
		t.Errorf("iis6: %d rejected, %.0f requests in the process at most; want none and > 10000", iis6.Requests.Rejected, s6.ExecutingMax)
	}
	m2, m6 := storyBTier(t, iis6, 0, 200).MemoryMB, storyBTier(t, iis6, 0, 600).MemoryMB
	if rate := (m6 - m2) / 400; rate < 0.9 || rate > 1.2 {
		t.Errorf("iis6: memory %.0f MB at 200 s, %.0f MB at 600 s: %.2f MB/s; want ≈ 1.05 ((20 − 3.2)/s × 64 KB)", m2, m6, rate)
	}
	if s6.MemoryMaxMB < 2*s7.MemoryMaxMB {
		t.Errorf("iis6: memory max %.0f MB against iis7's %.0f; want ≥ 2× after 10 min", s6.MemoryMaxMB, s7.MemoryMaxMB)
	}
	// Both drain the WCF throttle at the same rate: 16 calls / 5 s.
	for _, v := range []string{"iis7", "iis6"} {
		if g := runs[v].ThroughputPerS; g < 2.9 || g > 3.5 {
			t.Errorf("%s: %.2f calls/s, want ≈ 3.2 (16 calls / 5 s)", v, g)
		}
	}
}

// Seed 000/001, "WCF Request Throttling and Server Scalability": the
// synchronous module is harmless when CPU-bound; maxWorkerThreads; and
// minWorkerThreads (rows 39–41).
func TestStorySyncModuleCPUBound(t *testing.T) {
	runs := runStory(t, "sync-module-cpu-bound.toml", 0)
	storyCClean(t, runs)
	cpuB, asyncB := storyCRun(t, runs, "cpu-bound"), storyCRun(t, runs, "cpu-bound-async-module")
	s := tierOf(t, cpuB, "svc")
	if s.ExecutingMax != 48 || s.ThreadsBusyMax != 96 || s.CPUUtil < 0.99 {
		t.Errorf("cpu-bound: executing max %.0f (want 12 × 4), threads busy max %.0f (want two each), CPU %.0f%% (want 100)", s.ExecutingMax, s.ThreadsBusyMax, 100*s.CPUUtil)
	}
	// "quite low impact as long as the server is busy processing requests"
	if !storyCWithin(cpuB.GoodputPerS, asyncB.GoodputPerS, 0.01) {
		t.Errorf("cpu-bound: %.1f calls/s with the synchronous module, %.1f with the asynchronous one; want the same", cpuB.GoodputPerS, asyncB.GoodputPerS)
	}
	// "the default limit of concurrent requests may not be enough"
	io, raised := storyCRun(t, runs, "io-bound"), storyCRun(t, runs, "io-bound-maxWorkerThreads-200")
	if c := tierOf(t, io, "svc"); c.CPUUtil > 0.7 || c.QueuedMean < 100 || c.ExecutingMax != 48 {
		t.Errorf("io-bound: CPU %.0f%%, %.0f queued, executing max %.0f; want the CPU idle while 48 execute and many queue", 100*c.CPUUtil, c.QueuedMean, c.ExecutingMax)
	}
	// "you need to increase maxWorkerThreads"
	if c := tierOf(t, raised, "svc"); c.CPUUtil < 0.97 || raised.GoodputPerS < 1.5*io.GoodputPerS {
		t.Errorf("maxWorkerThreads 200: CPU %.0f%%, %.0f calls/s against %.0f; want the CPU full and ≥ 1.5×", 100*c.CPUUtil, raised.GoodputPerS, io.GoodputPerS)
	}
	for _, v := range []string{"cpu-bound-minWorkerThreads-3", "cpu-bound-minWorker-and-IoThreads-3"} {
		if r := storyCRun(t, runs, v); !storyCWithin(r.GoodputPerS, cpuB.GoodputPerS, 0.01) {
			t.Errorf("%s: %.1f calls/s against %.1f; tsim sees no difference", v, r.GoodputPerS, cpuB.GoodputPerS)
		}
	}
	notYet(t, "minWorkerThreads 2 or 3 for best throughput", "a cost that idle threads save once the CPU is full (context switches, thread creation under load)")
}
