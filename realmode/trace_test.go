package realmode

import (
	"context"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// TestTraceArrivalsAllGenerated: a replayed trace generates every arrival
// due in the run, in real mode as in the simulator, however late the
// generator's goroutine wakes: here the last ten arrivals come in the
// run's last simulated millisecond, and the last at its very end, so that
// the end of the run and the generator race for them. An arrival the
// generator reached too late is in flight at the end.
func TestTraceArrivalsAllGenerated(t *testing.T) {
	t.Parallel() // mostly asleep
	const d = 2 * time.Second
	var at []time.Duration
	for k := range 20 {
		at = append(at, time.Duration(k)*50*time.Millisecond)
	}
	for k := range 10 {
		at = append(at, d-time.Millisecond+time.Duration(k+1)*100*time.Microsecond)
	}
	top := &model.Topology{Duration: d, SampleEvery: 100 * time.Millisecond,
		Tiers: []model.Tier{tier("svc", 4, waitStep(sim.Const(20*time.Millisecond)))},
		Load:  model.Load{Kind: model.LoadOpen, Arrivals: at, Rate: model.Schedule{{At: 0, Value: 15}}, Call: model.Call{Target: 0}}}
	s, err := simmode.Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests.Generated != int64(len(at)) {
		t.Fatalf("simulated: %d generated, the trace has %d", s.Requests.Generated, len(at))
	}
	for k := range 5 {
		r, err := Run(context.Background(), top, Options{Seed: 1, TimeScale: 0.05})
		if err != nil {
			t.Fatal(err)
		}
		if q := r.Requests; q.Generated != int64(len(at)) || !q.Conserved() {
			t.Errorf("real run %d: %+v; want %d generated, every one accounted for", k+1, q, len(at))
		}
	}
}
