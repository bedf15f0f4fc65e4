package simmode

import (
	"runtime"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
)

// TestMemoryDoesNotGrowWithRunLength runs the pipeline for 1 and 10
// simulated hours (48k and 480k requests) and compares the heap the run and
// its result hold at the end: bounded latency points, a bounded time series
// and recycled requests keep it within 20%.
func TestMemoryDoesNotGrowWithRunLength(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 10 simulated hours")
	}
	heap := func(d time.Duration) (uint64, int64) {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := Run(modeltest.Pipeline(20*time.Second, d), model.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(res)
		return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc), res.Requests.Generated
	}
	short, n1 := heap(time.Hour)
	long, n2 := heap(10 * time.Hour)
	t.Logf("%d requests: %d KB held; %d requests: %d KB held", n1, short>>10, n2, long>>10)
	if n2 < 9*n1 {
		t.Fatalf("the long run made %d requests, want about 10× %d", n2, n1)
	}
	if float64(long) > 1.2*float64(short) {
		t.Errorf("heap held grew from %d KB to %d KB with 10× the requests (limit +20%%)", short>>10, long>>10)
	}
}
