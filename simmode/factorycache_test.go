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
