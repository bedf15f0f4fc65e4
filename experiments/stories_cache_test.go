package experiments

import (
	"testing"
	"time"

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
