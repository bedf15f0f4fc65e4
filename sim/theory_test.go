package sim

import (
	"fmt"
	"math"
	"sync"
	"testing"
)

// Validation against queueing theory. Each test runs R independent
// replications (seeds seed0, seed0+1, ...), deletes a warm-up of many
// relaxation times, and checks that the 99% Student t interval over the
// replication means covers the exact theoretical value (thVerify, which
// also explains how a chance miss is confirmed before it fails). The
// tolerance is thus the simulation's own sampling error, not a guessed
// percentage. Every model also checks Little's law, exactly on the sample
// path and in expectation. The models live in theory_helpers_test.go.
// Time unit: the second.

// thReps is the number of replications per configuration.
const thReps = 20

// thMM1 returns the M/M/1 mean response time W = 1/(μ−λ) and mean wait
// Wq = ρ/(μ−λ) (Kleinrock, Queueing Systems Vol. 1, 1975, §3.2).
func thMM1(lambda, mu float64) (w, wq float64) {
	return 1 / (mu - lambda), lambda / mu / (mu - lambda)
}

// thErlangC is the probability that an arrival waits in an M/M/c queue with
// offered load a = λ/μ < c (Erlang 1917; Kleinrock Vol. 1, §3.5):
//
//	C(c, a) = (a^c/c!)·c/(c−a) / ( Σ_{k=0}^{c−1} a^k/k! + (a^c/c!)·c/(c−a) ).
func thErlangC(c int, a float64) float64 {
	term, sum := 1.0, 0.0 // term = a^k/k!
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	top := term * float64(c) / (float64(c) - a)
	return top / (sum + top)
}

// thMMc returns the M/M/c mean wait Wq = C(c, a)/(cμ − λ) and response time
// W = Wq + 1/μ.
func thMMc(c int, lambda, mu float64) (w, wq float64) {
	wq = thErlangC(c, lambda/mu) / (float64(c)*mu - lambda)
	return wq + 1/mu, wq
}

// thMMcK solves the M/M/c/K birth–death chain (Gross & Harris,
// Fundamentals of Queueing Theory, M/M/c/K). With a = λ/μ its stationary
// distribution is
//
//	p_n ∝ a^n/n!                 for 0 ≤ n ≤ c,
//	p_n ∝ a^c/c! · (a/c)^{n−c}   for c < n ≤ K,
//
// and from it follow the blocking probability P_K (an arrival sees the time
// average, PASTA), the throughput λ(1−P_K), the mean number in system L and
// the mean response time W = L/(λ(1−P_K)).
func thMMcK(c, k int, lambda, mu float64) (block, thru, l, w float64) {
	a := lambda / mu
	p := make([]float64, k+1)
	p[0] = 1
	for n := 1; n <= k; n++ {
		p[n] = p[n-1] * a / float64(min(n, c))
	}
	sum := 0.0
	for _, x := range p {
		sum += x
	}
	for n := range p {
		p[n] /= sum
		l += float64(n) * p[n]
	}
	block = p[k]
	thru = lambda * (1 - block)
	return block, thru, l, l / thru
}

// thPKWq is the Pollaczek–Khinchine mean wait of M/G/1 (Pollaczek 1930,
// Khinchine 1932): Wq = λ·E[S²] / (2(1−ρ)), ρ = λ·E[S].
func thPKWq(lambda float64, s Dist) float64 {
	rho := lambda * thMean(s)
	return lambda * thSecondMoment(s) / (2 * (1 - rho))
}

// thMVA is exact mean value analysis (Reiser & Lavenberg, J. ACM 1980) of
// a closed network of n users with think time z and one FCFS queue of
// exponential service demand d:
//
//	R(k) = d·(1 + Q(k−1)),  X(k) = k/(R(k) + z),  Q(k) = X(k)·R(k),  Q(0) = 0.
func thMVA(n int, z, d float64) (x, r, q float64) {
	for k := 1; k <= n; k++ {
		r = d * (1 + q)
		x = float64(k) / (r + z)
		q = x * r
	}
	return x, r, q
}

func thW(r thRep) float64      { return r.W }
func thWq(r thRep) float64     { return r.Wq }
func thL(r thRep) float64      { return r.L }
func thLambda(r thRep) float64 { return r.Lambda }
func thBlock(r thRep) float64  { return r.Block }

