package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tsim-dev/tsim/format"
)

// The whole runs of `tsim bench` are the shipped experiments: every
// scenario of the inlined text is the file's.
func TestWholeRunsAreTheShippedExperiments(t *testing.T) {
	for _, w := range wholeRuns {
		path := filepath.Join("..", "experiments", w.name+".toml")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		shipped, err := format.LoadExperiment(path, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		inlined, err := format.LoadExperiment(w.name+".toml", []byte(w.text), nil)
		if err != nil {
			t.Fatal(err)
		}
		if shipped.Name != inlined.Name || shipped.Seed != inlined.Seed || shipped.Replications != inlined.Replications || shipped.NumScenarios() != inlined.NumScenarios() {
			t.Fatalf("%s: name, seed, replications or scenarios differ from %s", w.name, path)
		}
		for i := range shipped.NumScenarios() {
			a, err := shipped.Scenario(i)
			if err != nil {
				t.Fatal(err)
			}
			b, err := inlined.Scenario(i)
			if err != nil {
				t.Fatal(err)
			}
			if a.Variant != b.Variant || !reflect.DeepEqual(a.Topology, b.Topology) {
				t.Errorf("%s: scenario %d (%s) differs from %s's", w.name, i, a.Variant, path)
			}
		}
	}
}

// A whole run writes every file and measures each part.
func TestRunWhole(t *testing.T) {
	r, err := RunWhole("tiny.toml", []byte("topology = \"pipeline\"\nduration = \"60s\"\n"), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Model != "run:tiny.toml" || r.Requests == 0 || r.Events == 0 || r.WallS <= 0 || r.OutputS <= 0 || r.OutputBytes == 0 {
		t.Fatalf("RunWhole = %+v", r)
	}
	// summary.json, summary.csv, timeseries.csv, perfmon.csv, three pictures
	// and report.html.
	if r.OutputFiles != 8 {
		t.Errorf("%d files written, want 8", r.OutputFiles)
	}
}

// BenchmarkRun runs `tsim run` of the shipped pipeline and
// crack-throttling experiments per op: simulation on GOMAXPROCS workers,
// then every output file. sim-s/op and output-s/op are their wall-clock
// seconds, sim-cpu-s/op and output-cpu-s/op their CPU seconds (all cores);
// output/sim is output-cpu-s over sim-cpu-s, the cost of the files
// relative to the simulation (the issue asks for at most 0.25).
func BenchmarkRun(b *testing.B) {
	for _, name := range []string{"pipeline", "crack-throttling"} {
		path := filepath.Join("..", "experiments", name+".toml")
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			var sim, out, simCPU, outCPU, load float64
			var bytes int64
			for b.Loop() {
				r, err := RunWhole(path, data, nil, 0)
				if err != nil {
					b.Fatal(err)
				}
				sim, out, simCPU, outCPU, load = sim+r.WallS, out+r.OutputS, simCPU+r.SimCPUS, outCPU+r.OutputCPUS, load+r.LoadS
				bytes = r.OutputBytes
			}
			n := float64(b.N)
			b.ReportMetric(sim/n, "sim-s/op")
			b.ReportMetric(out/n, "output-s/op")
			b.ReportMetric(simCPU/n, "sim-cpu-s/op")
			b.ReportMetric(outCPU/n, "output-cpu-s/op")
			b.ReportMetric(load/n, "load-s/op")
			if simCPU > 0 {
				b.ReportMetric(outCPU/simCPU, "output/sim")
			}
			b.ReportMetric(float64(bytes), "output-bytes")
		})
	}
}
