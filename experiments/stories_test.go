// Package experiments holds tsim's story library: each .toml file here is an
// experiment a user can run, with a header that tells its story. The tests
// in this package run each story (shortened where needed) at a fixed seed and
// assert the outcome the story predicts.
package experiments

import (
	"math"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/simmode"
)

// runStory loads an experiment file and runs every scenario once at the
// file's seed, optionally shortening the run.
func runStory(t *testing.T, file string, duration time.Duration) map[string]*results.Run {
	t.Helper()
	x := loadStory(t, file)
	out := map[string]*results.Run{}
	for i := 0; i < x.NumScenarios(); i++ {
		sc, err := x.Scenario(i)
		if err != nil {
			t.Fatal(err)
		}
		if duration > 0 {
			sc.Topology.Duration = duration
		}
		res, err := simmode.Run(&sc.Topology, model.Options{Seed: x.Seed})
		if err != nil {
			t.Fatal(err)
		}
		key := sc.Variant
		for _, p := range sc.Params {
			key += " " + p.Key + "=" + p.Value
		}
		out[key] = res
	}
	return out
}

// storyTopology compiles one variant of an experiment file.
func storyTopology(t *testing.T, file, variant string) model.Topology {
	t.Helper()
	x := loadStory(t, file)
	for i := 0; i < x.NumScenarios(); i++ {
		sc, err := x.Scenario(i)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Variant == variant {
			return sc.Topology
		}
	}
	t.Fatalf("%s: no variant %q", file, variant)
	return model.Topology{}
}

func tierOf(t *testing.T, r *results.Run, name string) results.Tier {
	t.Helper()
	for _, tr := range r.Tiers {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no tier %q", name)
	return results.Tier{}
}

// meanLatency is the mean client latency of requests that ended in [from, to) seconds.
func meanLatency(r *results.Run, from, to float64) float64 {
	s, n := 0.0, 0
	for _, p := range r.Points {
		if p.T >= from && p.T < to {
			s += p.Latency
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

func TestCrackThrottling(t *testing.T) {
	runs := runStory(t, "crack-throttling.toml", 0)
	bad, good := runs["misconfigured"], runs["fixed"]
	// Fine at first, then climbing to many seconds, then TimeoutExceptions.
	if early := meanLatency(bad, 0, 90); early > 2 {
		t.Errorf("misconfigured: mean latency in the first 90 s = %.2f s, want < 2 s", early)
	}
	if late := meanLatency(bad, 180, 600); late < 6 {
		t.Errorf("misconfigured: mean latency after 3 min = %.2f s, want > 6 s", late)
	}
	if bad.Requests.TimedOut == 0 || bad.FirstTimeout < 90 {
		t.Errorf("misconfigured: %d timeouts, first at %.0f s; want some, after the first 90 s", bad.Requests.TimedOut, bad.FirstTimeout)
	}
	// The front end holds many requests; the back end executes a handful.
	web, svc := tierOf(t, bad, "web"), tierOf(t, bad, "service")
	if web.ExecutingMax < 50 || svc.ExecutingMax > 8 {
		t.Errorf("misconfigured: web executing max %.0f (want ≥ 50), service %.0f (want ≤ 8)", web.ExecutingMax, svc.ExecutingMax)
	}
	if web.CPUUtil > 0.2 || svc.CPUUtil > 0.2 {
		t.Errorf("misconfigured: CPU should be low: web %.0f%%, service %.0f%%", 100*web.CPUUtil, 100*svc.CPUUtil)
	}
	if c := bad.Calls[1]; c.Limit != 2 || c.WaitMean < 2 {
		t.Errorf("misconfigured web→service: limit %d, mean connection wait %.2f s; want 2 and seconds", c.Limit, c.WaitMean)
	}
	// Fixed: no timeouts, more back-end concurrency, more throughput.
	if good.Requests.TimedOut != 0 {
		t.Errorf("fixed: %d timeouts, want none", good.Requests.TimedOut)
	}
	gsvc := tierOf(t, good, "service")
	if gsvc.ExecutingMax <= svc.ExecutingMax || gsvc.CPUUtil <= svc.CPUUtil {
		t.Errorf("fixed: service executing max %.0f (was %.0f), CPU %.1f%% (was %.1f%%): want both higher",
			gsvc.ExecutingMax, svc.ExecutingMax, 100*gsvc.CPUUtil, 100*svc.CPUUtil)
	}
	if good.GoodputPerS < 1.25*bad.GoodputPerS || good.Latency.Mean > 1 {
		t.Errorf("fixed: %.2f req/s at %.2f s (misconfigured %.2f req/s); want ≥ 25%% more, under 1 s", good.GoodputPerS, good.Latency.Mean, bad.GoodputPerS)
	}
}

func TestCrackThrottlingSweep(t *testing.T) {
	runs := runStory(t, "crack-throttling-sweep.toml", 5*time.Minute)
	key := func(n string) *results.Run { return runs["base tier.web.calls.maxconnection="+n] }
	if r := key("1"); r == nil || r.Requests.TimedOut == 0 {
		t.Fatalf("maxconnection 1 should time out: %+v", r)
	}
	for _, n := range []string{"8", "16", "32", "64", "128"} {
		if r := key(n); r.Requests.TimedOut != 0 {
			t.Errorf("maxconnection %s: %d timeouts, want none", n, r.Requests.TimedOut)
		}
	}
}

// figure checks one of a document's figures: tsim's got within tol (a
// fraction, the document's own precision) of the document's want.
func figure(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s: tsim %.4g, the document %.4g (tolerance ±%.0f%%)", what, got, want, 100*tol)
	}
}

// notYet records a figure of a document that tsim cannot reproduce yet, as
// a skipped subtest naming the mechanism it needs (docs/stories.md lists
// them all).
func notYet(t *testing.T, fig, needs string) {
	t.Helper()
	t.Run(fig, func(t *testing.T) { t.Skip("not reproducible yet: needs " + needs) })
}

// latencyShare is the share of the requests completed in [from, to)
// seconds whose latency was under lat seconds (0 if none completed).
func latencyShare(r *results.Run, from, to, lat float64) float64 {
	n, k := 0, 0
	for _, p := range r.Points {
		if p.T >= from && p.T < to && p.Outcome == results.Completed {
			n++
			if p.Latency < lat {
				k++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(k) / float64(n)
}

// maxLatency is the largest latency of the requests completed in [from, to).
func maxLatency(r *results.Run, from, to float64) float64 {
	m := 0.0
	for _, p := range r.Points {
		if p.T >= from && p.T < to && p.Outcome == results.Completed && p.Latency > m {
			m = p.Latency
		}
	}
	return m
}
