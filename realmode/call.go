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

// pickLaneLocked binds a call to a connection (model.PickLane). The
// connections not made yet are free and come after those made.
func (p *connPool) pickLaneLocked() *lane {
	var best *lane
	if k := model.PickLane(len(p.lanes), func(k int) int { return p.lanes[k].n }); k >= 0 {
		best = p.lanes[k]
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

	bmu     sync.Mutex
	backoff *model.Backoff

	wmu  sync.Mutex
	wait *sim.Histogram // connection waits, simulated time

	cmu    sync.Mutex
	counts model.CallCounts // the measured period's

	// The proxies' ChannelFactories (model.Factories, under the lock of
	// the callers' caches: fmu); endpoints picks an endpoint per call
	// (epMu).
	fmu       *sync.Mutex
	factories *model.Factories
	tierCall  bool // a tier's call, not the load's, that prices its proxies (counted)
	epMu      sync.Mutex
	endpoints *model.Endpoints
}

// buildProxy decides what a new proxy for endpoint ep costs and counts it,
// for a tier's calls (the load's proxies are the load tool's).
func (cs *callStat) buildProxy(ep int) model.ProxyBuild {
	cs.fmu.Lock()
	b := cs.factories.Build(&cs.spec.Proxy, ep)
	cs.fmu.Unlock()
	if cs.rt.measuring.Load() && cs.tierCall {
		cs.count(func(c *model.CallCounts) { c.Built(b) })
	}
	return b
}

// addFactory puts a built proxy's factory into its cache.
func (cs *callStat) addFactory(b model.ProxyBuild, ep int) {
	cs.fmu.Lock()
	purged := cs.factories.Add(b, ep)
	cs.fmu.Unlock()
	if purged && cs.rt.measuring.Load() && cs.tierCall {
		cs.count(func(c *model.CallCounts) { c.FactoriesPurged++ })
	}
}

func (cs *callStat) resetStats() {
	cs.wmu.Lock()
	cs.wait.Reset()
	cs.wmu.Unlock()
	cs.count(func(c *model.CallCounts) { *c = model.CallCounts{} })
}

func (cs *callStat) result(now time.Duration) results.Call {
	inM, inX := cs.conns.lvInUse.stats(now)
	wM, wX := cs.conns.lvWaiting.stats(now)
	cs.wmu.Lock()
	wmean, wp99 := cs.wait.Mean().Seconds(), cs.wait.Quantile(0.99).Seconds()
	cs.wmu.Unlock()
	r := results.Call{
		From: cs.from, To: cs.host,
		Limit: cs.spec.Conn.Limit, Resolution: cs.spec.Conn.Resolution,
		InUseMean: inM, InUseMax: inX, WaitingMean: wM, WaitingMax: wX,
		WaitMean: wmean, WaitP99: wp99,
	}
	cs.count(func(c *model.CallCounts) { c.Fill(&r) })
	return r
}

// ---------------------------------------------------------------------------
// proxies

// proxyState is one call site's client proxies (model.Proxies) and the
// semaphores of their gates; mu guards the proxies and their
// model.ClientProxy.
type proxyState struct {
	mu sync.Mutex
	*model.Proxies[*proxyInst]
	mutex *sem // model.GateOpen: calls go one at a time while opening
	pool  *sem // model.GatePool: PoolSize proxies
}

// proxyInst is one client proxy.
type proxyInst struct {
	model.ClientProxy
	id uint64 // names it to the target (sessionful bindings)
}

// Client is the proxy's client side (model.ProxyOf).
func (p *proxyInst) Client() *model.ClientProxy { return &p.ClientProxy }

// attempt is the client side of one attempt of a call.
type attempt struct {
	proxy    *proxyInst
	holdProx bool
	gate     model.ProxyGate // the proxy gate it waits for or holds
	to       int             // a direct call into a farm: the machine picked (farm.go)
	ep       int             // the endpoint addressed (Proxy.Endpoints)
	// negotiating: the attempt ended during its proxy's negotiation.
	negotiating bool
}

// takeInst takes the attempt's proxy (model.Proxies.Take).
func (cs *callStat) takeInst(a *attempt, u *user) {
	ps := cs.proxy
	ps.mu.Lock()
	defer ps.mu.Unlock()
	var own **proxyInst
	if u != nil {
		own = &u.proxy
	}
	a.proxy = ps.Take(own)
}

// releaseProxy lets go of the attempt's proxy (model.Proxies.Release): a
// per-call proxy is closed after a completed call (graceful) and aborted
// after a failed one; then the gate it held.
func (cs *callStat) releaseProxy(a *attempt, graceful bool) {
	ps := cs.proxy
	ps.mu.Lock()
	p := a.proxy
	a.proxy = nil
	tell := false
	close, aborted := ps.Release(p, graceful)
	if close {
		tell = cs.closeInstLocked(p)
	}
	hold := a.holdProx
	a.holdProx = false
	if hold && a.gate == model.GateOpen {
		_, w := ps.mutex.snapshot()
		ps.Passed(a.gate, w)
	}
	ps.mu.Unlock()
	if tell {
		cs.closeInst(p, aborted)
	}
	if hold {
		switch a.gate {
		case model.GateOpen:
			ps.mutex.release()
		case model.GatePool:
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

// doCall makes a call with its retries (model.AttemptFailed). ctx is the
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
		cs.count(func(c *model.CallCounts) { c.Calls++ })
	}
	cs.epMu.Lock()
	a.ep = cs.endpoints.Pick()
	cs.epMu.Unlock()
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
		var client *model.ClientProxy
		if a.proxy != nil {
			client = &a.proxy.ClientProxy
		}
		var abort, retry bool
		cs.count(func(c *model.CallCounts) {
			if !rt.measuring.Load() {
				c = nil
			}
			abort, retry = model.AttemptFailed(client, &cs.spec.Retry, c, o, negotiating, n, caller != nil && caller.orphaned())
		})
		if abort {
			cs.proxy.mu.Lock()
			tell := cs.closeInstLocked(a.proxy)
			cs.proxy.mu.Unlock()
			if tell {
				cs.closeInst(a.proxy, true)
			}
		}
		cs.releaseProxy(&a, false)
		if retry {
			cs.bmu.Lock()
			d := cs.backoff.Next()
			cs.bmu.Unlock()
			if rt.clk.sleep(ctx, d) != nil {
				return results.Failed, true
			}
			continue
		}
		return o, false
	}
}

// count counts under the site's lock.
func (cs *callStat) count(f func(*model.CallCounts)) {
	cs.cmu.Lock()
	f(&cs.counts)
	cs.cmu.Unlock()
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
	if o != results.Completed || gone || a.proxy == nil || !b.SendsClose(a.proxy.PerCall, cs.sessionful()) {
		return o, gone, negotiating
	}
	// The close: its own message and its own timeout.
	cctx := ctx
	if ct := b.CloseTimeout; ct > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeoutCause(ctx, cs.rt.clk.toReal(ct), errTimeout)
		defer cancel()
	}
	cpu, _ := b.Message(model.MsgClose, 0)
	o, err := cs.sendMsg(cctx, a, model.MsgClose, cpu, false, caller, u, root)
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
// (model.Binding.NegotiatesApart): its legs, each a request to the target
// (Binding.Message) and a round trip on the wire (Call.LegWire), within
// the negotiation's own timeout. Unlike the simulator, which sends the
// legs on the call's connection once it holds it, each leg takes a
// connection from the pool for itself, before the call's.
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
		cpu, last := b.Message(model.MsgNegotiate, leg)
		o, err := cs.sendMsg(nctx, a, model.MsgNegotiate, cpu, last, caller, u, root)
		if err != nil {
			return results.Failed, context.Cause(nctx)
		}
		if o != results.Completed {
			return o, nil // SecurityNegotiationException, or refused at the door
		}
		if d := cs.spec.LegWire(); d > 0 {
			t0 := clk.now()
			err := clk.sleep(nctx, d)
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
	switch a.gate = ps.Gate(); a.gate {
	case model.GateOpen:
		s = ps.mutex
	case model.GatePool:
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
	fresh := a.proxy.Fresh
	a.proxy.Fresh = false
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
		if hs := spec.HandshakeWire(); hs > 0 && !b.NegotiatesApart() {
			t0 := clk.now()
			err := clk.sleep(actx, hs)
			root.charge(results.BdNet, clk.now()-t0)
			if err != nil {
				return classify(nil)
			}
		}
	}

	if fresh && spec.Binding.NegotiatesApart() {
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
	if queued := pool.inUse + pool.waiting - pool.limit; spec.Conn.Refuses(pool.limit <= 0 || queued < 0, queued) {
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
			if d := spec.EncodeCPU(); d > 0 && from != nil {
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
	if d := spec.Binding.ServiceSessionCPU(fresh); d > 0 {
		// The server's side of a new proxy's security negotiation.
		req.Header.Set(hdrExtra, strconv.FormatInt(int64(d), 10))
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
			// Sent off its session's machine (model.ChooseReplica): the
			// channel faults and is aborted.
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
	// transfer or decode (model.Call.ReplyWire, DecodeCPU).
	oneWay := rt.top.Tiers[spec.Target].OneWay()
	if d := spec.ReplyWire(oneWay); d > 0 {
		t1 := clk.now()
		rerr = clk.sleep(actx, d)
		root.charge(results.BdNet, clk.now()-t1)
	}
	if d := spec.DecodeCPU(oneWay); rerr == nil && d > 0 && from != nil {
		rerr = from.useCPU(actx, d, root)
	}
	_, berr := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if rerr != nil || berr != nil {
		return classify(hctx)
	}
	return results.Completed, false
}
