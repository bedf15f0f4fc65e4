package realmode

import (
	"context"
	"sync"
	"time"
)

// psCPU is processor sharing in real time, the model's CPU discipline
// (sim.PS) run on the wall clock: with n jobs on c cores each is served at
// rate min(1, c/n). It keeps Kleinrock's virtual time V (the service every
// job present since the start has received, in real ns): a job that
// arrives at V with demand d leaves when V reaches V+d. One timer is set
// for the earliest departure and moved whenever n changes. Used with
// Options.CPU = CPUSharing.
type psCPU struct {
	mu    sync.Mutex
	clk   *clock
	cores float64
	v     float64       // virtual time, real ns of service per job
	last  time.Duration // real instant v was advanced to
	jobs  []*psJob      // binary min-heap on finish
	timer *time.Timer
	armed bool
	stop  bool
	// sched, if set, is the factor by which work inflates with n jobs in
	// service (the model's context switches); slow a further factor set
	// from outside (paging; ≤ 1: none; setSlowdown); frozen the real
	// instant before which no job progresses (freeze).
	sched  func(n int) float64
	slow   float64
	frozen time.Duration

	onChange func(n int) // called with mu held after n changed
	// shares are the tiers of a machine several tiers share
	// (model.Tier.Machine), each with its demands in service: a tier with
	// k of n demands uses k·min(1, c/n) cores.
	shares []*cpuShare
}

// cpuShare is one tier's part of a shared machine's CPU.
type cpuShare struct {
	n   int     // its demands in service
	rep float64 // the cores last added to lv
	lv  *level
}

type psJob struct {
	finish float64
	idx    int // heap index, -1 once gone
	done   chan struct{}
	share  *cpuShare // nil: the machine is the tier's own
}

func newPSCPU(clk *clock, cores int) *psCPU {
	return &psCPU{clk: clk, cores: float64(max(cores, 1))}
}

func (p *psCPU) rate() float64 {
	n := float64(len(p.jobs))
	r := 1.0
	if n > p.cores {
		r = p.cores / n
	}
	if p.sched != nil {
		r /= p.sched(len(p.jobs))
	}
	if p.slow > 1 {
		r /= p.slow
	}
	return r
}

func (p *psCPU) advance(now time.Duration) {
	if now > p.last {
		from := p.last
		if p.frozen > from {
			from = min(p.frozen, now)
		}
		if len(p.jobs) > 0 && now > from {
			p.v += p.rate() * float64(now-from)
		}
		p.last = now
	}
}

// setSlowdown makes every job's work inflate by f ≥ 1 from now on, as
// sim.PS.SetSlowdown does (the model's context switches and paging).
func (p *psCPU) setSlowdown(f float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f == p.slow || f <= 1 && p.slow <= 1 {
		return
	}
	p.advance(p.clk.now())
	p.slow = f
	p.reschedule()
}

// freeze stops every job's progress for the real duration d from now
// (a garbage collection's pause), as sim.PS.Freeze does.
func (p *psCPU) freeze(d time.Duration) {
	if d <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clk.now()
	p.advance(now)
	p.frozen = max(p.frozen, now) + d
	p.reschedule()
}

// use serves a real demand d; it returns ctx's cause if ctx ends first
// (the job leaves with its remaining work undone).
func (p *psCPU) use(ctx context.Context, d time.Duration, sh *cpuShare) error {
	if d <= 0 {
		return nil
	}
	j := &psJob{done: make(chan struct{}), share: sh}
	p.mu.Lock()
	p.advance(p.clk.now())
	j.finish = p.v + float64(d)
	p.push(j)
	if sh != nil {
		sh.n++
	}
	p.changed()
	p.reschedule()
	p.mu.Unlock()
	select {
	case <-j.done:
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if j.idx >= 0 {
		p.advance(p.clk.now())
		p.remove(j.idx)
		if sh != nil {
			sh.n--
		}
		p.changed()
		p.reschedule()
	}
	return context.Cause(ctx)
}

// reschedule sets the timer for the earliest departure, early by the
// clock's overshoot estimate (the departures it releases are those within
// that estimate of their end).
func (p *psCPU) reschedule() {
	if p.stop {
		return
	}
	if len(p.jobs) == 0 {
		if p.armed {
			p.timer.Stop()
			p.armed = false
		}
		return
	}
	r := p.rate()
	delay := time.Duration((p.jobs[0].finish-p.v)/r) - p.clk.slack()
	if now := p.clk.now(); p.frozen > now {
		delay += p.frozen - now
	}
	delay = max(delay, 0)
	if p.timer == nil {
		p.timer = time.AfterFunc(delay, p.onTimer)
	} else {
		p.timer.Reset(delay)
	}
	p.armed = true
}

func (p *psCPU) onTimer() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = false
	if p.stop {
		return
	}
	p.advance(p.clk.now())
	early := p.rate() * float64(p.clk.slack())
	if p.frozen > p.last {
		early = 0 // a pause: nothing leaves before it ends
	}
	n := len(p.jobs)
	for len(p.jobs) > 0 && p.jobs[0].finish <= p.v+early {
		j := p.jobs[0]
		p.remove(0)
		if j.share != nil {
			j.share.n--
		}
		close(j.done)
	}
	if len(p.jobs) != n {
		p.changed()
	}
	p.reschedule()
}

// load is the number of jobs in service.
func (p *psCPU) load() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.jobs)
}

// close stops the timer for good (end of run).
func (p *psCPU) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop = true
	if p.timer != nil {
		p.timer.Stop()
	}
}

func (p *psCPU) changed() {
	if p.onChange != nil {
		p.onChange(len(p.jobs))
	}
	if len(p.shares) > 0 {
		r := p.rate()
		for _, s := range p.shares {
			b := float64(s.n) * r
			s.lv.add(b - s.rep)
			s.rep = b
		}
	}
}

// heap on finish

func (p *psCPU) push(j *psJob) {
	j.idx = len(p.jobs)
	p.jobs = append(p.jobs, j)
	p.up(j.idx)
}

func (p *psCPU) remove(i int) {
	n := len(p.jobs) - 1
	j := p.jobs[i]
	if i != n {
		p.swap(i, n)
	}
	p.jobs[n] = nil
	p.jobs = p.jobs[:n]
	j.idx = -1
	if i != n {
		p.down(i)
		p.up(i)
	}
}

func (p *psCPU) swap(a, b int) {
	p.jobs[a], p.jobs[b] = p.jobs[b], p.jobs[a]
	p.jobs[a].idx = a
	p.jobs[b].idx = b
}

func (p *psCPU) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if p.jobs[parent].finish <= p.jobs[i].finish {
			return
		}
		p.swap(i, parent)
		i = parent
	}
}

func (p *psCPU) down(i int) {
	n := len(p.jobs)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && p.jobs[r].finish < p.jobs[l].finish {
			m = r
		}
		if p.jobs[i].finish <= p.jobs[m].finish {
			return
		}
		p.swap(i, m)
		i = m
	}
}
