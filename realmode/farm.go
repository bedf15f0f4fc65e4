package realmode

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// Farms for real (model.Farm, the balancer's decisions in model/farm.go).
// Every machine of a farm is a tier, so it
// has its own listener, pools, throttles and connection pools already. A
// call that addresses the farm by its virtual host name goes to the farm's
// balancer: a loopback HTTP server of its own (balancerRT) that applies
// the balancer's door and latency and forwards each request to the machine
// model.ChooseReplica picks, or, connection-sticky, to the machine the
// client's connection was bound to when it opened. A call that addresses
// each machine by its own name (PerHost), and the load reaching its
// agents, pick the machine client side with model.Pick, before they look
// for a connection to it.

const hdrRefused = "X-Tsim-Refused" // "1": sent off its session's machine (no affinity)

// farmRT is a farm at run time: what it counts, and its balancer when
// some caller addresses it by its virtual host name.
type farmRT struct {
	spec     *model.Farm
	lb       *balancerRT
	sent     []atomic.Int64
	rejected atomic.Int64
	refused  atomic.Int64
}

func (f *farmRT) result(now time.Duration) results.Balancer {
	b := &f.spec.Balancer
	out := results.Balancer{Farm: f.spec.Name, Policy: b.Policy.String(), Affinity: b.Affinity,
		Limit: b.MaxConns, QueueLimit: b.QueueLimit, LatencyS: b.Latency.Seconds(),
		Rejected: f.rejected.Load(), Refused: f.refused.Load()}
	for i := range f.sent {
		out.Sent = append(out.Sent, f.sent[i].Load())
	}
	if f.lb != nil {
		out.InUseMean, out.InUseMax = f.lb.lvInUse.stats(now)
		out.WaitingMean, out.WaitingMax = f.lb.lvWaiting.stats(now)
	}
	return out
}

func (f *farmRT) resetStats(now time.Duration) {
	for i := range f.sent {
		f.sent[i].Store(0)
	}
	f.rejected.Store(0)
	f.refused.Store(0)
	if f.lb != nil {
		f.lb.lvInUse.reset(now)
		f.lb.lvWaiting.reset(now)
	}
}

// newFarms makes every farm's state, and a balancer for each farm some
// call reaches by its virtual host name.
func (rt *runner) newFarms() {
	top := rt.top
	virtual := make([]bool, len(top.Farms))
	see := func(c *model.Call) {
		if c.Farm != nil && !c.PerHost && !c.Farm.Agents {
			virtual[c.Farm.Index] = true
		}
	}
	see(&top.Load.Call)
	for i := range top.Tiers {
		for si := range top.Tiers[i].Steps {
			if st := &top.Tiers[i].Steps[si]; st.Kind == model.StepCall {
				see(st.Call)
			}
		}
	}
	for i := range top.Farms {
		f := &farmRT{spec: &top.Farms[i], sent: make([]atomic.Int64, len(top.Farms[i].Replicas))}
		if virtual[i] {
			f.lb = newBalancerRT(rt, f)
		}
		rt.farms = append(rt.farms, f)
	}
}

// direct reports whether a call picks its machine client side: PerHost,
// or the load reaching its agents.
func direct(c *model.Call) bool { return c.Farm != nil && (c.PerHost || c.Farm.Agents) }

// pick chooses the machine for one attempt a of a call that picks client
// side (direct), counts it as sent, and returns that machine's call
// statistics (a PerHost call's) and the function that ends its count as
// outstanding.
func (cs *callStat) pick(u *user, a *attempt) (*callStat, func()) {
	f := cs.spec.Farm
	uid := -1
	if u != nil {
		uid = u.id
	}
	cs.balMu.Lock()
	x := 0.0
	if f.Balancer.Policy == model.BalanceRandom {
		x = cs.rnd.Float64()
	}
	r := model.Pick(f.Balancer.Policy, &cs.bal, x, uid)
	cs.bal.Sent(r)
	cs.balMu.Unlock()
	if cs.rt.measuring.Load() {
		cs.rt.farms[f.Index].sent[r].Add(1)
	}
	a.to = f.Replicas[r]
	h := cs
	if cs.hosts != nil {
		h = cs.hosts[r]
	}
	return h, func() {
		cs.balMu.Lock()
		cs.bal.Answered(r)
		cs.balMu.Unlock()
	}
}

