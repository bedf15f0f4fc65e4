package sim

import (
	"math"
	"math/bits"
	"strconv"
	"time"
)

// PS is a multi-core processor-sharing server: with n jobs on c cores each
// job is served at rate min(1, c/n). It keeps one completion event pending
// (for the job with the least remaining work) and moves it whenever n
// changes, using the "virtual time" of Kleinrock: V(t) is the service every
// job present since the start has received; a job that arrives at V with
// demand d leaves when V reaches V+d.
//
// V is integer nanoseconds of service. Each update floors the increment, so
// the error is below 1 ns per change of n and never accumulates as float
// drift would.
type PS struct {
	e     *Engine
	cores int64
	v     int64
	last  Time
	// heap is a 4-ary min-heap on (finish, seq) of the jobs in service, by
	// their slot in jobs; pos[slot] is the slot's index in heap. The keys
	// live in the heap itself, so sifting compares without following a
	// pointer and moves no pointer (no write barrier).
	heap []psEntry
	jobs []*PSJob // by slot; nil when the slot is free
	pos  []int32
	free []int32 // free slots
	seq  uint64
	next EventID
	// slow is the factor by which work inflates, in units of 1/slowOne
	// (slowOne: none; SetSlowdown); frozen the instant before which no
	// job progresses (Freeze).
	slow   uint64
	frozen Time
	// OnChange, if set, is called after every change in the number of jobs
	// (for time-weighted utilisation levels).
	OnChange func(now Time, jobs int)
}

type psEntry struct {
	finish int64
	seq    uint64
	slot   int32
}

func (a *psEntry) less(b *psEntry) bool {
	return a.finish < b.finish || (a.finish == b.finish && a.seq < b.seq)
}

// PSJob is a job in a PS server. Embed it in the entity that uses the CPU:
// starting and finishing a job allocates nothing.
type PSJob struct {
	ref  int32 // 1 + its slot in the server while in service; 0 otherwise
	h    Handler
	kind int32
	arg  any
}

// InService reports whether the job is being served.
func (j *PSJob) InService() bool { return j.ref > 0 && j.h != nil }

// NewPS returns a processor-sharing server with the given number of cores.
func NewPS(e *Engine, cores int) *PS {
	if cores < 1 {
		panic("sim: PS needs at least one core")
	}
	return &PS{e: e, cores: int64(cores), slow: slowOne}
}

// slowOne is a slowdown of 1 in SetSlowdown's fixed point.
const slowOne = 1 << 16

// SetSlowdown makes every job's work inflate by f ≥ 1 from now on (a
// processor that loses a share of its time to context switches or to
// paging: each job is served at min(1, c/n)/f). f is kept to 1/65536, so
// that service stays exact integer arithmetic; f < 1 is 1.
func (p *PS) SetSlowdown(f float64) {
	q := uint64(slowOne)
	if f > 1 {
		q = uint64(math.Min(math.Round(f*slowOne), 1<<40))
	}
	if q == p.slow {
		return
	}
	p.advance()
	p.slow = q
	p.reschedule()
}

// Freeze stops every job's progress for d from now (a garbage
// collection's pause that suspends every thread of the process); a freeze
// during one extends it.
func (p *PS) Freeze(d time.Duration) {
	if d <= 0 {
		return
	}
	p.advance()
	p.frozen = max(p.frozen, p.e.now) + Time(d)
	p.reschedule()
}

// FrozenUntil is the instant the current freeze ends (≤ now: none).
func (p *PS) FrozenUntil() Time { return p.frozen }

// Len returns the number of jobs in service.
func (p *PS) Len() int { return len(p.heap) }

// Cores returns the number of cores.
func (p *PS) Cores() int { return int(p.cores) }

// Start puts j in service for demand; h.OnEvent(e, kind, arg) runs when it
// completes (class ClassCompletion).
func (p *PS) Start(j *PSJob, demand time.Duration, h Handler, kind int32, arg any) {
	p.advance()
	if demand < 0 {
		demand = 0
	}
	p.seq++
	var s int32
	if n := len(p.free); n > 0 {
		s = p.free[n-1]
		p.free = p.free[:n-1]
	} else {
		s = int32(len(p.jobs))
		p.jobs = append(p.jobs, nil)
		p.pos = append(p.pos, 0)
	}
	p.jobs[s] = j
	j.ref, j.h, j.kind, j.arg = s+1, h, kind, arg
	i := len(p.heap)
	p.heap = append(p.heap, psEntry{})
	p.up(i, psEntry{finish: p.v + int64(demand), seq: p.seq, slot: s})
	p.changed()
}

// Remove takes j out of service before it completes and returns the work it
// still needed. Removing a job that is not in service returns 0.
func (p *PS) Remove(j *PSJob) time.Duration {
	if !j.InService() || int(j.ref) > len(p.jobs) || p.jobs[j.ref-1] != j {
		return 0
	}
	p.advance()
	s := j.ref - 1
	left := p.heap[p.pos[s]].finish - p.v
	p.removeAt(int(p.pos[s]))
	p.drop(j)
	p.changed()
	if left < 0 {
		left = 0
	}
	return time.Duration(left)
}

