package model

import "time"

// The ChannelFactory cache of ClientBase<T> (.NET 3.0 SP1 / 3.5 and later):
// plain data and one decision, shared by both executors. Dong, "Performance
// Improvement for WCF Client Proxy Creation in .NET 3.5 and Best Practices"
// (seed 000): "The key idea is to cache the ChannelFactory object at
// AppDomain level ... The cache is a most recently used (MRU) cache. The
// cache size is hard-coded as 32 so that the least used ChannelFactory
// objects are purged from the cache." The cache is a static field of
// ClientBase<TChannel>, so there is one per contract type in a process
// (docs/dotnet.md §6, RS ClientBase.cs); tsim keeps one per caller process and
// target tier (one contract per service).

// FactoryCacheSize is the number of ChannelFactory objects ClientBase<T>
// keeps: "hard-coded as 32" (docs/dotnet.md §6).
const FactoryCacheSize = 32

// Construction is how a call's code constructs each new ClientBase<T>
// proxy, which decides whether it may share a cached ChannelFactory.
type Construction uint8

const (
	// ConstructConfig: new MyClient("endpointName"[, address]) — the
	// constructors without a Binding; the proxy looks its factory up in
	// the cache by (endpoint configuration name, address).
	ConstructConfig Construction = iota
	// ConstructBinding: new MyClient(binding, address) — "when the Binding
	// is supplied in the constructors, the caching mechanism is disabled
	// for that proxy": a factory of its own every time.
	ConstructBinding
	// ConstructTouched: a config constructor, then ChannelFactory, Endpoint
	// or ClientCredentials accessed before the first call — "the caching is
	// disabled for this proxy": the constructor's lookup happened, but the
	// proxy builds a factory of its own and does not add it.
	ConstructTouched
	// ConstructChannelFactory: the application builds one ChannelFactory<T>
	// per endpoint itself and calls CreateChannel for each proxy (the
	// post's approach 2): the factory is built once, whatever the version.
	ConstructChannelFactory
)

var constructionNames = [...]string{"config", "binding", "touched", "channel-factory"}

func (k Construction) String() string { return constructionNames[k] }

// ConstructionNames are the names of the Construction values.
func ConstructionNames() []string { return append([]string(nil), constructionNames[:]...) }

// FactoryCacheMode is ClientBase<T>.CacheSetting (a property from .NET 4.5;
// before it, always the default rules).
type FactoryCacheMode uint8

const (
	// CacheDefault: config-constructed proxies share factories unless
	// disabled (Binding constructor, properties touched).
	CacheDefault FactoryCacheMode = iota
	// CacheAlwaysOn (4.5+): every proxy shares, touched or built from a
	// Binding (tsim assumes the application passes the same Binding object).
	CacheAlwaysOn
	// CacheAlwaysOff (4.5+): no proxy shares.
	CacheAlwaysOff
)

var cacheModeNames = [...]string{"default", "always-on", "always-off"}

func (m FactoryCacheMode) String() string { return cacheModeNames[m] }

// FactoryCacheModeNames are the names of the FactoryCacheMode values.
func FactoryCacheModeNames() []string { return append([]string(nil), cacheModeNames[:]...) }

// EndpointPick is how a call site spreads its calls over its endpoints.
type EndpointPick uint8

const (
	PickRandom     EndpointPick = iota // uniformly at random per call
	PickRoundRobin                     // in turn, across all the site's callers
)

var pickNames = [...]string{"random", "round-robin"}

func (p EndpointPick) String() string { return pickNames[p] }

// EndpointPickNames are the names of the EndpointPick values.
func EndpointPickNames() []string { return append([]string(nil), pickNames[:]...) }

// FactoryKey is what a cached ChannelFactory is matched by: ClientBase<T>'s
// EndpointTrait (endpoint configuration name, address, callback instance).
// A call site's endpoints are its Endpoint indices at its host.
type FactoryKey struct {
	Host     string
	Endpoint int
}

// FactoryCache is an MRU cache of ChannelFactory keys: a lookup that finds
// its key makes it the most recent; an add beyond the size purges the least
// recent. Size 0 holds nothing; size < 0 never purges (an application's own
// factories, held for good). Not safe for concurrent use.
type FactoryCache struct {
	size int
	keys []FactoryKey // most recent first
}

// NewFactoryCache returns an empty cache of the given size.
func NewFactoryCache(size int) *FactoryCache { return &FactoryCache{size: size} }

// Lookup reports whether k is cached and, if it is, makes it the most recent.
func (c *FactoryCache) Lookup(k FactoryKey) bool {
	for i, x := range c.keys {
		if x == k {
			copy(c.keys[1:i+1], c.keys[:i])
			c.keys[0] = k
			return true
		}
	}
	return false
}

// Add caches k as the most recent, unless it is already cached ("added to
// the cache if it's not grabbed from the cache": a factory another proxy
// added meanwhile stays); it returns whether a key was purged.
func (c *FactoryCache) Add(k FactoryKey) (purged bool) {
	if c.size == 0 {
		return false
	}
	for _, x := range c.keys {
		if x == k {
			return false
		}
	}
	if c.size > 0 && len(c.keys) == c.size {
		c.keys = c.keys[:c.size-1] // the least recent goes
		purged = true
	}
	c.keys = append(c.keys, FactoryKey{})
	copy(c.keys[1:], c.keys)
	c.keys[0] = k
	return purged
}

