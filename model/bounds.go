package model

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Bound is the capacity of one throttle by the operational laws: a limit of
// L slots each held for a mean time H (without queueing) serves at most
// L/H per second — the utilisation law U = X·H ≤ L. Divided by the visits
// per top-level request, it bounds the load's throughput.
type Bound struct {
	Throttle string        // e.g. "connections web→be"
	Kind     string        // connection, threads, admission, wcf-calls, wcf-sessions, wcf-instances, instance-lock, lock, cpu
	Tier     string        // where it lives (the caller's tier for connections)
	Limit    float64       // slots; +Inf when unlimited
	Hold     time.Duration // mean time one top-level request holds one slot, summed over its visits
	PerSec   float64       // requests per second it allows: Limit/Hold (+Inf when unlimited)
	Users    float64       // closed load: users at which it saturates, (D+Z)·PerSec (0 when open)
	Note     string        // how the limit was decided, or why the hold is what it is
	// Machines, for a throttle of every machine of a farm (each its own:
	// cores, pools, throttles, connection pools of its callers), is how
	// many there are; Limit and Hold are then their sums, PerSec that of
	// the machine that saturates first (the busiest, when the balancer
	// spreads unevenly), and PerMachine one machine's limit. 0 otherwise.
	Machines   int
	PerMachine float64
}

// Analysis is the before-simulation answer: every throttle's bound, the
// load's asymptotic bounds, and which limit binds first.
type Analysis struct {
	Bounds []Bound // sorted: the binding one first
	// D is the total time a request takes with no queueing anywhere
	// (the response time at one user); Z the mean think time.
	D, Z time.Duration
	// Closed: the throughput bound at the peak user count,
	// X ≤ min(N/(D+Z), PerSec of the binding throttle).
	Users       float64
	Rate        float64 // open: peak arrival rate
	MaxPerSec   float64 // min over throttles
	Demand      float64 // load's peak demand in requests/s if nothing queued: N/(D+Z) or rate
	Binding     *Bound
	Saturated   bool    // the peak load exceeds the binding bound
	SaturatesAt float64 // users (closed) or requests/s (open) at which the binding bound is reached
}

// profile is the no-queueing time of one visit to a tier.
type profile struct {
	total    time.Duration // the whole visit, downstream included
	cpu      time.Duration // CPU at this tier
	calls    time.Duration // waiting for downstream calls (sync)
	lockHold []time.Duration
}

// analyser holds what Analyse works out once per topology, so that the
// analysis takes time polynomial in the topology's size however deep its
// farms: a farm of N machines calling a farm of N machines … k deep has
// N^k paths from the load down, and an analysis that walked them (as this
// one once did) took minutes at 4 farms of 1,024 machines. Instead:
//
//   - each tier's no-queueing profile is computed once (memoised);
//   - visits per top-level request flow down the call graph once, in
//     topological order, a farm being one node with a multiplicity: the
//     calls into it add up, and each machine receives the sum times its
//     share (farmShares);
//   - the first call into each tier (whose binding decides its decoding
//     and encoding costs) is found in one pass over the calls;
//   - the connection pools a caller keeps to each machine of a farm it
//     addresses machine by machine are summed per caller as the farm's one
//     merged bound would sum them (mergeFarmBounds), not listed one by one.
type analyser struct {
	top    *Topology
	prof   []profile
	done   []bool
	into   []*Call     // the first call into each tier: the load's, then the tiers' steps in order
	visits []float64   // per top-level request
	shares [][]float64 // per farm, each machine's share (farmShares)
	// work counts the tiers whose steps were scanned, and the farm
	// machines whose shares were applied: the unit of Analyse's cost,
	// for the test that keeps it polynomial.
	work int
}

func newAnalyser(top *Topology) *analyser {
	n := len(top.Tiers)
	an := &analyser{top: top, prof: make([]profile, n), done: make([]bool, n), into: make([]*Call, n)}
	an.firstCalls()
	an.shares = farmShares(top)
	for i := range top.Tiers {
		an.profile(i)
	}
	an.flowVisits()
	return an
}

