package sim

import "fmt"

// Level tracks a piecewise-constant quantity over virtual time, such as a
// queue length or the number of busy threads, and its time-weighted average:
//
//	Mean(now) = (1/(now − t0)) ∫_{t0}^{now} v(t) dt
//
// where t0 is the last Reset (or 0). The zero value is a level of 0 from
// time 0. Updates must come in non-decreasing time order.
type Level struct {
	v     float64
	last  Time    // when v last changed (or the reset instant)
	start Time    // start of the averaging window
	area  float64 // ∫ v dt over [start, last], in value·nanoseconds
	max   float64
}

// advance closes the segment [last, now] at the current value.
func (l *Level) advance(now Time) {
	if now < l.last {
		panic(levelBackwards{now, l.last})
	}
	l.area += l.v * float64(now-l.last)
	l.last = now
}

// levelBackwards is the panic of an update before the previous one (a
// value rather than a formatted string, so that Set and Add inline).
type levelBackwards struct{ now, last Time }

func (e levelBackwards) Error() string {
	return fmt.Sprintf("sim: Level updated at %v, before its previous update at %v", e.now, e.last)
}

// Set changes the value to v at instant now.
func (l *Level) Set(now Time, v float64) {
	l.advance(now)
	l.v = v
	if v > l.max {
		l.max = v
	}
}

// Add changes the value by delta at instant now.
func (l *Level) Add(now Time, delta float64) {
	l.advance(now)
	l.v += delta
	if l.v > l.max {
		l.max = l.v
	}
}

// Value returns the current value.
func (l *Level) Value() float64 { return l.v }

// Mean returns the time average from the last Reset to now. Over an empty
// window (now equal to the reset instant) it returns the current value.
func (l *Level) Mean(now Time) float64 {
	if now < l.last {
		panic(fmt.Sprintf("sim: Level read at %v, before its last update at %v", now, l.last))
	}
	if now == l.start {
		return l.v
	}
	return (l.area + l.v*float64(now-l.last)) / float64(now-l.start)
}

// Max returns the largest value held since the last Reset (including the
// value current at the reset).
func (l *Level) Max() float64 { return l.max }

// Reset restarts the averaging window at now, keeping the current value:
// calling it at the end of a warm-up period deletes the warm-up from Mean
// and Max.
func (l *Level) Reset(now Time) {
	l.advance(now)
	l.start, l.area, l.max = now, 0, l.v
}