// Priced reports whether the call site prices its proxies (a cost to build
// a proxy or a factory): only then are its proxies and factories counted
// (results.Call), so that experiments which do not model them keep their
// output.
func (p *Proxy) Priced() bool { return !p.CreateCost.IsZero() || !p.FactoryCost.IsZero() }

// Len is the number of cached keys.
func (c *FactoryCache) Len() int { return len(c.keys) }

// ProxyBuild is what constructing one new proxy costs and does to the cache.
type ProxyBuild struct {
	Hit     bool // its ChannelFactory came from the cache
	Factory bool // it builds a ChannelFactory (the full cost)
	Add     bool // once built, the factory goes into the cache
	// AppFactory: the factory is the application's own (ConstructChannelFactory),
	// kept in the call site's cache rather than ClientBase<T>'s.
	AppFactory bool
}

// DecideProxyBuild decides, for a new proxy of p at key, whether its
// ChannelFactory comes from the process's cache (cache, nil or size 0 when
// the version has none) or the application's own factories (own, for
// ConstructChannelFactory), and what it costs. It does the lookup (which
// refreshes the key's place); the caller adds the key once the proxy's
// channel is built, if Add says so.
func DecideProxyBuild(p *Proxy, cache, own *FactoryCache, k FactoryKey) ProxyBuild {
	if p.Construction == ConstructChannelFactory {
		if own.Lookup(k) {
			return ProxyBuild{Hit: true, AppFactory: true}
		}
		return ProxyBuild{Factory: true, Add: true, AppFactory: true}
	}
	if cache == nil || cache.size == 0 || p.CacheMode == CacheAlwaysOff {
		return ProxyBuild{Factory: true}
	}
	shares := p.CacheMode == CacheAlwaysOn || p.Construction == ConstructConfig
	if p.Construction == ConstructBinding && !shares {
		return ProxyBuild{Factory: true} // no lookup: the Binding constructors bypass the cache
	}
	// The constructor looks the factory up; a proxy whose properties are
	// then touched gives it back and builds its own.
	hit := cache.Lookup(k)
	switch {
	case !shares:
		return ProxyBuild{Factory: true}
	case hit:
		return ProxyBuild{Hit: true}
	}
	return ProxyBuild{Factory: true, Add: true}
}

// Cost is the caller CPU the build takes: the proxy's own creation, and the
// ChannelFactory's when it builds one.
func (b ProxyBuild) Cost(p *Proxy) time.Duration {
	d := p.CreateCost.Mean()
	if b.Factory {
		d += p.FactoryCost.Mean()
	}
	return d
}

// MissShare is the share of a call site's new proxies that build a
// ChannelFactory once the caches are warm, if the site has the process's
// cache to itself: all of them without a cache or with it disabled; with
// it, none when the endpoints fit, and otherwise 1 − size/endpoints — what
// an LRU cache misses under independent uniform picks (it holds size of the
// endpoints, each as likely to be asked next). Round-robin callers miss at
// least as often: one at a time every call misses (an LRU scanned
// cyclically beyond its size), while concurrent callers, whose factories
// are added after later lookups, fall in between; the bounds (bounds.go)
// take the lower share so that they stay bounds.
func (p *Proxy) MissShare() float64 {
	switch {
	case p.Construction == ConstructChannelFactory:
		return 0
	case p.FactoryCache == 0 || p.CacheMode == CacheAlwaysOff:
		return 1
	case p.CacheMode != CacheAlwaysOn && p.Construction != ConstructConfig:
		return 1
	}
	n := max(p.Endpoints, 1)
	if n <= p.FactoryCache {
		return 0
	}
	return 1 - float64(p.FactoryCache)/float64(n)
}

// Factories are one call site's ChannelFactory caches: the process's cache
// for its target (Cache, shared with the caller's other sites to that
// target) and the factories the application holds itself (Own); Host is
// the host name the site addresses. Both executors keep one per site
// (real mode locks it).
type Factories struct {
	Cache, Own *FactoryCache
	Host       string
}

// Build decides what constructing a new proxy for endpoint ep costs
// (DecideProxyBuild).
func (f *Factories) Build(p *Proxy, ep int) ProxyBuild {
	return DecideProxyBuild(p, f.Cache, f.Own, FactoryKey{Host: f.Host, Endpoint: ep})
}

// Add puts a built proxy's factory into its cache; it reports whether that
// purged another.
func (f *Factories) Add(b ProxyBuild, ep int) (purged bool) {
	c := f.Cache
	if b.AppFactory {
		c = f.Own
	}
	return c.Add(FactoryKey{Host: f.Host, Endpoint: ep})
}

// FactoryCaches are the callers' ChannelFactory caches of a run: one
// process's cache per target (ClientBase<TChannel>'s static cache: one
// per contract) and the factories its application holds for it.
type FactoryCaches struct {
	of []factoriesOf
}

type factoriesOf struct {
	from       string
	target     int
	cache, own *FactoryCache
}

// For returns the caches the call sites of caller from to spec's target
// share, for a site addressing host.
func (fc *FactoryCaches) For(from string, spec *Call, host string) *Factories {
	for _, f := range fc.of {
		if f.from == from && f.target == spec.Target {
			return &Factories{Cache: f.cache, Own: f.own, Host: host}
		}
	}
	f := factoriesOf{from, spec.Target, NewFactoryCache(spec.Proxy.FactoryCache), NewFactoryCache(-1)}
	fc.of = append(fc.of, f)
	return &Factories{Cache: f.cache, Own: f.own, Host: host}
}
