package realmode

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// TestStepFactoryCache runs model's ChannelFactory step tables for real
// (model/factorycache_test.go): a front end whose one request makes its
// calls in turn through one call site, a new proxy each; a ChannelFactory
// takes 1 s of the front end's CPU, the service 1 s.
func TestStepFactoryCache(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	for _, c := range []struct {
		name         string
		users, calls int
		p            model.Proxy
		want         string
		built, hits  int64
	}{
		{"3.0", 1, 2, model.Proxy{}, "4", 2, 0},
		{"3.5", 1, 2, model.Proxy{FactoryCache: model.FactoryCacheSize}, "3", 1, 1},
		{"3.5, three at once", 3, 2, model.Proxy{FactoryCache: model.FactoryCacheSize}, "3 3 3", 3, 3},
		{"touched", 1, 2, model.Proxy{FactoryCache: model.FactoryCacheSize, Construction: model.ConstructTouched}, "4", 2, 0},
		{"3 endpoints thrash a cache of 2", 1, 4, model.Proxy{FactoryCache: 2, Endpoints: 3, Pick: model.PickRoundRobin}, "8", 4, 0},
		{"2 endpoints fit", 1, 4, model.Proxy{FactoryCache: 2, Endpoints: 2, Pick: model.PickRoundRobin}, "6", 2, 2},
	} {
		p := c.p
		p.Kind = model.ProxyPerCall
		p.FactoryCost = cnst(time.Second)
		call := &model.Call{Target: 1, Proxy: p}
		var steps []model.Step
		for range c.calls {
			steps = append(steps, model.Step{Kind: model.StepCall, Call: call})
		}
		top := burst(c.users, 0, time.Duration(c.calls*2+2)*time.Second, tier("fe", 8, steps...), tier("be", 8, waitFor(time.Second)))
		s, r := table(t, c.name, top, c.want, Options{})
		for _, res := range judged(s, r) {
			cs := res.Calls[1]
			if cs.FactoriesBuilt != c.built || cs.FactoryHits != c.hits || cs.Proxies != int64(c.users*c.calls) {
				t.Errorf("%s: proxies %d, built %d, hits %d; want %d, %d, %d", c.name, cs.Proxies, cs.FactoriesBuilt, cs.FactoryHits, c.users*c.calls, c.built, c.hits)
			}
		}
	}
}