// thOpen returns the replication function of an open model.
func thOpen(spec thOpenSpec) func(seed uint64) thRep {
	return func(seed uint64) thRep { return thRunOpen(spec, seed) }
}

// M/M/1 FCFS: W = 1/(μ−λ), Wq = ρ/(μ−λ), L = ρ/(1−ρ).
func TestTheoryMM1(t *testing.T) {
	t.Parallel()
	for i, rho := range []float64{0.5, 0.8} {
		t.Run(fmt.Sprintf("rho=%v", rho), func(t *testing.T) {
			t.Parallel()
			w, wq := thMM1(rho, 1)
			thVerify(t, thReps, 100+uint64(i)*1000,
				thOpen(thOpenSpec{Lambda: rho, Servers: 1, Service: thDist("exp(1s)"), Warm: 5000, Span: thScale(1e5)}),
				thCheck{"W = 1/(μ−λ)", thW, w},
				thCheck{"Wq = ρ/(μ−λ)", thWq, wq},
				thCheck{"L = ρ/(1−ρ)", thL, rho / (1 - rho)})
		})
	}
}

// M/M/c FCFS with Erlang C, c = 2 and c = 8 at ρ = 0.8:
// Wq = C(c, a)/(cμ − λ), W = Wq + 1/μ.
func TestTheoryMMcErlangC(t *testing.T) {
	t.Parallel()
	if c := thErlangC(2, 1.6); math.Abs(c-32.0/45) > 1e-15 {
		// C(2, a) = a²/(2+a) by hand: 2.56/3.6 = 32/45.
		t.Fatalf("thErlangC(2, 1.6) = %v, want 32/45", c)
	}
	for i, c := range []int{2, 8} {
		t.Run(fmt.Sprintf("c=%d", c), func(t *testing.T) {
			t.Parallel()
			lambda := 0.8 * float64(c)
			w, wq := thMMc(c, lambda, 1)
			thVerify(t, thReps, 200+uint64(i)*1000,
				thOpen(thOpenSpec{Lambda: lambda, Servers: c, Service: thDist("exp(1s)"), Warm: 2000, Span: thScale(5e4)}),
				thCheck{"Wq = C(c,a)/(cμ−λ)", thWq, wq},
				thCheck{"W = Wq + 1/μ", thW, w})
		})
	}
}

// M/M/c/K: blocking probability P_K and throughput λ(1−P_K) from the
// birth–death stationary distribution, and L and W = L/(λ(1−P_K)).
func TestTheoryMMcK(t *testing.T) {
	t.Parallel()
	for i, cfg := range []struct {
		c, k   int
		lambda float64
	}{
		{2, 5, 2.5}, // overloaded: a = 2.5 > c, heavy blocking
		{1, 4, 0.8}, // M/M/1/4
	} {
		t.Run(fmt.Sprintf("c=%d,K=%d,λ=%v", cfg.c, cfg.k, cfg.lambda), func(t *testing.T) {
			t.Parallel()
			block, thru, l, w := thMMcK(cfg.c, cfg.k, cfg.lambda, 1)
			thVerify(t, thReps, 300+uint64(i)*1000,
				thOpen(thOpenSpec{Lambda: cfg.lambda, Servers: cfg.c, Capacity: cfg.k, Service: thDist("exp(1s)"), Warm: 500, Span: thScale(2e4)}),
				thCheck{"blocking P_K", thBlock, block},
				thCheck{"throughput λ(1−P_K)", thLambda, thru},
				thCheck{"L", thL, l},
				thCheck{"W = L/(λ(1−P_K))", thW, w})
		})
	}
}

// M/G/1 FCFS, Pollaczek–Khinchine: Wq = λE[S²]/(2(1−ρ)) at ρ = 0.7, with
// deterministic service (E[S²] = E[S]²) and lognormal service of cv 1.5
// (E[S²] = (1+cv²)E[S]²).
func TestTheoryMG1PollaczekKhinchine(t *testing.T) {
	t.Parallel()
	for i, svc := range []Dist{thDist("const(1s)"), thDist("lognormal(mean=1s,cv=1.5)")} {
		t.Run(svc.String(), func(t *testing.T) {
			t.Parallel()
			const lambda = 0.7
			wq := thPKWq(lambda, svc)
			thVerify(t, thReps, 400+uint64(i)*1000,
				thOpen(thOpenSpec{Lambda: lambda, Servers: 1, Service: svc, Warm: 3000, Span: thScale(1e5)}),
				thCheck{"Wq = λE[S²]/(2(1−ρ))", thWq, wq},
				thCheck{"W = Wq + E[S]", thW, wq + thMean(svc)})
		})
	}
}

