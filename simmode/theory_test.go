package simmode

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"math"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// The textbook models of docs/textbook-models.md written as tsim
// topologies, and their PerfMon counters checked against queueing theory.
// As in sim/theory_test.go, each check runs independent replications
// (seeds 1, 2, ...), deletes a warm-up of many relaxation times, and
// requires the 99% Student t interval over the replication values to cover
// the exact theoretical value: the tolerance is the simulation's own
// sampling error. The seeds are fixed, so a check that passes always does.
// Time unit: the second; every service rate is 1/s.

const (
	thReps = 20
	thWarm = 500 * time.Second
)

// thCheck is one counter of a replication and its theoretical value.
type thCheck struct {
	name string
	get  func(r *results.Run) float64
	want float64
}

// thVerify runs top thReps times and checks every counter.
func thVerify(t *testing.T, top *model.Topology, checks ...thCheck) {
	t.Helper()
	vals := make([][]float64, len(checks))
	for k := 1; k <= thReps; k++ {
		res, err := Run(top, model.Options{Seed: uint64(k), NoSeries: true, MaxPoints: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range checks {
			vals[i] = append(vals[i], c.get(res))
		}
	}
	for i, c := range checks {
		m, h := sim.MeanCI(vals[i], 0.99)
		verdict := "ok"
		if math.Abs(m-c.want) > h {
			verdict = "OUTSIDE"
			t.Errorf("%s: %.5f ± %.5f (99%%, %d replications) does not cover the theory's %.5f", c.name, m, h, thReps, c.want)
		}
		t.Logf("%-44s sim %.5f ± %.5f  theory %.5f  %s", c.name, m, h, c.want, verdict)
	}
}

func tier0(r *results.Run) *results.Tier { return &r.Tiers[0] }

// thOpenTop is Poisson arrivals at rate lambda into tier q.
func thOpenTop(lambda float64, span time.Duration, q model.Tier) *model.Topology {
	return &model.Topology{
		Duration: thWarm + span, Warmup: thWarm, SampleEvery: time.Minute, Tiers: []model.Tier{q},
		Load: model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: lambda}}, Call: model.Call{Target: 0}},
	}
}

// thBirthDeath returns the stationary distribution of the M/M/c/K
// birth–death chain (Gross & Harris, Fundamentals of Queueing Theory,
// M/M/c/K): p_n ∝ a^n/n! for n ≤ c, a^c/c!·(a/c)^(n−c) for c < n ≤ K, with
// a = λ/μ.
func thBirthDeath(c, k int, a float64) []float64 {
	p := make([]float64, k+1)
	p[0] = 1
	sum := 1.0
	for n := 1; n <= k; n++ {
		p[n] = p[n-1] * a / float64(min(n, c))
		sum += p[n]
	}
	for n := range p {
		p[n] /= sum
	}
	return p
}

// thErlangC is the probability that an arrival waits in M/M/c (Erlang
// 1917; Kleinrock, Queueing Systems Vol. 1, §3.5).
func thErlangC(c int, a float64) float64 {
	term, sum := 1.0, 0.0
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	top := term * float64(c) / (float64(c) - a)
	return top / (sum + top)
}

// thErlangB is the blocking probability of the loss system M/M/c/c
// (Erlang 1917): B(c, a) = (a^c/c!) / Σ_{k=0..c} a^k/k!, by the stable
// recursion B(0) = 1, B(k) = a·B(k−1)/(k + a·B(k−1)).
func thErlangB(c int, a float64) float64 {
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return b
}

// thMVA is exact mean value analysis (Reiser & Lavenberg, J. ACM 1980) of
// n users with think time z and one FCFS queue of exponential demand d:
// R(k) = d·(1 + Q(k−1)), X(k) = k/(R(k) + z), Q(k) = X(k)·R(k).
func thMVA(n int, z, d float64) (x, r, q float64) {
	for k := 1; k <= n; k++ {
		r = d * (1 + q)
		x = float64(k) / (r + z)
		q = x * r
	}
	return x, r, q
}

