package experiments

// The stories of issue 12, "The stories, faithful to their sources": each
// test asserts the figures its document reports, within the document's own
// precision, and lists as skipped subtests the figures tsim cannot reproduce
// yet, with the mechanism each needs (docs/stories.md has every row).

import (
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// Seed 002, Primrose: wsHttp saturates the server's CPU under a load test,
// basicHttp answers in 28 ms.
func TestStoryWsHttpLoadTest(t *testing.T) {
	runs := runStory(t, "wshttp-load-test.toml", 0)
	basic := storyCRun(t, runs, "basicHttp")
	cpu := func(r *results.Run, from, to float64) float64 {
		return storyCMean(t, r, "svc", from, to, func(s results.TierSample) float64 { return s.CPU })
	}
	for _, v := range []string{"wsHttp-default-throttles", "wsHttp-raised-throttles"} {
		ws := storyCRun(t, runs, v)
		// "After 90 seconds into a load test, the resources on the server got
		// saturated": fine before, the CPU pinned after.
		if m := meanLatency(ws, 0, 90); m > 1 {
			t.Errorf("%s: %.2f s a test in the first 90 s, want under 1 s", v, m)
		}
		if c := cpu(ws, 100, 900); c < 95 {
			t.Errorf("%s: CPU %.0f%% after 90 s, want saturated", v, c)
		}
		// "The test time starts to bounce around the 8 second mark": at the
		// last step, 50 users.
		figure(t, v+": test time at 50 users (s)", meanLatency(ws, 830, 900), 8, 0.15)
		// "just a few thousand" requests
		if n := ws.Requests.Completed; n < 2000 || n > 9999 {
			t.Errorf("%s: %d tests completed, want a few thousand", v, n)
		}
		if ws.Requests.TimedOut != 0 {
			t.Errorf("%s: %d timeouts; tsim's SendTimeout of 1 min is far", v, ws.Requests.TimedOut)
		}
	}
	notYet(t, "default throttles: timeouts, security negotiation failures, executions halt, CPU back to normal",
		"server sessions that outlive an aborted client until their inactivity timeout, and security negotiation with its own timeout and failure")
	// "a consistent 28 milliseconds"; "processing over 28,000 requests"; "no
	// longer peaking out, but is still working hard".
	figure(t, "basicHttp: mean test time (s)", basic.Latency.Mean, 0.028, 0.1)
	if m1, m2 := meanLatency(basic, 100, 450), meanLatency(basic, 450, 900); m1 > 0.035 || m2 > 0.035 {
		t.Errorf("basicHttp: %.1f ms then %.1f ms a test; want a consistent ~28 ms", 1000*m1, 1000*m2)
	}
	if n := basic.Requests.Completed; n < 28000 {
		t.Errorf("basicHttp: %d tests, want over 28,000", n)
	}
	if c := cpu(basic, 820, 900); c < 40 || c > 80 {
		t.Errorf("basicHttp: CPU %.0f%% at 50 users, want working hard but not peaking (40–80%%)", c)
	}
}
