package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"math"
	"testing"
	"time"
)

// factoryTop is a front end whose one request makes n calls in turn
// through one call site, a new proxy each; a ChannelFactory takes 1 s of
// the front end's CPU, the service 1 s.
func factoryTop(users, n int, p model.Proxy) *model.Topology {
	p.Kind = model.ProxyPerCall
	p.FactoryCost = cnst(time.Second)
	c := &model.Call{Target: 1, Proxy: p}
	var steps []model.Step
	for range n {
		steps = append(steps, model.Step{Kind: model.StepCall, Call: c})
	}
	return burst(users, 0, tier("fe", steps...), tier("be", wait(time.Second)))
}

func TestFactoryCacheSteps(t *testing.T) {
	for _, c := range []struct {
		name                string
		users, calls        int
		p                   model.Proxy
		want                string
		built, hits, purged int64
	}{
		// .NET 3.0: every proxy builds its factory: 2 s a call.
		{"3.0", 1, 2, model.Proxy{}, "4", 2, 0, 0},
		// 3.5: the first builds and adds it, the second finds it.
		{"3.5", 1, 2, model.Proxy{FactoryCache: model.FactoryCacheSize}, "3", 1, 1, 0},
		// Three users at once: all three miss (none is added before its
		// channel exists), their second calls hit.
		{"3.5, three at once", 3, 2, model.Proxy{FactoryCache: model.FactoryCacheSize}, "3 3 3", 3, 3, 0},
		{"Binding constructor", 1, 2, model.Proxy{FactoryCache: model.FactoryCacheSize, Construction: model.ConstructBinding}, "4", 2, 0, 0},
		{"touched", 1, 2, model.Proxy{FactoryCache: model.FactoryCacheSize, Construction: model.ConstructTouched}, "4", 2, 0, 0},
		// Approach 2 on 3.0: the application's factory, built once.
		{"own ChannelFactory on 3.0", 1, 3, model.Proxy{Construction: model.ConstructChannelFactory}, "4", 1, 2, 0},
		// A cache of 2, round-robin over 2 endpoints: two misses, then hits
		// (6 calls: 2+2+1+1+1+1 s).
		{"2 endpoints fit", 1, 6, model.Proxy{FactoryCache: 2, Endpoints: 2, Pick: model.PickRoundRobin}, "8", 2, 4, 0},
		// Over 3 endpoints each add purges the one asked for next: every
		// call misses (12 s); the 3rd to 6th adds purge.
		{"3 endpoints thrash", 1, 6, model.Proxy{FactoryCache: 2, Endpoints: 3, Pick: model.PickRoundRobin}, "12", 6, 0, 4},
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
	p := model.Proxy{Kind: model.ProxyPerCall, FactoryCost: cnst(time.Second), FactoryCache: model.FactoryCacheSize}
	fe := tier("fe", callTo(1, model.Call{Proxy: p}), callTo(1, model.Call{Proxy: p}))
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
	p := model.Proxy{FactoryCache: 4, Endpoints: 8}
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