// profile returns tier i's no-queueing profile, computing it once.
func (an *analyser) profile(i int) profile {
	if an.done[i] {
		return an.prof[i]
	}
	top := an.top
	t := &top.Tiers[i]
	an.work++
	var p profile
	p.lockHold = make([]time.Duration, 0)
	lockStart := map[int]time.Duration{}
	for si := range t.Steps {
		st := &t.Steps[si]
		switch st.Kind {
		case StepCPU:
			d := scaleDur(st.Demand.Mean(), t.CostMultiplier)
			p.cpu += d
			p.total += d
		case StepWait:
			p.total += st.Demand.Mean()
		case StepCall:
			c := an.callTime(st.Call, !t.Agent)
			p.total += c
			p.calls += c
		case StepLock:
			lockStart[st.Lock] = p.total
		case StepUnlock:
			p.lockHold = append(p.lockHold, p.total-lockStart[st.Lock])
		}
	}
	an.prof[i], an.done[i] = p, true
	return p
}

// firstCalls finds the first call into each tier: the load's, then each
// tier's steps in order (a call into a farm reaches all its machines).
func (an *analyser) firstCalls() {
	top := an.top
	farmDone := make([]bool, len(top.Farms))
	note := func(c *Call) {
		if c.Farm == nil {
			if c.Target >= 0 && c.Target < len(an.into) && an.into[c.Target] == nil {
				an.into[c.Target] = c
			}
			return
		}
		if farmDone[c.Farm.Index] {
			return
		}
		farmDone[c.Farm.Index] = true
		for _, m := range c.Farm.Replicas {
			if an.into[m] == nil {
				an.into[m] = c
			}
		}
	}
	note(&top.Load.Call)
	for ti := range top.Tiers {
		an.work++
		for si := range top.Tiers[ti].Steps {
			if st := &top.Tiers[ti].Steps[si]; st.Kind == StepCall {
				note(st.Call)
			}
		}
	}
}

// flowVisits computes the visits per top-level request of every tier: the
// call graph from the load down (Load validation forbids cycles) in
// topological order, each farm a node of its own whose visits are those of
// every call into it, dealt to its machines by their shares.
func (an *analyser) flowVisits() {
	top := an.top
	n := len(top.Tiers)
	an.visits = make([]float64, n)
	farmVisits := make([]float64, len(top.Farms))
	// Nodes: tiers 0..n-1, then farms n..n+F-1. Reverse post-order of a
	// depth-first search from the load's target is a topological order.
	const (
		unseen = iota
		open
		closed
	)
	state := make([]uint8, n+len(top.Farms))
	var order []int
	var dfs func(u int)
	target := func(c *Call) int {
		if c.Farm != nil {
			return n + c.Farm.Index
		}
		return c.Target
	}
	dfs = func(u int) {
		if state[u] != unseen {
			return // done, or a cycle (validation forbids them): not followed
		}
		state[u] = open
		if u >= n {
			for _, m := range top.Farms[u-n].Replicas {
				dfs(m)
			}
		} else {
			for si := range top.Tiers[u].Steps {
				if st := &top.Tiers[u].Steps[si]; st.Kind == StepCall {
					dfs(target(st.Call))
				}
			}
		}
		state[u] = closed
		order = append(order, u)
	}
	lc := &top.Load.Call
	if lc.Farm == nil && (lc.Target < 0 || lc.Target >= n) {
		return
	}
	dfs(target(lc))
	if lc.Farm != nil {
		farmVisits[lc.Farm.Index] = 1
	} else {
		an.visits[lc.Target] = 1
	}
	for k := len(order) - 1; k >= 0; k-- {
		u := order[k]
		if u >= n {
			f := &top.Farms[u-n]
			for r, m := range f.Replicas {
				an.work++
				an.visits[m] += farmVisits[f.Index] * an.shares[f.Index][r]
			}
			continue
		}
		v := an.visits[u]
		an.work++
		for si := range top.Tiers[u].Steps {
			if st := &top.Tiers[u].Steps[si]; st.Kind == StepCall {
				if c := st.Call; c.Farm != nil {
					farmVisits[c.Farm.Index] += v
				} else {
					an.visits[c.Target] += v
				}
			}
		}
	}
}

