package experiments

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// A singleton with ConcurrencyMode Single; the instancing orders (seed
// 000, "Service Instances and Concurrent Execution"; docs/stories.md rows
// 54–57). 10 s measured after the file's 10 s warm-up.
func TestStoryInstancingConcurrency(t *testing.T) {
	runs := runStory(t, "instancing-concurrency.toml", 20*time.Second)
	ss, sm, pc := runs["single-single"], runs["single-multiple"], runs["percall"]
	s := tierOf(t, ss, "service")
	// Row 54: "the CPU utilization was only around 60%" (±5 points), "only
	// one thread actively processing the requests and other requests were
	// in the queue".
	if u := 100 * s.CPUUtil; u < 55 || u > 65 {
		t.Errorf("single-single: CPU %.1f%%, the post's \"around 60%%\" (±5 points)", u)
	}
	if s.ExecutingMax != 1 || s.IOBusyMean > 1.5 || s.QueuedMean < 20 {
		t.Errorf("single-single: executing max %.0f (want 1), I/O threads busy %.2f on average (want ≈ 1: the lock's holder, and a decoding one now and then), %.1f queued (want ≈ 23)",
			s.ExecutingMax, s.IOBusyMean, s.QueuedMean)
	}
	// Row 55: ConcurrencyMode Multiple (and PerCall) for "high throughput":
	// both cores busy.
	for name, r := range map[string]*results.Run{"single-multiple": sm, "percall": pc} {
		m := tierOf(t, r, "service")
		if m.CPUUtil < 0.97 {
			t.Errorf("%s: CPU %.1f%%; want saturated", name, 100*m.CPUUtil)
		}
		// 0.965 ms of CPU a call on two cores against 0.805 ms a call under
		// the lock: 1.67× (PerCall: 1.005 ms, 1.60×).
		if x := r.GoodputPerS / ss.GoodputPerS; x < 1.5 || x > 1.8 {
			t.Errorf("%s: %.0f calls/s against %.0f; want ≈ 1.6–1.7×", name, r.GoodputPerS, ss.GoodputPerS)
		}
	}
	// Rows 56–57: one client, "slightly different throughput": the orders,
	// each step more than the noise (0.5 %), all within 10 %.
	x := func(k string) float64 { return runs["one-client-"+k].GoodputPerS }
	order := func(what string, fast, slow string) {
		t.Helper()
		if f, s := x(fast), x(slow); f < 1.005*s || f > 1.1*s {
			t.Errorf("%s: %s %.0f/s against %s %.0f/s; want %s faster, slightly (0.5–10 %%)", what, fast, f, slow, s, fast)
		}
	}
	order("sessionful", "netTcp-PerSession", "netTcp-Single")
	order("sessionful", "netTcp-Single", "netTcp-PerCall")
	order("sessionless", "basicHttp-Single", "basicHttp-PerCall")
	if a, b := x("basicHttp-PerCall"), x("basicHttp-PerSession"); a != b {
		t.Errorf("sessionless: PerCall %.1f/s, PerSession %.1f/s; want equal (\"PerSession\" is treated as \"PerCall\")", a, b)
	}
	for _, k := range []string{"netTcp-PerSession", "netTcp-Single", "netTcp-PerCall", "basicHttp-Single", "basicHttp-PerCall", "basicHttp-PerSession"} {
		if r := runs["one-client-"+k]; r.Breakdown.LockWait > 0 || r.Breakdown.ThrottleWait > 0 {
			t.Errorf("one client, %s: waited at a lock or a throttle (%+v); want none", k, r.Breakdown)
		}
	}
}
