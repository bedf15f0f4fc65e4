package simmode

import (
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// The contention mechanisms of a tier at run time (model.Contention):
// what they decide is the model's; here is how the simulator applies it
// and counts what it cost. A tier whose mechanisms are all off has no
// contRT, and nothing here runs.
//
//   - context switches and paging slow the tier's processor-sharing CPU
//     (sim.PS.SetSlowdown), by the factor the model gives for the demands
//     in service and the process's committed memory, recomputed whenever
//     either changes;
//   - a garbage collection freezes the CPU for its pause (sim.PS.Freeze);
//   - a lock handed to a waiter is held idle for the wake-up (job.go,
//     jkHandoff);
//   - a request that would take a failing process past its memory limit
//     ends failed (arrive);
//   - bookkeeping is CPU the model adds to a call's decoding (Contend).
//
// On a machine several tiers share, a tier's slowdown and pauses act on
// the machine's CPU (every tier on it): an approximation the
// documentation states.
type contRT struct {
	t    *tierRT
	spec *model.Contention

	gc model.GCState
	// paused is every pause ever started; the part still to come is the
	// CPU's freeze beyond now.
	paused        time.Duration
	pausedAtReset time.Duration
	gen0AtReset   int64
	gen2AtReset   int64
	oom           int64
	committedMax  int64
	handoff       time.Duration // measured
	bookkeeping   time.Duration // measured
	switchLost    float64       // core-ns lost to switching, measured
	pagingLost    float64       // core-ns lost to paging, measured
	last          sim.Time
	n             int     // demands in service
	fs, fm        float64 // the scheduler's and memory's factors now
	slows         bool    // the CPU is slowed (scheduler or paging on)
}

func newContRT(t *tierRT) *contRT {
	spec := &t.spec.Contention
	if !spec.On() {
		return nil
	}
	c := &contRT{t: t, spec: spec, fs: 1, fm: 1}
	c.slows = spec.Sched.On || spec.Memory.On() && spec.Memory.OnFull == model.MemoryPage
	if c.slows && t.cores == nil {
		prev := t.cpu.OnChange
		t.cpu.OnChange = func(now sim.Time, n int) {
			if prev != nil {
				prev(now, n)
			}
			c.account(now)
			c.n = n
			c.retune()
		}
	}
	return c
}

// committed is what the process has committed now (model.Memory).
func (c *contRT) committed() int64 {
	t := c.t
	return c.spec.Memory.Committed(t.worker.Threads+t.io.Threads, 0, 0) + int64(t.lv[model.LvMemory].Value())
}

// memChanged follows a change of the process's threads or requests.
func (c *contRT) memChanged() {
	if !c.spec.Memory.On() {
		return
	}
	m := c.committed()
	if c.t.r.measuring && m > c.committedMax {
		c.committedMax = m
	}
	if c.slows && c.t.cores == nil {
		c.account(c.t.r.e.Now())
		c.retune()
	}
}

// account adds what switching and paging cost since the last change.
func (c *contRT) account(now sim.Time) {
	dt := float64(now - c.last)
	c.last = now
	if dt <= 0 || !c.t.r.measuring || c.n == 0 {
		return
	}
	if f := c.t.cpu.FrozenUntil(); f > now-sim.Time(dt) {
		dt -= float64(min(f, now) - (now - sim.Time(dt))) // a pause: nobody works, nothing lost to switching
		if dt <= 0 {
			return
		}
	}
	busy := float64(min(c.n, c.t.spec.Cores)) * dt
	c.switchLost += busy * (1 - 1/c.fs)
	c.pagingLost += busy * (1/c.fs - 1/(c.fs*c.fm))
}

// retune sets the CPU's slowdown from the demands in service and memory.
func (c *contRT) retune() {
	c.fs = c.spec.Sched.Inflation(c.n, c.t.spec.Cores)
	c.fm = 1
	if c.spec.Memory.On() {
		c.fm = c.spec.Memory.Slowdown(c.committed())
	}
	c.t.cpu.SetSlowdown(c.fs * c.fm)
}

// allocate charges bytes to the process's collector; a collection it
// triggers freezes the CPU for its pause.
func (c *contRT) allocate(bytes int64) {
	if bytes <= 0 {
		return
	}
	t := c.t
	if p := c.spec.GC.Allocate(&c.gc, bytes, t.worker.Threads+t.io.Threads); p > 0 {
		c.account(t.r.e.Now()) // a freeze starts at an accounting boundary
		c.paused += p
		t.cpu.Freeze(p)
	}
}

// elapsedPause is the pause time elapsed by now.
func (c *contRT) elapsedPause(now sim.Time) time.Duration {
	ahead := time.Duration(0)
	if f := c.t.cpu.FrozenUntil(); f > now {
		ahead = time.Duration(f - now)
	}
	return c.paused - ahead
}

// fails reports whether a request arriving now fails with OutOfMemory.
func (c *contRT) fails() bool {
	m := &c.spec.Memory
	return m.Fails(c.committed() + c.t.spec.MemoryPerRequest)
}

func (c *contRT) reset(now sim.Time) {
	c.account(now)
	c.pausedAtReset = c.elapsedPause(now)
	c.gen0AtReset, c.gen2AtReset = c.gc.Collections, c.gc.Full
	c.oom, c.handoff, c.bookkeeping, c.switchLost, c.pagingLost = 0, 0, 0, 0, 0
	c.committedMax = 0
	if c.spec.Memory.On() {
		c.committedMax = c.committed()
	}
}

// fill writes what the mechanisms cost over the measured span into r.
func (c *contRT) fill(r *results.Tier, now sim.Time, span time.Duration) {
	c.account(now)
	capacity := float64(span) * float64(c.t.spec.Cores)
	if span > 0 {
		r.GCTimePercent = 100 * float64(c.elapsedPause(now)-c.pausedAtReset) / float64(span)
	}
	r.Gen0Collections = c.gc.Collections - c.gen0AtReset
	r.Gen2Collections = c.gc.Full - c.gen2AtReset
	r.OutOfMemory = c.oom
	r.CommittedMaxMB = float64(c.committedMax) / (1 << 20)
	if capacity > 0 {
		r.SwitchCPUShare = c.switchLost / capacity
		r.PagingCPUShare = c.pagingLost / capacity
		r.BookkeepingCPUShare = float64(c.bookkeeping) / capacity
	}
	if span > 0 {
		r.LockHandoffShare = float64(c.handoff) / float64(span)
	}
}

// contend adds what the mechanisms ask at the job's phase to n
// (model.Tier.Contend) and charges its allocation.
func (c *contRT) contend(j *job, n *model.Need) {
	t := c.t
	cpu := n.CPU
	a := t.spec.Contend(j.phaseOf(), &j.Req, n, int(t.lv[model.LvOutstanding].Value()))
	if t.r.measuring {
		c.bookkeeping += n.CPU - cpu
	}
	c.allocate(a)
}

// handoff starts the wake-up of a job handed a contended lock (a lock step
// or the singleton's instance lock, model.Handoff): the lock is the job's,
// and it goes on (granted) once its thread has woken. It reports whether
// the job now waits for that.
func (j *job) handoff(n model.Need) bool {
	if j.handedOff {
		j.handedOff = false
		return false
	}
	t := j.t
	res, si := n.Res, -1
	if n.Act == model.ActSteps {
		res, si = model.ResNone, j.step
	}
	a := t.spec.HandoffAcquires(res, si)
	if a == 0 {
		return false
	}
	behind := 0
	if si >= 0 {
		behind = t.Locks[t.spec.Steps[si].Lock].Waiting
	} else if t.Singleton != nil {
		behind = t.Singleton.Waiting
	}
	d := t.spec.Contention.Handoff.Delay(a, behind, t.cpu.Len(), t.spec.Cores)
	if d <= 0 {
		return false
	}
	if t.r.measuring {
		t.cont.handoff += d
	}
	j.handedOff = true
	j.phaseAt = t.r.e.Now()
	j.timer = t.r.e.Schedule(d, sim.ClassCompletion, j, jkHandoff, nil)
	return true
}
