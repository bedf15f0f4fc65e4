package sim

import "time"

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
	jobs  []*PSJob // binary min-heap on (finish, seq)
	seq   uint64
	next  EventID
	// OnChange, if set, is called after every change in the number of jobs
	// (for time-weighted utilisation levels).
	OnChange func(now Time, jobs int)
}

// PSJob is a job in a PS server. Embed it in the entity that uses the CPU:
// starting and finishing a job allocates nothing.
type PSJob struct {
	finish int64
	seq    uint64
	idx    int // heap index, -1 when not in service
	h      Handler
	kind   int32
	arg    any
}

// InService reports whether the job is being served.
func (j *PSJob) InService() bool { return j.idx >= 0 && j.h != nil }

// NewPS returns a processor-sharing server with the given number of cores.
func NewPS(e *Engine, cores int) *PS {
	if cores < 1 {
		panic("sim: PS needs at least one core")
	}
	return &PS{e: e, cores: int64(cores)}
}

// Len returns the number of jobs in service.
func (p *PS) Len() int { return len(p.jobs) }

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
	j.finish, j.seq, j.h, j.kind, j.arg = p.v+int64(demand), p.seq, h, kind, arg
	j.idx = len(p.jobs)
	p.jobs = append(p.jobs, j)
	p.up(j.idx)
	p.changed()
}

// Remove takes j out of service before it completes and returns the work it
// still needed. Removing a job that is not in service returns 0.
func (p *PS) Remove(j *PSJob) time.Duration {
	if !j.InService() || j.idx >= len(p.jobs) || p.jobs[j.idx] != j {
		return 0
	}
	p.advance()
	left := j.finish - p.v
	p.removeAt(j.idx)
	j.h, j.arg = nil, nil
	p.changed()
	if left < 0 {
		left = 0
	}
	return time.Duration(left)
}

// OnEvent handles the server's own completion event.
func (p *PS) OnEvent(e *Engine, kind int32, arg any) {
	p.next = EventID{}
	p.advance()
	for len(p.jobs) > 0 && p.jobs[0].finish <= p.v {
		j := p.jobs[0]
		p.removeAt(0)
		h, k, a := j.h, j.kind, j.arg
		j.h, j.arg = nil, nil
		if p.OnChange != nil {
			p.OnChange(p.e.now, len(p.jobs))
		}
		h.OnEvent(e, k, a)
	}
	p.reschedule()
}

func (p *PS) advance() {
	now := p.e.now
	dt := int64(now - p.last)
	p.last = now
	n := int64(len(p.jobs))
	if dt <= 0 || n == 0 {
		return
	}
	if n <= p.cores {
		p.v += dt
	} else {
		p.v += dt * p.cores / n
	}
}

func (p *PS) changed() {
	if p.OnChange != nil {
		p.OnChange(p.e.now, len(p.jobs))
	}
	p.reschedule()
}

// reschedule points the completion event at the job with the least
// remaining work. A change moves the pending event (one sift in the
// calendar) rather than cancelling it and scheduling another; the order
// among events at one instant is the same either way.
func (p *PS) reschedule() {
	if len(p.jobs) == 0 {
		if p.next.Valid() {
			p.e.Cancel(p.next)
			p.next = EventID{}
		}
		return
	}
	r := p.jobs[0].finish - p.v
	if r < 0 {
		r = 0
	}
	n := int64(len(p.jobs))
	dt := r
	if n > p.cores {
		dt = (r*n + p.cores - 1) / p.cores // ceil: V reaches finish by then
	}
	if p.next.Valid() {
		if id, ok := p.e.Reschedule(p.next, time.Duration(dt), ClassCompletion); ok {
			p.next = id
			return
		}
	}
	p.next = p.e.Schedule(time.Duration(dt), ClassCompletion, p, 0, nil)
}

func (p *PS) less(a, b *PSJob) bool {
	return a.finish < b.finish || (a.finish == b.finish && a.seq < b.seq)
}

func (p *PS) up(i int) {
	h := p.jobs
	for i > 0 {
		q := (i - 1) / 2
		if !p.less(h[i], h[q]) {
			break
		}
		h[i], h[q] = h[q], h[i]
		h[i].idx, h[q].idx = i, q
		i = q
	}
}

func (p *PS) down(i int) {
	h := p.jobs
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && p.less(h[r], h[l]) {
			m = r
		}
		if !p.less(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		h[i].idx, h[m].idx = i, m
		i = m
	}
}

func (p *PS) removeAt(i int) {
	last := len(p.jobs) - 1
	j := p.jobs[i]
	if i != last {
		p.jobs[i] = p.jobs[last]
		p.jobs[i].idx = i
	}
	p.jobs[last] = nil
	p.jobs = p.jobs[:last]
	if i < last {
		p.down(i)
		p.up(i)
	}
	j.idx = -1
}