// M/M/1/K with K = 10 on a plain thread pool: one thread, a bounded queue
// of 9 (worker.queue_limit = 9), λ = 0.8. A refused request never counts
// as held: at most 10 requests in the tier and 10 of the load's
// connections in use (the artefact read 11).
func TestTheoryMM1KCounters(t *testing.T) {
	const lambda, k = 0.8, 10
	q := tier("q", model.Step{Kind: model.StepWait, Demand: sim.Exp(time.Second)})
	q.Worker = model.Pool{Min: 1, Max: 1, BoundedQueue: true, QueueLimit: k - 1}
	top := thOpenTop(lambda, 40000*time.Second, q)
	p := thBirthDeath(1, k, lambda)
	l := 0.0
	for n, pn := range p {
		l += float64(n) * pn
	}
	block := p[k]
	thru := lambda * (1 - block)
	w := l / thru
	busy := 1 - p[0]
	thVerify(t, top,
		thCheck{"blocking P_K (reject rate)", func(r *results.Run) float64 { return r.RejectRate }, block},
		thCheck{"Requests Current mean = L", func(r *results.Run) float64 { return tier0(r).CurrentMean }, l},
		thCheck{"Requests Executing mean = 1 − p0", func(r *results.Run) float64 { return tier0(r).ExecutingMean }, busy},
		thCheck{"Requests Queued mean = L − (1 − p0)", func(r *results.Run) float64 { return tier0(r).QueuedMean }, l - busy},
		thCheck{"response time mean = W = L/(λ(1−P_K))", func(r *results.Run) float64 { return tier0(r).ResponseMean }, w},
		thCheck{"Request Wait Time mean = W − 1/μ", func(r *results.Run) float64 { return tier0(r).WaitTimeMean }, w - 1},
		thCheck{"Calls Duration mean = 1/μ (the operation)", func(r *results.Run) float64 { return tier0(r).CallDurationMean }, 1},
		thCheck{"P(wait) = (1 − p0 − P_K)/(1 − P_K)", func(r *results.Run) float64 { return tier0(r).PWait }, (1 - p[0] - block) / (1 - block)},
		thCheck{"Requests/Sec = λ", func(r *results.Run) float64 { return tier0(r).RequestsPerS }, lambda},
		thCheck{"Calls Per Second = λ(1 − P_K)", func(r *results.Run) float64 { return tier0(r).CallsPerS }, thru},
	)
	res, err := Run(top, model.Options{Seed: 1, MaxPoints: 1})
	if err != nil {
		t.Fatal(err)
	}
	if tr := tier0(res); tr.CurrentMax != k || tr.ExecutingMax != 1 || tr.QueuedMax != k-1 || res.Calls[0].InUseMax != k {
		t.Errorf("maxima: requests current %v, executing %v, queued %v, load connections in use %v; want %d, 1, %d, %d",
			tr.CurrentMax, tr.ExecutingMax, tr.QueuedMax, res.Calls[0].InUseMax, k, k-1, k)
	}
}

