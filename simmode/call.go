package simmode

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// callStat is the shared state and statistics of one caller→target pair:
// its connection pool (System.Net's ServicePoint, Go's per-host limit) and
// the proxies of each call site.
type callStat struct {
	r      *runner
	from   string
	fromRT *tierRT // nil: the load
	to     int     // the target tier (the replica, for a machine addressed by its own name)
	host   string  // the host name the call addresses (Topology.HostName)
	spec   *model.Call
	conns  *slots
	// Farms (farmrt.go): sticky binds the pool's connections to replicas
	// (BalanceSticky); hosts are a PerHost call's statistics per replica
	// (hosts[0] is this one), bal and rnd its client-side balancing.
	sticky  *stickyConns
	hosts   []*callStat
	bal     model.BalanceState
	rnd     *sim.Stream
	proxy   *proxyState
	backoff *model.Backoff
	// deadlines and waitTimeouts schedule the call's timeout and its
	// connection wait timeout: fixed delays, so lanes, where the cancellation
	// of a deadline that did not fire (nearly all of them) costs O(1).
	deadlines, waitTimeouts *sim.Lane
	// The call site's fixed delays: the request's and the reply's
	// transfers, the balancer's latency, a new proxy's handshake.
	send, recv, lbIn, shake fixedDelay

	lvInUse, lvWaiting level
	wait               *sim.Histogram
	counts             model.CallCounts // the measured period's
	// The proxies' ChannelFactories (factorycache.go): factories is the
	// process's cache for this target, shared with its other call sites;
	// own the application's factories (ConstructChannelFactory); endpoints
	// picks an endpoint per call.
	factories *model.Factories
	endpoints *model.Endpoints
}

func (r *runner) callStat(spec *model.Call, from *tierRT) *callStat {
	if r.callOf != nil {
		if cs := r.callOf[spec]; cs != nil {
			return cs
		}
		return r.newCallStat(spec, from, 0)
	}
	for _, cs := range r.calls {
		if cs.spec == spec {
			return cs
		}
	}
	return r.newCallStat(spec, from, 0)
}

// manyCalls is where the call sites are found by a map rather than a scan
// (farms of many machines make many call sites).
const manyCalls = 8

