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

// Queueing theory with replicas, by theory_test.go's method (thVerify: 20
// replications, the 99% Student t interval must cover the exact value).

// thFarmTop is Poisson arrivals at rate lambda from the load straight into
// a farm of k machines, each an M/M/c queue of c FCFS cores with
// exponential service of mean 1 s, behind a balancer with policy p.
func thFarmTop(lambda float64, k, c int, p model.BalancePolicy, span time.Duration) *model.Topology {
	top := &model.Topology{Duration: thWarm + span, Warmup: thWarm, SampleEvery: time.Minute,
		Load: model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: lambda}}}}
	var reps []int
	for r := 1; r <= k; r++ {
		q := tier(fmt.Sprintf("q#%d", r), model.Step{Kind: model.StepCPU, Demand: sim.Exp(time.Second)})
		q.Cores, q.CPU, q.Farm, q.Replica = c, model.CPUFCFS, "q", r
		q.WCF = &model.WCF{MaxCalls: 1 << 20, MaxSessions: 1 << 20, MaxInstances: 1 << 20, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple}
		reps = append(reps, len(top.Tiers))
		top.Tiers = append(top.Tiers, q)
	}
	top.Farms = []model.Farm{{Name: "q", Replicas: reps, Balancer: model.Balancer{Policy: p}}}
	top.Load.Call = model.Call{Target: 0, Farm: &top.Farms[0]}
	return top
}

// k replicas of an M/M/c tier behind a random balancer are k independent
// M/M/c queues at λ/k each: a random split of a Poisson stream is k
// independent Poisson streams (Kleinrock, Queueing Systems Vol. 1, §2.3).
// The farm's counters are the sums (Calls Outstanding, Calls Per Second)
// and averages (CPU, response time) of k such queues.
func TestTheoryFarmRandomIsIndependentQueues(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 20 replications of 20,000 s of a farm of up to four queues (the longest of the simulator's theory checks); TestTheoryMMcCounters checks the M/M/c formulas")
	}
	for _, tc := range []struct{ k, c int }{{4, 1}, {3, 2}} {
		t.Run(fmt.Sprintf("k=%d,c=%d", tc.k, tc.c), func(t *testing.T) {
			per := 0.75 * float64(tc.c) // λ/k per machine
			lambda := per * float64(tc.k)
			pw := thErlangC(tc.c, per)
			w := pw/(float64(tc.c)-per) + 1
			top := thFarmTop(lambda, tc.k, tc.c, model.BalanceRandom, 20000*time.Second)
			thVerify(t, top,
				thCheck{"P(wait) = Erlang C(c, λ/k)", func(r *results.Run) float64 { return tier0(r).PWait }, pw},
				thCheck{"Calls Duration mean = W(c, λ/k)", func(r *results.Run) float64 { return tier0(r).CallDurationMean }, w},
				thCheck{"farm Calls Outstanding = k·(λ/k)·W", func(r *results.Run) float64 { return tier0(r).OutstandingMean }, lambda * w},
				thCheck{"farm Calls Per Second = λ", func(r *results.Run) float64 { return tier0(r).CallsPerS }, lambda},
				thCheck{"machine 1 Calls Per Second = λ/k", func(r *results.Run) float64 { return r.Replicas[0].CallsPerS }, per},
				thCheck{"machine 1 Calls Outstanding = (λ/k)·W", func(r *results.Run) float64 { return r.Replicas[0].OutstandingMean }, per * w},
				thCheck{"% Processor Time / 100 = λ/(k·c)", func(r *results.Run) float64 { return tier0(r).CPUUtil }, per / float64(tc.c)},
				thCheck{"client latency mean = W(c, λ/k)", func(r *results.Run) float64 { return r.Latency.Mean }, w},
			)
		})
	}
}

// Round robin over k single-server machines turns a Poisson stream of rate
// λ into k Erlang-k streams of rate λ/k: each machine is E_k/M/1, a GI/M/1
// queue whose waiting time is σ/(μ(1−σ)), σ the root in (0, 1) of
// σ = A*(μ(1−σ)) = (λ/(λ + μ(1−σ)))^k (Kleinrock Vol. 1, §6.4). Its
// arrivals are more regular than Poisson, so it waits less than the
// random split's M/M/1: round robin beats random, and the difference of
// the two on common random numbers has a 99% interval below zero.
func TestTheoryFarmRoundRobinBeatsRandom(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 20 replications of 20,000 s of a farm of up to four queues (the longest of the simulator's theory checks); TestTheoryMMcCounters checks the M/M/c formulas")
	}
	const k = 4
	per := 0.8
	lambda := per * k
	sigma := 0.5
	for range 200 { // fixed point: a contraction on (0, 1) for ρ < 1
		sigma = math.Pow(lambda/(lambda+(1-sigma)), k)
	}
	wRR := sigma/(1-sigma) + 1
	wRand := 1/(1-per) - 1 + 1
	span := 20000 * time.Second
	rr := thFarmTop(lambda, k, 1, model.BalanceRoundRobin, span)
	thVerify(t, rr,
		thCheck{fmt.Sprintf("round robin: Calls Duration = GI/M/1 W, σ = %.4f", sigma), func(r *results.Run) float64 { return tier0(r).CallDurationMean }, wRR},
		thCheck{"round robin: P(wait) = σ", func(r *results.Run) float64 { return tier0(r).PWait }, sigma},
	)
	var diff []float64
	for s := 1; s <= thReps; s++ {
		a, err := Run(rr, model.Options{Seed: uint64(s), NoSeries: true, MaxPoints: 1})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(thFarmTop(lambda, k, 1, model.BalanceRandom, span), model.Options{Seed: uint64(s), NoSeries: true, MaxPoints: 1})
		if err != nil {
			t.Fatal(err)
		}
		diff = append(diff, (a.Latency.Mean-1)-(b.Latency.Mean-1))
	}
	m, h := sim.MeanCI(diff, 0.99)
	t.Logf("waiting time, round robin − random: %.4f ± %.4f s (99%%); theory %.4f − %.4f = %.4f", m, h, wRR-1, wRand-1, wRR-wRand)
	if !(m+h < 0) {
		t.Errorf("round robin does not wait less than random: %.4f ± %.4f", m, h)
	}
	if math.Abs(m-(wRR-wRand)) > h {
		t.Errorf("the difference %.4f ± %.4f does not cover the theory's %.4f", m, h, wRR-wRand)
	}
}
