package model

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestFactoryCacheMRU(t *testing.T) {
	// Size 2: a lookup refreshes its key, an add beyond the size purges the
	// least recent, an add of a cached key changes nothing.
	c := NewFactoryCache(2)
	k := func(i int) FactoryKey { return FactoryKey{Host: "svc", Endpoint: i} }
	var log []string
	step := func(op string, i int) {
		switch op {
		case "get":
			log = append(log, fmt.Sprintf("get%d=%v", i, c.Lookup(k(i))))
		case "add":
			log = append(log, fmt.Sprintf("add%d purged=%v", i, c.Add(k(i))))
		}
	}
	step("get", 0)
	step("add", 0)
	step("add", 1)
	step("get", 0) // 0 is now the most recent
	step("add", 2) // purges 1
	step("get", 1)
	step("get", 0)
	step("add", 0) // already there
	expect(t, "MRU", strings.Join(log, " "),
		"get0=false add0 purged=false add1 purged=false get0=true add2 purged=true get1=false get0=true add0 purged=false")
	if c.Len() != 2 {
		t.Errorf("len %d, want 2", c.Len())
	}
	if NewFactoryCache(0).Add(k(0)) || NewFactoryCache(0).Lookup(k(0)) {
		t.Error("a cache of size 0 holds nothing")
	}
	own := NewFactoryCache(-1)
	for i := range 100 {
		own.Add(k(i))
	}
	if own.Len() != 100 || !own.Lookup(k(0)) {
		t.Error("the application's own factories are never purged")
	}
}

