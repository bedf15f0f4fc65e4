package sim

import (
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// The exponential Sampler draws from its Stream directly; it must draw the
// very numbers the distuv.Exponential it replaced drew, so that results do
// not move.
func TestExpSamplerDrawsAsDistuv(t *testing.T) {
	for _, mean := range []time.Duration{time.Nanosecond, 50 * time.Millisecond, time.Second, 1000 * time.Hour} {
		sm := Exp(mean).Sampler(NewStreams(5).Stream("exp"))
		ref := NewStreams(5).Stream("exp")
		r := distuv.Exponential{Rate: 1, Src: ref.Src()}
		for i := 0; i < 10000; i++ {
			if got, want := sm.Sample(), FromSeconds(mean.Seconds()*r.Rand()); got != want {
				t.Fatalf("mean %v, draw %d: %v, want %v", mean, i, got, want)
			}
		}
	}
}
