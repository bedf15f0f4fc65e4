package experiments

import (
	"reflect"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/simmode"
)

// runVariant runs one variant of an experiment file once at the file's
// seed, with the sweep's key (or any other) set as params, so that a test
// of a few variants does not run the whole file; without the time series,
// which these tests do not read.
func runVariant(t *testing.T, file, variant string, params ...format.Param) *results.Run {
	t.Helper()
	x := loadStory(t, file)
	sc, err := x.ScenarioWith(variant, params, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := simmode.Run(&sc.Topology, model.Options{Seed: x.Seed, NoSeries: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The crack-throttling story tuned to the post's own figures
// (crack-throttling-as-reported.toml; docs/stories.md, seed 000, rows 1–21).
// Each figure is asserted as the header's verdict has it: within the
// post's own precision (a number ±5 %, a count of zero ±0.5, a maximum of
// one run ±20 %, a range its own ends) where fitted or reproduced, outside
// it on the side the header gives where contradicted; the rows tsim cannot
// reproduce are also skipped subtests saying why.
func TestCrackThrottlingAsReported(t *testing.T) {
	const file = "crack-throttling-as-reported.toml"
	bad, two, good, heavy := runVariant(t, file, "misconfigured"), runVariant(t, file, "misconfigured-limit-2"), runVariant(t, file, "fixed"), runVariant(t, file, "fixed-heavier-load")
	web, svc := tierOf(t, bad, "web"), tierOf(t, bad, "service")
	t.Logf("misconfigured: first 90 s %.1f%% sub-second (slowest %.2f s); after: mean %.2f s, max %.2f s; web exec %.1f pipes %.1f queued %.2f; svc exec %.1f pipes %.1f queued %.2f; CPU %.1f%% %.1f%%; %.1f/s",
		100*latencyShare(bad, 0, 90, 1), maxLatency(bad, 0, 90), meanLatency(bad, 120, 600), maxLatency(bad, 100, 600),
		web.ExecutingMean, web.PipelinesMean, web.QueuedMean, svc.ExecutingMean, svc.PipelinesMean, svc.QueuedMean, 100*web.CPUUtil, 100*svc.CPUUtil, bad.GoodputPerS)

	// Row 7: "worked just fine in the first 92 seconds. All requests
	// completed in sub-seconds".
	if s, mx := latencyShare(bad, 0, 90, 1), maxLatency(bad, 0, 90); s < 1 || mx >= 1 {
		t.Errorf("row 7: %.1f%% of the first 90 s under 1 s, the slowest %.2f s; the post: all sub-second", 100*s, mx)
	}
	// Row 8: "longer latencies from 4 up to 12 seconds": tsim's pages take
	// seconds after the step, but with ≤ 100 clients through 10 connections
	// of ~0.36 s calls they cannot wait 4–12 s (docs/stories.md, row 8).
	// The header's contradiction: the mean below the post's 4 s.
	if m, mx := meanLatency(bad, 120, 600), maxLatency(bad, 100, 600); m < 1.5 || m >= 4 || mx < 3 || mx > 12 {
		t.Errorf("row 8 (contradicted): mean %.1f s, max %.1f s after the step; want seconds, the mean below the post's 4 s", m, mx)
	}
	t.Run("row 8: latencies of 4 up to 12 s", func(t *testing.T) {
		t.Skip("not reproducible with the post's inputs: 100 clients × 0.36 s / 10 connections ≈ 3.6 s at most; 12 s needs ~1.2 s a call, which the sub-second fine phase rules out (C1)")
	})
	// Row 9: TimeoutException "for some requests", within "about an hour".
	if bad.Requests.TimedOut != 0 {
		t.Errorf("row 9: %d timeouts at a limit of 10; tsim's pages should stay far below 20 s", bad.Requests.TimedOut)
	}
	t.Run("row 9: TimeoutException at the limit the post implies", func(t *testing.T) {
		t.Skip("not reproducible: at 10 connections pages take ~3 s; at System.Net's plain 2, ~15 s, the slowest just under the 20 s SendTimeout (C3)")
	})
	// Rows 10–11: CPU "low" on both; "Requests Queued" 0 on both.
	if web.CPUUtil > 0.15 || svc.CPUUtil > 0.15 {
		t.Errorf("row 10: CPU web %.1f%%, service %.1f%%; the post: low", 100*web.CPUUtil, 100*svc.CPUUtil)
	}
	// A count of zero read from a counter: ±0.5. The back end's holds;
	// the front end's ~0.6 misses it (the header says so), under 1.
	if web.QueuedMean <= 0.5 || web.QueuedMean > 1 || svc.QueuedMean > 0.5 {
		t.Errorf("row 11: Requests Queued web %.2f (the header: ~0.6, missed), service %.2f (within 0.5); the post read 0 on both", web.QueuedMean, svc.QueuedMean)
	}
	// Row 12: FE "91 and 69 in average": the 69 fitted (the think time),
	// ±5 %; the 91 predicted and missed, below 91 − 5 %.
	figure(t, "row 12: FE Requests Executing, mean", web.ExecutingMean, 69, 0.05)
	if p := web.PipelinesMean; p >= 0.95*91 || p < web.ExecutingMean {
		t.Errorf("row 12: FE Pipeline Instance Count %.1f; the header says ~86, missed: below 91 − 5 %% and above the %.1f executing", p, web.ExecutingMean)
	}
	// Rows 13, 13a: BE "11 and 7 in average": both missed, the pipelines
	// and the executing requests held at the 10 connections.
	if p := svc.PipelinesMean; p > 10.1 || p >= 11-0.55 {
		t.Errorf("row 13a: BE Pipeline Instance Count %.1f; the header says 10 (the connections), missed: below 11 ± 0.55", p)
	}
	if svc.ExecutingMax > 10 || svc.ExecutingMean < 9.5 {
		t.Errorf("row 13: BE Requests Executing mean %.1f / max %.0f; want the 10 connections' 10", svc.ExecutingMean, svc.ExecutingMax)
	}
	t.Run("row 13: BE Requests Executing 7 on average", func(t *testing.T) {
		t.Skip("not reproducible with the limit the post implies: 10 saturated connections keep 10 calls at the back end; 7 with 11 pipelines fits no default (C3)")
	})
	// The plain default of 2: 2 at the back end, pages at the edge of the
	// SendTimeout.
	// SendTimeout, and none reached in 10 min (the sweep's point at 2,
	// docs/stories.md C3).
	if c, e := two.Calls[1], tierOf(t, two, "service"); c.Limit != 2 || e.ExecutingMax > 2 || two.Latency.Mean < 10 || two.Requests.TimedOut != 0 {
		t.Errorf("limit 2: limit %d, BE max %.0f, mean latency %.1f s, %d timeouts; want 2, 2, over 10 s and none", c.Limit, e.ExecutingMax, two.Latency.Mean, two.Requests.TimedOut)
	}

	// The fix with the same load: no timeouts, sub-second, higher CPU.
	gs := tierOf(t, good, "service")
	if good.Requests.TimedOut != 0 || good.Latency.Mean > 1 || gs.CPUUtil < 2.5*svc.CPUUtil {
		t.Errorf("fixed: %d timeouts, mean %.2f s, BE CPU %.1f%% (misconfigured %.1f%%)", good.Requests.TimedOut, good.Latency.Mean, 100*gs.CPUUtil, 100*svc.CPUUtil)
	}

	// Rows 15–21: the post's rerun.
	hw, hs := tierOf(t, heavy, "web"), tierOf(t, heavy, "service")
	t.Logf("rerun: web exec max %.0f, svc exec mean %.1f, svc Calls Duration max %.2f s, web Request Execution Time max %.2f s, CPU %.1f%% %.1f%%, %.1f/s, %d timeouts",
		hw.ExecutingMax, hs.ExecutingMean, hs.CallDurationMax, hw.ExecTimeMax, 100*hw.CPUUtil, 100*hs.CPUUtil, heavy.GoodputPerS, heavy.Requests.TimedOut)
	figure(t, "row 15: rerun FE Requests Executing, max", hw.ExecutingMax, 457, 0.05)
	// Row 16: the rerun's 42, predicted and missed: above 42 + 5 % (the
	// header: 47).
	if m := hs.ExecutingMean; m <= 1.05*42 || m > 52 {
		t.Errorf("row 16: rerun BE Requests Executing %.1f; the header says 47, missed: above 42 + 5 %%", m)
	}
	figure(t, "row 17: rerun BE Calls Duration, max (s)", hs.CallDurationMax, 5.05, 0.20)
	figure(t, "row 18: rerun FE Request Execution Time, max (s)", hw.ExecTimeMax, 11, 0.20)
	// Row 19: "much higher CPU usage on both frontend and backend".
	if hw.CPUUtil < 2.5*web.CPUUtil || hs.CPUUtil < 2.5*svc.CPUUtil {
		t.Errorf("row 19: rerun CPU web %.1f%%, service %.1f%% against %.1f%%, %.1f%%; want much higher", 100*hw.CPUUtil, 100*hs.CPUUtil, 100*web.CPUUtil, 100*svc.CPUUtil)
	}
	// Row 20: "higher throughput"; row 21: no TimeoutException.
	if heavy.GoodputPerS < 2*bad.GoodputPerS || heavy.Requests.TimedOut != 0 {
		t.Errorf("rows 20–21: rerun %.1f/s against %.1f/s, %d timeouts; want higher and none", heavy.GoodputPerS, bad.GoodputPerS, heavy.Requests.TimedOut)
	}
}

// "Why Only Two Concurrent Requests for WCF Load Testing?" (seed 000; rows
// 27–30a): the post's own fix, maxconnection 16 in config or in code, lets
// the load client "generate more concurrent requests": 16 at the service,
// under its throttle of 32 and ASP.NET's 12 × 4 CPUs.
func TestStoryOnlyTwoRequestsPostFix(t *testing.T) {
	const file = "only-two-requests.toml"
	for _, users := range []string{"50", "100", "200"} {
		n := format.Param{Key: "load.users", Value: users}
		def := runVariant(t, file, "client-default", n)
		for _, v := range []string{"maxconnection-16", "code-16"} {
			r := runVariant(t, file, v, n)
			s := tierOf(t, r, "service")
			if c := r.Calls[0]; c.Limit != 16 || c.InUseMax != 16 || s.OutstandingMax != 16 || s.CurrentMax != 16 {
				t.Errorf("%s, %s users: limit %d, connections in use max %.0f, calls outstanding max %.0f, requests at the service max %.0f; want 16 each",
					v, users, c.Limit, c.InUseMax, s.OutstandingMax, s.CurrentMax)
			}
			// 16 connections of ~0.26 s calls: 8× the default's 2.
			figure(t, v+" at "+users+" users: calls/s against the default's", r.GoodputPerS/def.GoodputPerS, 8, 0.05)
		}
	}
}

// "WCF 4: Higher Default Throttling Settings" (seed 000; row 24a): the same
// defaults "from low-end one-proc server to high-end such as 24-way server
// without having to change the settings".
func TestStoryWCF4DefaultsAnyServer(t *testing.T) {
	four := runVariant(t, "wcf4-defaults.toml", "wcf4")
	for v, want := range map[string][3]int{"wcf4-1-cpu": {16, 100, 116}, "wcf4-24-cpu": {384, 2400, 2784}} {
		w := storyTopology(t, "wcf4-defaults.toml", v).Tiers[0].WCF
		if got := [3]int{w.MaxCalls, w.MaxSessions, w.MaxInstances}; got != want {
			t.Errorf("%s: throttles (calls, sessions, instances) %v, want 16, 100 and 116 × N = %v", v, got, want)
		}
		r := runVariant(t, "wcf4-defaults.toml", v)
		if r.Requests.TimedOut != 0 || r.Breakdown.ThrottleWait > 0.001 {
			t.Errorf("%s: %d timeouts, throttle wait %.3f s; the 100 clients should all be served", v, r.Requests.TimedOut, r.Breakdown.ThrottleWait)
		}
		figure(t, v+": calls/s against 4 CPUs'", r.GoodputPerS/four.GoodputPerS, 1, 0.05)
	}
}

// how-many-front-ends.toml: its answer (4 front ends) rests on tsim's
// resolution of the ignored entry to 2 connections; at ASP.NET's own
// default of 10 (dotnet.md §1) the 2 front ends meet the goal as fixed ones do.
func TestHowManyFrontEndsAtTen(t *testing.T) {
	const file = "how-many-front-ends.toml"
	ten, fix := runVariant(t, file, "as-deployed-aspnet-10"), runVariant(t, file, "maxconnection-fixed")
	if c := ten.Calls[1]; c.Limit != 20 || ten.Latency.P99 > 2 || ten.TimeoutRate > 0 {
		t.Errorf("as-deployed-aspnet-10: web→service limit %d (want 2 × 10), p99 %.2f s, timeouts %.1f%%; want the goal met", c.Limit, ten.Latency.P99, 100*ten.TimeoutRate)
	}
	figure(t, "as-deployed-aspnet-10: goodput against fixed", ten.GoodputPerS/fix.GoodputPerS, 1, 0.02)
}

// "How to use performance counters to diagnose performance of WCF
// applications" (seed 000; row 52a): Request Execution Time is the inverse
// of Requests/sec only when requests run one at a time; "In general when
// the requests are processed concurrently, this is not true" — it is the
// requests executing divided by the rate (Little's law).
func TestStoryCountersConcurrent(t *testing.T) {
	r := runVariant(t, "only-two-requests.toml", "maxconnection-200", format.Param{Key: "load.users", Value: "100"})
	s := tierOf(t, r, "service")
	if inv := 1 / s.RequestsPerS; s.ExecTimeMean < 10*inv {
		t.Errorf("Request Execution Time %.3f s against 1 / Requests/sec = %.3f s; want far from it", s.ExecTimeMean, inv)
	}
	figure(t, "Request Execution Time against Requests Executing / Requests/sec", s.ExecTimeMean, s.ExecutingMean/s.RequestsPerS, 0.02)
}

// crack-throttling-as-reported-sweep.toml: no connection limit gives the
// post's figures together (docs/stories.md C3): the back end executes as
// many calls as there are connections, its 7 needs 7, the 4–12 s need 3 or
// 4, and nothing times out. The file repeats the story's inputs; its point
// at 10 must be the story's [misconfigured].
func TestCrackThrottlingAsReportedSweep(t *testing.T) {
	const file = "crack-throttling-as-reported-sweep.toml"
	ten := storyTopology(t, "crack-throttling-as-reported.toml", "misconfigured")
	x := loadStory(t, file)
	sc, err := x.ScenarioWith("base", []format.Param{{Key: "tier.web.calls.connection_limit_code", Value: "10"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sc.Topology, ten) {
		t.Errorf("%s at 10 connections is not crack-throttling-as-reported.toml [misconfigured]: keep the two files in step", file)
	}
	for _, c := range []struct {
		limit        string
		feLo, feHi   float64 // FE Requests Executing, mean
		latLo, latHi float64 // mean page latency, s
	}{{"3", 74, 84, 8, 11}, {"4", 72, 81, 6, 8}, {"7", 66, 75, 3, 4.5}} {
		r := runVariant(t, file, "base", format.Param{Key: "tier.web.calls.connection_limit_code", Value: c.limit})
		web, svc := tierOf(t, r, "web"), tierOf(t, r, "service")
		n := float64(r.Calls[1].Limit)
		if svc.ExecutingMax > n || svc.ExecutingMean < n-0.1 || r.Requests.TimedOut != 0 {
			t.Errorf("limit %s: BE executing mean %.1f max %.0f, %d timeouts; want the %v connections' %v, none", c.limit, svc.ExecutingMean, svc.ExecutingMax, r.Requests.TimedOut, n, n)
		}
		if web.ExecutingMean < c.feLo || web.ExecutingMean > c.feHi || r.Latency.Mean < c.latLo || r.Latency.Mean > c.latHi {
			t.Errorf("limit %s: FE executing %.1f (want %g–%g), mean latency %.2f s (want %g–%g)", c.limit, web.ExecutingMean, c.feLo, c.feHi, r.Latency.Mean, c.latLo, c.latHi)
		}
	}
}
