package bench

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/sim"
)

func TestModels(t *testing.T) {
	if got := Models(); !slices.Equal(got, []string{"mm1", "pipeline", "pipeline-10h", "crack-throttling", "run:pipeline", "run:crack-throttling"}) {
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
// reports the cost per generated request, and the simulation's and the
// loading's shares of an op apart.
func BenchmarkPipeline(b *testing.B) {
	b.ReportAllocs()
	var requests, events uint64
	var sim, load float64
	for b.Loop() {
		r, err := runPipeline(1)
		if err != nil {
			b.Fatal(err)
		}
		requests += r.Requests
		events += r.Events
		sim += r.WallS
		load += r.LoadS
	}
	reportRun(b, requests, events, sim, load)
}

func reportRun(b *testing.B, requests, events uint64, sim, load float64) {
	n := float64(b.N)
	b.ReportMetric(sim*1e9/float64(requests), "sim-ns/request")
	b.ReportMetric(sim*1e9/float64(events), "sim-ns/event")
	b.ReportMetric(float64(events)/float64(requests), "events/request")
	b.ReportMetric(sim/n, "sim-s/op")
	b.ReportMetric(load/n, "load-s/op")
}

// BenchmarkModels runs each model of Models but mm1 (BenchmarkMM1's) as
// `tsim bench --model` does.
func BenchmarkModels(b *testing.B) {
	for _, name := range Models()[1:] {
		b.Run(name, func(b *testing.B) {
			var requests, events uint64
			var sim, load float64
			for b.Loop() {
				r, err := Run(name)
				if err != nil {
					b.Fatal(err)
				}
				requests, events, sim, load = requests+r.Requests, events+r.Events, sim+r.WallS, load+r.LoadS
			}
			reportRun(b, requests, events, sim, load)
		})
	}
}

// BenchmarkExperiments loads and simulates each shipped experiment
// (experiments/*.toml), every scenario once, per op: the whole of a `tsim
// run` but for the replications and the output files. sim-s/op is the
// simulation, load-s/op the loading; a regression in either shows apart.
func BenchmarkExperiments(b *testing.B) {
	const dir = "../experiments"
	paths, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no experiments in %s: %v", dir, err)
	}
	readFile := func(name string) ([]byte, error) {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return os.ReadFile(name)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(path), ".toml")
		b.Run(name, func(b *testing.B) {
			var requests, events uint64
			var sim, load float64
			for b.Loop() {
				r, err := RunExperiment(path, data, readFile)
				if err != nil {
					b.Fatal(err)
				}
				requests, events, sim, load = requests+r.Requests, events+r.Events, sim+r.WallS, load+r.LoadS
			}
			reportRun(b, requests, events, sim, load)
		})
	}
}
