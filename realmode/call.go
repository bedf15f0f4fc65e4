package realmode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// connPool is one caller's connections to one target (System.Net's
// ServicePoint; Go's per-host pool): a real http.Transport whose
// MaxConnsPerHost is the modelled limit. net/http queues callers for a
// connection in FIFO order and hands a freed connection to the next caller
// still waiting, as the model's slots do. Callers of one target from one
// tier share it, as in the model.
type connPool struct {
	from   string
	host   string    // the host name it reaches (model.Topology.HostName)
	site   *callStat // the first call site using it, for the target's URL
	limit  int       // 0 = unlimited
	tr     *http.Transport
	client *http.Client
	// lanes, if set, are System.Net's per-connection queues
	// (Conn.PerConnection): one transport of one connection each; a call
	// that finds every connection busy is bound to the one with the
	// fewest waiters and waits for that one, even if another frees first.
	// They are made as they are first needed (newLaneLocked), so that a
	// limit of millions costs what the connections used cost.
	perConn bool
	lanes   []*lane

	mu      sync.Mutex
	inUse   int // connections held by calls (from GotConn to the reply read)
	waiting int // calls waiting for one
	// holder is the attempt holding each connection. net/http hands a
	// connection to the next waiter while the previous holder is still
	// finishing its read, so a holder releases only if it still holds it.
	holder map[net.Conn]*attempt

	lvInUse, lvWaiting level
}

// lane is one connection of a per-connection pool and the calls bound to it.
type lane struct {
	tr     *http.Transport
	client *http.Client
	n      int // calls bound: the one holding the connection and those waiting for it
}

func newTransport(limit, idle int) *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: -1}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if host, _, err := net.SplitHostPort(addr); err != nil || host != "127.0.0.1" {
				return nil, fmt.Errorf("realmode: refusing to dial %q: loopback only", addr)
			}
			c, err := d.DialContext(ctx, network, addr)
			noteFDs(err)
			return c, err
		},
		MaxConnsPerHost: limit,
		// Keep every connection the limit allows, so they are reused
		// rather than churned (the default keeps only 2 idle).
		MaxIdleConnsPerHost: idle,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

func newConnPool(rt *runner, from string, site *callStat, c *model.Conn) *connPool {
	limit := c.Limit
	idle := limit
	if idle <= 0 {
		idle = rt.opt.MaxInFlight
	}
	tr := newTransport(limit, idle)
	p := &connPool{from: from, host: site.host, site: site, limit: limit, tr: tr, client: &http.Client{Transport: tr}, holder: map[net.Conn]*attempt{}}
	p.perConn = c.PerConnection && limit > 0
	p.lvInUse.clk, p.lvWaiting.clk = rt.clk, rt.clk
	return p
}

// pickLaneLocked binds a call to a connection (model slots.acquireLane):
// a free one if any, else the one with the fewest calls bound, the first
// such in order.
// The connections not made yet are free and come after those made.
func (p *connPool) pickLaneLocked() *lane {
	var best *lane
	for _, l := range p.lanes {
		if l.n == 0 {
			best = l
			break
		}
		if best == nil || l.n < best.n {
			best = l
		}
	}
	if (best == nil || best.n > 0) && len(p.lanes) < p.limit {
		best = p.newLaneLocked()
	}
	best.n++
	return best
}

// newLaneLocked makes the pool's next connection.
func (p *connPool) newLaneLocked() *lane {
	tr := newTransport(1, 1)
	l := &lane{tr: tr, client: &http.Client{Transport: tr}}
	p.lanes = append(p.lanes, l)
	return l
}

// closeIdle closes the pool's idle connections (end of run).
func (p *connPool) closeIdle() {
	p.tr.CloseIdleConnections()
	p.mu.Lock()
	lanes := p.lanes
	p.mu.Unlock()
	for _, l := range lanes {
		l.tr.CloseIdleConnections()
	}
}

func (p *connPool) setInUseLocked() {
	n := len(p.holder)
	p.lvInUse.add(float64(n - p.inUse))
	p.inUse = n
}

