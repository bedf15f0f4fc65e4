package model

import "time"

// Farms, balancers and load agents.
//
// A tier deployed on several machines is a farm: package format expands a
// tier with replicas = N into N Tiers named "web#1" … "web#N" (Tier.Farm,
// Tier.Replica), each a machine of its own, with its own cores, thread
// pools, admission queue, WCF throttles, instances, locks and outbound
// connection pools. A call into a farm carries the Farm (Call.Farm): its
// Target is the first replica, and the runtime sends each request to the
// replica the balancer picks. The choice is a plain function of state
// (Pick, ChooseReplica), shared by the simulator and the real executor, as
// the admission decisions of admit.go are.
//
// Connection pools are keyed by (calling machine, target host name): a call
// that addresses the farm by one virtual host name (the balancer's) has one
// pool, one ServicePoint and so one connection limit for the whole farm; a
// call that addresses each machine by its own name (Call.PerHost) has one
// pool per replica, and balances by itself, client side.

// BalancePolicy is how a balancer spreads requests over a farm's replicas.
type BalancePolicy uint8

const (
	// BalanceRoundRobin sends each request to the next replica in turn.
	BalanceRoundRobin BalancePolicy = iota
	// BalanceRandom sends each request to a replica drawn uniformly.
	BalanceRandom
	// BalanceLeastOutstanding sends each request to the replica with the
	// fewest requests sent and not yet answered; ties go to the first such
	// replica at or after the round-robin position.
	BalanceLeastOutstanding
	// BalanceSticky balances connections, not requests (an L4 balancer,
	// HTTP keep-alive): a new connection goes to the next replica in turn,
	// and every request on it goes where it went. Two connections from one
	// front end reach at most two back-end machines.
	BalanceSticky
	// BalanceByUser is the load's own spread over its agents: user u runs
	// on agent u mod N, as a load-test controller assigns virtual users;
	// open arrivals (no user) go round robin.
	BalanceByUser
)

var balanceNames = [...]string{"round-robin", "random", "least-outstanding", "sticky", "by-user"}

func (p BalancePolicy) String() string { return balanceNames[p] }

// BalanceNames are the names of the policies a farm may use (not
// BalanceByUser, which only the load agents use).
func BalanceNames() []string { return append([]string(nil), balanceNames[:BalanceByUser]...) }

// Farm is a tier deployed on several machines behind a balancer.
type Farm struct {
	Name     string // the tier's name in the experiment file
	Index    int    // in Topology.Farms
	Replicas []int  // the replicas' tier indices, in replica order
	Balancer Balancer
	// Agents: the farm is the load's agents (Load.Call goes to it).
	Agents bool
}

// Balancer is the device in front of a farm that a virtual host name
// reaches. Its limits and latency apply to calls that address the farm by
// that name; a caller that addresses each machine by its own name
// (Call.PerHost) balances by itself with the same Policy.
type Balancer struct {
	Policy BalancePolicy
	// Affinity keeps every call on a proxy with a WCF session (a sessionful
	// binding) on the replica that holds the session. Without it such a
	// call that the policy sends elsewhere fails: the other machine does
	// not know the session (the channel faults and is aborted).
	Affinity bool
	// MaxConns, if > 0, bounds the requests passing through the balancer
	// at once (HAProxy maxconn, Envoy max_requests); beyond it a request
	// waits in the balancer's FIFO, and one that finds QueueLimit already
	// waiting is refused with a 503 (Rejected). 0 = no limit.
	MaxConns, QueueLimit int
	// Latency is added to each pass through the balancer: once on the
	// request, once on the reply.
	Latency time.Duration
}

// BalanceState is a balancer's state: the round-robin position and the
// requests sent to each replica and not yet answered. Both executors keep
// one per balancer (and one per calling machine for client-side
// balancing) and update it through Pick, Sent and Answered.
type BalanceState struct {
	Next        int
	Outstanding []int
}

// NewBalanceState returns the state of a balancer over n replicas.
func NewBalanceState(n int) BalanceState { return BalanceState{Outstanding: make([]int, n)} }