// M/M/c on c FCFS cores (cpu_discipline = "fcfs") of a WCF service whose
// throttles never bind: the queue is for a core, inside the operation, so
// Calls Duration is the response time W and P(wait) is Erlang's C.
func TestTheoryMMcCounters(t *testing.T) {
	for _, c := range []int{2, 4} {
		t.Run(fmt.Sprintf("c=%d", c), func(t *testing.T) {
			if c > 2 && testing.Short() {
				t.Skip("-short: c = 2 checks the same formulas; c = 4 is 20 replications of 25,000 s more")
			}
			lambda := 0.8 * float64(c)
			q := tier("q", model.Step{Kind: model.StepCPU, Demand: sim.Exp(time.Second)})
			q.Cores, q.CPU = c, model.CPUFCFS
			q.WCF = &model.WCF{MaxCalls: 1 << 20, MaxSessions: 1 << 20, MaxInstances: 1 << 20, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple}
			top := thOpenTop(lambda, 25000*time.Second, q)
			pw := thErlangC(c, lambda)
			w := pw/(float64(c)-lambda) + 1
			thVerify(t, top,
				thCheck{"P(wait) = Erlang C(c, a)", func(r *results.Run) float64 { return tier0(r).PWait }, pw},
				thCheck{"Calls Duration mean = W = C/(cμ−λ) + 1/μ", func(r *results.Run) float64 { return tier0(r).CallDurationMean }, w},
				thCheck{"Calls Outstanding mean = L = λW", func(r *results.Run) float64 { return tier0(r).OutstandingMean }, lambda * w},
				thCheck{"Calls Per Second = λ", func(r *results.Run) float64 { return tier0(r).CallsPerS }, lambda},
				thCheck{"% Processor Time / 100 = ρ", func(r *results.Run) float64 { return tier0(r).CPUUtil }, lambda / float64(c)},
				thCheck{"client latency mean = W", func(r *results.Run) float64 { return r.Latency.Mean }, w},
			)
		})
	}
}

// A closed network: 10 users thinking exp(4 s) between calls to a WCF
// service with one FCFS core and exponential demands of 0.5 s. Mean value
// analysis gives its throughput X, response time R and queue Q.
func TestTheoryClosedNetworkCounters(t *testing.T) {
	const n, z, d = 10, 4.0, 0.5
	q := tier("q", model.Step{Kind: model.StepCPU, Demand: sim.Exp(500 * time.Millisecond)})
	q.Cores, q.CPU = 1, model.CPUFCFS
	q.WCF = &model.WCF{MaxCalls: 1 << 20, MaxSessions: 1 << 20, MaxInstances: 1 << 20, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple}
	top := &model.Topology{
		Duration: thWarm + 20000*time.Second, Warmup: thWarm, SampleEvery: time.Minute, Tiers: []model.Tier{q},
		Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: n}}, Think: sim.Exp(4 * time.Second), Call: model.Call{Target: 0}},
	}
	x, r, ql := thMVA(n, z, d)
	thVerify(t, top,
		thCheck{"Calls Per Second = X", func(res *results.Run) float64 { return tier0(res).CallsPerS }, x},
		thCheck{"Calls Duration mean = R", func(res *results.Run) float64 { return tier0(res).CallDurationMean }, r},
		thCheck{"Calls Outstanding mean = Q", func(res *results.Run) float64 { return tier0(res).OutstandingMean }, ql},
		thCheck{"% Processor Time / 100 = X·D", func(res *results.Run) float64 { return tier0(res).CPUUtil }, x * d},
		thCheck{"client latency mean = R", func(res *results.Run) float64 { return res.Latency.Mean }, r},
	)
}

// Erlang's loss system M/M/c/c: an Envoy-style client with 4 connections
// and max_pending = 0 (Conn.NoPending) in front of a service that holds
// each connection exp(1 s); λ = 3. A call that finds every connection
// busy is refused at once.
func TestTheoryErlangBCounters(t *testing.T) {
	const c, lambda = 4, 3.0
	q := tier("q", model.Step{Kind: model.StepWait, Demand: sim.Exp(time.Second)})
	top := thOpenTop(lambda, 12000*time.Second, q)
	top.Load.Call.Conn = model.Conn{Limit: c, NoPending: true}
	b := thErlangB(c, lambda)
	thVerify(t, top,
		thCheck{"blocking = Erlang B(c, a)", func(r *results.Run) float64 { return r.RejectRate }, b},
		thCheck{"connections in use mean = a(1 − B)", func(r *results.Run) float64 { return r.Calls[0].InUseMean }, lambda * (1 - b)},
		thCheck{"Calls Per Second = λ(1 − B)", func(r *results.Run) float64 { return tier0(r).CallsPerS }, lambda * (1 - b)},
		thCheck{"connections waiting mean = 0", func(r *results.Run) float64 { return r.Calls[0].WaitingMean }, 0},
	)
}