// Analyse computes the operational-law bounds of a topology. It lives in
// model because it reads the model's own costs (bindings' encoding CPU,
// the wire time of a call); package analysis builds explain's diagnosis
// and plan's starting load on it. Its time is polynomial in the
// topology's size (see analyser).
func Analyse(top *Topology) Analysis {
	a, _ := analyse(top)
	return a
}

// analyse is Analyse, and the work it did (analyser.work).
func analyse(top *Topology) (Analysis, int) {
	an := newAnalyser(top)
	prof, visits, shares := an.prof, an.visits, an.shares
	a := Analysis{D: an.callTime(&top.Load.Call, false), Z: top.Load.Think.Mean()}
	if top.Load.Kind == LoadClosed {
		a.Users = top.Load.Users.Max()
	} else {
		a.Rate = top.Load.Rate.Max()
	}
	// rate fills in a bound's PerSec and Users; false for a bound that
	// is never held (left out).
	rate := func(b *Bound) bool {
		if b.Hold <= 0 {
			return false
		}
		if math.IsInf(b.Limit, 1) {
			b.PerSec = math.Inf(1)
		} else {
			b.PerSec = b.Limit / b.Hold.Seconds()
		}
		if top.Load.Kind == LoadClosed {
			b.Users = (a.D + a.Z).Seconds() * b.PerSec
		}
		return true
	}
	add := func(b Bound) {
		if rate(&b) {
			a.Bounds = append(a.Bounds, b)
		}
	}
	limit := func(l int) float64 {
		if l <= 0 {
			return math.Inf(1)
		}
		return float64(l)
	}
	// The load's own connections.
	lc := &top.Load.Call
	add(Bound{Throttle: "connections load→" + top.HostName(lc, 0), Kind: "connection", Tier: "load",
		Limit: limit(lc.Conn.Limit), Hold: an.connHold(lc, false), Note: lc.Conn.Resolution})
	var shared []sharedCPU
	for i := range top.Tiers {
		t := &top.Tiers[i]
		v := visits[i]
		if v == 0 {
			continue
		}
		p := prof[i]
		server := an.serverBindingCPU(i) + an.activateCPU(i)
		sess := an.sessionServerCPU(i) // outside the instance lock (below)
		server += sess
		stay := scale(p.total+server, v)
		threadHold := stay
		if t.Async {
			threadHold = scale(p.total-p.calls+server, v)
		}
		// The ASP.NET request of a one-way operation ends when it is
		// accepted, once decoded (job.accept): that is what it holds of
		// ASP.NET's worker threads and admission.
		aspHold := stay
		if t.OneWay() {
			aspHold = scale(an.decodeCPU(i), v)
		}
		pool := t.IO
		pname := "I/O threads"
		if t.WCF == nil {
			pool, pname = t.Worker, "worker threads"
		}
		note := fmt.Sprintf("max %d, min %d", pool.Max, pool.Min)
		if t.Async {
			note += "; async handler: the thread is free during downstream calls"
		} else if p.calls > 0 {
			note += "; sync handler: the thread is held during downstream calls"
		}
		if !t.Agent { // a load agent's threads are not modelled: one per user
			add(Bound{Throttle: pname + " " + t.Name, Kind: "threads", Tier: t.Name, Limit: float64(pool.Max), Hold: threadHold, Note: note})
		}
		if pool.Injection != InjectNone && pool.Min < pool.Max {
			note := fmt.Sprintf("above %d threads the CLR adds one per %v while starved", pool.Min, pool.GateDelay)
			if pool.Injection == InjectCLR4 {
				note = fmt.Sprintf("above %d threads the CLR 4 pool grows by hill climbing, or by one thread per %v–%v while starved (dotnet.md §3c–§3e)", pool.Min, pool.GateDelay, 2*pool.GateDelay)
			}
			add(Bound{Throttle: pname + " " + t.Name + " (minimum, before injection)", Kind: "threads-min", Tier: t.Name,
				Limit: float64(maxInt(pool.Min, 1)), Hold: threadHold, Note: note})
		}
		if t.IsASPNet() && t.Admission.SyncModule && t.WCF != nil {
			add(Bound{Throttle: "worker threads " + t.Name + " (sync module)", Kind: "threads", Tier: t.Name,
				Limit: float64(t.Worker.Max), Hold: aspHold, Note: "the synchronous HTTP module holds an ASP.NET worker per request"})
		}
		switch t.Admission.Kind {
		case AdmitClassic:
			l := float64(t.Worker.Max - t.Admission.MinFreeThreads) // see DecideClassic
			add(Bound{Throttle: "ASP.NET request queue " + t.Name, Kind: "admission", Tier: t.Name, Limit: l, Hold: aspHold,
				Note: fmt.Sprintf("maxWorkerThreads %d − minFreeThreads %d", t.Worker.Max, t.Admission.MinFreeThreads)})
		case AdmitConcurrent:
			add(Bound{Throttle: "concurrent requests " + t.Name, Kind: "admission", Tier: t.Name,
				Limit: float64(t.Admission.MaxExecuting), Hold: aspHold})
		}
		if w := t.WCF; w != nil {
			add(Bound{Throttle: "MaxConcurrentCalls " + t.Name, Kind: "wcf-calls", Tier: t.Name, Limit: float64(w.MaxCalls), Hold: stay})
			if c := an.into[i]; c != nil && c.Binding.Sessionful {
				// A sessionful binding holds a session per proxy: for the
				// whole life of a user's own proxy (so MaxConcurrentSessions
				// caps the users served at once), or per call.
				listener := ""
				if l := w.Listener; c.Binding.Listener && (l.MaxPending > 0 || l.Backlog > 0) {
					listener = fmt.Sprintf("; beyond it %d connections wait in the netTcp listener (%s), the rest are refused", l.MaxPending+l.Backlog, l.Resolution)
				}
				switch {
				case c.Proxy.Kind == ProxyPerUser: // the load's call, or its agents'
					add(Bound{Throttle: "MaxConcurrentSessions " + t.Name, Kind: "wcf-sessions", Tier: t.Name,
						Limit: float64(w.MaxSessions), Hold: a.D + a.Z,
						Note: "each user keeps a session for its proxy's life: at most this many users are served" + listener})
				case c.Proxy.Kind == ProxyPerCall:
					add(Bound{Throttle: "MaxConcurrentSessions " + t.Name, Kind: "wcf-sessions", Tier: t.Name,
						Limit: float64(w.MaxSessions), Hold: stay, Note: "a new proxy, and session, per call" + listener})
				}
			}
			if w.Instancing == PerCall {
				add(Bound{Throttle: "MaxConcurrentInstances " + t.Name, Kind: "wcf-instances", Tier: t.Name, Limit: float64(w.MaxInstances), Hold: stay})
			}
			if w.SingleLock() {
				// Taken after decoding, held until the reply is sent (Walk).
				inLock := server - sess - an.decodeCPU(i)
				hold := scale(p.total+inLock, v)
				if w.Concurrency == ConcurrencyReentrant {
					hold = scale(p.total-p.calls+inLock, v)
				}
				add(Bound{Throttle: "instance lock " + t.Name + " (Single/" + w.Concurrency.String() + ")", Kind: "instance-lock",
					Tier: t.Name, Limit: 1, Hold: hold, Note: "one instance, one thread at a time (its requests are decoded outside the lock)"})
			}
		}
		for k, h := range p.lockHold {
			add(Bound{Throttle: fmt.Sprintf("lock %d %s", k, t.Name), Kind: "lock", Tier: t.Name, Limit: 1, Hold: scale(h, v)})
		}
		cpu := scale(p.cpu+server+an.clientBindingCPU(i), v)
		if t.Agent {
			cpu = scale(p.cpu, v) // a load agent's CPU is its own step
		}
		if t.Machine > 0 {
			// A shared machine: one CPU bound for its tiers, below.
			shared = addShared(shared, t, cpu)
		} else {
			add(Bound{Throttle: "CPU " + t.Name, Kind: "cpu", Tier: t.Name, Limit: float64(t.Cores), Hold: cpu,
				Note: fmt.Sprintf("%d cores", t.Cores)})
		}
		for si := range t.Steps {
			st := &t.Steps[si]
			if st.Kind != StepCall {
				continue
			}
			c := st.Call
			hold := scale(an.connHold(c, !t.Agent), v)
			if c.Farm != nil && c.PerHost {
				// A pool per machine of the farm, each carrying its share,
				// summed here as mergeFarmBounds sums a farm's bounds
				// (Machines, Limit and Hold added up, PerSec the
				// smallest): one bound for the caller's pools, not one
				// each.
				if b, ok := perHostPools(top, c, t.Name, limit(c.Conn.Limit), hold, shares[c.Farm.Index], rate); ok {
					a.Bounds = append(a.Bounds, b)
				}
				continue
			}
			add(Bound{Throttle: "connections " + t.Name + "→" + top.HostName(c, 0), Kind: "connection", Tier: t.Name,
				Limit: limit(c.Conn.Limit), Hold: hold, Note: c.Conn.Resolution})
		}
	}
	for _, m := range shared {
		add(Bound{Throttle: "CPU " + strings.Join(m.names, "+"), Kind: "cpu", Tier: m.names[0], Limit: float64(m.cores), Hold: m.hold,
			Note: fmt.Sprintf("%d cores shared by %s", m.cores, strings.Join(m.names, ", "))})
	}
	// A farm's balancer, when it has a door of its own.
	for fi := range top.Farms {
		f := &top.Farms[fi]
		if f.Balancer.MaxConns <= 0 {
			continue
		}
		var hold time.Duration
		for _, m := range f.Replicas {
			if c := an.into[m]; c != nil {
				hold += scale(an.prof[m].total+c.Binding.Cost(c.RequestKB)+c.Binding.Cost(c.ReplyKB)+f.Balancer.Latency, visits[m])
			}
		}
		add(Bound{Throttle: "balancer " + f.Name, Kind: "balancer", Tier: f.Name, Limit: float64(f.Balancer.MaxConns), Hold: hold,
			Note: fmt.Sprintf("the balancer passes %d requests at once (balancer.max_connections)", f.Balancer.MaxConns)})
	}
	a.Bounds = mergeFarmBounds(top, a.Bounds, shares)
	sort.SliceStable(a.Bounds, func(i, j int) bool { return a.Bounds[i].PerSec < a.Bounds[j].PerSec })
	// The thread minimum is a transient limit (injection lifts it); it does
	// not bind in steady state, so the binding bound is the first other one.
	for i := range a.Bounds {
		if a.Bounds[i].Kind != "threads-min" {
			a.Binding = &a.Bounds[i]
			break
		}
	}
	if a.Binding != nil {
		a.MaxPerSec = a.Binding.PerSec
		if top.Load.Kind == LoadClosed {
			a.Demand = a.Users / (a.D + a.Z).Seconds()
			a.SaturatesAt = a.Binding.Users
			a.Saturated = a.Users > a.Binding.Users
		} else {
			a.Demand = a.Rate
			a.SaturatesAt = a.Binding.PerSec
			a.Saturated = a.Rate > a.Binding.PerSec
		}
	}
	return a, an.work
}

