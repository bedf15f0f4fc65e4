package realmode

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// A real-mode comparison (a cross-check, a step table run for real, a
// clock's mean) is judged on time only on a run the noise probe did not
// see disturbed (stallprobe's rule). When every run of one was disturbed
// it is not judged: its test still asserts what load cannot change (every
// request accounted for, the limits as measured, the simulator's table),
// and is then reported as skipped, with the disturbance measured; a test
// that failed stays failed. Negative controls (a comparison that must
// find a difference) are never skipped: TestCrossCheckCatchesBreaks fails
// when it cannot judge one.
//
// TestMain prints how many comparisons the run judged and how many it
// skipped. (go test shows a passing package's output with -v or -json, or
// run in the package's directory.)

var comparisons struct{ judged, skipped atomic.Int64 }

// unjudged holds, per test, the comparisons it could not judge.
var unjudged struct {
	sync.Mutex
	by map[*testing.T][]string
}

// judgedOnTime counts a comparison judged on time.
func judgedOnTime() { comparisons.judged.Add(1) }

// cannotJudge counts the comparison name of test t as not judged, every
// run of it disturbed as why says; t is reported as skipped when it ends
// (after its other checks), unless it failed.
func cannotJudge(t *testing.T, name, why string) {
	t.Helper()
	comparisons.skipped.Add(1)
	t.Logf("%s: not judged on time, every run disturbed: %s", name, why)
	unjudged.Lock()
	defer unjudged.Unlock()
	if unjudged.by == nil {
		unjudged.by = map[*testing.T][]string{}
	}
	l, ok := unjudged.by[t]
	if !ok {
		t.Cleanup(func() {
			unjudged.Lock()
			l := unjudged.by[t]
			delete(unjudged.by, t)
			unjudged.Unlock()
			if !t.Failed() {
				t.Skipf("busy machine: %d comparison(s) not judged on time (the checks that do not depend on time passed): %s", len(l), strings.Join(l, "; "))
			}
		})
	}
	unjudged.by[t] = append(l, name+": "+why)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if os.Getenv(fdChild) == "" { // not TestFDBudget's child process
		fmt.Printf("real-mode comparisons: judged %d, skipped %d (busy machine)\n", comparisons.judged.Load(), comparisons.skipped.Load())
	}
	os.Exit(code)
}
