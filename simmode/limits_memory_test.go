package simmode

import (
	"runtime"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// limitsTopology is a WCF service behind a front end whose every limit is
// limit (connections per connection and pooled, thread pools, admission,
// the WCF throttles, a proxy pool), under a light open load that never
// reaches any of them.
func limitsTopology(limit int) *model.Topology {
	pool := model.Pool{Min: 4, Max: limit, Injection: model.InjectNone}
	return &model.Topology{
		Duration: time.Minute,
		Tiers: []model.Tier{
			{Name: "fe", Cores: 4, CostMultiplier: 1, Worker: pool, IO: pool,
				Admission: model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: limit, QueueLimit: limit},
				Steps: []model.Step{
					{Kind: model.StepCPU, Demand: sim.Exp(2 * time.Millisecond)},
					{Kind: model.StepCall, Call: &model.Call{Target: 1, Conn: model.Conn{Limit: limit, PerConnection: true}}},
					{Kind: model.StepCall, Call: &model.Call{Target: 2, Conn: model.Conn{Limit: limit},
						Proxy: model.Proxy{Kind: model.ProxyPoolWait, PoolSize: limit}}},
				}},
			{Name: "svc", Cores: 4, CostMultiplier: 1, Worker: pool, IO: pool,
				WCF:   &model.WCF{MaxCalls: limit, MaxSessions: limit, MaxInstances: limit, Instancing: model.PerCall},
				Steps: []model.Step{{Kind: model.StepCPU, Demand: sim.Exp(5 * time.Millisecond)}}},
			{Name: "db", Cores: 4, CostMultiplier: 1, Worker: pool, IO: pool,
				Steps: []model.Step{{Kind: model.StepWait, Demand: sim.Exp(10 * time.Millisecond)}}},
		},
		Load: model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: 50}},
			Call: model.Call{Target: 0, Conn: model.Conn{Limit: limit, PerConnection: true}}},
	}
}

// TestMemoryFollowsTheWorkNotTheLimits runs the same light load with every
// limit at 10 and at 10⁶ (a connection limit of 10⁸ once crashed tsim run:
// 56 bytes per permitted connection per caller): the bytes a run
// allocates must not grow with the limits. The same seed and a load that
// reaches no limit make the two runs the same run, request for request.
func TestMemoryFollowsTheWorkNotTheLimits(t *testing.T) {
	alloc := func(limit int) (uint64, int64) {
		top := limitsTopology(limit)
		if _, err := Run(top, model.Options{Seed: 3, NoSeries: true}); err != nil { // warm the code paths
			t.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := Run(top, model.Options{Seed: 3, NoSeries: true})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return after.TotalAlloc - before.TotalAlloc, res.Requests.Completed
	}
	small, n1 := alloc(10)
	huge, n2 := alloc(1_000_000)
	t.Logf("limit 10: %d KB allocated, %d completed; limit 10⁶: %d KB, %d completed", small>>10, n1, huge>>10, n2)
	if n1 != n2 || n1 < 2000 {
		t.Fatalf("completed %d and %d: want the same light load run twice", n1, n2)
	}
	// Per permitted unit, 10⁶ slots would be at least 8 MB; allow noise
	// of a quarter and 256 KB.
	if float64(huge) > 1.25*float64(small)+256<<10 {
		t.Errorf("a run with limits of 10⁶ allocated %d KB, with limits of 10 %d KB: memory follows the limits", huge>>10, small>>10)
	}
}