// M/G/1 processor sharing (sim.PS, one core) is insensitive to the shape of
// the service distribution: the mean response is E[S]/(1−ρ) for any service
// distribution of mean E[S] (Kleinrock, Queueing Systems Vol. 2, 1976,
// ch. 4), equal to FCFS's 1/(μ−λ) for exponential service. With
// deterministic and lognormal (cv 2) service FCFS instead follows
// Pollaczek–Khinchine, and its interval must exclude the PS value.
func TestTheoryPSInsensitive(t *testing.T) {
	t.Parallel()
	for i, svc := range []Dist{thDist("exp(1s)"), thDist("const(1s)"), thDist("lognormal(mean=1s,cv=2)")} {
		t.Run(svc.String(), func(t *testing.T) {
			t.Parallel()
			const lambda = 0.7
			m := thMean(svc)
			wPS := m / (1 - lambda*m)
			wFCFS := thPKWq(lambda, svc) + m
			spec := thOpenSpec{Lambda: lambda, Servers: 1, Service: svc, Warm: 3000, Span: thScale(1e5)}
			seed0 := 500 + uint64(i)*1000
			spec.PS = true
			thVerify(t, thReps, seed0, thOpen(spec), thCheck{"PS W = E[S]/(1−ρ)", thW, wPS})
			// FCFS on the same seeds: common random numbers, the same
			// arrivals and service demands.
			spec.PS = false
			fcfs := thVerify(t, thReps, seed0, thOpen(spec), thCheck{"FCFS W = Wq(P–K) + E[S]", thW, wFCFS})
			if svc.CV() != 1 { // not exponential
				if mean, half := MeanCI(thCol(fcfs, thW), thLevel); math.Abs(mean-wPS) <= half {
					t.Errorf("FCFS W %.4f ± %.4f covers the PS value %.4f; FCFS should be sensitive to %s service", mean, half, wPS, svc)
				}
			}
		})
	}
}

// M/M/2 with processor sharing over 2 cores: with exponential service the
// number in system is the same birth–death chain as M/M/2 FCFS (rate
// min(n, c)·μ in state n), so L and, by Little, W equal the Erlang C values
// of TestTheoryMMcErlangC.
func TestTheoryMMcPS(t *testing.T) {
	t.Parallel()
	const c, lambda = 2, 1.6
	w, _ := thMMc(c, lambda, 1)
	thVerify(t, thReps, 600,
		thOpen(thOpenSpec{Lambda: lambda, Servers: c, PS: true, Service: thDist("exp(1s)"), Warm: 2000, Span: thScale(5e4)}),
		thCheck{"W = M/M/2 Erlang C W", thW, w},
		thCheck{"L = λW", thL, lambda * w})
}

// Closed network against exact MVA: N users with think time Z = 1 s and one
// FCFS queue of exponential demand D = 50 ms (saturation at N* = (D+Z)/D =
// 21). Throughput X(N) and response R(N) at the queue, for a spread of N
// from light load to deep saturation.
func TestTheoryClosedMVA(t *testing.T) {
	t.Parallel()
	const z, d = 1.0, 0.05
	for i, n := range []int{1, 5, 10, 20, 50, 100} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			t.Parallel()
			x, r, q := thMVA(n, z, d)
			// About 20,000 visits per replication (10,000 under -short).
			span := 2e4 / x
			if testing.Short() {
				span /= 2
			}
			thVerify(t, thReps, 700+uint64(i)*1000,
				func(seed uint64) thRep { return thRunClosed(n, z, d, 100, span, seed) },
				thCheck{"X(N) throughput", thLambda, x},
				thCheck{"R(N) response", thW, r},
				thCheck{"Q(N) number at queue", thL, q})
		})
	}
}