// newCallStat makes the statistics of a call site; rep is the replica a
// PerHost call addresses (0 otherwise).
func (r *runner) newCallStat(spec *model.Call, from *tierRT, rep int) *callStat {
	name := "load"
	if from != nil {
		name = from.spec.Name
	}
	cs := &callStat{r: r, from: name, fromRT: from, to: spec.Target, host: r.top.HostName(spec, rep), spec: spec, wait: sim.NewHistogram()}
	if f := spec.Farm; f != nil && spec.PerHost {
		cs.to = f.Replicas[rep]
	}
	// Callers of one target host from one machine share its connection pool.
	r.eachCall(func(o *callStat) {
		if o.from == name && o.host == cs.host {
			cs.conns, cs.sticky = o.conns, o.sticky
		}
	})
	if cs.conns == nil {
		if f := spec.Farm; f != nil && !spec.PerHost && f.Balancer.Policy == model.BalanceSticky {
			cs.sticky = &stickyConns{}
		}
		if spec.Conn.PerConnection && spec.Conn.Limit > 0 {
			cs.conns = newLaneSlots(r.e, spec.Conn.Limit)
		} else {
			cs.conns = newSlots(r.e, spec.Conn.Limit)
		}
		c := cs
		cs.conns.OnChange = func() {
			now := r.e.Now()
			c.lvInUse.Set(now, float64(c.conns.InUse))
			c.lvWaiting.Set(now, float64(c.conns.Waiting))
		}
	}
	cs.proxy = &proxyState{}
	cs.proxy.Proxies = model.NewProxies(&spec.Proxy, func(perCall, fresh bool) *proxyInst {
		cs.proxy.nextID++
		return &proxyInst{id: cs.proxy.nextID, ClientProxy: model.ClientProxy{PerCall: perCall, Fresh: fresh}, r: r, spec: spec}
	})
	cs.factories = r.factories.For(name, spec, cs.host)
	if spec.Proxy.Kind == model.ProxySharedNoOpen {
		cs.proxy.mutex = newSlots(r.e, 1)
	}
	if spec.Proxy.Kind == model.ProxyPoolWait {
		cs.proxy.pool = newSlots(r.e, spec.Proxy.PoolSize)
	}
	path := fmtPath("call", name, cs.host)
	if spec.Farm != nil && spec.PerHost && rep == 0 {
		cs.bal = model.NewBalanceState(len(spec.Farm.Replicas))
		cs.rnd = r.e.Stream(path + "/balance")
	}
	cs.backoff = model.NewBackoff(&spec.Retry, r.e.Stream(path+"/backoff"), r.e.Stream(path+"/jitter"))
	cs.endpoints = model.NewEndpoints(&spec.Proxy, r.e.Stream(path+"/endpoint"))
	cs.send = r.fixedDelay(spec.Wire(spec.RequestKB), sim.ClassCompletion)
	recv := spec.ReplyWire(r.top.Tiers[spec.Target].OneWay())
	if f := spec.Farm; f != nil && !spec.PerHost {
		recv += f.Balancer.Latency
		cs.lbIn = r.fixedDelay(f.Balancer.Latency, sim.ClassCompletion)
	}
	cs.recv = r.fixedDelay(recv, sim.ClassCompletion)
	cs.shake = r.fixedDelay(spec.HandshakeWire(), sim.ClassCompletion)
	if spec.Timeout > 0 {
		cs.deadlines = r.e.NewLane(spec.Timeout, sim.ClassTimeout)
	}
	if spec.Conn.WaitTimeout > 0 {
		cs.waitTimeouts = r.e.NewLane(spec.Conn.WaitTimeout, sim.ClassTimeout)
	}
	if rep > 0 {
		return cs // listed by its call site's first (hosts)
	}
	r.calls = append(r.calls, cs)
	if len(r.calls) > manyCalls {
		if r.callOf == nil {
			r.callOf = map[*model.Call]*callStat{}
			for _, o := range r.calls {
				r.callOf[o.spec] = o
			}
		}
		r.callOf[spec] = cs
	}
	if from != nil {
		from.out = append(from.out, cs)
	}
	return cs
}

// eachCall calls f on every call site's statistics, a PerHost site's per
// replica, in order.
func (r *runner) eachCall(f func(*callStat)) {
	for _, cs := range r.calls {
		cs.each(f)
	}
}

// each calls f on cs and, for a PerHost site, its other replicas'.
func (cs *callStat) each(f func(*callStat)) {
	if cs.hosts == nil {
		f(cs)
		return
	}
	for _, h := range cs.hosts {
		if h != nil {
			f(h)
		}
	}
}

func (cs *callStat) resetStats(now sim.Time) {
	cs.lvInUse.Reset(now)
	cs.lvWaiting.Reset(now)
	cs.wait.Reset()
	cs.counts = model.CallCounts{}
}

func (cs *callStat) result(now sim.Time) results.Call {
	r := results.Call{
		From: cs.from, To: cs.host,
		Limit: cs.spec.Conn.Limit, Resolution: cs.spec.Conn.Resolution,
		InUseMean: cs.lvInUse.Mean(now), InUseMax: cs.lvInUse.Max(now),
		WaitingMean: cs.lvWaiting.Mean(now), WaitingMax: cs.lvWaiting.Max(now),
		WaitMean: cs.wait.Mean().Seconds(), WaitP99: cs.wait.Quantile(0.99).Seconds(),
	}
	cs.counts.Fill(&r)
	return r
}

// buildProxy decides what constructing a new proxy for endpoint ep costs
// and counts it, for a tier's calls (the load's proxies are the load
// tool's).
func (cs *callStat) buildProxy(ep int) model.ProxyBuild {
	b := cs.factories.Build(&cs.spec.Proxy, ep)
	if cs.r.measuring && cs.fromRT != nil && cs.spec.Proxy.Priced() {
		cs.counts.Built(b)
	}
	return b
}

