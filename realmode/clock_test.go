package realmode

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestShortSleepsKeepTheirMean: spans shorter than the timer overshoot
// are slept as minimal timers only while they are owed, so that on average
// they last what they should (here 200 µs, on 8 goroutines at once).
func TestShortSleepsKeepTheirMean(t *testing.T) {
	if raceEnabled {
		t.Skip("timing")
	}
	c := newClock(1, true)
	c.calibrate()
	const d = 200 * time.Microsecond
	const par, n = 8, 250
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
				_ = c.sleepReal(context.Background(), d)
				sum += time.Since(t0)
			}
			mu.Lock()
			total += sum
			mu.Unlock()
		}()
	}
	wg.Wait()
	mean := total / (par * n)
	t.Logf("mean %v for %v (overshoot estimate %v)", mean, d, c.slack())
	if mean < d-d/5 || mean > d+d/5 {
		t.Errorf("mean sleep %v for a span of %v", mean, d)
	}
}

// TestLongSleepsKeepTheirMean: a 5 ms sleep lasts 5 ms on average once the
// overshoot is subtracted.
func TestLongSleepsKeepTheirMean(t *testing.T) {
	if raceEnabled {
		t.Skip("timing")
	}
	c := newClock(1, true)
	c.calibrate()
	const d = 5 * time.Millisecond
	var mu sync.Mutex
	var total time.Duration
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var sum time.Duration
			for range 40 {
				t0 := time.Now()
				_ = c.sleepReal(context.Background(), d)
				sum += time.Since(t0)
			}
			mu.Lock()
			total += sum
			mu.Unlock()
		}()
	}
	wg.Wait()
	mean := total / 320
	t.Logf("mean %v for %v (overshoot estimate %v)", mean, d, c.slack())
	if mean < d-d/10 || mean > d+d/10 {
		t.Errorf("mean sleep %v for %v", mean, d)
	}
}