// drop frees the slot of a job taken out of the heap.
func (p *PS) drop(j *PSJob) {
	s := j.ref - 1
	p.jobs[s] = nil
	p.free = append(p.free, s)
	j.ref, j.h, j.arg = 0, nil, nil
}

// OnEvent handles the server's own completion event.
func (p *PS) OnEvent(e *Engine, kind int32, arg any) {
	p.next = EventID{}
	p.advance()
	for len(p.heap) > 0 && p.heap[0].finish <= p.v {
		j := p.jobs[p.heap[0].slot]
		p.removeAt(0)
		h, k, a := j.h, j.kind, j.arg
		p.drop(j)
		if p.OnChange != nil {
			p.OnChange(p.e.now, len(p.heap))
		}
		h.OnEvent(e, k, a)
	}
	p.reschedule()
}

func (p *PS) advance() {
	now := p.e.now
	from := p.last
	if p.frozen > from {
		from = min(p.frozen, now)
	}
	dt := int64(now - from)
	p.last = now
	n := int64(len(p.heap))
	if dt <= 0 || n == 0 {
		return
	}
	switch {
	case p.slow != slowOne:
		p.v += int64(mulDiv(uint64(dt), uint64(min(n, p.cores))*slowOne, uint64(n)*p.slow))
	case n <= p.cores:
		p.v += dt
	default:
		p.v += dt * p.cores / n
	}
}

// mulDiv is ⌊a·b/c⌋ in 128 bits (capped at 1<<62).
func mulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return 1 << 62
	}
	q, _ := bits.Div64(hi, lo, c)
	return min(q, 1<<62)
}

// ceilMulDiv is ⌈a·b/c⌉ (capped at 1<<62).
func ceilMulDiv(a, b, c uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi >= c {
		return 1 << 62
	}
	q, r := bits.Div64(hi, lo, c)
	if r != 0 {
		q++
	}
	return min(q, 1<<62)
}

func (p *PS) changed() {
	if p.OnChange != nil {
		p.OnChange(p.e.now, len(p.heap))
	}
	p.reschedule()
}

// reschedule points the completion event at the job with the least
// remaining work. A change moves the pending event (one sift in the
// calendar) rather than cancelling it and scheduling another; the order
// among events at one instant is the same either way.
func (p *PS) reschedule() {
	if len(p.heap) == 0 {
		if p.next.Valid() {
			p.e.Cancel(p.next)
			p.next = EventID{}
		}
		return
	}
	r := p.heap[0].finish - p.v
	if r < 0 {
		r = 0
	}
	n := int64(len(p.heap))
	dt := r
	switch {
	case p.slow != slowOne:
		// ceil: ⌊dt·min(n,c)·one/(n·slow)⌋ ≥ r (advance)
		dt = int64(ceilMulDiv(uint64(r), uint64(n)*p.slow, uint64(min(n, p.cores))*slowOne))
	case n > p.cores:
		dt = (r*n + p.cores - 1) / p.cores // ceil: V reaches finish by then
	}
	if p.frozen > p.e.now {
		dt += int64(p.frozen - p.e.now)
	}
	if p.next.Valid() {
		if id, ok := p.e.Reschedule(p.next, time.Duration(dt), ClassCompletion); ok {
			p.next = id
			return
		}
	}
	p.next = p.e.Schedule(time.Duration(dt), ClassCompletion, p, 0, nil)
}

// up puts x, which belongs at or above the hole at i, in its place.
func (p *PS) up(i int, x psEntry) {
	h := p.heap
	for i > 0 {
		q := (i - 1) / 4
		if !x.less(&h[q]) {
			break
		}
		h[i] = h[q]
		p.pos[h[i].slot] = int32(i)
		i = q
	}
	h[i] = x
	p.pos[x.slot] = int32(i)
}

// down puts x, which belongs at or below the hole at i, in its place.
func (p *PS) down(i int, x psEntry) {
	h := p.heap
	n := len(h)
	for {
		m := 4*i + 1
		if m >= n {
			break
		}
		end := min(m+4, n)
		for c := m + 1; c < end; c++ {
			if h[c].less(&h[m]) {
				m = c
			}
		}
		if !h[m].less(&x) {
			break
		}
		h[i] = h[m]
		p.pos[h[i].slot] = int32(i)
		i = m
	}
	h[i] = x
	p.pos[x.slot] = int32(i)
}

func (p *PS) removeAt(i int) {
	last := len(p.heap) - 1
	x := p.heap[last]
	p.heap = p.heap[:last]
	if i == last {
		return
	}
	if x.less(&p.heap[i]) {
		p.up(i, x)
	} else {
		p.down(i, x)
	}
}

// verify checks the heap property and the slots' positions (tests).
func (p *PS) verify() error {
	for i := range p.heap {
		if q := (i - 1) / 4; i > 0 && p.heap[i].less(&p.heap[q]) {
			return errCalendar("ps: heap invariant broken at index " + strconv.Itoa(i))
		}
		s := p.heap[i].slot
		if p.pos[s] != int32(i) || p.jobs[s] == nil || p.jobs[s].ref != s+1 {
			return errCalendar("ps: slot positions broken at index " + strconv.Itoa(i))
		}
	}
	return nil
}
