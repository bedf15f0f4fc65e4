package model

import (
	"math"
	"time"

	"github.com/tsim-dev/tsim/sim"
)

// NextChange returns the next instant after now at which the rounded value
// of a piecewise-linear schedule changes.
func NextChange(s Schedule, now time.Duration) (time.Duration, bool) {
	cur := math.Round(s.At(now))
	for i := 1; i < len(s); i++ {
		a, b := s[i-1], s[i]
		if b.At <= now {
			continue
		}
		if a.At >= b.At { // a step
			if math.Round(b.Value) != cur {
				return b.At, true
			}
			continue
		}
		if a.Value == b.Value {
			if math.Round(b.Value) != cur {
				return maxDur(a.At, now+1), true
			}
			continue
		}
		// Crossing of the next rounding boundary on this segment.
		var target float64
		if b.Value > a.Value {
			target = cur + 0.5
		} else {
			target = cur - 0.5
		}
		f := (target - a.Value) / (b.Value - a.Value)
		if f >= 0 && f <= 1 {
			t := a.At + time.Duration(math.Ceil(f*float64(b.At-a.At)))
			if t <= now {
				t = now + 1
			}
			return t, true
		}
		if math.Round(b.Value) != cur {
			return b.At, true
		}
	}
	return 0, false
}

func NextPositive(s Schedule, now time.Duration) (time.Duration, bool) {
	for _, p := range s {
		if p.At > now && p.Value > 0 {
			return p.At, true
		}
	}
	return 0, false
}

func maxDur(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

// Arrivals is an open load's arrival process (LoadOpen), the same in both
// executors: a trace replayed at its instants (Load.Arrivals), a renewal
// process of the given shape with its mean rescaled to 1/rate
// (Load.Interarrival), or Poisson candidates at the peak rate thinned to
// the rate (Lewis & Shedler). Its random streams are the executor's
// "load/arrivals" and "load/interarrival".
type Arrivals struct {
	spec     *Load
	arrive   *sim.Stream
	shape    sim.Sampler
	hasShape bool
	traced   int // the trace's arrivals handed out
}

// NewArrivals returns the arrival process of l drawing from the streams
// arrive and interarrival.
func NewArrivals(l *Load, arrive, interarrival *sim.Stream) *Arrivals {
	a := &Arrivals{spec: l, arrive: arrive}
	if !l.Interarrival.IsZero() {
		a.shape, a.hasShape = l.Interarrival.Sampler(interarrival), true
	}
	return a
}

// Next is the instant of the next candidate arrival after now; ok is
// false when none will come.
func (a *Arrivals) Next(now time.Duration) (at time.Duration, ok bool) {
	s := a.spec
	if s.Arrivals != nil {
		if a.traced >= len(s.Arrivals) {
			return 0, false
		}
		a.traced++
		return s.Arrivals[a.traced-1], true
	}
	peak := s.Rate.Max()
	if peak <= 0 {
		return 0, false
	}
	if a.hasShape {
		rate := s.Rate.At(now)
		if rate <= 0 {
			return NextPositive(s.Rate, now) // arrivals resume after a zero rate
		}
		return now + time.Duration(float64(a.shape.Sample())/(s.Interarrival.Mean().Seconds()*rate)), true
	}
	return now + sim.FromSeconds(a.arrive.ExpFloat64()/peak), true
}

// Keep reports whether the candidate at now is an arrival: a Poisson
// candidate is kept with probability rate(now)/peak.
func (a *Arrivals) Keep(now time.Duration) bool {
	s := a.spec
	return s.Arrivals != nil || a.hasShape || a.arrive.Float64()*s.Rate.Max() < s.Rate.At(now)
}

// User is a closed-loop user as the Users schedule sees it (think,
// request, wait, repeat).
type User struct {
	Retired  bool // asked to stop: leaves after its current request
	Busy     bool // its request is under way
	Thinking bool // its think time is running
}

// SetUsers brings the number of active users to want, as both executors
// do when the Users schedule changes: the newest users retire first (one
// that is thinking stops: stop), retired ones come back before new ones
// start (one that is neither busy nor thinking thinks again: resume), and
// it returns how many new users to start. user(i) is the i-th of n users
// ever started.
func SetUsers(n int, user func(i int) *User, want int, stop, resume func(i int)) (start int) {
	active := 0
	for i := range n {
		if !user(i).Retired {
			active++
		}
	}
	for i := n - 1; i >= 0 && active > want; i-- {
		if u := user(i); !u.Retired {
			u.Retired = true
			active--
			if !u.Busy && u.Thinking {
				stop(i)
			}
		}
	}
	for i := 0; i < n && active < want; i++ {
		if u := user(i); u.Retired && !u.Busy && !u.Thinking {
			u.Retired = false
			active++
			resume(i)
		}
	}
	return max(want-active, 0)
}
