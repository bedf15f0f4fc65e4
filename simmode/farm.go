package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// farmRT is a farm's balancer at run time: the state its policy decides
// on, its own door (Balancer.MaxConns) and what it counts.
type farmRT struct {
	r    *runner
	spec *model.Farm
	bal  model.BalanceState
	rnd  *sim.Stream
	lb   *slots // Balancer.MaxConns > 0: requests passing through

	lvInUse, lvWaiting level
	sent               []int64 // requests dispatched to each replica, measured period
	rejected, refused  int64   // turned away by the balancer's queue; sent off their session's machine
}

func newFarmRT(r *runner, f *model.Farm) *farmRT {
	fr := &farmRT{r: r, spec: f, bal: model.NewBalanceState(len(f.Replicas)), sent: make([]int64, len(f.Replicas))}
	fr.rnd = r.e.Stream(fmtPath("farm", f.Name, "balance"))
	if b := &f.Balancer; b.MaxConns > 0 {
		fr.lb = newSlots(r.e, b.MaxConns)
		fr.lb.OnChange = func() {
			now := r.e.Now()
			fr.lvInUse.Set(now, float64(fr.lb.InUse))
			fr.lvWaiting.Set(now, float64(fr.lb.Waiting))
		}
	}
	return fr
}

func (fr *farmRT) resetStats(now sim.Time) {
	fr.lvInUse.Reset(now)
	fr.lvWaiting.Reset(now)
	for i := range fr.sent {
		fr.sent[i] = 0
	}
	fr.rejected, fr.refused = 0, 0
}

func (fr *farmRT) result(now sim.Time) results.Balancer {
	b := &fr.spec.Balancer
	return results.Balancer{
		Farm: fr.spec.Name, Policy: b.Policy.String(), Affinity: b.Affinity,
		Limit: b.MaxConns, QueueLimit: b.QueueLimit, LatencyS: b.Latency.Seconds(),
		InUseMean: fr.lvInUse.Mean(now), InUseMax: fr.lvInUse.Max(now),
		WaitingMean: fr.lvWaiting.Mean(now), WaitingMax: fr.lvWaiting.Max(now),
		Sent: append([]int64(nil), fr.sent...), Rejected: fr.rejected, Refused: fr.refused,
	}
}

// stickyConns is a connection pool's binding of connections to replicas
// under BalanceSticky: connection k reached replica[k] (−1: not yet, or
// its last call failed and closed it). In a pool without per-connection
// queues the connections are numbered here: a call that gets a connection
// takes the most recently freed number (LIFO, as net/http reuses its idle
// connections), or a new one.
type stickyConns struct {
	replica []int
	free    []int
}

func (s *stickyConns) take(c *call) int {
	if c.cs.conns.PerConnection() {
		s.grow(c.lane)
		return c.lane
	}
	if n := len(s.free); n > 0 {
		id := s.free[n-1]
		s.free = s.free[:n-1]
		return id
	}
	id := len(s.replica)
	s.grow(id)
	return id
}

func (s *stickyConns) grow(id int) {
	for len(s.replica) <= id {
		s.replica = append(s.replica, -1)
	}
}

// put gives connection id back; a connection whose call failed was closed,
// and the next call on it opens (and balances) a new one.
func (s *stickyConns) put(c *call, id int) {
	if c.broken {
		s.replica[id] = -1
	}
	if !c.cs.conns.PerConnection() {
		s.free = append(s.free, id)
	}
}

// hostStat returns the call statistics of replica rep for a call that
// addresses each machine of a farm by its own name (PerHost): its own
// connection pool and proxies, created when first used.
func (cs *callStat) hostStat(rep int) *callStat {
	if rep == 0 {
		return cs
	}
	if cs.hosts == nil {
		cs.hosts = make([]*callStat, len(cs.spec.Farm.Replicas))
		cs.hosts[0] = cs
	}
	h := cs.hosts[rep]
	if h == nil {
		h = cs.r.newCallStat(cs.spec, cs.fromRT, rep)
		cs.hosts[rep] = h
	}
	return h
}

// pickHost is client-side balancing (PerHost): the caller picks the
// machine before it looks for a connection to it.
func (c *call) pickHost() {
	base := c.base
	f := c.spec.Farm
	u := 0.0
	if f.Balancer.Policy == model.BalanceRandom {
		u = base.rnd.Float64()
	}
	rep := model.Pick(f.Balancer.Policy, &base.bal, u, c.userID())
	c.replica = rep
	c.cs = base.hostStat(rep)
	base.bal.Sent(rep)
	c.sent, c.bal = true, &base.bal
	if c.r.measuring {
		c.r.farms[f.Index].sent[rep]++
	}
}

func (c *call) userID() int {
	if c.user != nil {
		return c.user.id
	}
	return -1
}

// route is the balancer dispatching a request that reached the farm's
// virtual host: the replica, by the policy, the connection (sticky) or the
// proxy's session (affinity). It reports false when the call failed: sent
// off its session's machine, which does not know the session.
func (c *call) route() bool {
	f := c.spec.Farm
	fr := c.r.farms[f.Index]
	b := &f.Balancer
	session := -1
	sessionful := c.spec.Binding.Sessionful && c.proxy != nil
	if sessionful && c.proxy.bound {
		session = c.proxy.replica
	}
	u := 0.0
	if b.Policy == model.BalanceRandom {
		u = fr.rnd.Float64()
	}
	rep, refused := model.ChooseReplica(b, &fr.bal, u, c.userID(), session, func() int {
		st := c.cs.sticky
		if st.replica[c.connID] < 0 {
			st.replica[c.connID] = model.Pick(model.BalanceSticky, &fr.bal, 0, -1)
		}
		return st.replica[c.connID]
	})
	if refused {
		if c.r.measuring {
			fr.refused++
		}
		c.proxy.close() // the channel faults and is aborted
		c.fail(results.Failed)
		return false
	}
	if sessionful && !c.proxy.bound {
		c.proxy.bound, c.proxy.replica = true, rep
	}
	c.replica = rep
	fr.bal.Sent(rep)
	c.sent, c.bal = true, &fr.bal
	if c.r.measuring {
		fr.sent[rep]++
	}
	return true
}

// answered ends the balancer's count of the call's request.
func (c *call) answered() {
	if c.sent {
		c.sent = false
		c.bal.Answered(c.replica)
	}
	if c.holdLB {
		c.holdLB = false
		c.r.farms[c.spec.Farm.Index].lb.Release()
	}
}
