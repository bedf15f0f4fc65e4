package runner

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// A run that stopped unstable before its warm-up ended has its warm-up
// equal to its span (nothing measured): Sane takes it from a shard, and
// still refuses that of a run that did not stop unstable.
func TestSaneUnstableRun(t *testing.T) {
	pool := model.Pool{Min: 1, Max: 1 << 20}
	top := &model.Topology{
		Duration: 24 * time.Hour, Warmup: 2 * time.Hour,
		Tiers: []model.Tier{{Name: "server", Cores: 1, CostMultiplier: 1, Worker: pool, IO: pool,
			Steps: []model.Step{{Kind: model.StepCPU, Demand: sim.Exp(100 * time.Millisecond)}}}},
		Load: model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: 15}}, Call: model.Call{Target: 0}},
	}
	res, err := simmode.Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Unstable == "" || res.Warmup != res.Duration {
		t.Fatalf("warm-up %v, duration %v, outcome %q: want an unstable stop before the warm-up's end", res.Warmup, res.Duration, res.Unstable)
	}
	if err := Sane(res); err != nil {
		t.Errorf("Sane: %v", err)
	}
	res.Unstable = ""
	if err := Sane(res); err == nil {
		t.Error("Sane took a stable run whose warm-up is its whole span")
	}
}