// perHostPools is the one bound of the connection pools a caller (from)
// keeps to each machine of the farm that call c addresses machine by
// machine (Call.PerHost): a pool per machine r with the call's limit, held
// hold × share[r]. They are summed as mergeFarmBounds sums a farm's
// bounds: Machines counts the pools, Limit and Hold add up, PerSec is the
// smallest (the pool that saturates first) and PerMachine is one pool's
// limit. A pool never held is left out, as Analyse leaves out any bound
// never held (rate reports it); ok is false when none is held.
func perHostPools(top *Topology, c *Call, from string, limit float64, hold time.Duration, share []float64, rate func(*Bound) bool) (sum Bound, ok bool) {
	// Every pool has the same limit, so the one that saturates first is
	// the one held longest (the first such, as the merge keeps the first
	// smallest PerSec).
	var most time.Duration
	for r := range c.Farm.Replicas {
		h := scale(hold, share[r])
		if h <= 0 {
			continue
		}
		sum.Machines++
		sum.Hold += h
		most = max(most, h)
	}
	if sum.Machines == 0 {
		return sum, false
	}
	first := Bound{Limit: limit, Hold: most}
	rate(&first)
	return Bound{Throttle: "connections " + from + "→" + top.HostName(c, 0), Kind: "connection", Tier: from,
		Limit: limit * float64(sum.Machines), Hold: sum.Hold, PerSec: first.PerSec, Users: first.Users,
		Note: c.Conn.Resolution, Machines: sum.Machines, PerMachine: limit}, true
}

