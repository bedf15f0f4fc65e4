package experiments

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/fit"
	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/results"
)

// The Crack Throttling incident in one configuration (crack-incident.toml;
// Wenlong Dong, "Crack Throttling", 6 Sep 2009), the figures of issue 25's
// point 3. Its four FITTED TO figures must hold within their tolerances and
// its eleven PREDICTS figures keep the verdicts its header gives, the misses
// included; then, in one configuration: a sub-second first phase, pages of
// seconds in the next half minute, the front end's ~69 executing, the back
// end's ~7; no TimeoutException in the hour (the conflict, below); and the
// post's rerun (the entry fixed, the clients increased) with higher
// concurrency on both tiers, much higher CPU on both, higher throughput and
// no timeouts.
func TestCrackIncident(t *testing.T) {
	t.Parallel() // a fit\'s story: hours of simulated time, beside the others on a second core
	got := scoreSpec(t, "crack-incident.fit")
	verdicts(t, got, map[string]string{
		"FE Requests Executing":                    fit.Reproduced,
		"BE Requests Executing":                    fit.Reproduced,
		"rerun: max Requests Executing":            fit.Reproduced,
		"rerun: max Calls Duration (s)":            fit.Reproduced,
		"pages after the first phase (s)":          fit.Reproduced,
		"first 90 s: slowest page (s)":             fit.Reproduced, // within its range; fitted by the header's choice of 6 users
		"FE Requests Queued":                       fit.Reproduced,
		"BE Requests Queued":                       fit.Reproduced,
		"FE Pipeline Instance Count":               fit.Missed,
		"BE Pipeline Instance Count":               fit.Missed,
		"slowest page in the hour (s)":             fit.Missed,
		"rerun: BE Requests Executing":             fit.Missed,
		"rerun: FE max Request Execution Time (s)": fit.Reproduced,
		"rerun: TimeoutExceptions":                 fit.Reproduced,
		"FE CLR worker threads (the dump)":         fit.Missed,
	})
	// The misses as the header reads them: the FE pipelines short of 91
	// but above the 69 executing; the BE's held to its 7 connections; the
	// rerun's BE above 42, not below.
	if m := got["FE Pipeline Instance Count"].Model; m < 75 || m > 91 {
		t.Errorf("FE Pipeline Instance Count %.1f; the header says ~86, between the 69 executing and the post's 91", m)
	}
	if m := got["FE CLR worker threads (the dump)"].Model; m < got["FE Requests Executing"].Model {
		t.Errorf("FE worker threads %.1f, fewer than the %.1f requests executing, each on a worker thread", m, got["FE Requests Executing"].Model)
	}
	if m := got["rerun: BE Requests Executing"].Model; m < 44 {
		t.Errorf("rerun: BE Requests Executing %.1f; the header says ~52, above the post's 42", m)
	}
	if m := got["BE Pipeline Instance Count"].Model; m > 7.5 {
		t.Errorf("BE Pipeline Instance Count %.1f; the header says 7, held to the 7 connections, below the post's 11", m)
	}

	bad, rerun, fixed := runVariant(t, "crack-incident.toml", "misconfigured"), runVariant(t, "crack-incident.toml", "rerun"), runVariant(t, "crack-incident.toml", "fixed")
	bw, bs := tierOf(t, bad, "web"), tierOf(t, bad, "service")
	t.Logf("misconfigured: first 90 s slowest %.2f s; 95-125 s mean %.1f s, slowest %.1f s; hour's slowest %.1f s; FE %.1f executing %.1f pipelines; BE %.1f (%.1f); CPU %.1f%% %.1f%%; %.1f/s; %d timeouts",
		maxLatency(bad, 0, 90), meanLatency(bad, 95, 125), maxLatency(bad, 95, 125), maxLatency(bad, 0, 3600), bw.ExecutingMean, bw.PipelinesMean, bs.ExecutingMean, bs.PipelinesMean, 100*bw.CPUUtil, 100*bs.CPUUtil, bad.GoodputPerS, bad.Requests.TimedOut)
	// Point 3, in the misconfigured run itself (one replication at the
	// file's seed, not the fit's two): sub-second, then seconds.
	if mx, m := maxLatency(bad, 0, 90), meanLatency(bad, 95, 125); mx >= 1 || m < 4 || m > 12 {
		t.Errorf("misconfigured: the first 90 s' slowest page %.2f s (want under 1), the next half minute's mean %.1f s (want 4-12)", mx, m)
	}
	figure(t, "misconfigured: FE Requests Executing", bw.ExecutingMean, 69, 0.05)
	figure(t, "misconfigured: BE Requests Executing", bs.ExecutingMean, 7, 0.07)
	// CPU "low" on both (shape only: the post gives no number; the header
	// says ~4 % and ~6 %).
	if bw.CPUUtil > 0.15 || bs.CPUUtil > 0.15 {
		t.Errorf("misconfigured: CPU FE %.1f%%, BE %.1f%%; the post: low on both", 100*bw.CPUUtil, 100*bs.CPUUtil)
	}
	// The conflict (the header, and TestCrackIncidentConflict): no page of
	// the hour comes near the 20 s SendTimeout.
	if mx := maxLatency(bad, 0, 3600); bad.Requests.TimedOut != 0 || mx > 12 {
		t.Errorf("misconfigured: %d TimeoutExceptions, the slowest page %.1f s; the header says none, ~7 s (the conflict)", bad.Requests.TimedOut, mx)
	}
	for _, c := range []struct {
		name string
		r    *results.Run
	}{{"rerun", rerun}, {"fixed", fixed}} {
		rw, rs := tierOf(t, c.r, "web"), tierOf(t, c.r, "service")
		t.Logf("%s: FE executing %.1f (max %.0f), BE %.1f, CPU %.1f%% %.1f%%, %.1f/s, %d timeouts",
			c.name, rw.ExecutingMean, rw.ExecutingMax, rs.ExecutingMean, 100*rw.CPUUtil, 100*rs.CPUUtil, c.r.GoodputPerS, c.r.Requests.TimedOut)
		// "much higher CPU usage on both", "higher throughput", no
		// TimeoutException; the back end's concurrency higher.
		if c.r.Requests.TimedOut != 0 || c.r.GoodputPerS < 1.5*bad.GoodputPerS || rw.CPUUtil < 2*bw.CPUUtil || rs.CPUUtil < 2*bs.CPUUtil || rs.ExecutingMean < 2*bs.ExecutingMean {
			t.Errorf("%s: want no timeouts, 1.5× the throughput, twice the CPU on both tiers and twice the back end's concurrency", c.name)
		}
	}
	// "much higher concurrent requests on both": the front end's too in
	// the rerun, with the clients increased (its mean higher, its peak
	// over four times); the fix alone, with the same clients, lowers it
	// (pages no longer wait for a connection): the header says so.
	if rw, fw := tierOf(t, rerun, "web"), tierOf(t, fixed, "web"); rw.ExecutingMean < 1.1*bw.ExecutingMean || rw.ExecutingMax < 4*bw.ExecutingMax || fw.ExecutingMean > 0.8*bw.ExecutingMean {
		t.Errorf("FE executing: rerun mean %.1f, max %.0f against %.1f, %.0f (want higher, four times); the fix alone %.1f (want lower)", rw.ExecutingMean, rw.ExecutingMax, bw.ExecutingMean, bw.ExecutingMax, fw.ExecutingMean)
	}
}