// addFactory puts a built proxy's factory into its cache.
func (cs *callStat) addFactory(b model.ProxyBuild, ep int) {
	if cs.factories.Add(b, ep) && cs.r.measuring && cs.fromRT != nil && cs.spec.Proxy.Priced() {
		cs.counts.FactoriesPurged++
	}
}

// ---------------------------------------------------------------------------
// proxies

// proxyState is one call site's client proxies (model.Proxies) and the
// slots of their gates.
type proxyState struct {
	*model.Proxies[*proxyInst]
	mutex  *slots // model.GateOpen: calls go one at a time while opening
	pool   *slots // model.GatePool: PoolSize proxies
	nextID int
}

// proxyInst is one client proxy (channel). A sessionful binding keeps a
// server session (and, PerSession, an instance) for the proxy's life.
type proxyInst struct {
	id                int
	bound             bool // a farm's replica holds its session (sessionful bindings)
	replica           int  // which, when bound
	model.ClientProxy      // its client side
	model.Session          // its server side
	sessionTier       *tierRT
	lock              *slots   // PerSession + ConcurrencyMode Single
	opener            *job     // the job opening the session, if one is
	sessWait          []jobRef // jobs waiting for that session
	// idle is the session's inactivity timer (SessionIdleTimeout).
	idle sim.EventID
	// pendTier is the tier where the proxy's security session is pending
	// (negotiated, not yet opened: WCF.MaxPendingSessions); pendTimer its
	// expiry when no call comes to open it.
	pendTier  *tierRT
	pendTimer sim.EventID
	r         *runner
	spec      *model.Call
}

// Client is the proxy's client side (model.ProxyOf).
func (p *proxyInst) Client() *model.ClientProxy { return &p.ClientProxy }

// closeSession ends the proxy's server session, if any (model.Session.Close).
func (p *proxyInst) closeSession() {
	if p.idle.Valid() {
		p.r.e.Cancel(p.idle)
		p.idle = sim.EventID{}
	}
	if session, instance := p.Close(); session {
		t := p.sessionTier
		t.sessions.Release()
		if instance {
			t.Instances.Release()
		}
	}
}

// close is the client closing the proxy.
func (p *proxyInst) close() {
	p.Dead = true
	if p.ClientClosed(false) {
		p.settle()
	}
}

// abort is the client aborting the proxy (WCF aborts a channel after a
// timeout or a fault): no message tells the server.
func (p *proxyInst) abort() {
	p.Dead = true
	if p.ClientClosed(true) {
		p.settle()
		if p.pendTier != nil && !p.pendTimer.Valid() {
			// Negotiated, but the call that would open it never came:
			// the service drops it after its inactivity timeout.
			if d := p.pendTier.spec.WCF.PendingSessionTimeout; d > 0 {
				p.pendTimer = p.r.e.Schedule(d, sim.ClassTimeout, p, pkPending, nil)
			}
		}
	}
}

// settle is a closed proxy's last job ending (model.Session.Settle).
func (p *proxyInst) settle() {
	if p.idle.Valid() && p.Aborted && p.spec.Binding.SessionIdleTimeout > 0 && p.Open {
		return // its inactivity timer runs
	}
	now := p.r.e.Now()
	closeNow, at := p.Settle(time.Duration(now), p.spec.Binding.SessionIdleTimeout)
	if closeNow {
		p.closeSession()
		return
	}
	p.idle = p.r.e.Schedule(sim.Time(at).Sub(now), sim.ClassTimeout, p, pkIdle, nil)
}

// pend is the proxy's security session's token issued at t; it reports
// false when t already has WCF.MaxPendingSessions (model.Session.Pend).
func (p *proxyInst) pend(t *tierRT) bool {
	if p.pendTier != nil && p.pendTier != t {
		return model.DecideNegotiation(t.st.Pending, t.spec.WCF.MaxPendingSessions)
	}
	if !p.Pend(&t.st, t.spec.WCF.MaxPendingSessions) {
		return false
	}
	p.pendTier = t
	return true
}

// unpend ends the proxy's pending state: opened, gone, or expired.
func (p *proxyInst) unpend() {
	if p.pendTier == nil || !p.Unpend(&p.pendTier.st) {
		return
	}
	p.pendTier = nil
	if p.pendTimer.Valid() {
		p.r.e.Cancel(p.pendTimer)
		p.pendTimer = sim.EventID{}
	}
}

