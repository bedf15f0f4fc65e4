package sim

import (
	"math"
	"strconv"
	"time"
)

// Time is an instant of virtual time in nanoseconds since the start of a run.
// Spans between instants are time.Duration.
type Time int64

// MaxTime is the latest representable instant; Add saturates at it.
const MaxTime Time = math.MaxInt64

// Add returns t+d, saturating at MaxTime (and at 0 for negative results).
func (t Time) Add(d time.Duration) Time {
	s := int64(t) + int64(d)
	if d > 0 && s < int64(t) {
		return MaxTime
	}
	if s < 0 {
		return 0
	}
	return Time(s)
}

// Sub returns the span t-u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(int64(t) - int64(u)) }

// Seconds returns t as floating-point seconds.
func (t Time) Seconds() float64 { return float64(t) / 1e9 }

// String formats t as seconds with millisecond precision, e.g. "12.345s".
func (t Time) String() string {
	return strconv.FormatFloat(t.Seconds(), 'f', 3, 64) + "s"
}

// maxDurationSeconds is the largest span FromSeconds returns: about 292 years.
const maxDurationSeconds = float64(math.MaxInt64) / 1e9

// FromSeconds converts a float sample in seconds to a span: it rounds to the
// nearest nanosecond, clamps negative values and NaN to 0 and caps overflow at
// the largest time.Duration. It is the one place where float samples become
// virtual time.
func FromSeconds(s float64) time.Duration {
	switch {
	case !(s > 0): // also NaN
		return 0
	case s >= maxDurationSeconds:
		return time.Duration(math.MaxInt64)
	}
	// math.Round(x) for x > 0, without its bit twiddling (this runs for
	// every sample): below 2⁵² the truncation and the fraction are exact;
	// above, x is already an integer.
	x := s * 1e9
	if x >= 1<<52 {
		return time.Duration(x)
	}
	n := int64(x)
	if x-float64(n) >= 0.5 {
		n++
	}
	return time.Duration(n)
}

// Seconds returns d as float seconds (time.Duration.Seconds, named here for
// symmetry with FromSeconds).
func Seconds(d time.Duration) float64 { return d.Seconds() }
