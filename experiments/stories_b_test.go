package experiments

// Stories 2–6 of the issue "The stories tsim exists to tell": each test runs
// its experiment file at the file's seed and checks the outcome its header
// predicts, in direction and in size.

import (
	"math"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// storyBTier returns tier i's counters at the sample taken at t seconds.
func storyBTier(t *testing.T, r *results.Run, i int, at float64) results.TierSample {
	t.Helper()
	for _, s := range r.Series {
		if math.Abs(s.T-at) < 1e-9 {
			return s.Tiers[i]
		}
	}
	t.Fatalf("no sample at %g s", at)
	return results.TierSample{}
}

// storyBTimeouts counts timed-out requests whose latency is within tol of want.
func storyBTimeouts(r *results.Run, want, tol float64) (n, at int) {
	for _, p := range r.Points {
		if p.Outcome == results.TimedOut {
			n++
			if math.Abs(p.Latency-want) <= tol {
				at++
			}
		}
	}
	return n, at
}

// 2. A .NET load client keeps System.Net's 2 connections per host: the
// service never sees more than 2 calls, whatever the number of clients
// (seed 000, "Why Only Two Concurrent Requests for WCF Load Testing?").
func TestStoryOnlyTwoRequests(t *testing.T) {
	runs := runStory(t, "only-two-requests.toml", 0)
	for _, n := range []float64{50, 100, 200} {
		users := map[float64]string{50: "50", 100: "100", 200: "200"}[n]
		def := runs["client-default load.users="+users]
		fix := runs["maxconnection-200 load.users="+users]
		loop := runs["same-machine load.users="+users]
		if def == nil || fix == nil || loop == nil {
			t.Fatalf("missing scenarios for %s users: %v", users, runs)
		}
		// The post's figure: "only two concurrent threads ... no matter how
		// many requests" — 2 WCF calls, on 2 I/O threads (each also holds its
		// ASP.NET worker thread: the synchronous module).
		if c := def.Calls[0]; c.Limit != 2 || c.InUseMax != 2 {
			t.Errorf("%s users, default: connection limit %d, max in use %.0f; want 2 and 2", users, c.Limit, c.InUseMax)
		}
		svc := tierOf(t, def, "service")
		if svc.OutstandingMax != 2 || svc.IOBusyMax != 2 || svc.CurrentMax != 2 || svc.CPUUtil > 0.04 {
			t.Errorf("%s users, default: calls outstanding max %.0f, I/O threads busy max %.0f, requests at the service max %.0f, CPU %.1f%%; want 2, 2, 2, < 4%%",
				users, svc.OutstandingMax, svc.IOBusyMax, svc.CurrentMax, 100*svc.CPUUtil)
		}
		if g := def.GoodputPerS; g < 7 || g > 9 {
			t.Errorf("%s users, default: %.2f calls/s, want 7–9 (2 connections / 0.26 s)", users, g)
		}
		if want := n / def.GoodputPerS; math.Abs(def.Latency.Mean-want) > 0.1*want {
			t.Errorf("%s users, default: mean latency %.2f s, want ≈ %.2f s (clients / throughput)", users, def.Latency.Mean, want)
		}
		if def.Calls[0].WaitMean < 0.9*def.Latency.Mean {
			t.Errorf("%s users, default: connection wait %.2f s of %.2f s; want almost all of it", users, def.Calls[0].WaitMean, def.Latency.Mean)
		}
		// The fix and the loopback run reach the service's own limits: 32
		// calls (maxConcurrentCalls) inside the 48 requests ASP.NET executes
		// (12 × 4 CPUs, the post's "12 * [Number of CPU]").
		for name, r := range map[string]*results.Run{"maxconnection-200": fix, "same-machine": loop} {
			s := tierOf(t, r, "service")
			if s.OutstandingMax != 32 || s.ExecutingMax != math.Min(n, 48) || s.CurrentMax != n {
				t.Errorf("%s users, %s: calls outstanding max %.0f (want 32), executing max %.0f (want %v), at the service %.0f (want %s)",
					users, name, s.OutstandingMax, s.ExecutingMax, math.Min(n, 48), s.CurrentMax, users)
			}
			if r.Breakdown.ThrottleWait < 0.05 {
				t.Errorf("%s users, %s: throttle wait %.3f s per call, want calls queued at the throttle", users, name, r.Breakdown.ThrottleWait)
			}
			if r.GoodputPerS < 14*def.GoodputPerS {
				t.Errorf("%s users, %s: %.1f calls/s, want ≥ 14× the default's %.1f", users, name, r.GoodputPerS, def.GoodputPerS)
			}
			if r.Latency.Mean > 0.1*def.Latency.Mean || r.Latency.Mean > n/100 {
				t.Errorf("%s users, %s: mean latency %.2f s (default %.2f s)", users, name, r.Latency.Mean, def.Latency.Mean)
			}
		}
		if c := fix.Calls[0]; c.Limit != 200 {
			t.Errorf("maxconnection-200: limit %d", c.Limit)
		}
		if c := loop.Calls[0]; c.Limit != 0 {
			t.Errorf("same-machine: limit %d, want unlimited (loopback exemption)", c.Limit)
		}
	}
	// More clients change nothing for the default client but the latency.
	a, b := runs["client-default load.users=50"], runs["client-default load.users=200"]
	if math.Abs(a.GoodputPerS-b.GoodputPerS) > 0.05*a.GoodputPerS || b.Latency.Mean < 3.5*a.Latency.Mean {
		t.Errorf("default: 50 → 200 clients: %.2f → %.2f calls/s, %.2f → %.2f s; want the same throughput and 4× the latency",
			a.GoodputPerS, b.GoodputPerS, a.Latency.Mean, b.Latency.Mean)
	}
}

func TestStoryOnlyTwoRequestsTimeline(t *testing.T) {
	runs := runStory(t, "only-two-requests-timeline.toml", 0)
	def, fix := runs["client-default"], runs["maxconnection-200"]
	if s := tierOf(t, def, "service"); s.OutstandingMax > 2 || s.CurrentMax > 2 {
		t.Errorf("default: service calls max %.0f, requests max %.0f; want ≤ 2 at 50, 100 and 200 clients", s.OutstandingMax, s.CurrentMax)
	}
	// Latency follows the number of clients: ~6 s, ~12 s, ~25 s.
	for _, c := range []struct{ from, to, lo, hi float64 }{{20, 60, 4.5, 8}, {90, 120, 10, 15}, {150, 180, 21, 29}} {
		if m := meanLatency(def, c.from, c.to); m < c.lo || m > c.hi {
			t.Errorf("default: mean latency in [%g, %g) s = %.1f s, want %g–%g s", c.from, c.to, m, c.lo, c.hi)
		}
	}
	// With the fix, WCF's calls grow to the throttle's 32 as the CLR adds
	// I/O threads at ~2 per second above its minimum of 4, and stay there.
	if b := storyBTier(t, fix, 0, 8).Outstanding; b >= 32 {
		t.Errorf("fixed: %v calls at 8 s; the CLR should still be adding threads", b)
	}
	if b := storyBTier(t, fix, 0, 20).Outstanding; b != 32 {
		t.Errorf("fixed: %v calls at 20 s, want 32", b)
	}
	if s := storyBTier(t, fix, 0, 170); s.Outstanding != 32 || s.Executing != 48 || s.Current != 200 {
		t.Errorf("fixed at 170 s: calls %v (want 32), executing %v (want 48), at the service %v (want 200)", s.Outstanding, s.Executing, s.Current)
	}
}

// 3. A sessionful service under the .NET 3.5 and .NET 4 default throttles.
func TestStoryWCF4Defaults(t *testing.T) {
	runs := runStory(t, "wcf4-defaults.toml", 0)
	old, neu := runs["wcf35"], runs["wcf4"]
	// The post's figures: 16 / 10 / 26 in 3.0/3.5; 16 × N, 100 × N and their
	// sum in WCF 4 ("on a 4-proc server ... 16 * 4 = 64").
	for v, want := range map[string][3]int{"wcf35": {16, 10, 26}, "wcf4": {64, 400, 464}} {
		w := storyTopology(t, "wcf4-defaults.toml", v).Tiers[0].WCF
		if got := [3]int{w.MaxCalls, w.MaxSessions, w.MaxInstances}; got != want {
			t.Errorf("%s: throttles (calls, sessions, instances) %v, the post %v", v, got, want)
		}
	}
	// .NET 3.5: 10 sessions; the netTcp listener holds 10 pending
	// connections and 10 in its backlog (dotnet.md §5), which wait their whole
	// SendTimeout; the other clients are refused at once.
	n, at60 := storyBTimeouts(old, 60, 0.001)
	if n < 20 || at60 != n {
		t.Errorf("wcf35: %d timeouts, %d of them at 60 s; want ≥ 20, all at the 1-min SendTimeout", n, at60)
	}
	if old.FirstTimeout < 60 || old.FirstTimeout > 90 {
		t.Errorf("wcf35: first timeout at %.0f s, want 60–90 s (the 11th client joins at ~13 s)", old.FirstTimeout)
	}
	if old.RejectRate < 0.5 {
		t.Errorf("wcf35: %.1f%% refused, want ≥ 50%% (clients beyond the listener's 20 waiting retry)", 100*old.RejectRate)
	}
	if q := tierOf(t, old, "service").ListenerWaitingMax; q != 20 {
		t.Errorf("wcf35: %.0f connections waiting at most, want 20 (maxConnections 10 + listenBacklog 10)", q)
	}
	// Ten clients served at think + service time ≈ 2.11 s: ~4.7 calls/s.
	if g := old.GoodputPerS; g < 4 || g > 5.5 {
		t.Errorf("wcf35: %.2f calls/s, want 4–5.5 (ten clients)", g)
	}
	if old.Latency.Mean > 0.2 {
		t.Errorf("wcf35: completed calls take %.2f s, want < 0.2 s (the ten served clients are fine)", old.Latency.Mean)
	}
	svc := tierOf(t, old, "service")
	if svc.ThreadsBusyMax > 10 || svc.CPUUtil > 0.03 {
		t.Errorf("wcf35: threads busy max %.0f, CPU %.1f%%; want ≤ 10 (sessions) and < 3%%", svc.ThreadsBusyMax, 100*svc.CPUUtil)
	}
	// .NET 4: 400 sessions on 4 cores; nobody waits.
	if neu.Requests.TimedOut != 0 || neu.Breakdown.ThrottleWait > 0.001 {
		t.Errorf("wcf4: %d timeouts, throttle wait %.3f s; want none", neu.Requests.TimedOut, neu.Breakdown.ThrottleWait)
	}
	if neu.GoodputPerS < 7*old.GoodputPerS {
		t.Errorf("wcf4: %.1f calls/s against %.1f; want ≥ 7×", neu.GoodputPerS, old.GoodputPerS)
	}
	if s := tierOf(t, neu, "service"); s.ExecutingMax > 30 {
		t.Errorf("wcf4: %.0f calls at the service at most, want a handful", s.ExecutingMax)
	}
}

// 4. Synchronous against asynchronous: thread-pool starvation after a step.
func TestStorySyncVsAsyncService(t *testing.T) {
	runs := runStory(t, "sync-vs-async-service.toml", 0)
	syn, asy := runs["sync"], runs["async"]
	// Fine before the step, a hump of ~30 s after it, back to normal later.
	if m := meanLatency(syn, 20, 60); m > 1.3 {
		t.Errorf("sync: %.2f s before the step, want ≈ 1 s", m)
	}
	m1, m2, m3 := meanLatency(syn, 70, 80), meanLatency(syn, 90, 100), meanLatency(syn, 120, 140)
	if !(m1 < m2 && m2 < m3) || m3 < 25 {
		t.Errorf("sync: mean latency %.1f, %.1f, %.1f s at 70–80, 90–100, 120–140 s; want rising to > 25 s", m1, m2, m3)
	}
	if m := meanLatency(syn, 220, 300); m > 1.3 {
		t.Errorf("sync: %.2f s after the backlog drained, want ≈ 1 s", m)
	}
	// The pool grows at the CLR's ~2 threads a second.
	mid := 0
	t80, t120 := storyBTier(t, syn, mid, 80).Threads, storyBTier(t, syn, mid, 120).Threads
	if rate := (t120 - t80) / 40; rate < 1.8 || rate > 2.2 {
		t.Errorf("sync: threads %v at 80 s, %v at 120 s: %.2f per second, want ≈ 2", t80, t120, rate)
	}
	ms := tierOf(t, syn, "middle")
	if ms.ThreadsMax < 250 || ms.CPUUtil > 0.4 {
		t.Errorf("sync: threads max %.0f (want ≥ 250), CPU %.0f%% (want < 40%%)", ms.ThreadsMax, 100*ms.CPUUtil)
	}
	// Async: a handful of threads, the back end's second throughout.
	ma := tierOf(t, asy, "middle")
	if ma.ThreadsMax > 8 || ma.ThreadsBusyMax > 8 {
		t.Errorf("async: threads max %.0f, busy max %.0f; want ≤ 8", ma.ThreadsMax, ma.ThreadsBusyMax)
	}
	if asy.Latency.Mean > 1.1 || asy.Latency.P99 > 2 || meanLatency(asy, 120, 140) > 1.1 {
		t.Errorf("async: mean %.2f s, p99 %.2f s; want ≈ 1 s flat", asy.Latency.Mean, asy.Latency.P99)
	}
	if syn.Latency.Mean < 8*asy.Latency.Mean {
		t.Errorf("sync mean %.1f s against async %.2f s; want ≥ 8×", syn.Latency.Mean, asy.Latency.Mean)
	}
	// Both serve the same calls; only the waiting differs.
	if syn.Requests.TimedOut+syn.Requests.Rejected+asy.Requests.TimedOut+asy.Requests.Rejected != 0 ||
		math.Abs(syn.GoodputPerS-asy.GoodputPerS) > 0.01*asy.GoodputPerS {
		t.Errorf("sync %.1f/s, async %.1f/s; want the same, no failures", syn.GoodputPerS, asy.GoodputPerS)
	}
}
