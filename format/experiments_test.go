package format

import (
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/simmode"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// loadFile loads an experiment from the repository's experiments/.
func loadFile(t *testing.T, name string) *Experiment {
	t.Helper()
	path := filepath.Join("..", "experiments", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	x, err := LoadExperiment(name, data, func(n string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, n)) })
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestPipelineFile runs the engine issue's benchmark model from its
// experiment file: ≈13.33 req/s and ≈6.5 s (the 2 connections bind), and
// with a 6 s timeout almost every request times out while the back end
// keeps finishing abandoned work.
func TestPipelineFile(t *testing.T) {
	x := loadFile(t, "pipeline.toml")
	sc, err := x.Scenario(0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := simmode.Run(&sc.Topology, model.Options{Seed: x.Seed})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.GoodputPerS-13.33) > 0.4 || math.Abs(res.Latency.Mean-6.5) > 0.4 {
		t.Errorf("pipeline.toml: %.2f req/s, %.2f s; want ≈13.33, ≈6.5", res.GoodputPerS, res.Latency.Mean)
	}
	top := sc.Topology
	top.Load.Call.Timeout = 6 * time.Second
	top.Duration = 20 * time.Minute
	res, err = simmode.Run(&top, model.Options{Seed: x.Seed})
	if err != nil {
		t.Fatal(err)
	}
	if f := float64(res.Requests.TimedOut) / float64(res.Requests.Generated); f < 0.9 {
		t.Errorf("6 s timeout: %.2f timed out, want > 0.9", f)
	}
	be := res.Tiers[len(res.Tiers)-1]
	if be.Completed == 0 || be.WastedCPUSeconds <= 0 {
		t.Errorf("back end should go on with abandoned work: %+v", be)
	}
}
