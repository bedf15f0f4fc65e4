package sim

import (
	"testing"
	"time"
)

// TestPSSlowdownStepTable: one core, jobs A (2 s) and B (1 s) at 0; the
// work inflates by 2 from 1 s; A alone again once B is done.
//
//	0–1 s: A, B at 1/2 each: 0.5 s of service each.
//	1–3 s: slowdown 2: each at 1/4: B's last 0.5 s takes 2 s → B done at 3 s; A has 1 s.
//	3 s–: A alone at 1/2: its last 1 s takes 2 s → A done at 5 s.
func TestPSSlowdownStepTable(t *testing.T) {
	e := New(1)
	p := NewPS(e, 1)
	d := &psDone{at: map[int32]Time{}}
	var a, b PSJob
	p.Start(&a, 2*time.Second, d, 'A', nil)
	p.Start(&b, time.Second, d, 'B', nil)
	e.Run(Time(time.Second))
	p.SetSlowdown(2)
	e.Run(MaxTime)
	for k, w := range map[int32]Time{'A': Time(5 * time.Second), 'B': Time(3 * time.Second)} {
		if got := d.at[k]; got < w || got > w+2 {
			t.Errorf("job %c done at %v, want %v", k, got, w)
		}
	}
	if err := p.verify(); err != nil {
		t.Fatal(err)
	}
}

// TestPSSlowdownExact: an odd factor on many cores still completes every
// job at the first instant its work is done (no event loop, no drift).
func TestPSSlowdownExact(t *testing.T) {
	e := New(1)
	p := NewPS(e, 3)
	p.SetSlowdown(1.37)
	d := &psDone{at: map[int32]Time{}}
	jobs := make([]PSJob, 7)
	for i := range jobs {
		p.Start(&jobs[i], time.Duration(i+1)*time.Millisecond, d, int32(i), nil)
	}
	e.Run(MaxTime)
	// 7 jobs on 3 cores: the smallest (1 ms) needs 1 ms × 7/3 × 1.37.
	want := Time(3196656) // ⌈1 ms × 7/3 × 89784/65536⌉: 1.37 to 1/65536
	if got := d.at[0]; got < want || got > want+2 {
		t.Errorf("first job done at %d ns, want %d", got, want)
	}
	if len(d.at) != 7 {
		t.Fatalf("%d jobs done, want 7", len(d.at))
	}
}

// TestPSFreeze: a pause of 1 s at 0.5 s delays a 1 s job to 2 s; a second
// freeze during the first extends it.
func TestPSFreeze(t *testing.T) {
	e := New(1)
	p := NewPS(e, 1)
	d := &psDone{at: map[int32]Time{}}
	var a PSJob
	p.Start(&a, time.Second, d, 'A', nil)
	e.Run(Time(500 * time.Millisecond))
	p.Freeze(time.Second)
	e.Run(Time(time.Second))
	p.Freeze(250 * time.Millisecond) // frozen until 1.75 s
	if p.FrozenUntil() != Time(1750*time.Millisecond) {
		t.Fatalf("frozen until %v", p.FrozenUntil())
	}
	e.Run(MaxTime)
	if got, want := d.at['A'], Time(2250*time.Millisecond); got < want || got > want+2 {
		t.Errorf("A done at %v, want %v", got, want)
	}
	// A job started during a freeze starts after it.
	var b PSJob
	p.Freeze(time.Second)
	p.Start(&b, time.Second, d, 'B', nil)
	e.Run(MaxTime)
	if got, want := d.at['B'], Time(4250*time.Millisecond); got < want || got > want+2 {
		t.Errorf("B done at %v, want %v", got, want)
	}
}
