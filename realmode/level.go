package realmode

import (
	"sync"
	"time"
)

// level is a piecewise-constant quantity (requests executing, threads busy,
// connections waiting) integrated over real time, like sim.Level but safe
// for concurrent use: every change takes the lock and reads the clock inside
// it, so changes are integrated in the order they happened. Means are
// time-weighted and unitless, so they need no rescaling.
type level struct {
	mu    sync.Mutex
	clk   *clock
	v     float64
	max   float64
	last  time.Duration // real instant of the last change
	start time.Duration // start of the averaging window (warm-up)
	area  float64       // ∫ v dt over [start, last], value·ns
	iarea float64       // ∫ v dt since the last interval take
}

func (l *level) advanceLocked(now time.Duration) {
	if now < l.last {
		now = l.last
	}
	a := l.v * float64(now-l.last)
	l.area += a
	l.iarea += a
	l.last = now
}

// add changes the value by delta now.
func (l *level) add(delta float64) {
	if delta == 0 {
		return
	}
	l.mu.Lock()
	l.advanceLocked(l.clk.now())
	l.v += delta
	if l.v > l.max {
		l.max = l.v
	}
	l.mu.Unlock()
}

// reset restarts the averaging window now, keeping the value (warm-up).
func (l *level) reset(now time.Duration) {
	l.mu.Lock()
	l.advanceLocked(now)
	l.start, l.area, l.max = l.last, 0, l.v
	l.mu.Unlock()
}

// value returns the current value.
func (l *level) value() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.v
}

// stats returns the time average since the window start, and the maximum.
func (l *level) stats(now time.Duration) (mean, max float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked(now)
	if l.last == l.start {
		return l.v, l.max
	}
	return l.area / float64(l.last-l.start), l.max
}

// takeInterval returns ∫ v dt (value·real ns) since the previous take.
func (l *level) takeInterval(now time.Duration) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.advanceLocked(now)
	a := l.iarea
	l.iarea = 0
	return a
}
