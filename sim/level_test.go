package sim

import (
	"testing"
	"time"
)

// statSec returns the instant s seconds after 0.
func statSec(s float64) Time { return Time(0).Add(FromSeconds(s)) }

// A step table at named instants; each expected mean is the area under the
// step function divided by the window length, worked out by hand.
func TestLevelSteps(t *testing.T) {
	var l Level // 0 from t=0
	steps := []struct {
		at       float64 // seconds
		op       string  // "set", "add", "reset" or "" (read only)
		v        float64
		value    float64
		mean     float64 // Mean(at)
		maxSince float64
	}{
		{0, "", 0, 0, 0, 0},                               // empty window: current value
		{2, "set", 3, 3, 0, 3},                            // 0 over [0,2]
		{5, "add", -1, 2, (0*2 + 3*3) / 5.0, 3},           // area 9
		{10, "", 0, 2, (0*2 + 3*3 + 2*5) / 10.0, 3},       // area 19
		{10, "reset", 0, 2, 2, 2},                         // window restarts, value kept
		{12, "set", 4, 4, 2, 4},                           // 2 over [10,12]
		{14, "add", 0.5, 4.5, (2*2 + 4*2) / 4.0, 4.5},     // area 12
		{14, "set", -1, -1, (2*2 + 4*2) / 4.0, 4.5},       // same-instant change adds no area
		{20, "", 0, -1, (2*2 + 4*2 + (-1)*6) / 10.0, 4.5}, // area 6
	}
	for _, s := range steps {
		now := statSec(s.at)
		switch s.op {
		case "set":
			l.Set(now, s.v)
		case "add":
			l.Add(now, s.v)
		case "reset":
			l.Reset(now)
		}
		// Areas are sums of a few products of small integers and whole
		// nanosecond counts, exact in float64, then one division: allow
		// one rounding (relative 2^-52).
		if l.Value() != s.value || l.Max() != s.maxSince || !statClose(l.Mean(now), s.mean, 0x1p-52) {
			t.Fatalf("at %vs after %q: value %v mean %v max %v; want %v %v %v",
				s.at, s.op, l.Value(), l.Mean(now), l.Max(), s.value, s.mean, s.maxSince)
		}
	}
}

// statClose reports whether got is within rel·|want| of want.
func statClose(got, want, rel float64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	if want < 0 {
		want = -want
	}
	return d <= rel*want
}

func TestLevelRejectsTimeGoingBack(t *testing.T) {
	var l Level
	l.Set(statSec(5), 1)
	defer func() {
		if recover() == nil {
			t.Fatal("Set before the previous update did not panic")
		}
	}()
	l.Set(statSec(4), 2)
}

func TestLevelAddAllocatesNothing(t *testing.T) {
	var l Level
	now := Time(0)
	if n := testing.AllocsPerRun(1000, func() { now = now.Add(time.Millisecond); l.Add(now, 1) }); n != 0 {
		t.Fatalf("Level.Add allocates %v times", n)
	}
}

func BenchmarkLevelAdd(b *testing.B) {
	b.ReportAllocs()
	var l Level
	now := Time(0)
	delta := 1.0
	for b.Loop() {
		now += 1000
		l.Add(now, delta)
		delta = -delta
	}
}