// The Trace story (hidden-cpu-costs.toml; Rory Primrose's post on
// System.Diagnostics.Trace against TraceSource): its fit's figures, the
// slowest test within its ±20 % (a target the fit does not use, set by the
// header's assumed cv: fitted), the 36 s contradicted.
func TestHiddenCPUCostsFit(t *testing.T) {
	t.Parallel() // a fit\'s story: hours of simulated time, beside the others on a second core
	verdicts(t, scoreSpec(t, "hidden-cpu-costs.fit"), map[string]string{
		"test time (ms)":                        fit.Reproduced,
		"tests/s at 200 users":                  fit.Reproduced,
		"tests/s with Trace":                    fit.Reproduced,
		"slowest test (s)":                      fit.Reproduced,
		"test time with Trace at 200 users (s)": fit.Missed,
	})
}

// The wsHttp story (wshttp-load-test.toml; Rory Primrose's post on
// wsHttpBinding under a load test): its fit's three figures, and the
// wsHttp tests of the run predicted; both wsHttp variants take the fitted
// session CPU.
func TestWsHttpLoadTestFit(t *testing.T) {
	t.Parallel() // a fit\'s story: hours of simulated time, beside the others on a second core
	got := scoreSpec(t, "wshttp-load-test.fit")
	verdicts(t, got, map[string]string{
		"basicHttp test time (s)":                   fit.Reproduced,
		"basicHttp tests in the run":                fit.Reproduced,
		"wsHttp raised throttles: test time (s)":    fit.Reproduced,
		"wsHttp raised throttles: tests in the run": fit.Reproduced,
	})
	x := loadStory(t, "wshttp-load-test.toml")
	var cpu []time.Duration
	for _, v := range []string{"wsHttp-default-throttles", "wsHttp-raised-throttles"} {
		sc, err := x.ScenarioWith(v, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		cpu = append(cpu, sc.Topology.Load.Call.Binding.SessionCPU)
	}
	if cpu[0] != cpu[1] || cpu[0] == 0 {
		t.Errorf("the wsHttp variants' session CPU: %v and %v; want the fitted value in both", cpu[0], cpu[1])
	}
}

// The binary encoder's story (bindings-and-encoders.toml; the .NET
// Endpoint, "Improving the performance of web services in Silverlight 3
// Beta", 8 Jun 2009): both of the post's figures set the binary encoder's
// two costs, so the fit predicts nothing; its test checks the file still
// lands on both.
func TestBindingsAndEncodersFit(t *testing.T) {
	t.Parallel() // a fit\'s story: hours of simulated time, beside the others on a second core
	verdicts(t, scoreSpec(t, "bindings-and-encoders.fit"), map[string]string{
		"binary over text: the smaller message": fit.Reproduced,
		"binary over text: the larger message":  fit.Reproduced,
	})
}

// The netTcp story (nettcp-29k.toml; Terrance A. Snyder, "High Performance
// WCF Services : netTcpBinding", 12 Apr 2010): the ~29,000 calls a second
// and the debug build's 29× set this box's CPU a message and the debug
// client's extra CPU; nothing is left to predict.
func TestNetTcp29kFit(t *testing.T) {
	t.Parallel() // a fit\'s story: hours of simulated time, beside the others on a second core
	verdicts(t, scoreSpec(t, "nettcp-29k.fit"), map[string]string{
		"netTcp calls/s": fit.Reproduced,
		"debug+debug without server GC: share of the calls/s": fit.Reproduced,
	})
}

// The conflict crack-incident.toml's header states, at the point the
// search found (tsim fit experiments/crack-incident-conflict.fit
// --hold-out "first 90 s: slowest page (s)": think 1.08 s, limit 7, [BS]
// 967 ms a call): there the front end's 69 (±2 tolerances), the back end's
// 7 and a page near the 20 s SendTimeout hold together, and the first
// phase is not sub-second — [BS]'s calls that make the hour's slowest page
// reach 20 s make the first 90 s' slowest take seconds.
func TestCrackIncidentConflict(t *testing.T) {
	t.Parallel() // a fit\'s story: hours of simulated time, beside the others on a second core
	r := runVariant(t, "crack-incident.toml", "misconfigured",
		format.Param{Key: "load.think", Value: `"exp(1083ms)"`},
		format.Param{Key: "tier.backend.step.1.cpu", Value: `"lognormal(mean=967.4ms,cv=0.3)"`})
	w, s := tierOf(t, r, "web"), tierOf(t, r, "service")
	first, hour := maxLatency(r, 0, 90), maxLatency(r, 0, 3600)
	t.Logf("the search's point: first 90 s slowest %.2f s, hour's slowest %.1f s, %d timeouts; FE %.1f, BE %.1f executing", first, hour, r.Requests.TimedOut, w.ExecutingMean, s.ExecutingMean)
	figure(t, "FE Requests Executing", w.ExecutingMean, 69, 0.10)
	figure(t, "BE Requests Executing", s.ExecutingMean, 7, 0.07)
	if hour < 15 || first < 1.5 {
		t.Errorf("the hour's slowest page %.1f s (want near 20), the first 90 s' %.2f s (want well over 1: the conflict)", hour, first)
	}
}
