package stallprobe

import (
	"strings"
	"testing"
	"time"
)

func TestDisturbedRule(t *testing.T) {
	quiet := Noise{Span: time.Second, MaxLate: 5 * time.Millisecond, Stalled: 50 * time.Millisecond, Burst: 0.1}
	cases := []struct {
		name string
		n    Noise
		self float64
		want bool
	}{
		{"quiet", quiet, 0.1, false},
		{"a long stall", Noise{Span: time.Second, MaxLate: 60 * time.Millisecond}, 0.1, true},
		{"stalled a third of the run", Noise{Span: time.Second, Stalled: 300 * time.Millisecond}, 0.1, true},
		{"a bunched quarter-second", Noise{Span: time.Second, Burst: 0.35}, 0.1, true},
		{"its own work", Noise{Span: time.Second, MaxLate: time.Second}, 0.9, false},
	}
	for _, c := range cases {
		d := c.n.Disturbed(c.self, MaxStall)
		if (d != "") != c.want {
			t.Errorf("%s: disturbed %q, want %v", c.name, d, c.want)
		}
		if d != "" && !strings.Contains(d, "stalled up to") {
			t.Errorf("%s: %q does not say what was seen", c.name, d)
		}
	}
}

// The probe measures something on any machine: samples of both kinds, a
// span, and lateness no less than zero.
func TestProbeMeasures(t *testing.T) {
	stop := Start()
	time.Sleep(100 * time.Millisecond)
	n := stop()
	if n.Wakeups == 0 || n.Calls == 0 || n.Span < 100*time.Millisecond || n.Base < 0 || n.MaxLate < n.Base {
		t.Errorf("noise %+v", n)
	}
}
