package model

import (
	"math"
	"time"
)

// Contention: the mechanisms by which more concurrency costs a process
// throughput rather than only queueing (issue 24). Without them a tier's
// CPU keeps its full rate under any number of runnable threads and a lock
// hands over for free, so a throughput-against-concurrency curve rises and
// flattens; with them it can peak and fall, as the Universal Scalability
// Law describes (N. J. Gunther, "Guerrilla Capacity Planning", 2007: a
// contention term σ and a coherency term κ, peak at √((1−σ)/κ)).
//
// Each mechanism is a plain value of a tier's settings with its decision
// as a function of state, the same for both executors:
//
//   - Scheduler (context switches): CPU work inflates with the runnable
//     threads per core (Scheduler.Inflation).
//   - Handoff (lock convoys): a contended lock handed to a waiter stays
//     held, idle, while the waiter wakes (Handoff.Delay).
//   - GC (gc.go): allocation triggers gen-0 collections whose pauses stop
//     every thread of the process (GC.Allocate).
//   - Memory (memory.go): thread stacks and requests' working sets against
//     the machine's memory: paging slows work, or requests fail with
//     OutOfMemory (Memory.Slowdown, Memory.Fails).
//   - Bookkeeping: each call costs CPU for every other call outstanding
//     (Bookkeeping.CPU).
//
// Every mechanism is off in the zero value, and off changes nothing: a
// run without them is byte for byte what it was before they existed.

// Contention is a tier's contention mechanisms.
type Contention struct {
	Sched       Scheduler
	Handoff     Handoff
	GC          GC
	Memory      Memory
	Bookkeeping Bookkeeping
}

// On reports whether any mechanism is on.
func (c *Contention) On() bool {
	return c.Sched.On || c.Handoff.On() || c.GC.On() || c.Memory.On() || c.Bookkeeping.On()
}

// CPUSlowdown is the factor by which the tier's CPU work inflates with n
// demands in service on its cores and the process's committed memory
// (Scheduler.Inflation × Memory.Slowdown); 1 with both off.
func (c *Contention) CPUSlowdown(n, cores int, committed int64) float64 {
	return c.Sched.Inflation(n, cores) * c.Memory.Slowdown(committed)
}

// ---------------------------------------------------------------------------
// scheduling overhead

// Scheduler is the cost of context switches among more runnable threads
// than cores. A core with more than one runnable thread switches at the
// end of every quantum; each switch costs SwitchCost (saving and restoring
// a thread, the scheduler's own work) plus RefillCost for every other
// thread that ran on the core since the resumed thread last ran (their
// working sets displaced its cache lines, which it refills). With k
// runnable threads per core (k = n/cores > 1) a core so spends
// SwitchCost + RefillCost·(k−1) of every Quantum switching, and CPU work
// inflates by
//
//	1 + (SwitchCost + RefillCost·(k−1)) / Quantum
//
// (docs/experiment-format.md, [tier.scheduler]). With k ≤ 1 a thread runs
// until it blocks: no forced switch, no inflation (the switches of
// blocking and waking are in the measured CPU demands).
type Scheduler struct {
	On         bool
	Quantum    time.Duration
	SwitchCost time.Duration
	RefillCost time.Duration
}

// Inflation is the factor (≥ 1) by which CPU work inflates with n demands
// in service on cores.
func (s *Scheduler) Inflation(n, cores int) float64 {
	if !s.On || n <= cores || cores <= 0 || s.Quantum <= 0 {
		return 1
	}
	k := float64(n) / float64(cores)
	cost := float64(s.SwitchCost) + float64(s.RefillCost)*(k-1)
	return 1 + cost/float64(s.Quantum)
}

// ---------------------------------------------------------------------------
// lock hand-off and convoys

// Handoff is the cost of handing a contended lock to a waiter: the
// singleton's instance lock (ConcurrencyMode Single or Reentrant) and the
// named locks of a tier's steps. A lock released while a request waits
// for it goes to that request (FIFO, as the model's locks do), but the
// request's thread must first wake up and be switched in; meanwhile the
// lock stays held and nobody works under it. That is a lock convoy: once
// a lock is contended every hand-off pays the wake-up, its throughput
// falls from 1/hold to 1/(hold + wake-up), and it stays contended.
//
// The wake-up is CPU work of the woken thread (its switch in, its return
// from the kernel's wait), so it runs at the processor-sharing rate of the
// tier's cores: with n demands in service on c cores, the woken thread is
// one more, served at min(1, c/(n+1)). So the hand-off lengthens as
// runnable threads per core grow, and a convoy deepens with load.
//
// A lock step may stand for many short acquisitions of the same lock
// (Step.Acquires: a hot path that takes Trace's global lock thousands of
// times per request, say). A request handed such a lock pays one wake-up
// for the hand-off; if others still wait behind it, they contend for
// every one of its acquisitions, each of which is then a hand-off too,
// and it pays a wake-up for each: that is the convoy, which a queue of
// one does not form and a longer queue keeps.
type Handoff struct {
	Convoy bool          // the switch
	Wake   time.Duration // the wake-up latency of a waiter, on an idle core
}

