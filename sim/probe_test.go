package sim

import (
	"slices"
	"testing"
	"time"
)

// statBump is a handler that increments a counter at each event.
type statBump struct{ n int }

func (b *statBump) OnEvent(*Engine, int32, any) { b.n++ }

func TestProbeTicksAndSeesStateAfterArrivals(t *testing.T) {
	e := New(1)
	var arrivals statBump
	// Arrivals at 3 s and 5 s, scheduled after the probe: ClassSample still
	// runs after ClassArrival at the same instant.
	var ticks []Time
	var seen []int
	p := StartProbe(e, statSec(1), 2*time.Second, func(now Time) {
		ticks = append(ticks, now)
		seen = append(seen, arrivals.n)
	})
	e.ScheduleAt(statSec(3), ClassArrival, &arrivals, 0, nil)
	e.ScheduleAt(statSec(5), ClassArrival, &arrivals, 0, nil)
	e.Run(statSec(10))
	wantTicks := []Time{statSec(1), statSec(3), statSec(5), statSec(7), statSec(9)}
	if !slices.Equal(ticks, wantTicks) || !slices.Equal(seen, []int{0, 1, 2, 2, 2}) {
		t.Fatalf("ticks %v seeing %v; want %v seeing [0 1 2 2 2]", ticks, seen, wantTicks)
	}
	// The next tick keeps the calendar busy until stopped.
	if e.Pending() != 1 {
		t.Fatalf("%d events pending, want the next tick", e.Pending())
	}
	p.Stop()
	p.Stop()
	if e.Pending() != 0 {
		t.Fatalf("%d events pending after Stop", e.Pending())
	}
	e.Run(statSec(20))
	if len(ticks) != 5 {
		t.Fatalf("probe ticked after Stop: %v", ticks)
	}
}

func TestProbeStopFromInside(t *testing.T) {
	e := New(1)
	n := 0
	var p *Probe
	p = StartProbe(e, 0, time.Second, func(Time) {
		n++
		if n == 3 {
			p.Stop()
		}
	})
	e.Run(MaxTime) // returns: the probe stopped itself and the calendar emptied
	if n != 3 || e.Now() != statSec(2) {
		t.Fatalf("%d ticks, stopped at %v; want 3 at 2s", n, e.Now())
	}
}

func TestProbeTickAllocatesNothing(t *testing.T) {
	e := New(1)
	sum := Time(0)
	StartProbe(e, 0, time.Millisecond, func(now Time) { sum += now })
	e.Run(statSec(0.01)) // warm the calendar's slots
	if n := testing.AllocsPerRun(100, func() { e.Run(e.Now().Add(10 * time.Millisecond)) }); n != 0 {
		t.Fatalf("10 probe ticks allocate %v times", n)
	}
}