// callTime is the no-queueing time of a call: creating a proxy when each
// call gets a new one, then the connection's hold.
func (an *analyser) callTime(c *Call, client bool) time.Duration {
	d := an.connHold(c, client)
	if c.Proxy.Kind == ProxyPerCall {
		d += proxyBuildCPU(c) +
			time.Duration(2*c.Binding.SessionRoundTrips)*c.Network.Latency
	}
	return d
}

// connHold is how long a call holds its connection (see call.advance):
// the client encodes, the request crosses the network, the server decodes,
// runs its operation and encodes the reply, the reply crosses back and the
// client decodes it. The load generator's own encoding costs nothing.
//
// A one-way call holds it until the server has decoded the request, and
// its answer carries no reply message.
func (an *analyser) connHold(c *Call, client bool) time.Duration {
	b := &c.Binding
	if an.top.Tiers[c.Target].OneWay() {
		d := c.Wire(c.RequestKB) + b.Cost(c.RequestKB) + c.Wire(0)
		if client {
			d += b.Cost(c.RequestKB)
		}
		return d
	}
	d := c.Wire(c.RequestKB) + b.Cost(c.RequestKB) + an.profile(c.Target).total + b.Cost(c.ReplyKB) + c.Wire(c.ReplyKB)
	if client {
		d += b.Cost(c.RequestKB) + b.Cost(c.ReplyKB)
	}
	return d
}

