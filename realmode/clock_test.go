package realmode

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/internal/stallprobe"
)

// The clock's tests measure means of real sleeps, which a stall of the
// process moves: each runs beside the noise probe and, when it fails in a
// run the probe saw disturbed (stalled longer than a sleep, or more than
// stallprobe.MaxStalled of the time), runs again, up to
// maxRuns times; if every run was disturbed it is not judged, and the
// test is skipped with the disturbance measured. A run that was not
// disturbed and fails, fails the test.
func timedCheck(t *testing.T, stall time.Duration, check func() (ok bool, msg string)) {
	t.Helper()
	if raceEnabled {
		t.Skip("timing")
	}
	for k := 1; ; k++ {
		stop := stallprobe.Start()
		cpu0, wall0 := stallprobe.CPUTime(), time.Now()
		ok, msg := check()
		self := float64(stallprobe.CPUTime()-cpu0) / float64(max(time.Since(wall0), 1))
		n := stop()
		t.Logf("run %d: %s\n  noise: %v", k, msg, n)
		if ok {
			judgedOnTime()
			return
		}
		d := n.Disturbed(self, stall)
		switch {
		case d == "":
			judgedOnTime()
			t.Errorf("%s (noise: %v)", msg, n)
			return
		case k == maxRuns:
			cannotJudge(t, t.Name(), fmt.Sprintf("%d runs, the last: %s: %s (noise: %v)", k, msg, d, n))
			return
		}
		t.Logf("run %d disturbed (%s): running again", k, d)
	}
}

// meanSleep returns the mean real length of n sleeps of d on each of par
// goroutines at once.
func meanSleep(par, n int, sleep func(), d time.Duration) time.Duration {
	var mu sync.Mutex
	var total time.Duration
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sum time.Duration
			for range n {
				t0 := time.Now()
				sleep()
				sum += time.Since(t0)
			}
			mu.Lock()
			total += sum
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total / time.Duration(par*n)
}

// TestShortSleepsKeepTheirMean: spans shorter than the timer overshoot
// are slept as minimal timers only while they are owed, so that on average
// they last what they should (here 200 µs, on 8 goroutines at once).
func TestShortSleepsKeepTheirMean(t *testing.T) {
	const d = 200 * time.Microsecond
	timedCheck(t, time.Millisecond, func() (bool, string) {
		c := newClock(1, true)
		c.calibrate()
		mean := meanSleep(8, 250, func() { _ = c.sleepReal(context.Background(), d) }, d)
		return mean >= d-d/5 && mean <= d+d/5, fmt.Sprintf("mean sleep %v for a span of %v (overshoot estimate %v)", mean, d, c.slack())
	})
}

// TestLongSleepsKeepTheirMean: a 5 ms sleep lasts 5 ms on average once the
// overshoot is subtracted. The clock caps each overshoot it learns from at
// slackCap, so that one stall does not shorten every later sleep; on a busy
// machine the part of the overshoot beyond the cap stays. Plain timers
// sleeping beside the clock's measure that part, and the mean may be off
// by 10% plus it.
func TestLongSleepsKeepTheirMean(t *testing.T) {
	const d = 5 * time.Millisecond
	timedCheck(t, d, func() (bool, string) {
		c := newClock(1, true)
		c.calibrate()
		var beyond time.Duration
		var mean time.Duration
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			mean = meanSleep(8, 40, func() { _ = c.sleepReal(context.Background(), d) }, d)
		}()
		go func() {
			defer wg.Done()
			// each plain sleep's overshoot beyond the cap, on average
			var mu sync.Mutex
			var sum time.Duration
			meanSleep(8, 40, func() {
				t0 := time.Now()
				time.Sleep(d)
				over := max(0, time.Since(t0)-d-slackCap)
				mu.Lock()
				sum += over
				mu.Unlock()
			}, d)
			beyond = sum / (8 * 40)
		}()
		wg.Wait()
		return mean >= d-d/10 && mean <= d+d/10+beyond,
			fmt.Sprintf("mean sleep %v for %v (overshoot estimate %v; plain timers overshot the cap by %v on average)", mean, d, c.slack(), beyond)
	})
}
