package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"testing"
	"time"
)

// Step tables for where WCF's instance lock sits in the walk (walk.go):
// decoding runs before it, on the request's thread, in parallel with the
// call that holds it; a request that finds it taken waits without a
// thread. The tables both executors run are modeltest's (steps_wcf.go);
// these check what only the simulator can.

// decodeCost is a binding whose receiver spends d decoding a 1 KB request
// and nothing encoding an empty reply.
func decodeCost(d time.Duration) model.Binding { return model.Binding{Name: "test", CPUPerKB: d} }

func TestLockResumesOnAFreedThread(t *testing.T) {
	// One I/O thread. The first request decodes (100–102) and runs under
	// the lock (102–103) on it; the second waits for the thread until 103,
	// decodes until 105 and runs until 106: with a single thread nothing
	// overlaps, and nothing deadlocks on a thread held by a paused call.
	svc := tier("svc", cpu(time.Second))
	svc.IO = model.Pool{Min: 1, Max: 1}
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.SingleInstance, Concurrency: model.ConcurrencySingle}
	top := burst(2, 0, svc)
	top.Load.Call.Binding = decodeCost(2 * time.Second)
	top.Load.Call.RequestKB = 1
	got, _ := outcomes(t, top)
	expect(t, "latencies", got, "3 6")

	// Two threads: both decode (100–102); the second pauses at the lock,
	// giving its thread back, and resumes on the first's at 103.
	svc.IO = model.Pool{Min: 2, Max: 2}
	top = burst(2, 0, svc)
	top.Load.Call.Binding = decodeCost(2 * time.Second)
	top.Load.Call.RequestKB = 1
	got, _ = outcomes(t, top)
	expect(t, "latencies", got, "3 4")
}