const (
	pkIdle int32 = iota
	pkPending
)

func (p *proxyInst) OnEvent(e *sim.Engine, kind int32, arg any) {
	switch kind {
	case pkIdle:
		p.idle = sim.EventID{}
		if p.Jobs == 0 {
			p.closeSession() // receiveTimeout: the idle session is dropped
		}
	case pkPending:
		p.pendTimer = sim.EventID{}
		if p.Jobs == 0 {
			p.unpend()
		}
	}
}

// ---------------------------------------------------------------------------
// calls

// call is one request/reply from a caller (a job, or a user of the load) to
// a target tier, with its attempts.
type call struct {
	r      *runner
	cs     *callStat
	spec   *model.Call
	from   *tierRT // nil: the load
	caller *job    // nil: the load
	user   *user
	root   rootRef

	attempt   int
	phase     int
	done      bool
	gaveUp    bool // the caller stopped waiting: the server's work is orphaned
	outcome   results.Outcome
	wr        waitRec
	waitCat   int
	cpu       sim.PSJob
	timer     sim.EventID
	deadline  sim.EventID
	proxy     *proxyInst
	holdProx  bool            // holds the gate (the no-open mutex or a pool-wait slot)
	gate      model.ProxyGate // the proxy gate it waits for or holds
	holdConn  bool
	holdCore  bool          // CPUFCFS caller: holds one of its tier's cores
	cpuNeed   time.Duration // CPUFCFS caller: the demand to run on it
	free      bool          // on the free list
	keep      bool          // never recycle: a stale event may still arrive
	lane      int           // the connection held, in a per-connection pool
	server    *job
	handshake time.Duration
	newProxy  bool // this attempt created its proxy
	ep        int  // the endpoint addressed (Proxy.Endpoints)
	build     model.ProxyBuild
	addFact   bool // the new proxy's factory goes into a cache once built
	phaseAt   sim.Time
	// The negotiation as its own exchange (Binding.NegotiationLegs): the
	// legs answered so far and the negotiation's own timeout.
	negLeg   int
	negTimer sim.EventID

	// Farms (farmrt.go): base is the call site's statistics (cs is a
	// replica's for PerHost); replica the machine chosen, sent whether bal
	// counts it as outstanding; holdLB holds a place in the balancer;
	// connID the connection held, for BalanceSticky; broken: the attempt
	// failed, closing its connection. clientCPU: the caller pays its side
	// of the binding (not the load, nor a load agent).
	base      *callStat
	bal       *model.BalanceState
	replica   int
	sent      bool
	holdLB    bool
	broken    bool
	connID    int
	clientCPU bool
}

const (
	cpProxy = iota
	cpCreate
	cpHandshake
	cpConn
	cpNegotiate // a new proxy's negotiation legs (Binding.NegotiationLegs)
	cpEncode
	cpSend
	cpBalance // a farm's virtual host: the balancer's door
	cpLBIn    // and its latency
	cpServer
	cpRecv
	cpDecode
	cpClose // a per-call proxy's close message (Binding.CloseMessage)
	cpDone
)

const (
	ckGranted int32 = iota
	ckCPUDone
	ckTimer
	ckDeadline
	ckBackoff
	ckWaitTimeout
	ckCore // CPUFCFS caller: a core was granted
	ckNegTimeout
	ckLegWire // a negotiation leg's round trip on the wire
)

func (r *runner) newCall(spec *model.Call, from *tierRT, caller *job, u *user, root rootRef) *call {
	var c *call
	if n := len(r.freeCalls); n > 0 {
		c = r.freeCalls[n-1]
		r.freeCalls = r.freeCalls[:n-1]
		*c = call{}
	} else {
		c = &call{}
	}
	c.r, c.cs, c.spec, c.from, c.caller, c.user, c.root = r, r.callStat(spec, from), spec, from, caller, u, root
	c.base, c.clientCPU = c.cs, from != nil && !from.spec.Agent
	return c
}