// targetURL is where an attempt a of the call sends its request: the
// farm's balancer for a virtual host name, the machine picked for a direct
// call, else the target; a nil a is the pool's own target (warm-up).
func (cs *callStat) targetURL(a *attempt) string {
	if f := cs.spec.Farm; f != nil && !direct(cs.spec) {
		return cs.rt.farms[f.Index].lb.url
	}
	if a != nil && a.to >= 0 && direct(cs.spec) {
		return cs.rt.tiers[a.to].url
	}
	return cs.rt.tiers[cs.to].url
}

// closeProxyAt tells the machine that holds a proxy's session that the
// client closed it.
func (cs *callStat) closeProxyAt(id uint64, aborted bool) {
	if f := cs.spec.Farm; f != nil && !direct(cs.spec) {
		cs.rt.farms[f.Index].lb.closeProxy(id, aborted)
		return
	}
	cs.rt.tiers[cs.to].closeProxy(id, aborted)
}

// ---------------------------------------------------------------------------
// the balancer

// balancerRT is a farm's balancer: a loopback HTTP server between the
// callers of the farm's virtual host and its machines.
type balancerRT struct {
	rt   *runner
	farm *farmRT
	ln   net.Listener
	srv  *http.Server
	url  string
	tr   *http.Transport
	door *sem // Balancer.MaxConns

	mu       sync.Mutex
	bal      model.BalanceState
	rnd      *sim.Stream
	conns    map[string]int // sticky: a client connection (its address) → the machine it reached
	sessions map[uint64]int // a client proxy → the machine holding its session

	lvInUse, lvWaiting level
}

func newBalancerRT(rt *runner, f *farmRT) *balancerRT {
	b := &balancerRT{rt: rt, farm: f, bal: model.NewBalanceState(len(f.spec.Replicas)),
		rnd:   rt.streams.Stream(fmt.Sprintf("farm/%s/balance", f.spec.Name)),
		conns: map[string]int{}, sessions: map[uint64]int{}}
	b.lvInUse.clk, b.lvWaiting.clk = rt.clk, rt.clk
	b.tr = newTransport(0, rt.opt.MaxInFlight)
	if n := f.spec.Balancer.MaxConns; n > 0 {
		b.door = newSem(n)
		inUse, waiting := 0, 0
		b.door.onChange = func(u, w int) {
			b.lvInUse.add(float64(u - inUse))
			b.lvWaiting.add(float64(w - waiting))
			inUse, waiting = u, w
		}
	}
	return b
}

func (b *balancerRT) listen() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("realmode: balancer of %q: %w", b.farm.spec.Name, err)
	}
	b.ln = fdListener{ln}
	b.url = "http://" + ln.Addr().String() + "/"
	b.srv = &http.Server{Handler: b, ErrorLog: log.New(io.Discard, "", 0),
		// A closed connection's binding goes: the next one is balanced anew.
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateClosed || s == http.StateHijacked {
				b.mu.Lock()
				delete(b.conns, c.RemoteAddr().String())
				b.mu.Unlock()
			}
		}}
	return nil
}

// stickyLocked is the machine a client connection reached, binding a new
// one to the next machine in turn.
func (b *balancerRT) stickyLocked(addr string) int {
	r, ok := b.conns[addr]
	if !ok {
		r = model.Pick(model.BalanceSticky, &b.bal, 0, -1)
		b.conns[addr] = r
	}
	return r
}

func (b *balancerRT) closeProxy(id uint64, aborted bool) {
	b.mu.Lock()
	r, ok := b.sessions[id]
	delete(b.sessions, id)
	b.mu.Unlock()
	if ok {
		b.rt.tiers[b.farm.spec.Replicas[r]].closeProxy(id, aborted)
	}
}

