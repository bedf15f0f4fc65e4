package realmode

import (
	"context"
	"sync"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// The contention mechanisms of a tier for real (model.Contention), the
// same decisions as the simulator's (simmode/contention.go) applied to
// real goroutines:
//
//   - context switches and paging slow the processor-sharing CPU (psCPU's
//     per-n factor and its outside factor); with the default core
//     permits (CPUCores) a demand is lengthened by the factor at its
//     start;
//   - a garbage collection freezes the processor-sharing CPU for its
//     pause (psCPU.freeze); with core permits a demand that starts during
//     a pause waits for its end;
//   - a lock handed to a waiter is held while the waiter's goroutine
//     sleeps the wake-up (handoff);
//   - a request that would take a failing process past its memory limit
//     ends failed (serve);
//   - bookkeeping is CPU the model adds to a call's decoding (Contend).
//
// Durations kept here are simulated.
type contRT struct {
	t    *tierRT
	spec *model.Contention

	mu            sync.Mutex
	gc            model.GCState
	paused        time.Duration // every pause started, simulated
	frozenUntil   time.Duration // real instant the last pause ends
	pausedAtReset time.Duration
	gen0AtReset   int64
	gen2AtReset   int64
	oom           int64
	committedMax  int64
	handoff       time.Duration
	bookkeeping   time.Duration
	switchLost    float64 // simulated core-ns
	pagingLost    float64
	fm            float64 // memory's factor now
}

func newContRT(t *tierRT) *contRT {
	spec := &t.spec.Contention
	if !spec.On() {
		return nil
	}
	c := &contRT{t: t, spec: spec, fm: 1}
	if t.ps != nil && spec.Sched.On {
		cores := t.spec.Cores
		t.ps.mu.Lock()
		t.ps.sched = func(n int) float64 { return spec.Sched.Inflation(n, cores) }
		t.ps.mu.Unlock()
	}
	return c
}

// committed is what the process has committed now (model.Memory).
func (c *contRT) committed() int64 {
	t := c.t
	return c.spec.Memory.Committed(int(t.lv[model.LvThreads].value()), 0, 0) + int64(t.lv[model.LvMemory].value())
}

// memChanged follows a change of the process's threads or requests.
func (c *contRT) memChanged() {
	if !c.spec.Memory.On() {
		return
	}
	m := c.committed()
	f := c.spec.Memory.Slowdown(m)
	c.mu.Lock()
	if c.t.rt.measuring.Load() && m > c.committedMax {
		c.committedMax = m
	}
	c.fm = f
	c.mu.Unlock()
	if c.t.ps != nil {
		c.t.ps.setSlowdown(f)
	}
}

// demand is a CPU demand d (simulated) about to start: with core permits
// it is lengthened by the slowdown now and first waits out a pause; it
// counts what switching and paging cost it.
func (c *contRT) demand(ctx context.Context, d time.Duration) (time.Duration, error) {
	t := c.t
	fs := 1.0
	if c.spec.Sched.On {
		n := 0
		if t.ps != nil {
			n = t.ps.load()
		} else {
			n, _ = t.cores.snapshot()
			n++
		}
		fs = c.spec.Sched.Inflation(n, t.spec.Cores)
	}
	c.mu.Lock()
	fm, until := c.fm, c.frozenUntil
	if t.rt.measuring.Load() {
		c.switchLost += float64(d) * (fs - 1)
		c.pagingLost += float64(d) * fs * (fm - 1)
	}
	c.mu.Unlock()
	if t.ps != nil {
		return d, nil // the CPU itself slows and freezes
	}
	if now := t.rt.clk.now(); until > now {
		if err := t.rt.clk.sleepReal(ctx, until-now); err != nil {
			return d, err
		}
	}
	return time.Duration(float64(d) * fs * fm), nil
}

// allocate charges bytes to the process's collector; a collection it
// triggers pauses the CPU.
func (c *contRT) allocate(bytes int64) {
	if bytes <= 0 {
		return
	}
	t := c.t
	c.mu.Lock()
	p := c.spec.GC.Allocate(&c.gc, bytes, int(t.lv[model.LvThreads].value()))
	var real time.Duration
	if p > 0 {
		c.paused += p
		real = t.rt.clk.toReal(p)
		c.frozenUntil = max(c.frozenUntil, t.rt.clk.now()) + real
	}
	c.mu.Unlock()
	if p > 0 && t.ps != nil {
		t.ps.freeze(real)
	}
}

// elapsedPause is the pause time (simulated) elapsed by the real instant
// now (c.mu held).
func (c *contRT) elapsedPause(now time.Duration) time.Duration {
	ahead := time.Duration(0)
	if c.frozenUntil > now {
		ahead = c.t.rt.clk.toSim(c.frozenUntil - now)
	}
	return c.paused - ahead
}

// fails reports whether a request arriving now fails with OutOfMemory,
// and counts it.
func (c *contRT) fails() bool {
	if !c.spec.Memory.Fails(c.committed() + c.t.spec.MemoryPerRequest) {
		return false
	}
	if c.t.rt.measuring.Load() {
		c.mu.Lock()
		c.oom++
		c.mu.Unlock()
	}
	return true
}

// contend adds what the mechanisms ask at phase ph to n (model.Tier.Contend)
// and charges its allocation.
func (c *contRT) contend(j *job, ph model.Phase, n *model.Need) {
	cpu := n.CPU
	a := c.t.spec.Contend(ph, &j.Req, n, int(c.t.lv[model.LvOutstanding].value()))
	if extra := n.CPU - cpu; extra > 0 && c.t.rt.measuring.Load() {
		c.mu.Lock()
		c.bookkeeping += extra
		c.mu.Unlock()
	}
	c.allocate(a)
}

// handoff is the wake-up of a job handed a contended lock (model.Handoff):
// it holds the lock and sleeps before it works under it.
func (j *job) handoff(res model.Res, si int) error {
	t := j.t
	c := t.cont
	if c == nil {
		return nil
	}
	a := t.spec.HandoffAcquires(res, si)
	if a == 0 {
		return nil
	}
	n := 0
	if t.ps != nil {
		n = t.ps.load()
	} else {
		n, _ = t.cores.snapshot()
	}
	lock := t.Singleton
	if si >= 0 {
		lock = t.Locks[t.spec.Steps[si].Lock]
	}
	behind := 0
	if lock != nil {
		_, behind = lock.snapshot()
	}
	d := t.spec.Contention.Handoff.Delay(a, behind, n, t.spec.Cores)
	if d <= 0 {
		return nil
	}
	if t.rt.measuring.Load() {
		c.mu.Lock()
		c.handoff += d
		c.mu.Unlock()
	}
	t0 := t.rt.clk.now()
	err := t.rt.clk.sleep(j.ctx, d)
	j.charge(results.BdLock, t0)
	return err
}

func (c *contRT) reset(now time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pausedAtReset = c.elapsedPause(now)
	c.gen0AtReset, c.gen2AtReset = c.gc.Collections, c.gc.Full
	c.oom, c.handoff, c.bookkeeping, c.switchLost, c.pagingLost = 0, 0, 0, 0, 0
	c.committedMax = 0
	if c.spec.Memory.On() {
		c.committedMax = c.committed()
	}
}

// fill writes what the mechanisms cost over the measured span (simulated
// seconds) into r.
func (c *contRT) fill(r *results.Tier, now time.Duration, span float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	capacity := span * 1e9 * float64(c.t.spec.Cores)
	if span > 0 {
		r.GCTimePercent = 100 * (c.elapsedPause(now) - c.pausedAtReset).Seconds() / span
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
		r.LockHandoffShare = c.handoff.Seconds() / span
	}
}