func TestDecideProxyBuild(t *testing.T) {
	// The post's rules, one proxy each against a cache that holds key 0.
	k0, k1 := FactoryKey{"svc", 0}, FactoryKey{"svc", 1}
	for _, c := range []struct {
		name  string
		p     Proxy
		cache int
		k     FactoryKey
		want  ProxyBuild
	}{
		{"3.5 config, cached", Proxy{}, FactoryCacheSize, k0, ProxyBuild{Hit: true}},
		{"3.5 config, not yet", Proxy{}, FactoryCacheSize, k1, ProxyBuild{Factory: true, Add: true}},
		{"3.0: no cache", Proxy{}, 0, k0, ProxyBuild{Factory: true}},
		{"Binding constructor", Proxy{Construction: ConstructBinding}, FactoryCacheSize, k0, ProxyBuild{Factory: true}},
		{"properties touched", Proxy{Construction: ConstructTouched}, FactoryCacheSize, k0, ProxyBuild{Factory: true}},
		{"AlwaysOn, Binding", Proxy{Construction: ConstructBinding, CacheMode: CacheAlwaysOn}, FactoryCacheSize, k0, ProxyBuild{Hit: true}},
		{"AlwaysOff, config", Proxy{CacheMode: CacheAlwaysOff}, FactoryCacheSize, k0, ProxyBuild{Factory: true}},
		{"own factory, first", Proxy{Construction: ConstructChannelFactory}, 0, k1, ProxyBuild{Factory: true, Add: true, AppFactory: true}},
	} {
		cache := NewFactoryCache(c.cache)
		cache.Add(k0)
		own := NewFactoryCache(-1)
		if got := DecideProxyBuild(&c.p, cache, own, c.k); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	p := Proxy{CreateCost: cnst(time.Millisecond), FactoryCost: cnst(5 * time.Millisecond)}
	if d := (ProxyBuild{Factory: true}).Cost(&p); d != 6*time.Millisecond {
		t.Errorf("miss costs %v, want 6ms", d)
	}
	if d := (ProxyBuild{Hit: true}).Cost(&p); d != time.Millisecond {
		t.Errorf("hit costs %v, want 1ms", d)
	}
}

// factoryTop is a front end whose one request makes n calls in turn
// through one call site, a new proxy each; a ChannelFactory takes 1 s of
// the front end's CPU, the service 1 s.
func factoryTop(users, n int, p Proxy) *Topology {
	p.Kind = ProxyPerCall
	p.FactoryCost = cnst(time.Second)
	c := &Call{Target: 1, Proxy: p}
	var steps []Step
	for range n {
		steps = append(steps, Step{Kind: StepCall, Call: c})
	}
	return burst(users, 0, tier("fe", steps...), tier("be", wait(time.Second)))
}

func TestFactoryCacheSteps(t *testing.T) {
	for _, c := range []struct {
		name                string
		users, calls        int
		p                   Proxy
		want                string
		built, hits, purged int64
	}{
		// .NET 3.0: every proxy builds its factory: 2 s a call.
		{"3.0", 1, 2, Proxy{}, "4", 2, 0, 0},
		// 3.5: the first builds and adds it, the second finds it.
		{"3.5", 1, 2, Proxy{FactoryCache: FactoryCacheSize}, "3", 1, 1, 0},
		// Three users at once: all three miss (none is added before its
		// channel exists), their second calls hit.
		{"3.5, three at once", 3, 2, Proxy{FactoryCache: FactoryCacheSize}, "3 3 3", 3, 3, 0},
		{"Binding constructor", 1, 2, Proxy{FactoryCache: FactoryCacheSize, Construction: ConstructBinding}, "4", 2, 0, 0},
		{"touched", 1, 2, Proxy{FactoryCache: FactoryCacheSize, Construction: ConstructTouched}, "4", 2, 0, 0},
		// Approach 2 on 3.0: the application's factory, built once.
		{"own ChannelFactory on 3.0", 1, 3, Proxy{Construction: ConstructChannelFactory}, "4", 1, 2, 0},
		// A cache of 2, round-robin over 2 endpoints: two misses, then hits
		// (6 calls: 2+2+1+1+1+1 s).
		{"2 endpoints fit", 1, 6, Proxy{FactoryCache: 2, Endpoints: 2, Pick: PickRoundRobin}, "8", 2, 4, 0},
		// Over 3 endpoints each add purges the one asked for next: every
		// call misses (12 s); the 3rd to 6th adds purge.
		{"3 endpoints thrash", 1, 6, Proxy{FactoryCache: 2, Endpoints: 3, Pick: PickRoundRobin}, "12", 6, 0, 4},
	} {
		got, res := outcomes(t, factoryTop(c.users, c.calls, c.p))
		expect(t, c.name, got, c.want)
		cs := res.Calls[1]
		if cs.FactoriesBuilt != c.built || cs.FactoryHits != c.hits || cs.FactoriesPurged != c.purged ||
			cs.Proxies != int64(c.users*c.calls) {
			t.Errorf("%s: proxies %d, built %d, hits %d, purged %d; want %d, %d, %d, %d", c.name,
				cs.Proxies, cs.FactoriesBuilt, cs.FactoryHits, cs.FactoriesPurged, c.users*c.calls, c.built, c.hits, c.purged)
		}
	}
}

func TestFactoryCacheSharedBySites(t *testing.T) {
	// Two call sites of one front end to one service share its cache: the
	// second site's first proxy finds the first site's factory (1+1+1 s).
	p := Proxy{Kind: ProxyPerCall, FactoryCost: cnst(time.Second), FactoryCache: FactoryCacheSize}
	fe := tier("fe", callTo(1, Call{Proxy: p}), callTo(1, Call{Proxy: p}))
	got, res := outcomes(t, burst(1, 0, fe, tier("be", wait(time.Second))))
	expect(t, "shared", got, "3")
	if b := res.Calls[1].FactoriesBuilt + res.Calls[2].FactoriesBuilt; b != 1 {
		t.Errorf("%d factories built, want 1", b)
	}
}

func TestFactoryCacheRandomHitRatio(t *testing.T) {
	// A uniform pick over 8 endpoints against an MRU of 4: an LRU cache
	// under independent uniform references hits size/endpoints = 50 % of
	// the time (and MissShare says so). One user, 4,000 calls in turn.
	p := Proxy{FactoryCache: 4, Endpoints: 8}
	top := factoryTop(1, 4000, p)
	top.Tiers[0].Steps[0].Call.Proxy.FactoryCost = cnst(time.Millisecond)
	top.Tiers[1].Steps[0].Demand = cnst(time.Millisecond)
	_, res := outcomes(t, top)
	cs := res.Calls[1]
	hit := float64(cs.FactoryHits) / float64(cs.Proxies)
	// Binomial-ish: ±3 standard errors of 4,000 draws (0.8 %), doubled for
	// the correlation of successive states.
	if cs.Proxies != 4000 || math.Abs(hit-0.5) > 0.05 {
		t.Errorf("hit share %.3f of %d proxies, want 0.50 ± 0.05", hit, cs.Proxies)
	}
	if m := top.Tiers[0].Steps[0].Call.Proxy.MissShare(); m != 0.5 {
		t.Errorf("MissShare %v, want 0.5", m)
	}
}

func TestMissShare(t *testing.T) {
	for _, c := range []struct {
		p    Proxy
		want float64
	}{
		{Proxy{}, 1}, // no cache (.NET 3.0)
		{Proxy{FactoryCache: 32}, 0},
		{Proxy{FactoryCache: 32, Endpoints: 32, Pick: PickRoundRobin}, 0},
		{Proxy{FactoryCache: 32, Endpoints: 40}, 0.2},
		{Proxy{FactoryCache: 32, Endpoints: 40, Pick: PickRoundRobin}, 0.2}, // the lower share: a bound
		{Proxy{FactoryCache: 32, Construction: ConstructBinding}, 1},
		{Proxy{FactoryCache: 32, Construction: ConstructTouched}, 1},
		{Proxy{FactoryCache: 32, Construction: ConstructBinding, CacheMode: CacheAlwaysOn}, 0},
		{Proxy{FactoryCache: 32, CacheMode: CacheAlwaysOff}, 1},
		{Proxy{Construction: ConstructChannelFactory}, 0},
	} {
		if got := c.p.MissShare(); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%+v: MissShare %v, want %v", c.p, got, c.want)
		}
	}
}