// ServeHTTP passes one request through the balancer: its door
// (model.DecideBalancer), its latency, the route (model.ChooseReplica),
// the machine's answer, and the latency back.
func (b *balancerRT) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt := b.rt
	if !rt.handlers.enter() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	defer rt.handlers.leave()
	spec := &b.farm.spec.Balancer
	if r.URL.Path == "/warm" {
		if spec.Policy == model.BalanceSticky {
			b.mu.Lock()
			b.stickyLocked(r.RemoteAddr)
			b.mu.Unlock()
		}
		rt.warmBarrier(r)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	ctx := r.Context()
	var root *rootReq
	if id, err := strconv.ParseUint(r.Header.Get(hdrRoot), 10, 64); err == nil {
		if v, ok := rt.roots.Load(id); ok {
			root = v.(*rootReq)
		}
	}
	reply := func(o results.Outcome, refused bool) {
		w.Header().Set(hdrOutcome, o.String())
		if refused {
			w.Header().Set(hdrRefused, "1")
		}
		w.Header().Set("Content-Length", "1")
		w.WriteHeader(outcomeStatus[o])
		_, _ = w.Write(replyBody)
	}
	clk := rt.clk
	// The balancer's door: run, queue, or 503 (model.DecideBalancer).
	holding := false
	release := func() {
		if holding {
			holding = false
			b.door.release()
		}
	}
	defer release()
	if b.door != nil {
		b.mu.Lock()
		inUse, waiting := b.door.snapshot()
		if model.DecideBalancer(spec, inUse, waiting) == model.DecisionReject {
			b.mu.Unlock()
			if rt.measuring.Load() {
				b.farm.rejected.Add(1)
			}
			reply(results.Rejected, false)
			return
		}
		wt := b.door.begin()
		b.mu.Unlock()
		t0 := clk.now()
		err := b.door.wait(ctx, wt)
		root.charge(results.BdAdmit, clk.now()-t0)
		if err != nil {
			return // the client has gone
		}
		holding = true
	}
	if d := spec.Latency; d > 0 {
		t0 := clk.now()
		err := clk.sleep(ctx, d)
		root.charge(results.BdNet, clk.now()-t0)
		if err != nil {
			return
		}
	}
	// Route: the machine, by the policy, the connection (sticky) or the
	// proxy's session (model.ChooseReplica).
	var proxy uint64
	sessionful := false
	if si, err := strconv.Atoi(r.Header.Get(hdrSpec)); err == nil && si >= 0 && si < len(rt.calls) {
		if id, err := strconv.ParseUint(r.Header.Get(hdrProxy), 10, 64); err == nil && rt.calls[si].spec.Binding.Sessionful {
			proxy, sessionful = id, true
		}
	}
	b.mu.Lock()
	session := -1
	if sessionful {
		if s, ok := b.sessions[proxy]; ok {
			session = s
		}
	}
	x := 0.0
	if spec.Policy == model.BalanceRandom {
		x = b.rnd.Float64()
	}
	rep, refused := model.ChooseReplica(spec, &b.bal, x, -1, session, func() int { return b.stickyLocked(r.RemoteAddr) })
	if !refused {
		if sessionful && session < 0 {
			b.sessions[proxy] = rep
		}
		b.bal.Sent(rep)
	}
	b.mu.Unlock()
	if refused {
		if rt.measuring.Load() {
			b.farm.refused.Add(1)
		}
		reply(results.Failed, true)
		return
	}
	if rt.measuring.Load() {
		b.farm.sent[rep].Add(1)
	}
	// Forward, and wait for the machine's reply with the client.
	o := results.Failed
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rt.tiers[b.farm.spec.Replicas[rep]].url, nil)
	if err == nil {
		for k, v := range r.Header {
			if strings.HasPrefix(k, "X-Tsim-") {
				req.Header[k] = v
			}
		}
		// A kept-alive connection to the machine may be closed under the
		// request before any byte of it is written; net/http sends such a
		// request again on another only if it is marked replayable (a
		// balancer's own retry of a request it never delivered).
		req.Header["X-Idempotency-Key"] = nil
		var resp *http.Response
		if resp, err = b.tr.RoundTrip(req); err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			o = outcomeOf(resp.StatusCode)
		}
	}
	b.mu.Lock()
	b.bal.Answered(rep)
	b.mu.Unlock()
	release()
	if err != nil {
		if ctx.Err() == nil && rt.workCtx.Err() == nil { // not the client gone, nor the run's end
			rt.netErrors.Add(1)
			reply(results.Failed, false)
		}
		return
	}
	if d := spec.Latency; d > 0 {
		t0 := clk.now()
		err := clk.sleep(ctx, d)
		root.charge(results.BdNet, clk.now()-t0)
		if err != nil {
			return
		}
	}
	reply(o, false)
}
