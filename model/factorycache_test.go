package model

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/sim"
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
	if got, want := strings.Join(log, " "), "get0=false add0 purged=false add1 purged=false get0=true add2 purged=true get1=false get0=true add0 purged=false"; got != want {
		t.Errorf("MRU:\n got  %s\n want %s", got, want)
	}
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
	p := Proxy{CreateCost: sim.Const(time.Millisecond), FactoryCost: sim.Const(5 * time.Millisecond)}
	if d := (ProxyBuild{Factory: true}).Cost(&p); d != 6*time.Millisecond {
		t.Errorf("miss costs %v, want 6ms", d)
	}
	if d := (ProxyBuild{Hit: true}).Cost(&p); d != time.Millisecond {
		t.Errorf("hit costs %v, want 1ms", d)
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