// serverBindingCPU is the decode+encode CPU per visit at tier i (from the
// calls into it; the first caller's binding); a one-way operation encodes
// no reply.
func (an *analyser) serverBindingCPU(i int) time.Duration {
	c := an.into[i]
	if c == nil {
		return 0
	}
	if an.top.Tiers[i].OneWay() {
		return c.Binding.Cost(c.RequestKB)
	}
	return c.Binding.Cost(c.RequestKB) + c.Binding.Cost(c.ReplyKB)
}

// sessionServerCPU is the CPU per visit at tier i to set up and tear down
// the session of a caller that builds a new proxy per call on a sessionful
// binding (call.go): its side of the security negotiation (SessionCPU, on
// the first call or over the negotiation's legs, each leg a message of its
// own), and the close message. A long-lived proxy's session is set up once
// for many calls: none, in the mean.
func (an *analyser) sessionServerCPU(i int) time.Duration {
	c := an.into[i]
	if c == nil || !c.Binding.Sessionful || c.Proxy.Kind != ProxyPerCall {
		return 0
	}
	b := &c.Binding
	d := b.SessionCPU + time.Duration(b.NegotiationLegs)*b.CPUBase
	if b.CloseMessage {
		d += b.CPUBase
	}
	return d
}

// decodeCPU is the CPU per visit at tier i to decode its request.
func (an *analyser) decodeCPU(i int) time.Duration {
	if c := an.into[i]; c != nil {
		return c.Binding.Cost(c.RequestKB)
	}
	return 0
}

