package model

import (
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// ClientProxy is one client proxy (a WCF channel) as its caller sees it,
// the same in both executors (each embeds it in its own proxy type).
type ClientProxy struct {
	PerCall bool // closed after one call
	Fresh   bool // not used yet: pays its creation (and a handshake)
	Dead    bool // closed or aborted by the client
}

// ProxyOf is an executor's proxy type, which holds a ClientProxy.
type ProxyOf interface {
	comparable
	Client() *ClientProxy
}

// Proxies are one call site's client proxies, kept as Proxy.Kind says, the
// same in both executors (real mode locks them). New makes an executor's
// proxy; its ClientProxy is PerCall and Fresh as asked.
type Proxies[P ProxyOf] struct {
	Spec *Proxy
	// Opening: ProxySharedNoOpen's open queue still exists: calls go
	// through it one at a time (Gate) until it drains.
	Opening bool
	New     func(perCall, fresh bool) P
	shared  P
	idle    []P
}

// NewProxies returns the proxies of a call site of spec.
func NewProxies[P ProxyOf](spec *Proxy, newProxy func(perCall, fresh bool) P) *Proxies[P] {
	return &Proxies[P]{Spec: spec, Opening: spec.Kind == ProxySharedNoOpen, New: newProxy}
}

// ProxyGate is what a call waits for before it takes a proxy.
type ProxyGate uint8

const (
	GateNone ProxyGate = iota
	GateOpen           // ProxySharedNoOpen while its open queue exists: one call at a time
	GatePool           // ProxyPoolWait: one of PoolSize proxies
)

// Gate is what a call waits for, now, before it takes a proxy.
func (s *Proxies[P]) Gate() ProxyGate {
	switch {
	case s.Spec.Kind == ProxySharedNoOpen && s.Opening:
		return GateOpen
	case s.Spec.Kind == ProxyPoolWait:
		return GatePool
	}
	return GateNone
}

// Passed is a call that held the gate g letting it go, with waiting calls
// still waiting at it: the open queue drains when the last waiter has gone
// through.
func (s *Proxies[P]) Passed(g ProxyGate, waiting int) {
	if g == GateOpen && waiting == 0 {
		s.Opening = false
	}
}

// Take is the proxy for a call's attempt. user is the calling user's own
// proxy (ProxyPerUser), nil for a call without a user.
func (s *Proxies[P]) Take(user *P) P {
	var zero P
	switch s.Spec.Kind {
	case ProxyShared, ProxySharedNoOpen:
		if s.shared == zero || s.shared.Client().Dead {
			// The first one was opened at start-up; one re-created after an
			// abort pays its creation and handshake like any new proxy.
			s.shared = s.New(false, s.shared != zero)
		}
		return s.shared
	case ProxyPerUser:
		if user == nil { // open arrivals have no user: one proxy per request
			return s.New(true, true)
		}
		if *user == zero || (*user).Client().Dead {
			*user = s.New(false, true) // opened at the user's first call
		}
		return *user
	case ProxyPoolCreate, ProxyPoolWait:
		for len(s.idle) > 0 {
			p := s.idle[len(s.idle)-1]
			s.idle = s.idle[:len(s.idle)-1]
			if !p.Client().Dead {
				return p
			}
		}
		return s.New(false, true)
	}
	return s.New(true, true) // ProxyPerCall
}

// Release lets go of p after an attempt (graceful: the call completed). It
// reports whether the client closes p now (a per-call proxy, or a pooled
// one with no room in the pool), and whether it aborts it rather than
// closing it (a per-call proxy after a failure).
func (s *Proxies[P]) Release(p P, graceful bool) (close, abort bool) {
	var zero P
	if p == zero {
		return false, false
	}
	switch s.Spec.Kind {
	case ProxyPerCall:
		return true, !graceful
	case ProxyPoolCreate:
		if !p.Client().Dead && len(s.idle) < s.Spec.PoolSize {
			s.idle = append(s.idle, p)
			return false, false
		}
		return true, false
	case ProxyPoolWait:
		if !p.Client().Dead {
			s.idle = append(s.idle, p)
		}
	}
	return false, false
}

// AbortsAfter reports whether the client aborts a long-lived proxy after
// an attempt that ended with o: WCF aborts a channel that timed out or
// failed to open (negotiating).
func (p *ClientProxy) AbortsAfter(o results.Outcome, negotiating bool) bool {
	return (o == results.TimedOut || negotiating) && !p.PerCall
}

// Endpoints picks the endpoint each call of a site addresses
// (Proxy.Endpoints, Proxy.Pick): in turn, or at random from rnd.
type Endpoints struct {
	n    int
	next int
	rnd  *sim.Stream
}

// NewEndpoints returns the endpoint choice of p; rnd is the site's
// "endpoint" stream, used when p picks at random.
func NewEndpoints(p *Proxy, rnd *sim.Stream) *Endpoints {
	e := &Endpoints{n: p.Endpoints}
	if p.Endpoints > 1 && p.Pick == PickRandom {
		e.rnd = rnd
	}
	return e
}

// Pick is the endpoint of the next call.
func (e *Endpoints) Pick() int {
	switch {
	case e.n <= 1:
		return 0
	case e.rnd != nil:
		return e.rnd.IntN(e.n)
	}
	k := e.next
	e.next = (k + 1) % e.n
	return k
}

// Again reports whether a call whose attempt number attempt ended with o
// tries again: after a timeout or a refusal, up to Attempts, while its
// caller still waits.
func (r *Retry) Again(o results.Outcome, attempt int, callerGone bool) bool {
	return (o == results.TimedOut || o == results.Rejected) && attempt < r.Attempts && !callerGone
}

// Backoff is a call site's wait before each retry: Retry.Backoff's
// distribution shortened by up to Jitter of itself.
type Backoff struct {
	sampler sim.Sampler
	has     bool
	jitter  float64
	rnd     *sim.Stream
}

// NewBackoff returns the backoff of r drawing from the site's "backoff"
// and "jitter" streams.
func NewBackoff(r *Retry, backoff, jitter *sim.Stream) *Backoff {
	b := &Backoff{jitter: r.Jitter, rnd: jitter}
	if !r.Backoff.IsZero() {
		b.sampler, b.has = r.Backoff.Sampler(backoff), true
	}
	return b
}

// Next is the wait before the next retry.
func (b *Backoff) Next() time.Duration {
	if !b.has {
		return 0
	}
	d := b.sampler.Sample()
	if b.jitter > 0 {
		d = time.Duration(float64(d) * (1 - b.jitter*b.rnd.Float64()))
	}
	return d
}

// CallCounts are what a call site counts over the measured period, the
// same in both executors (real mode locks them).
type CallCounts struct {
	Calls, TimedOut, Rejected, Failed, Retries int64
	// Proxies built by a tier's calls (Proxy.Priced), of them found in a
	// cache, factories built and purged.
	Proxies, FactoryHits, FactoriesBuilt, FactoriesPurged int64
	NegotiationTimedOut, NegotiationFailed                int64 // attempts that ended in the negotiation
}

// Ended counts an attempt that ended with o (not completed), in its
// proxy's negotiation or not.
func (c *CallCounts) Ended(o results.Outcome, negotiating bool) {
	switch o {
	case results.TimedOut:
		c.TimedOut++
	case results.Rejected:
		c.Rejected++
	default:
		c.Failed++
	}
	if negotiating {
		switch o {
		case results.TimedOut:
			c.NegotiationTimedOut++
		case results.Failed:
			c.NegotiationFailed++
		}
	}
}

// Built counts a proxy built (DecideProxyBuild's b).
func (c *CallCounts) Built(b ProxyBuild) {
	c.Proxies++
	if b.Hit {
		c.FactoryHits++
	}
	if b.Factory {
		c.FactoriesBuilt++
	}
}

// Fill fills a call site's result with the counts.
func (c *CallCounts) Fill(r *results.Call) {
	r.Calls, r.TimedOut, r.Rejected, r.Failed, r.Retries = c.Calls, c.TimedOut, c.Rejected, c.Failed, c.Retries
	r.Proxies, r.FactoryHits, r.FactoriesBuilt, r.FactoriesPurged = c.Proxies, c.FactoryHits, c.FactoriesBuilt, c.FactoriesPurged
	r.NegotiationTimedOut, r.NegotiationFailed = c.NegotiationTimedOut, c.NegotiationFailed
}
