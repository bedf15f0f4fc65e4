package model

import (
	"math"
	"time"
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
