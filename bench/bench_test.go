package bench

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/sim"
)

func TestModels(t *testing.T) {
	if got := Models(); !slices.Equal(got, []string{"mm1", "pipeline"}) {
		t.Fatalf("Models() = %v", got)
	}
	if _, err := Run("nope"); err == nil {
		t.Fatal("Run(\"nope\") succeeded")
	}
}

// The benchmark M/M/1 is the queue it claims to be: its mean response time
// W = 1/(μ−λ) = 10 s (Kleinrock, Queueing Systems Vol. 1, §3.2) lies in the
// 99% Student t interval over 10 independent replications of 200,000
// customers, the first 20,000 (about 15 relaxation times at ρ = 0.9)
// deleted as warm-up.
func TestMM1MeanResponse(t *testing.T) {
	const reps, n, warm = 10, 200_000, 20_000
	want := 1 / (mm1Mu - mm1Lambda)
	xs := make([]float64, reps)
	for i := range xs {
		e := sim.New(uint64(100 + i))
		q := newMM1(e, n, warm)
		e.Run(sim.MaxTime)
		if q.done != n {
			t.Fatalf("rep %d: %d customers done, want %d", i, q.done, n)
		}
		xs[i] = q.meanResponseS()
	}
	mean, half := sim.MeanCI(xs, 0.99)
	t.Logf("W = %.4f ± %.4f s (99%%, %d reps), theory %.4f s", mean, half, reps, want)
	if math.Abs(mean-want) > half {
		t.Errorf("99%% interval %.4f ± %.4f does not cover W = 1/(μ−λ) = %v", mean, half, want)
	}
}

// The benchmark M/M/1 allocates nothing per event once its ring has grown.
func TestMM1AllocatesNothing(t *testing.T) {
	e := sim.New(1)
	newMM1(e, math.MaxUint64, 0)
	e.Run(sim.Time(0).Add(10000 * time.Second)) // the ring and the calendar have grown
	allocs := testing.AllocsPerRun(10, func() { e.Run(e.Now().Add(100 * time.Second)) })
	if allocs != 0 {
		t.Fatalf("%v allocations per 100 simulated seconds, want 0", allocs)
	}
}

// BenchmarkMM1 simulates b.N customers of the M/M/1 queue: ns/op is
// nanoseconds per customer (two events each).
func BenchmarkMM1(b *testing.B) {
	b.ReportAllocs()
	e := sim.New(1)
	q := newMM1(e, uint64(b.N), 0)
	b.ResetTimer()
	e.Run(sim.MaxTime)
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds())
	b.ReportMetric(ns/float64(q.done), "ns/customer")
	b.ReportMetric(float64(q.done)/ns*1e9, "customers/s")
	b.ReportMetric(float64(e.Events())/float64(q.done), "events/customer")
}

// BenchmarkPipeline runs the whole 3,600 s reference pipeline per op and
// reports the cost per generated request.
func BenchmarkPipeline(b *testing.B) {
	b.ReportAllocs()
	var requests, events uint64
	for b.Loop() {
		r, err := runPipeline(1)
		if err != nil {
			b.Fatal(err)
		}
		requests += r.Requests
		events += r.Events
	}
	ns := float64(b.Elapsed().Nanoseconds())
	b.ReportMetric(ns/float64(requests), "ns/request")
	b.ReportMetric(float64(requests)/ns*1e9, "requests/s")
	b.ReportMetric(float64(events)/float64(requests), "events/request")
}