// releaseCall recycles a call once its caller has taken the outcome. By
// then nothing else refers to it: its server job was detached, its events
// cancelled, its waits abandoned (see stop).
func (r *runner) releaseCall(c *call) {
	if c.free {
		panic("model: call released twice")
	}
	if c.keep {
		return
	}
	c.free = true
	r.freeCalls = append(r.freeCalls, c)
}

// orphaned reports whether nobody waits for this call's reply any more.
func (c *call) orphaned() bool {
	if c.gaveUp || c.done {
		return true
	}
	if c.caller != nil {
		return c.caller.orphaned()
	}
	return false
}

// begin starts the first attempt.
func (c *call) begin() {
	if c.spec.PicksHost() {
		c.pickHost()
	}
	if c.r.measuring {
		c.cs.counts.Calls++
	}
	c.ep = c.cs.endpoints.Pick()
	c.attemptStart()
}

func (c *call) attemptStart() {
	c.attempt++
	if c.attempt > 1 && c.spec.PicksHost() {
		c.pickHost() // a retry goes to the next machine the caller picks
	}
	c.broken = false
	c.negLeg = 0
	c.phase = cpProxy
	if c.spec.Timeout > 0 {
		c.deadline = c.cs.deadlines.Schedule(c, ckDeadline, nil)
	}
	c.advance()
}

func (c *call) OnEvent(e *sim.Engine, kind int32, arg any) {
	if c.free {
		panic("model: event for a recycled call")
	}
	if c.done {
		return // an event that was on its way when the call was abandoned
	}
	if kind == ckGranted || kind == ckCore {
		if !c.wr.TakeGrant() {
			return // a grant that was given back (see model.Waiter.Cancel)
		}
	}
	now := e.Now()
	switch kind {
	case ckGranted:
		c.root.charge(c.waitCat, now.Sub(c.phaseAt))
		if c.phase == cpConn {
			c.holdConn = true
			c.lane = c.wr.Lane()
			if c.cs.sticky != nil {
				c.connID = c.cs.sticky.take(c)
			}
			if c.timer.Valid() {
				e.Cancel(c.timer)
				c.timer = sim.EventID{}
			}
			if c.r.measuring {
				c.cs.wait.Record(now.Sub(c.phaseAt))
			}
		} else if c.phase == cpBalance {
			c.holdLB = true
		} else {
			c.holdProx = true
			c.takeInst()
		}
		c.phase++
		c.advance()
	case ckCore:
		c.onCore()
	case ckCPUDone:
		if c.holdCore {
			c.timer = sim.EventID{}
			c.holdCore = false
			c.from.cores.Release()
		}
		c.from.cpuOut()
		c.root.charge(results.BdCPU, now.Sub(c.phaseAt))
		c.phase++
		c.advance()
	case ckTimer:
		c.timer = sim.EventID{}
		c.root.charge(results.BdNet, now.Sub(c.phaseAt))
		c.phase++
		c.advance()
	case ckDeadline:
		c.deadline = sim.EventID{}
		c.fail(results.TimedOut)
	case ckWaitTimeout:
		c.timer = sim.EventID{}
		c.fail(results.Failed)
	case ckBackoff:
		c.timer = sim.EventID{}
		c.attemptStart()
	case ckNegTimeout:
		c.negTimer = sim.EventID{}
		c.fail(results.TimedOut) // "unable to finish the security negotiation within the configured timeout"
	case ckLegWire:
		c.timer = sim.EventID{}
		c.root.charge(results.BdNet, now.Sub(c.phaseAt))
		c.advance()
	}
}

// takeInst picks the proxy instance for this attempt once the proxy phase
// may proceed (model.Proxies.Take).
func (c *call) takeInst() {
	var own **proxyInst
	if c.user != nil {
		own = &c.user.proxy
	}
	c.proxy = c.cs.proxy.Take(own)
}

func (c *call) callerCPU(d time.Duration) {
	c.phaseAt = c.r.e.Now()
	if cores := c.from.cores; cores != nil {
		// FCFS: wait for a core, then hold it for the demand.
		c.cpuNeed = d
		if !c.wr.acquire(cores, c, ckCore, nil) {
			return
		}
		c.onCore()
		return
	}
	c.from.cpuIn()
	c.from.cpu.Start(&c.cpu, d, c, ckCPUDone, nil)
}