// warm opens the pool's connections before the run (up to its limit, at
// most maxWarm), so that the first calls do not pay for dialling: in the
// model a connection is there when its slot is free. The target holds each
// warm-up request until all have arrived, so each uses its own connection.
func (p *connPool) warm(rt *runner) {
	n := min(p.limit, maxWarm)
	if n <= 0 {
		return
	}
	url := p.site.targetURL(nil) + "warm?n=" + strconv.Itoa(n) + "&id=" + strconv.Itoa(int(rt.nextID.Add(1)))
	clients := make([]*http.Client, n)
	p.mu.Lock()
	for i := range clients {
		clients[i] = p.client
		if p.perConn {
			for len(p.lanes) <= i {
				p.newLaneLocked()
			}
			clients[i] = p.lanes[i].client
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := clients[i]
			ctx, cancel := context.WithTimeout(rt.workCtx, 2*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
			if err != nil {
				return
			}
			if resp, err := client.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}

const maxWarm = 256

// callStat is one call site (a model.Call): its statistics, proxies and
// retry policy.
type callStat struct {
	rt    *runner
	idx   int
	from  string
	spec  *model.Call
	conns *connPool
	proxy *proxyState
	// Farms (farm.go): to is the target machine, host the host name the
	// call addresses; hosts are a PerHost site's per machine (hosts[0] is
	// this one); bal, rnd the client-side balancing of a direct call.
	to    int
	host  string
	hosts []*callStat
	balMu sync.Mutex
	bal   model.BalanceState
	rnd   *sim.Stream

	backoff *lockedSampler
	jmu     sync.Mutex
	jitter  *sim.Stream

	wmu  sync.Mutex
	wait *sim.Histogram // connection waits, simulated time

	calls, timedOut, rejected, failed, retries atomic.Int64

	// The proxies' ChannelFactories (model factorycache.go): fc is shared
	// with the caller's other sites to the same target; epNext, epRnd pick
	// an endpoint per call.
	fc                               *factoryCaches
	tierCall                         bool // a tier's call, not the load's, that prices its proxies (counted)
	epMu                             sync.Mutex
	epNext                           int
	epRnd                            *sim.Stream
	proxies, factHits, built, purged atomic.Int64
	negTimedOut, negFailed           atomic.Int64 // of those, ended in the negotiation
}

// factoryCaches are one caller's ChannelFactory caches for one target
// (model call.go factoryCacheOf).
type factoryCaches struct {
	from       string
	target     int
	mu         sync.Mutex
	cache, own *model.FactoryCache
}

func (rt *runner) factoryCaches(from string, spec *model.Call) *factoryCaches {
	for _, f := range rt.factories {
		if f.from == from && f.target == spec.Target {
			return f
		}
	}
	f := &factoryCaches{from: from, target: spec.Target, cache: model.NewFactoryCache(spec.Proxy.FactoryCache), own: model.NewFactoryCache(-1)}
	rt.factories = append(rt.factories, f)
	return f
}

// pickEndpoint is the endpoint a call addresses (model callStat.pickEndpoint).
func (cs *callStat) pickEndpoint() int {
	n := cs.spec.Proxy.Endpoints
	if n <= 1 {
		return 0
	}
	cs.epMu.Lock()
	defer cs.epMu.Unlock()
	if cs.epRnd != nil {
		return cs.epRnd.IntN(n)
	}
	e := cs.epNext
	cs.epNext = (e + 1) % n
	return e
}

// buildProxy decides what a new proxy for endpoint ep costs and counts it,
// for a tier's calls (model callStat.buildProxy).
func (cs *callStat) buildProxy(ep int) model.ProxyBuild {
	cs.fc.mu.Lock()
	b := model.DecideProxyBuild(&cs.spec.Proxy, cs.fc.cache, cs.fc.own, model.FactoryKey{Host: cs.host, Endpoint: ep})
	cs.fc.mu.Unlock()
	if cs.rt.measuring.Load() && cs.tierCall {
		cs.proxies.Add(1)
		if b.Hit {
			cs.factHits.Add(1)
		}
		if b.Factory {
			cs.built.Add(1)
		}
	}
	return b
}

// addFactory puts a built proxy's factory into its cache.
func (cs *callStat) addFactory(b model.ProxyBuild, ep int) {
	cs.fc.mu.Lock()
	c := cs.fc.cache
	if b.AppFactory {
		c = cs.fc.own
	}
	purged := c.Add(model.FactoryKey{Host: cs.host, Endpoint: ep})
	cs.fc.mu.Unlock()
	if purged && cs.rt.measuring.Load() && cs.tierCall {
		cs.purged.Add(1)
	}
}

func (cs *callStat) resetStats() {
	cs.wmu.Lock()
	cs.wait.Reset()
	cs.wmu.Unlock()
	cs.calls.Store(0)
	cs.timedOut.Store(0)
	cs.rejected.Store(0)
	cs.failed.Store(0)
	cs.retries.Store(0)
	cs.proxies.Store(0)
	cs.factHits.Store(0)
	cs.built.Store(0)
	cs.purged.Store(0)
	cs.negTimedOut.Store(0)
	cs.negFailed.Store(0)
}

func (cs *callStat) result(now time.Duration) results.Call {
	inM, inX := cs.conns.lvInUse.stats(now)
	wM, wX := cs.conns.lvWaiting.stats(now)
	cs.wmu.Lock()
	wmean, wp99 := cs.wait.Mean().Seconds(), cs.wait.Quantile(0.99).Seconds()
	cs.wmu.Unlock()
	return results.Call{
		From: cs.from, To: cs.host,
		Limit: cs.spec.Conn.Limit, Resolution: cs.spec.Conn.Resolution,
		InUseMean: inM, InUseMax: inX, WaitingMean: wM, WaitingMax: wX,
		WaitMean: wmean, WaitP99: wp99,
		Calls: cs.calls.Load(), TimedOut: cs.timedOut.Load(), Rejected: cs.rejected.Load(),
		Failed: cs.failed.Load(), Retries: cs.retries.Load(),
		Proxies: cs.proxies.Load(), FactoryHits: cs.factHits.Load(), FactoriesBuilt: cs.built.Load(), FactoriesPurged: cs.purged.Load(),
		NegotiationTimedOut: cs.negTimedOut.Load(), NegotiationFailed: cs.negFailed.Load(),
	}
}

// ---------------------------------------------------------------------------
// proxies (model call.go: proxyState, proxyInst, takeInst, releaseProxy)

type proxyState struct {
	mu      sync.Mutex
	spec    *model.Proxy
	shared  *proxyInst
	opening bool // shared-no-open: calls go one at a time until the open queue drains
	mutex   *sem
	pool    *sem // pool-wait: PoolSize proxies
	idle    []*proxyInst
}

// proxyInst is one client proxy. Its fields are guarded by proxyState.mu.
type proxyInst struct {
	id      uint64 // names it to the target (sessionful bindings)
	perCall bool
	fresh   bool // not used yet: pays creation cost
	dead    bool
}

// attempt is the client side of one attempt of a call.
type attempt struct {
	proxy    *proxyInst
	holdProx bool
	to       int // a direct call into a farm: the machine picked (farm.go)
	ep       int // the endpoint addressed (Proxy.Endpoints)
	// negotiating: the attempt ended during its proxy's negotiation.
	negotiating bool
}

func (cs *callStat) takeInst(a *attempt, u *user) {
	ps := cs.proxy
	ps.mu.Lock()
	defer ps.mu.Unlock()
	switch ps.spec.Kind {
	case model.ProxyShared, model.ProxySharedNoOpen:
		if ps.shared == nil || ps.shared.dead {
			// The first one was opened at start-up; one re-created after an
			// abort pays its creation and handshake like any new proxy.
			ps.shared = cs.newInst(false, ps.shared != nil)
		}
		a.proxy = ps.shared
	case model.ProxyPerUser:
		if u == nil { // open arrivals have no user: one proxy per request
			a.proxy = cs.newInst(true, true)
			return
		}
		if u.proxy == nil || u.proxy.dead {
			u.proxy = cs.newInst(false, true) // opened at the user's first call
		}
		a.proxy = u.proxy
	case model.ProxyPerCall:
		a.proxy = cs.newInst(true, true)
	case model.ProxyPoolCreate, model.ProxyPoolWait:
		for len(ps.idle) > 0 {
			p := ps.idle[len(ps.idle)-1]
			ps.idle = ps.idle[:len(ps.idle)-1]
			if !p.dead {
				a.proxy = p
				return
			}
		}
		a.proxy = cs.newInst(false, true)
	}
}

func (cs *callStat) newInst(perCall, fresh bool) *proxyInst {
	return &proxyInst{id: cs.rt.nextID.Add(1), perCall: perCall, fresh: fresh}
}

// releaseProxy lets go of the attempt's proxy; a per-call proxy is closed
// after a completed call (graceful) and aborted after a failed one (model
// call.releaseProxy).
func (cs *callStat) releaseProxy(a *attempt, graceful bool) {
	ps := cs.proxy
	ps.mu.Lock()
	p := a.proxy
	a.proxy = nil
	tell, aborted := false, false
	if p != nil {
		switch ps.spec.Kind {
		case model.ProxyPerCall:
			tell, aborted = cs.closeInstLocked(p), !graceful
		case model.ProxyPoolCreate:
			if !p.dead && len(ps.idle) < ps.spec.PoolSize {
				ps.idle = append(ps.idle, p)
			} else {
				tell = cs.closeInstLocked(p)
			}
		case model.ProxyPoolWait:
			if !p.dead {
				ps.idle = append(ps.idle, p)
			}
		}
	}
	hold := a.holdProx
	a.holdProx = false
	if hold && ps.spec.Kind == model.ProxySharedNoOpen {
		// The open queue drains when the last waiter has gone through.
		if _, w := ps.mutex.snapshot(); w == 0 {
			ps.opening = false
		}
	}
	ps.mu.Unlock()
	if tell {
		cs.closeInst(p, aborted)
	}
	if hold {
		switch ps.spec.Kind {
		case model.ProxySharedNoOpen:
			ps.mutex.release()
		case model.ProxyPoolWait:
			ps.pool.release()
		}
	}
}

// ---------------------------------------------------------------------------
// calls

var (
	errTimeout     = errors.New("call timed out")
	errWaitTimeout = errors.New("connection wait timed out")
)

// doCall makes a call with its retries (model call.begin … end). ctx is the
// caller's: when it ends (the caller was aborted, or the run ended) the call
// is abandoned and gone is true. Otherwise the outcome is what the caller
// sees.
func (rt *runner) doCall(ctx context.Context, site *callStat, from *tierRT, caller *job, u *user, root *rootReq) (o results.Outcome, gone bool) {
	a := attempt{to: -1}
	cs, answered := site, func() {}
	if direct(site.spec) {
		cs, answered = site.pick(u, &a) // client-side balancing: the machine first
	}
	if rt.measuring.Load() {
		cs.calls.Add(1)
	}
	a.ep = cs.pickEndpoint()
	for n := 1; ; n++ {
		if n > 1 && direct(site.spec) {
			cs, answered = site.pick(u, &a) // a retry goes to the next machine picked
		}
		var negotiating bool
		o, gone, negotiating = cs.attempt(ctx, &a, from, caller, u, root)
		answered()
		if gone {
			cs.releaseProxy(&a, false)
			return results.Failed, true
		}
		if o == results.Completed {
			cs.releaseProxy(&a, true)
			return o, false
		}
		if (o == results.TimedOut || negotiating) && a.proxy != nil && !a.proxy.perCall {
			cs.proxy.mu.Lock()
			tell := cs.closeInstLocked(a.proxy) // WCF aborts a channel that timed out or failed to open
			cs.proxy.mu.Unlock()
			if tell {
				cs.closeInst(a.proxy, true)
			}
		}
		if rt.measuring.Load() {
			switch o {
			case results.TimedOut:
				cs.timedOut.Add(1)
			case results.Rejected:
				cs.rejected.Add(1)
			default:
				cs.failed.Add(1)
			}
			if negotiating {
				switch o {
				case results.TimedOut:
					cs.negTimedOut.Add(1)
				case results.Failed:
					cs.negFailed.Add(1)
				}
			}
		}
		cs.releaseProxy(&a, false)
		if (o == results.TimedOut || o == results.Rejected) && n < cs.spec.Retry.Attempts && (caller == nil || !caller.orphaned()) {
			if rt.measuring.Load() {
				cs.retries.Add(1)
			}
			if rt.clk.sleep(ctx, cs.backoffDelay()) != nil {
				return results.Failed, true
			}
			continue
		}
		return o, false
	}
}

func (cs *callStat) backoffDelay() time.Duration {
	if cs.backoff == nil {
		return 0
	}
	d := cs.backoff.sample()
	if j := cs.spec.Retry.Jitter; j > 0 {
		cs.jmu.Lock()
		u := cs.jitter.Float64()
		cs.jmu.Unlock()
		d = time.Duration(float64(d) * (1 - j*u))
	}
	return d
}

// attempt runs one attempt: proxy, creation and handshake (or the
// negotiation's own legs), then the HTTP request, whose connection wait,
// encoding, sending, the server's work, receiving and decoding all count
// against the attempt's timeout, then a per-call proxy's close message.
// negotiating reports that it ended during the negotiation.
func (cs *callStat) attempt(ctx context.Context, a *attempt, from *tierRT, caller *job, u *user, root *rootReq) (o results.Outcome, gone, negotiating bool) {
	a.negotiating = false
	o, gone = cs.attempt1(ctx, a, from, caller, u, root)
	negotiating = a.negotiating
	b := &cs.spec.Binding
	if o != results.Completed || gone || !b.CloseMessage || a.proxy == nil || !a.proxy.perCall || !cs.sessionful() {
		return o, gone, negotiating
	}
	// The close: its own message and its own timeout (model call cpClose).
	cctx := ctx
	if ct := b.CloseTimeout; ct > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeoutCause(ctx, cs.rt.clk.toReal(ct), errTimeout)
		defer cancel()
	}
	o, err := cs.sendMsg(cctx, a, model.MsgClose, b.CPUBase, false, caller, u, root)
	if err != nil {
		if ctx.Err() != nil {
			return results.Failed, true, false
		}
		if errors.Is(context.Cause(cctx), errTimeout) {
			return results.TimedOut, false, false
		}
		cs.rt.netErrors.Add(1)
		return results.Failed, false, false
	}
	return o, false, false
}

var errNegTimeout = errors.New("security negotiation timed out")

// negotiate runs a new proxy's security negotiation as its own exchange
// (model call cpNegotiate): its legs, each a request to the target and a
// round trip on the wire, within the negotiation's own timeout. Unlike
// the model, which sends the legs on the call's connection once it holds
// it, each leg takes a connection from the pool for itself, before the
// call's.
func (cs *callStat) negotiate(actx context.Context, a *attempt, caller *job, u *user, root *rootReq) (results.Outcome, error) {
	b := &cs.spec.Binding
	clk := cs.rt.clk
	nctx := actx
	if nt := b.NegotiationTimeout; nt > 0 {
		var cancel context.CancelFunc
		nctx, cancel = context.WithTimeoutCause(actx, clk.toReal(nt), errNegTimeout)
		defer cancel()
	}
	for leg := range b.NegotiationLegs {
		o, err := cs.sendMsg(nctx, a, model.MsgNegotiate, b.CPUBase+b.NegotiationLegCPU(), leg == b.NegotiationLegs-1, caller, u, root)
		if err != nil {
			return results.Failed, context.Cause(nctx)
		}
		if o != results.Completed {
			return o, nil // SecurityNegotiationException, or refused at the door
		}
		if lat := cs.spec.Network.Latency; lat > 0 {
			t0 := clk.now()
			err := clk.sleep(nctx, 2*lat)
			root.charge(results.BdNet, clk.now()-t0)
			if err != nil {
				return results.Failed, context.Cause(nctx)
			}
		}
	}
	return results.Completed, nil
}

// sendMsg sends one of a proxy's own messages (a negotiation leg, its
// close) to the target and returns the target's outcome; err is non-nil
// when ctx ended first or the request failed.
func (cs *callStat) sendMsg(ctx context.Context, a *attempt, m model.MsgKind, cpu time.Duration, last bool, caller *job, u *user, root *rootReq) (results.Outcome, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cs.targetURL(a), nil)
	if err != nil {
		return results.Failed, err
	}
	h := req.Header
	h.Set(hdrSpec, strconv.Itoa(cs.idx))
	h.Set(hdrMsg, strconv.Itoa(int(m)))
	if last {
		h.Set(hdrLast, "1")
	}
	h.Set(hdrExtra, strconv.FormatInt(int64(cpu), 10))
	if root != nil {
		h.Set(hdrRoot, strconv.FormatUint(root.id, 10))
	}
	if caller != nil {
		h.Set(hdrParent, strconv.FormatUint(caller.id, 10))
	}
	if u != nil {
		h.Set(hdrUser, strconv.Itoa(u.id))
	}
	if cs.sessionful() {
		cs.setProxyHeader(h, a.proxy)
	}
	resp, err := cs.conns.client.Do(req)
	if err != nil {
		return results.Failed, err
	}
	_, berr := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if berr != nil {
		return results.Failed, berr
	}
	return outcomeOf(resp.StatusCode), nil
}

// attempt1 is the attempt up to the reply.
func (cs *callStat) attempt1(ctx context.Context, a *attempt, from *tierRT, caller *job, u *user, root *rootReq) (results.Outcome, bool) {
	rt := cs.rt
	clk := rt.clk
	spec := cs.spec
	actx := ctx
	if spec.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeoutCause(ctx, clk.toReal(spec.Timeout), errTimeout)
		defer cancel()
	}
	// classify turns a failure into an outcome: the caller gone first,
	// then the attempt's own deadline, then a connection wait timeout.
	classify := func(hctx context.Context) (results.Outcome, bool) {
		if ctx.Err() != nil {
			return results.Failed, true
		}
		if errors.Is(context.Cause(actx), errTimeout) {
			return results.TimedOut, false
		}
		if hctx != nil && errors.Is(context.Cause(hctx), errWaitTimeout) {
			return results.Failed, false
		}
		rt.netErrors.Add(1)
		return results.Failed, false
	}

	// Proxy: the no-open mutex or the proxy pool.
	ps := cs.proxy
	var s *sem
	ps.mu.Lock()
	switch {
	case ps.spec.Kind == model.ProxySharedNoOpen && ps.opening:
		s = ps.mutex
	case ps.spec.Kind == model.ProxyPoolWait:
		s = ps.pool
	}
	ps.mu.Unlock()
	if s != nil {
		t0 := clk.now()
		err := s.acquire(actx)
		root.charge(results.BdThrottle, clk.now()-t0)
		if err != nil {
			return classify(nil)
		}
		a.holdProx = true
	}
	cs.takeInst(a, u)

	// A new proxy costs the caller CPU to build (ChannelFactory not cached)
	// and, on a secure binding, a negotiation handshake.
	ps.mu.Lock()
	fresh := a.proxy.fresh
	a.proxy.fresh = false
	ps.mu.Unlock()
	if fresh {
		b := &spec.Binding
		build := cs.buildProxy(a.ep)
		if cost := build.Cost(&spec.Proxy) + b.SessionCPU; from != nil && cost > 0 {
			if from.useCPU(actx, cost, root) != nil {
				return classify(nil)
			}
		}
		if build.Add {
			// The channel is built: its factory goes into the cache.
			cs.addFactory(build, a.ep)
		}
		if hs := time.Duration(2*b.SessionRoundTrips) * spec.Network.Latency; hs > 0 && b.NegotiationLegs == 0 {
			t0 := clk.now()
			err := clk.sleep(actx, hs)
			root.charge(results.BdNet, clk.now()-t0)
			if err != nil {
				return classify(nil)
			}
		}
	}

	if fresh && spec.Binding.NegotiationLegs > 0 {
		o, err := cs.negotiate(actx, a, caller, u, root)
		if err != nil || o != results.Completed {
			a.negotiating = true
		}
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, errNegTimeout) {
				return results.TimedOut, false // "unable to finish the security negotiation within the configured timeout"
			}
			return classify(nil)
		}
		if o != results.Completed {
			return o, false
		}
	}

	// Connection: refuse at once when too many wait (Envoy max_pending).
	// Calls count as waiting from the moment they ask the transport until
	// it hands them a connection, so the ones beyond the limit are the
	// queue the model would have.
	pool := cs.conns
	pool.mu.Lock()
	// NoPending (max_pending = 0): refused whenever no connection is free.
	if mp := spec.Conn.MaxPending; (mp > 0 || spec.Conn.NoPending) && pool.limit > 0 && pool.inUse+pool.waiting-pool.limit >= mp {
		pool.mu.Unlock()
		return results.Rejected, false
	}
	pool.waiting++
	pool.lvWaiting.add(1)
	client := pool.client
	var ln *lane
	if pool.perConn {
		ln = pool.pickLaneLocked()
		client = ln.client
	}
	pool.mu.Unlock()

	hctx := actx
	var waitTimer *time.Timer
	if wt := spec.Conn.WaitTimeout; wt > 0 {
		var hcancel context.CancelCauseFunc
		hctx, hcancel = context.WithCancelCause(actx)
		defer hcancel(nil)
		waitTimer = time.AfterFunc(clk.toReal(wt), func() { hcancel(errWaitTimeout) })
		defer waitTimer.Stop()
	}
	got := false
	var conn net.Conn
	var sendErr error
	t0 := clk.now()
	trace := &httptrace.ClientTrace{
		// GotConn runs in this goroutine, before the request is written:
		// the encoding and the send latency happen with the connection
		// held, as in the model.
		GotConn: func(info httptrace.GotConnInfo) {
			if got {
				return
			}
			got = true
			conn = info.Conn
			if waitTimer != nil {
				waitTimer.Stop()
			}
			now := clk.now()
			pool.mu.Lock()
			pool.waiting--
			pool.lvWaiting.add(-1)
			pool.holder[conn] = a
			pool.setInUseLocked()
			pool.mu.Unlock()
			if rt.measuring.Load() {
				cs.wmu.Lock()
				cs.wait.Record(clk.toSim(now - t0))
				cs.wmu.Unlock()
			}
			root.charge(results.BdConn, now-t0)
			if d := spec.Binding.Cost(spec.RequestKB); d > 0 && from != nil {
				sendErr = from.useCPU(actx, d, root)
			}
			if d := spec.Wire(spec.RequestKB); d > 0 && sendErr == nil {
				t1 := clk.now()
				sendErr = clk.sleep(actx, d)
				root.charge(results.BdNet, clk.now()-t1)
			}
		},
	}
	defer func() {
		pool.mu.Lock()
		if got {
			if pool.holder[conn] == a {
				delete(pool.holder, conn)
				pool.setInUseLocked()
			}
		} else {
			pool.waiting--
			pool.lvWaiting.add(-1)
		}
		if ln != nil {
			ln.n--
		}
		pool.mu.Unlock()
	}()

	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(hctx, trace), http.MethodPost, cs.targetURL(a), nil)
	if err != nil {
		rt.netErrors.Add(1)
		return results.Failed, false
	}
	req.Header.Set(hdrSpec, strconv.Itoa(cs.idx))
	if root != nil {
		req.Header.Set(hdrRoot, strconv.FormatUint(root.id, 10))
	}
	if caller != nil {
		req.Header.Set(hdrParent, strconv.FormatUint(caller.id, 10))
	}
	if u != nil {
		req.Header.Set(hdrUser, strconv.Itoa(u.id)) // a load agent calls on its behalf
	}
	if cs.sessionful() {
		cs.setProxyHeader(req.Header, a.proxy)
	}
	if fresh && spec.Binding.SessionCPU > 0 && spec.Binding.NegotiationLegs == 0 {
		// The server's side of a new proxy's security negotiation.
		req.Header.Set(hdrExtra, strconv.FormatInt(int64(spec.Binding.SessionCPU), 10))
	}
	resp, err := client.Do(req)
	if err != nil || sendErr != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return classify(hctx)
	}
	o := outcomeOf(resp.StatusCode)
	if o != results.Completed {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.Header.Get(hdrRefused) == "1" && a.proxy != nil {
			// Sent off its session's machine: the channel faults and is
			// aborted (model call.route).
			cs.proxy.mu.Lock()
			tell := cs.closeInstLocked(a.proxy)
			cs.proxy.mu.Unlock()
			if tell {
				cs.closeInst(a.proxy, true)
			}
		}
		return o, false
	}
	// Receive and decode with the connection held (the body is unread).
	var rerr error
	// A one-way call's answer is an acknowledgement: no reply message to
	// transfer or decode (model call.replyKB).
	oneWay := rt.top.Tiers[spec.Target].OneWay()
	replyKB := spec.ReplyKB
	if oneWay {
		replyKB = 0
	}
	if d := spec.Wire(replyKB); d > 0 {
		t1 := clk.now()
		rerr = clk.sleep(actx, d)
		root.charge(results.BdNet, clk.now()-t1)
	}
	if d := spec.Binding.Cost(spec.ReplyKB); rerr == nil && d > 0 && from != nil && !oneWay {
		rerr = from.useCPU(actx, d, root)
	}
	_, berr := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if rerr != nil || berr != nil {
		return classify(hctx)
	}
	return results.Completed, false
}
