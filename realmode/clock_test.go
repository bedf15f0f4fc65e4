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
// overshoot is subtracted. The clock caps each overshoot it learns from at
// slackCap, so that one stall does not shorten every later sleep; on a busy
// machine the part of the overshoot beyond the cap stays. Plain timers
// sleeping beside the clock's measure that part, and the mean may be off
// by 10% plus it.
func TestLongSleepsKeepTheirMean(t *testing.T) {
	if raceEnabled {
		t.Skip("timing")
	}
	c := newClock(1, true)
	c.calibrate()
	const d = 5 * time.Millisecond
	const par, n = 8, 40
	var mu sync.Mutex
	var total, beyond time.Duration
	var wg sync.WaitGroup
	for range par {
		wg.Add(2)
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
		go func() {
			defer wg.Done()
			var sum time.Duration
			for range n {
				t0 := time.Now()
				time.Sleep(d)
				sum += max(0, time.Since(t0)-d-slackCap)
			}
			mu.Lock()
			beyond += sum
			mu.Unlock()
		}()
	}
	wg.Wait()
	mean := total / (par * n)
	excess := beyond / (par * n)
	t.Logf("mean %v for %v (overshoot estimate %v; plain timers overshot the cap by %v on average)", mean, d, c.slack(), excess)
	if mean < d-d/10 || mean > d+d/10+excess {
		t.Errorf("mean sleep %v for %v (plain timers overshot the cap by %v on average)", mean, d, excess)
	}
}