// Sent records a request dispatched to replica r; Answered its reply (or
// its abandonment: a client that gave up closes its side, and the
// balancer stops counting the request, though the server's work goes on).
func (s *BalanceState) Sent(r int)     { s.Outstanding[r]++ }
func (s *BalanceState) Answered(r int) { s.Outstanding[r]-- }

// Pick chooses the replica (0-based) for one request, or for one new
// connection under BalanceSticky. u is a uniform number in [0, 1), used by
// BalanceRandom only. user is the load's user number for BalanceByUser
// (−1 for none).
func Pick(p BalancePolicy, s *BalanceState, u float64, user int) int {
	n := len(s.Outstanding)
	switch p {
	case BalanceRandom:
		return min(int(u*float64(n)), n-1)
	case BalanceLeastOutstanding:
		best := -1
		for k := 0; k < n; k++ {
			r := (s.Next + k) % n
			if best < 0 || s.Outstanding[r] < s.Outstanding[best] {
				best = r
			}
		}
		s.Next = (best + 1) % n
		return best
	case BalanceByUser:
		if user >= 0 {
			return user % n
		}
	}
	r := s.Next
	s.Next = (r + 1) % n
	return r
}

// ChooseReplica is the balancer's decision for one request on a client
// proxy whose WCF session, if any, lives on replica session (−1: no
// session yet, or a sessionless binding). BalanceSticky sends it to the
// machine of the connection it came on (conn, which deals a new
// connection its machine with Pick); the other policies pick, unless
// affinity sends it to the session's machine unasked. refused is true
// when the request goes to another machine than its session's, without
// affinity (the call fails there: the channel faults and is aborted).
func ChooseReplica(b *Balancer, s *BalanceState, u float64, user, session int, conn func() int) (replica int, refused bool) {
	switch {
	case b.Policy == BalanceSticky:
		replica = conn()
	case session >= 0 && b.Affinity:
		return session, false
	default:
		replica = Pick(b.Policy, s, u, user)
	}
	if session >= 0 && b.Affinity {
		return session, false
	}
	return replica, session >= 0 && replica != session
}

// DecideBalancer is the balancer's own door (Balancer.MaxConns): run a
// request now, queue it, or refuse it (503) because QueueLimit wait already.
func DecideBalancer(b *Balancer, inUse, waiting int) Decision {
	if b.MaxConns <= 0 {
		return DecisionRun
	}
	return DecideConcurrent(inUse, b.MaxConns, waiting, b.QueueLimit, false)
}

// StickyShares returns the share of a farm's requests each of n replicas
// receives when conns connections in all are balanced by BalanceSticky and
// carry equal traffic: the connections are dealt round robin, so replica
// r holds ⌊conns/n⌋ of them, one more for the first conns mod n; conns ≤
// 0 (unlimited) spreads evenly.
func StickyShares(conns, n int) []float64 {
	out := make([]float64, n)
	if conns <= 0 {
		for r := range out {
			out[r] = 1 / float64(n)
		}
		return out
	}
	for r := range out {
		c := conns / n
		if r < conns%n {
			c++
		}
		out[r] = float64(c) / float64(conns)
	}
	return out
}

// FarmOf returns the farm tier i belongs to, or nil.
func (top *Topology) FarmOf(i int) *Farm {
	t := &top.Tiers[i]
	if t.Farm == "" {
		return nil
	}
	for k := range top.Farms {
		if top.Farms[k].Name == t.Farm {
			return &top.Farms[k]
		}
	}
	return nil
}

// HostName is the host a call addresses on replica r (0-based) of its
// target: the farm's virtual host name, the replica's own name with
// PerHost, the target tier's name outside a farm.
func (top *Topology) HostName(c *Call, r int) string {
	switch {
	case c.Farm == nil:
		return top.Tiers[c.Target].Name
	case c.PerHost:
		return top.Tiers[c.Farm.Replicas[r]].Name
	}
	return c.Farm.Name
}