// On reports whether hand-offs cost anything.
func (h *Handoff) On() bool { return h.Convoy && h.Wake > 0 }

// Delay is how long a lock handed to a waiting request stays held before
// the request works under it, with behind requests still waiting for the
// lock: one wake-up, or acquires of them (at least one) when others wait
// behind it, each slowed by processor sharing among n demands in service
// on cores plus the woken thread. 0 when off.
func (h *Handoff) Delay(acquires, behind, n, cores int) time.Duration {
	if !h.On() {
		return 0
	}
	a := 1
	if behind > 0 {
		a = max(acquires, 1)
	}
	share := 1.0
	if cores > 0 && n+1 > cores {
		share = float64(n+1) / float64(cores)
	}
	return durationOf(float64(h.Wake) * float64(a) * share)
}

// ---------------------------------------------------------------------------
// per-call bookkeeping

// Bookkeeping is the service's work per call that grows with the calls it
// has outstanding: the dispatcher's and the throttles' lists, the
// instance contexts, the timers of every call in progress ("If there are
// too much concurrent execution happening, a lot of contention and
// bookkeeping would happen", Dong, "WCF 4: Higher Default Throttling
// Settings for WCF Services", 2009). Each call costs PerCall of CPU for
// every other call outstanding at the tier when it starts its operation,
// so with N outstanding the CPU a call needs is its demand plus
// PerCall·(N−1) — the coherency term of the Universal Scalability Law.
type Bookkeeping struct {
	PerCall time.Duration // 0: off
}

// On reports whether calls pay any bookkeeping.
func (b *Bookkeeping) On() bool { return b.PerCall > 0 }

// CPU is the bookkeeping CPU of a call that starts with outstanding calls
// at the tier, itself included.
func (b *Bookkeeping) CPU(outstanding int) time.Duration {
	if b.PerCall <= 0 || outstanding <= 1 {
		return 0
	}
	return b.PerCall * time.Duration(outstanding-1)
}

// durationOf rounds a float of nanoseconds to a Duration, capped.
func durationOf(ns float64) time.Duration {
	switch {
	case !(ns > 0):
		return 0
	case ns >= math.MaxInt64:
		return math.MaxInt64
	}
	return time.Duration(math.Round(ns))
}

// ---------------------------------------------------------------------------
// the decisions both executors take at a phase

// Contend adds to n, what phase ph asks of request r (Tier.Need), what the
// tier's contention mechanisms ask there, and returns the bytes the
// request allocates at it (for GC.Allocate; 0 when the GC is off). At a
// call's decoding that is its bookkeeping CPU, with outstanding calls in
// progress at the tier (the WCF counter Calls Outstanding; the call itself
// is not yet among them), added to the decoding's CPU — a decoding that
// asked for none becomes a CPU demand — and what the request allocates
// (GC.AllocPerRequest). Both executors call it right after Need.
func (t *Tier) Contend(ph Phase, r *Req, n *Need, outstanding int) (alloc int64) {
	if ph.Kind != PhaseDecode || r.Msg != MsgCall {
		return 0
	}
	c := &t.Contention
	if d := c.Bookkeeping.CPU(outstanding + 1); d > 0 {
		if n.Act == ActNone {
			n.Act = ActCPU
		}
		n.CPU += d
	}
	if c.GC.On() {
		alloc = c.GC.AllocPerRequest
	}
	return alloc
}

// StepAlloc is what step si allocates when it starts (0 when the GC is
// off or the step is not a CPU step).
func (t *Tier) StepAlloc(si int) int64 {
	if !t.Contention.GC.On() || si < 0 || si >= len(t.Steps) || t.Steps[si].Kind != StepCPU {
		return 0
	}
	return t.Steps[si].Alloc
}

// HandoffAcquires is how many acquisitions a request handed the lock of
// resource res (or of lock step si, for res ResNone) pays a wake-up for
// (Handoff.Delay): a step's Acquires, one for the singleton's instance
// lock, 0 for anything that is not a lock the mechanism covers (or when
// it is off).
func (t *Tier) HandoffAcquires(res Res, si int) int {
	switch {
	case !t.Contention.Handoff.On():
		return 0
	case res == ResSingletonLock:
		return 1
	case res == ResNone && si >= 0 && si < len(t.Steps) && t.Steps[si].Kind == StepLock:
		return max(t.Steps[si].Acquires, 1)
	}
	return 0
}
