package format

import (
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
)

func TestFactoryCacheKeys(t *testing.T) {
	// The cache by the caller's .NET version, and the keys passed through.
	for _, c := range []struct {
		name, dotnet, keys string
		want               model.Proxy
	}{
		{"3.0: none", "3.0", "", model.Proxy{Kind: model.ProxyPerCall}},
		{"3.5: MRU of 32", "3.5", "", model.Proxy{Kind: model.ProxyPerCall, FactoryCache: 32}},
		{"3.0 forced", "3.0", `factory_cache = "mru-32"`, model.Proxy{Kind: model.ProxyPerCall, FactoryCache: 32}},
		{"4.5 always-on, binding, endpoints", "4.5",
			"cache_setting = \"always-on\"\nproxy_construction = \"binding\"\nendpoints = 40\nendpoint_pick = \"round-robin\"",
			model.Proxy{Kind: model.ProxyPerCall, FactoryCache: 32, CacheMode: model.CacheAlwaysOn, Construction: model.ConstructBinding, Endpoints: 40, Pick: model.PickRoundRobin}},
	} {
		f := strings.Replace(mut(`timeout = "20s"`, "timeout = \"20s\"\nproxy = \"per-call\"\nproxy_create_cost = \"1ms\"\nfactory_create_cost = \"5ms\"\n"+c.keys),
			`cores = 8`, "cores = 8\ndotnet = \""+c.dotnet+"\"", 1)
		top := loadTopo(t, f)
		got := top.Tiers[0].Steps[1].Call.Proxy
		if got.CreateCost.Mean() != time.Millisecond || got.FactoryCost.Mean() != 5*time.Millisecond {
			t.Errorf("%s: costs %v, %v", c.name, got.CreateCost.Mean(), got.FactoryCost.Mean())
		}
		got.CreateCost, got.FactoryCost = c.want.CreateCost, c.want.FactoryCost
		if got.Endpoints == 1 {
			got.Endpoints = 0
		}
		if got != c.want {
			t.Errorf("%s:\n got  %+v\n want %+v", c.name, got, c.want)
		}
	}
}