// activateCPU is the CPU per visit at tier i to create its service
// instance and take a singleton's lock (PhaseActivate): an instance a call
// PerCall, PerSession without a session, or with a new proxy per call; a
// long-lived session's or the singleton's creation is spread over its
// calls (none, in the mean).
func (an *analyser) activateCPU(i int) time.Duration {
	w := an.top.Tiers[i].WCF
	if w == nil {
		return 0
	}
	creates := w.Instancing == PerCall
	if w.Instancing == PerSession {
		c := an.into[i]
		creates = c == nil || !c.Binding.Sessionful || c.Proxy.Kind == ProxyPerCall
	}
	return w.ActivateCPU(creates)
}

// clientBindingCPU is the encode+decode CPU tier i spends on its own calls,
// and on the proxy each of them builds when it gets a new one per call.
func (an *analyser) clientBindingCPU(i int) time.Duration {
	top := an.top
	if top.Tiers[i].Agent {
		return 0
	}
	var d time.Duration
	for si := range top.Tiers[i].Steps {
		if st := &top.Tiers[i].Steps[si]; st.Kind == StepCall {
			d += st.Call.Binding.Cost(st.Call.RequestKB)
			if !top.Tiers[st.Call.Target].OneWay() {
				d += st.Call.Binding.Cost(st.Call.ReplyKB)
			}
			if st.Call.Proxy.Kind == ProxyPerCall {
				d += proxyBuildCPU(st.Call)
			}
		}
	}
	return d
}

// proxyBuildCPU is the caller CPU a new proxy takes on average (call.go's
// cpCreate): the proxy, its ChannelFactory when the cache misses, and its
// side of a session's set-up.
func proxyBuildCPU(c *Call) time.Duration {
	p := &c.Proxy
	return p.CreateCost.Mean() + time.Duration(p.MissShare()*float64(p.FactoryCost.Mean())) + c.Binding.SessionCPU
}

func scale(d time.Duration, v float64) time.Duration { return time.Duration(float64(d) * v) }