func (c *call) onCore() {
	c.holdCore = true
	c.from.cpuIn()
	c.timer = c.r.e.Schedule(c.cpuNeed, sim.ClassCompletion, c, ckCPUDone, nil)
}

func (c *call) advance() {
	for !c.done {
		switch c.phase {
		case cpProxy:
			ps := c.cs.proxy
			var s *slots
			switch c.gate = ps.Gate(); c.gate {
			case model.GateOpen:
				s = ps.mutex
			case model.GatePool:
				s = ps.pool
			}
			if s != nil {
				c.waitCat = results.BdThrottle
				c.phaseAt = c.r.e.Now()
				if !c.wr.acquire(s, c, ckGranted, nil) {
					return
				}
				c.holdProx = true
			}
			c.takeInst()
		case cpCreate:
			// A new proxy costs the caller CPU to build (ChannelFactory not
			// cached) and, on a secure binding, a negotiation handshake.
			c.handshake = 0
			c.newProxy = false
			if c.proxy.Fresh {
				c.proxy.Fresh = false
				c.newProxy = true
				c.build = c.cs.buildProxy(c.ep)
				c.addFact = c.build.Add
				b := &c.spec.Binding
				if !b.NegotiatesApart() {
					c.handshake = c.cs.shake.d
				}
				if cost := c.build.Cost(&c.spec.Proxy) + b.SessionCPU; c.clientCPU && cost > 0 {
					c.callerCPU(cost)
					return
				}
			}
		case cpHandshake:
			if c.addFact {
				// The channel is built: "the ChannelFactory object ... is
				// added to the cache if it's not grabbed from the cache".
				c.addFact = false
				c.cs.addFactory(c.build, c.ep)
			}
			if c.handshake > 0 {
				c.phaseAt = c.r.e.Now()
				c.timer = c.cs.shake.schedule(c.r.e, c, ckTimer)
				return
			}
		case cpConn:
			cn := &c.spec.Conn
			if cn.Refuses(c.cs.conns.Free(), c.cs.conns.Waiting) {
				c.fail(results.Rejected)
				return
			}
			c.waitCat = results.BdConn
			c.phaseAt = c.r.e.Now()
			if !c.wr.acquire(c.cs.conns, c, ckGranted, nil) {
				if cn.WaitTimeout > 0 {
					c.timer = c.cs.waitTimeouts.Schedule(c, ckWaitTimeout, nil)
				}
				return
			}
			c.holdConn = true
			c.lane = c.wr.Lane()
			if c.cs.sticky != nil {
				c.connID = c.cs.sticky.take(c)
			}
			if c.r.measuring {
				c.cs.wait.Record(0)
			}
		case cpNegotiate:
			b := &c.spec.Binding
			if c.newProxy && c.negLeg < b.NegotiationLegs {
				if c.negLeg == 0 && b.NegotiationTimeout > 0 && !c.negTimer.Valid() {
					c.negTimer = c.r.e.Schedule(b.NegotiationTimeout, sim.ClassTimeout, c, ckNegTimeout, nil)
				}
				cpu, last := b.Message(model.MsgNegotiate, c.negLeg)
				c.sendMsg(model.MsgNegotiate, cpu, last)
				return
			}
			if c.negTimer.Valid() {
				c.r.e.Cancel(c.negTimer)
				c.negTimer = sim.EventID{}
			}
		case cpEncode:
			if d := c.spec.EncodeCPU(); d > 0 && c.clientCPU {
				c.callerCPU(d)
				return
			}
		case cpSend:
			if f := c.cs.send; f.d > 0 {
				c.phaseAt = c.r.e.Now()
				c.timer = f.schedule(c.r.e, c, ckTimer)
				return
			}
		case cpBalance:
			if f := c.spec.Farm; f != nil && !c.spec.PerHost && f.Balancer.MaxConns > 0 {
				fr := c.r.farms[f.Index]
				if model.DecideBalancer(&f.Balancer, fr.lb.InUse, fr.lb.Waiting) == model.DecisionReject {
					if c.r.measuring {
						fr.rejected++
					}
					c.fail(results.Rejected) // 503 from the balancer
					return
				}
				c.waitCat = results.BdAdmit
				c.phaseAt = c.r.e.Now()
				if !c.wr.acquire(fr.lb, c, ckGranted, nil) {
					return
				}
				c.holdLB = true
			}
		case cpLBIn:
			if f := c.cs.lbIn; f.d > 0 {
				c.phaseAt = c.r.e.Now()
				c.timer = f.schedule(c.r.e, c, ckTimer)
				return
			}
		case cpServer:
			ti := c.spec.Target
			if f := c.spec.Farm; f != nil {
				if !c.spec.PerHost && !c.route() {
					return
				}
				ti = f.Replicas[c.replica]
			}
			t := c.r.tiers[ti]
			j := t.newJob(c)
			if c.proxy != nil {
				c.proxy.Jobs++
				if d := c.spec.Binding.ServiceSessionCPU(c.newProxy); d > 0 {
					// The server's side of a new proxy's security negotiation.
					j.ExtraCPU = d
				}
			}
			c.server = j
			c.phaseAt = c.r.e.Now()
			t.arrive(j)
			return
		case cpRecv:
			if f := c.cs.recv; f.d > 0 {
				c.phaseAt = c.r.e.Now()
				c.timer = f.schedule(c.r.e, c, ckTimer)
				return
			}
		case cpDecode:
			if d := c.spec.DecodeCPU(c.oneWay()); d > 0 && c.clientCPU {
				c.callerCPU(d)
				return
			}
		case cpClose:
			b := &c.spec.Binding
			if p := c.proxy; p != nil && b.SendsClose(p.PerCall, p.Open) {
				// The close has its own timeout, not what is left of the
				// call's.
				if c.deadline.Valid() {
					c.r.e.Cancel(c.deadline)
					c.deadline = sim.EventID{}
				}
				if b.CloseTimeout > 0 {
					c.deadline = c.r.e.Schedule(b.CloseTimeout, sim.ClassTimeout, c, ckDeadline, nil)
				}
				cpu, _ := b.Message(model.MsgClose, 0)
				c.sendMsg(model.MsgClose, cpu, false)
				return
			}
		case cpDone:
			c.end(results.Completed)
			return
		}
		c.phase++
	}
}