// The same closed network for every N from 1 to 100, one long run per N,
// with batch-means intervals (sim.BatchMeans) on the response time and on
// the throughput per 10 s interval. A hundred N make two hundred checks, so
// each is made at level 1 − 0.01/200 (Bonferroni): the whole sweep then
// fails by chance with probability at most about 1% on a correct engine
// (about, because batch-means intervals are only asymptotically exact).
func TestTheoryClosedMVASweep(t *testing.T) {
	if testing.Short() {
		t.Skip("N = 1..100 sweep skipped under -short; TestTheoryClosedMVA covers a spread of N")
	}
	t.Parallel()
	const z, d, every = 1.0, 0.05, 10.0
	level := 1 - 0.01/200
	for n := 1; n <= 100; n++ {
		xTheory, rTheory, _ := thMVA(n, z, d)
		e := New(800 + uint64(n))
		span := 3e4 / xTheory // about 30,000 visits
		u := newThClosed(e, n, z, d, 100, span)
		bmR, bmX := NewBatchMeans(64), NewBatchMeans(64)
		u.st.onResp = bmR.Add
		var last int64
		var probe *Probe
		probe = StartProbe(e, u.st.obs.warm, FromSeconds(every), func(now Time) {
			if now > u.st.obs.end {
				probe.Stop()
				return
			}
			if now > u.st.obs.warm {
				bmX.Add(float64(u.st.departures-last) / every)
			}
			last = u.st.departures
		})
		e.Run(MaxTime) // the station stops it when the last tagged customer leaves
		mr, hr, kr := bmR.CI(level)
		mx, hx, kx := bmX.CI(level)
		if math.Abs(mr-rTheory) > hr || math.Abs(mx-xTheory) > hx {
			t.Errorf("N=%d: R %.4f ± %.4f (%d batches) vs MVA %.4f; X %.4f ± %.4f (%d batches) vs MVA %.4f",
				n, mr, hr, kr, rTheory, mx, hx, kx, xTheory)
		}
		if n%10 == 0 || n == 1 {
			t.Logf("N=%3d: R %.4f ± %.4f vs MVA %.4f; X %.4f ± %.4f vs MVA %.4f", n, mr, hr, rTheory, mx, hx, xTheory)
		}
	}
}

// A run is a function of its seed: the same seed twice gives identical
// results and trace hashes; another seed gives another trace.
func TestTheoryDeterminism(t *testing.T) {
	t.Parallel()
	for _, spec := range []thOpenSpec{
		{Lambda: 1.6, Servers: 2, PS: true, Service: thDist("lognormal(mean=1s,cv=2)"), Warm: 100, Span: 2000},
		{Lambda: 2.5, Servers: 2, Capacity: 5, Service: thDist("exp(1s)"), Warm: 100, Span: 2000},
	} {
		a, b := thRunOpen(spec, 42), thRunOpen(spec, 42)
		if a != b {
			t.Errorf("%+v: seed 42 twice gave\n%+v\n%+v", spec, a, b)
		}
		if c := thRunOpen(spec, 43); c.Hash == a.Hash {
			t.Errorf("%+v: seeds 42 and 43 gave the same trace hash %x", spec, a.Hash)
		}
	}
	a, b := thRunClosed(20, 1, 0.05, 10, 500, 7), thRunClosed(20, 1, 0.05, 10, 500, 7)
	if a != b {
		t.Errorf("closed loop: seed 7 twice gave\n%+v\n%+v", a, b)
	}
}

// Replications run in parallel, one engine per goroutine, give exactly the
// numbers of the same replications run one after another.
func TestTheoryParallelReplications(t *testing.T) {
	t.Parallel()
	spec := thOpenSpec{Lambda: 0.7, Servers: 1, PS: true, Service: thDist("lognormal(mean=1s,cv=2)"), Warm: 100, Span: 5000}
	run := func(seed uint64) thRep { return thRunOpen(spec, seed) }
	seq := thReplicate(8, 900, run)
	par := make([]thRep, len(seq))
	var wg sync.WaitGroup
	for i := range par {
		wg.Go(func() { par[i] = run(900 + uint64(i)) })
	}
	wg.Wait()
	for i := range seq {
		if seq[i] != par[i] {
			t.Errorf("replication %d: sequential %+v, parallel %+v", i, seq[i], par[i])
		}
	}
}
