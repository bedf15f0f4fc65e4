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

// naivePS is the reference for TestPSAgainstNaive: the same virtual-time
// arithmetic, with the job of least finish found by a scan.
type naivePS struct {
	e     *Engine
	cores int64
	v     int64
	last  Time
	jobs  []naiveJob
	seq   uint64
	next  EventID
	done  *[]psRecord
}

type naiveJob struct {
	finish int64
	seq    uint64
	id     int
}

type psRecord struct {
	at Time
	id int
}

func (p *naivePS) advance() {
	dt, n := int64(p.e.Now()-p.last), int64(len(p.jobs))
	p.last = p.e.Now()
	if dt <= 0 || n == 0 {
		return
	}
	if n <= p.cores {
		p.v += dt
	} else {
		p.v += dt * p.cores / n
	}
}

func (p *naivePS) least() int {
	m := 0
	for i, j := range p.jobs {
		if j.finish < p.jobs[m].finish || (j.finish == p.jobs[m].finish && j.seq < p.jobs[m].seq) {
			m = i
		}
	}
	return m
}

func (p *naivePS) reschedule() {
	p.e.Cancel(p.next)
	p.next = EventID{}
	if len(p.jobs) == 0 {
		return
	}
	r := max(p.jobs[p.least()].finish-p.v, 0)
	if n := int64(len(p.jobs)); n > p.cores {
		r = (r*n + p.cores - 1) / p.cores
	}
	p.next = p.e.Schedule(time.Duration(r), ClassCompletion, p, 0, nil)
}

func (p *naivePS) start(id int, d time.Duration) {
	p.advance()
	p.seq++
	p.jobs = append(p.jobs, naiveJob{p.v + int64(d), p.seq, id})
	p.reschedule()
}

func (p *naivePS) remove(id int) {
	p.advance()
	for i, j := range p.jobs {
		if j.id == id {
			p.jobs = append(p.jobs[:i], p.jobs[i+1:]...)
			break
		}
	}
	p.reschedule()
}

func (p *naivePS) OnEvent(e *Engine, _ int32, _ any) {
	p.next = EventID{}
	p.advance()
	for len(p.jobs) > 0 {
		m := p.least()
		if p.jobs[m].finish > p.v {
			break
		}
		*p.done = append(*p.done, psRecord{e.Now(), p.jobs[m].id})
		p.jobs = append(p.jobs[:m], p.jobs[m+1:]...)
	}
	p.reschedule()
}

type psRecorder struct {
	p    *PS
	done *[]psRecord
}

func (r psRecorder) OnEvent(e *Engine, kind int32, _ any) {
	*r.done = append(*r.done, psRecord{e.Now(), int(kind)})
}

// TestPSAgainstNaive drives a PS and the naive reference with the same
// seeded random starts (demands with and without ties) and removals on 1 to 4 cores,
// checks the heap after every operation, and compares the completions.
func TestPSAgainstNaive(t *testing.T) {
	for cores := 1; cores <= 4; cores++ {
		e := New(uint64(cores))
		rnd := e.Stream("ops")
		var got, want []psRecord
		p := NewPS(e, cores)
		ref := &naivePS{e: e, cores: int64(cores), done: &want}
		rec := psRecorder{p, &got}
		jobs := make([]PSJob, 300)
		for op := range 20000 {
			e.Run(e.Now().Add(time.Duration(rnd.IntN(100*cores)) * time.Millisecond))
			id := rnd.IntN(len(jobs))
			if j := &jobs[id]; j.InService() {
				if rnd.IntN(3) == 0 {
					p.Remove(j)
					ref.remove(id)
				}
			} else {
				d := time.Duration(1+rnd.IntN(8)) * 250 * time.Millisecond // ties
				if rnd.IntN(2) == 0 {
					d = time.Duration(rnd.Int64N(int64(400 * time.Second)))
				}
				p.Start(j, d, rec, int32(id), nil)
				ref.start(id, d)
			}
			if err := p.verify(); err != nil {
				t.Fatalf("cores %d, op %d: %v", cores, op, err)
			}

		}
		e.Run(MaxTime)
		if len(got) != len(want) || len(got) < 200 {
			t.Fatalf("cores %d: %d completions, the reference %d", cores, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("cores %d: completion %d is %+v, the reference's %+v", cores, i, got[i], want[i])
			}
		}
	}
}