// oneWay reports whether the call's target operation is one-way: its
// answer is the transport's acknowledgement (HTTP 202), no reply message.
func (c *call) oneWay() bool { return c.r.top.Tiers[c.spec.Target].OneWay() }

// sendMsg sends one of the proxy's own messages (a negotiation leg, its
// close) to the target; serverDone takes the answer.
func (c *call) sendMsg(m model.MsgKind, cpu time.Duration, last bool) {
	t := c.r.tiers[c.spec.Target]
	j := t.newJob(c)
	j.Msg, j.Last, j.ExtraCPU = m, last, cpu
	c.server = j
	c.phaseAt = c.r.e.Now()
	t.arrive(j)
}

// serverDone is the target's reply (or error) arriving back.
func (c *call) serverDone(o results.Outcome) {
	if c.done || (c.phase != cpServer && c.phase != cpNegotiate && c.phase != cpClose) {
		return
	}
	c.server = nil
	if c.phase != cpServer {
		if o != results.Completed {
			c.fail(o) // a failed negotiation: SecurityNegotiationException
			return
		}
		if c.phase == cpClose {
			c.phase++
		} else if c.negLeg++; c.spec.LegWire() > 0 {
			c.phaseAt = c.r.e.Now()
			c.timer = c.r.e.Schedule(c.spec.LegWire(), sim.ClassCompletion, c, ckLegWire, nil)
			return
		}
		c.advance()
		return
	}
	if c.spec.Farm != nil && !c.spec.PerHost {
		c.answered() // the reply passes the balancer
	}
	if o != results.Completed {
		c.fail(o)
		return
	}
	c.phase++
	c.advance()
}

