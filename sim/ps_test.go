package sim

import (
	"testing"
	"time"
)

type psDone struct {
	at map[int32]Time
}

func (d *psDone) OnEvent(e *Engine, kind int32, arg any) { d.at[kind] = e.Now() }

// TestPSStepTable checks processor sharing at named instants: two cores,
// three jobs of 3 s, 3 s and 1 s arriving at 0, 0 and 1 s.
//
//	0–1 s: jobs A and B alone, one core each: 1 s of service each.
//	1–2.5 s: A, B, C share two cores at rate 2/3: C needs 1 s → done at 2.5 s;
//	         A and B have received 1 + 1 = 2 s.
//	2.5–3.5 s: A and B at rate 1 again: done at 3.5 s.
func TestPSStepTable(t *testing.T) {
	e := New(1)
	p := NewPS(e, 2)
	d := &psDone{at: map[int32]Time{}}
	var a, b, c PSJob
	p.Start(&a, 3*time.Second, d, 'A', nil)
	p.Start(&b, 3*time.Second, d, 'B', nil)
	e.Run(Time(time.Second))
	p.Start(&c, time.Second, d, 'C', nil)
	e.Run(MaxTime)
	want := map[int32]Time{'A': Time(3500 * time.Millisecond), 'B': Time(3500 * time.Millisecond), 'C': Time(2500 * time.Millisecond)}
	for k, w := range want {
		if got := d.at[k]; got < w || got > w+2 {
			t.Errorf("job %c done at %v, want %v", k, got, w)
		}
	}
}

func TestPSRemove(t *testing.T) {
	e := New(1)
	p := NewPS(e, 1)
	d := &psDone{at: map[int32]Time{}}
	var a, b PSJob
	p.Start(&a, 4*time.Second, d, 'A', nil)
	p.Start(&b, 4*time.Second, d, 'B', nil)
	e.Run(Time(2 * time.Second)) // each got 1 s
	if left := p.Remove(&b); left != 3*time.Second {
		t.Fatalf("B left %v, want 3s", left)
	}
	if p.Remove(&b) != 0 {
		t.Fatal("second Remove returned work")
	}
	e.Run(MaxTime)
	if got := d.at['A']; got != Time(5*time.Second) {
		t.Fatalf("A done at %v, want 5s", got)
	}
	if _, ok := d.at['B']; ok {
		t.Fatal("removed job B completed")
	}
}
