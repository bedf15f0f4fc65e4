package simmode

import (
	"fmt"

	"github.com/tsim-dev/tsim/sim"
)

// level is a piecewise-constant counter over virtual time and its
// time-weighted average, like sim.Level, but whose maximum counts only the
// values held for a positive time: a request refused at the instant it
// arrived, or a connection taken and given back at one instant, was never
// held, and a PerfMon sample could never have seen it. It is its own type
// (not a sim.Level inside) because a run updates its levels some fifty
// times a request: an update that changes nothing returns at once, and
// one that does change the value is one branch and one multiply-add.
type level struct {
	v     float64
	area  float64  // ∫ v dt over [start, last], in value·nanoseconds
	peak  float64  // largest value held for a positive time, before last
	last  sim.Time // when v was set
	start sim.Time // start of the averaging window
}

// Set changes the value to v at now.
func (l *level) Set(now sim.Time, v float64) {
	if v == l.v {
		return // nothing changes: the integral and the maximum catch up at the next change
	}
	if now != l.last {
		l.hold(now)
	}
	l.v = v
}

// hold closes the segment [last, now] at the current value.
func (l *level) hold(now sim.Time) {
	if now < l.last {
		levelBackwards(now, l.last)
	}
	if l.v > l.peak {
		l.peak = l.v
	}
	l.area += l.v * float64(now-l.last)
	l.last = now
}

func levelBackwards(now, last sim.Time) {
	panic(fmt.Sprintf("model: level updated at %v, before its previous update at %v", now, last))
}

// Add changes the value by delta at now.
// It inlines, so a change costs one call (moveTo), not two (Add, hold).
func (l *level) Add(now sim.Time, delta float64) {
	if v := l.v + delta; v != l.v {
		l.moveTo(now, v)
	}
}

// moveTo is Set to a new value v, hold spelled out.
func (l *level) moveTo(now sim.Time, v float64) {
	if now != l.last {
		if now < l.last {
			levelBackwards(now, l.last)
		}
		if l.v > l.peak {
			l.peak = l.v
		}
		l.area += l.v * float64(now-l.last)
		l.last = now
	}
	l.v = v
}

// Value returns the current value.
func (l *level) Value() float64 { return l.v }

// Mean returns the time average from the last Reset to now (over an empty
// window, the current value).
func (l *level) Mean(now sim.Time) float64 {
	if now < l.last {
		levelBackwards(now, l.last)
	}
	if now == l.start {
		return l.v
	}
	return (l.area + l.v*float64(now-l.last)) / float64(now-l.start)
}

// Max returns the largest value held for a positive time since the last
// Reset, up to now.
func (l *level) Max(now sim.Time) float64 {
	m := l.peak
	if now > l.last {
		m = max(m, l.v)
	}
	return m
}

// Reset restarts the averaging window and the maximum at now.
func (l *level) Reset(now sim.Time) {
	if now < l.last {
		levelBackwards(now, l.last)
	}
	l.start, l.last, l.area, l.peak = now, now, 0, 0
}