// fail ends the attempt with an error and releases what the client holds.
// The server's work, if it started, goes on (orphaned).
func (c *call) fail(o results.Outcome) {
	if c.done {
		return
	}
	c.broken = true
	c.stop()
	if j := c.server; j != nil {
		j.call = nil // orphaned: its reply will be discarded
		c.server = nil
		j.clientGone()
	}
	var counts *model.CallCounts
	if c.r.measuring {
		counts = &c.cs.counts
	}
	var client *model.ClientProxy
	if c.proxy != nil {
		client = &c.proxy.ClientProxy
	}
	abort, retry := model.AttemptFailed(client, &c.spec.Retry, counts, o, c.phase == cpNegotiate, c.attempt, c.callerGone())
	if abort {
		c.proxy.abort()
	}
	if retry {
		c.releaseProxy(false)
		c.timer = c.r.e.Schedule(c.cs.backoff.Next(), sim.ClassArrival, c, ckBackoff, nil)
		return
	}
	c.end(o)
}

func (c *call) callerGone() bool { return c.caller != nil && c.caller.orphaned() }

// stop cancels whatever the current attempt waits on and frees the
// connection (a timed-out or failed HTTP request closes its connection).
func (c *call) stop() {
	e := c.r.e
	if c.deadline.Valid() {
		e.Cancel(c.deadline)
		c.deadline = sim.EventID{}
	}
	if c.timer.Valid() {
		e.Cancel(c.timer)
		c.timer = sim.EventID{}
	}
	if c.negTimer.Valid() {
		e.Cancel(c.negTimer)
		c.negTimer = sim.EventID{}
	}
	if c.wr.Cancel() {
		c.keep = true // its grant event is on its way: do not recycle
	}
	if c.cpu.InService() {
		c.from.cpu.Remove(&c.cpu)
		c.from.cpuOut()
	}
	if c.holdCore {
		c.holdCore = false
		c.from.cores.Release()
		c.from.cpuOut()
	}
	if c.sent || c.holdLB {
		c.answered()
	}
	if c.holdConn {
		c.holdConn = false
		if c.cs.sticky != nil {
			c.cs.sticky.put(c, c.connID)
		}
		if c.cs.conns.PerConnection() {
			c.cs.conns.ReleaseLane(c.lane)
		} else {
			c.cs.conns.Release()
		}
	}
}

// releaseProxy lets go of the attempt's proxy (model.Proxies.Release): a
// per-call proxy is closed after a completed call (graceful) and aborted
// after a failed one; then the gate it held.
func (c *call) releaseProxy(graceful bool) {
	ps := c.cs.proxy
	p := c.proxy
	c.proxy = nil
	if close, abort := ps.Release(p, graceful); abort {
		p.abort()
	} else if close {
		p.close()
	}
	if c.holdProx {
		c.holdProx = false
		switch c.gate {
		case model.GateOpen:
			ps.Passed(c.gate, ps.mutex.Waiting)
			ps.mutex.Release()
		case model.GatePool:
			ps.pool.Release()
		}
	}
}

// end finishes the call for good and tells the caller.
func (c *call) end(o results.Outcome) {
	c.stop()
	c.releaseProxy(o == results.Completed)
	c.done = true
	c.outcome = o
	if j := c.caller; j != nil {
		// The reply goes straight to the caller, as it does to a user:
		// this instant, in this event. It is queued as an event instead
		// when the caller is on the stack (a call that ends inside its own
		// begin) or no longer waits for it.
		if j.starting || j.free || j.ended {
			c.r.e.Schedule(0, sim.ClassCompletion, j, jkSubDone, c)
		} else {
			j.subDone(c)
		}
	} else if c.user != nil {
		c.user.callDone(c)
	} else {
		c.r.load.openDone(c)
	}
}

// abandon is the caller giving up on the call (its own request aborted).
func (c *call) abandon() {
	if c.done {
		return
	}
	c.gaveUp = true
	c.broken = true
	c.stop()
	if j := c.server; j != nil {
		j.call = nil
		c.server = nil
		j.clientGone()
	}
	c.releaseProxy(false)
	c.done = true
	c.outcome = results.Failed
	c.r.releaseCall(c)
}

func fmtPath(parts ...any) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += "/"
		}
		s += fmt.Sprint(p)
	}
	return s
}