func scaleDur(d time.Duration, f float64) time.Duration {
	if f <= 0 {
		return d
	}
	return time.Duration(float64(d) * f)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// farmShares is, for each farm, the share of the farm's requests each
// machine receives: even under round robin, random, least outstanding and
// with per-host addressing; under BalanceSticky the connections of its
// callers (through the virtual host) dealt round robin (StickyShares);
// for the load's agents, the users dealt u mod K.
func farmShares(top *Topology) [][]float64 {
	out := make([][]float64, len(top.Farms))
	for fi := range top.Farms {
		f := &top.Farms[fi]
		n := len(f.Replicas)
		out[fi] = StickyShares(0, n)
		switch {
		case f.Balancer.Policy == BalanceByUser && top.Load.Kind == LoadClosed:
			users := int(math.Round(top.Load.Users.Max()))
			if users > 0 {
				for r := range out[fi] {
					c := users / n
					if r < users%n {
						c++
					}
					out[fi][r] = float64(c) / float64(users)
				}
			}
		case f.Balancer.Policy == BalanceSticky:
			conns := 0
			for _, c := range callsInto(top, f) {
				if c.PerHost {
					continue
				}
				if c.Conn.Limit <= 0 {
					conns = 0
					break
				}
				conns += c.Conn.Limit
			}
			out[fi] = StickyShares(conns, n)
		}
	}
	return out
}

// callsInto returns every call into farm f, the load's first.
func callsInto(top *Topology, f *Farm) []*Call {
	var out []*Call
	if top.Load.Call.Farm == f {
		out = append(out, &top.Load.Call)
	}
	for ti := range top.Tiers {
		for si := range top.Tiers[ti].Steps {
			if st := &top.Tiers[ti].Steps[si]; st.Kind == StepCall && st.Call.Farm == f {
				out = append(out, st.Call)
			}
		}
	}
	return out
}

// mergeFarmBounds folds the bounds of a farm's machines into one per
// throttle, named after the farm ("CPU web" for "CPU web#1" … "CPU
// web#4", "connections web→be" for every pool from a machine of web to
// the farm be or to each of its machines): a per-machine limit multiplies
// with the machines (see Bound.Machines). A bound that already sums
// several (perHostPools: Machines > 0) counts as that many.
func mergeFarmBounds(top *Topology, bounds []Bound, shares [][]float64) []Bound {
	farmOf := map[string]string{}
	for i := range top.Tiers {
		if t := &top.Tiers[i]; t.Farm != "" {
			farmOf[t.Name] = t.Farm
		}
	}
	if len(farmOf) == 0 {
		return bounds
	}
	name := func(s string) string {
		if f, ok := farmOf[s]; ok {
			return f
		}
		return s
	}
	var out []Bound
	index := map[string]int{}
	for _, b := range bounds {
		throttle := b.Throttle
		if rest, ok := strings.CutPrefix(throttle, "connections "); ok && b.Kind == "connection" {
			from, to, _ := strings.Cut(rest, "→")
			throttle = "connections " + name(from) + "→" + name(to)
		} else if f, ok := farmOf[b.Tier]; ok {
			throttle = strings.Replace(throttle, b.Tier, f, 1)
		}
		_, machine := farmOf[b.Tier]
		if to, ok := strings.CutPrefix(b.Throttle, "connections load→"); ok {
			_, machine = farmOf[to]
		}
		if !machine && throttle == b.Throttle {
			out = append(out, b)
			continue
		}
		key := b.Kind + "|" + throttle
		machines, per := 1, b.Limit
		if b.Machines > 0 {
			machines, per = b.Machines, b.PerMachine
		}
		k, seen := index[key]
		if !seen {
			index[key] = len(out)
			m := b
			m.Throttle, m.Tier, m.Machines, m.PerMachine = throttle, name(b.Tier), machines, per
			out = append(out, m)
			continue
		}
		m := &out[k]
		m.Machines += machines
		m.Limit += b.Limit
		m.Hold += b.Hold
		if b.PerSec < m.PerSec {
			m.PerSec, m.Users = b.PerSec, b.Users
		}
	}
	for i := range out {
		m := &out[i]
		if m.Machines == 0 || m.Kind == "connection" {
			continue
		}
		f := top.farmNamed(m.Tier)
		if f == nil {
			continue
		}
		per := strconv.FormatFloat(m.PerMachine, 'g', -1, 64)
		if math.IsInf(m.PerMachine, 1) {
			per = "unlimited"
		}
		m.Note += fmt.Sprintf("; %d machines of %s, %s each", m.Machines, f.Name, per)
		sh := shares[f.Index]
		most := 0.0
		for _, x := range sh {
			most = max(most, x)
		}
		if n := float64(len(sh)); most > 1/n+1e-9 {
			m.Note += fmt.Sprintf("; the busiest machine receives %.0f%% of the farm's requests (%s), not %.0f%%", 100*most, f.Balancer.Policy, 100/n)
		}
	}
	return out
}

// farmNamed returns the farm called name, or nil.
func (top *Topology) farmNamed(name string) *Farm {
	for k := range top.Farms {
		if top.Farms[k].Name == name {
			return &top.Farms[k]
		}
	}
	return nil
}

// sharedCPU is the CPU of a machine several tiers share (Tier.Machine):
// its cores serve the demands of them all.
type sharedCPU struct {
	id, cores int
	names     []string
	hold      time.Duration
}

func addShared(ms []sharedCPU, t *Tier, hold time.Duration) []sharedCPU {
	for k := range ms {
		if ms[k].id == t.Machine {
			ms[k].names = append(ms[k].names, t.Name)
			ms[k].hold += hold
			return ms
		}
	}
	return append(ms, sharedCPU{id: t.Machine, cores: t.Cores, names: []string{t.Name}, hold: hold})
}
