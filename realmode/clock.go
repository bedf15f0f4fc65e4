package realmode

import (
	"context"
	"sync/atomic"
	"time"
)

// clock maps simulated time to real time: a simulated span d lasts
// d × scale of real time, and a real instant r since the start is the
// simulated instant r / scale. Real instants are time.Duration since start,
// read from the monotonic clock.
type clock struct {
	start atomic.Pointer[time.Time] // set once the servers are warm
	scale float64                   // real seconds per simulated second

	// Timer compensation: Go's timers fire late by a fairly steady amount
	// (≈0.1–0.3 ms on Linux, more under load). slackNS is a running
	// estimate of that overshoot, subtracted from every sleep so that the
	// mean real sleep matches its target. Overshoots are capped at
	// slackCap before they enter the estimate, so a rare stall (the
	// process descheduled for 50 ms) does not shorten every later sleep.
	compensate bool
	slackNS    atomic.Int64
	// owedNS is the balance of short spans: requested minus slept. A span
	// shorter than the overshoot cannot be slept by a timer; it is added
	// to the balance, and a timer sleep of what is owed is taken (and its
	// real length subtracted) only while the balance is positive. So short
	// spans keep their mean over a run, like the error diffusion of a
	// sigma-delta converter, where skipping them would lose them all and
	// sleeping each would add an overshoot to each.
	owedNS atomic.Int64
}

const (
	slackCap  = time.Millisecond
	slackGain = 32 // EWMA weight 1/32
)

func newClock(scale float64, compensate bool) *clock {
	c := &clock{scale: scale, compensate: compensate}
	c.reset()
	return c
}

// reset makes now the start.
func (c *clock) reset() {
	t := time.Now()
	c.start.Store(&t)
}

// now returns the real time since the start.
func (c *clock) now() time.Duration { return time.Since(*c.start.Load()) }

// toReal converts a simulated span to real time.
func (c *clock) toReal(d time.Duration) time.Duration {
	return time.Duration(float64(d)*c.scale + 0.5)
}

// toSim converts a real span to simulated time.
func (c *clock) toSim(d time.Duration) time.Duration {
	return time.Duration(float64(d)/c.scale + 0.5)
}

// simSeconds converts a real span to simulated seconds.
func (c *clock) simSeconds(d time.Duration) float64 { return d.Seconds() / c.scale }

// sleep waits a simulated span; it returns ctx's cause if ctx ends first.
func (c *clock) sleep(ctx context.Context, d time.Duration) error {
	return c.sleepReal(ctx, c.toReal(d))
}

// sleepReal waits a real span, compensated for timer overshoot.
func (c *clock) sleepReal(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	want := d
	if c.compensate {
		want -= time.Duration(c.slackNS.Load())
		if want <= 0 {
			return c.sleepShort(ctx, d)
		}
	}
	if want <= 0 {
		return nil
	}
	t0 := time.Now()
	tm := time.NewTimer(want)
	select {
	case <-tm.C:
	case <-ctx.Done():
		tm.Stop()
		return context.Cause(ctx)
	}
	if c.compensate {
		over := time.Since(t0) - want
		over = max(0, min(over, slackCap))
		s := c.slackNS.Load()
		c.slackNS.Store(s + (int64(over)-s)/slackGain)
	}
	return nil
}

// sleepShort sleeps a span shorter than the timer overshoot (see owedNS).
func (c *clock) sleepShort(ctx context.Context, d time.Duration) error {
	owed := c.owedNS.Add(int64(d))
	if d <= 0 || owed <= 0 {
		return nil
	}
	// Sleep what is owed, less the expected overshoot (at least a
	// minimal timer); whatever the real length, it is paid off.
	w := max(time.Duration(owed)-time.Duration(c.slackNS.Load()), time.Microsecond)
	t0 := time.Now()
	tm := time.NewTimer(w)
	select {
	case <-tm.C:
	case <-ctx.Done():
		tm.Stop()
	}
	c.owedNS.Add(-int64(time.Since(t0)))
	return context.Cause(ctx)
}

// sleepUntil waits until the real instant at (since start).
func (c *clock) sleepUntil(ctx context.Context, at time.Duration) error {
	return c.sleepReal(ctx, at-c.now())
}

// calibrate seeds the overshoot estimates, so that the first sleeps of a
// run are compensated too: a few rounds of short sleeps on several
// goroutines (a run sleeps on many at once), about 10 ms in all.
func (c *clock) calibrate() {
	if !c.compensate {
		return
	}
	const par, rounds = 8, 4
	const d = 2 * time.Millisecond
	var sum atomic.Int64
	done := make(chan struct{})
	for range par {
		go func() {
			for range rounds {
				t0 := time.Now()
				time.Sleep(d)
				over := max(0, min(time.Since(t0)-d, slackCap))
				sum.Add(int64(over))
			}
			done <- struct{}{}
		}()
	}
	for range par {
		<-done
	}
	c.slackNS.Store(sum.Load() / (par * rounds))
}

// slack returns the current overshoot estimate.
func (c *clock) slack() time.Duration { return time.Duration(c.slackNS.Load()) }
