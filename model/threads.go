package model

import (
	"math"
	"time"
)

// ThreadPool is a CLR-like thread pool, the same for both executors:
// Slots whose limit is the number of threads allowed to work at once.
// Threads up to Min are created on demand. Above Min the Injection rule
// decides (docs/dotnet.md §3):
//
//   - InjectNone: threads are created on demand up to Max.
//   - InjectCLR: a starved pool (work queued, no idle thread) gets one
//     new thread per gate tick (GateDelay, 500 ms), the first tick one
//     GateDelay after starvation began (the .NET 2.0–3.5 presets' rule).
//   - InjectCLR2: the same ticks, a thread only once GateDelay ×
//     1.1^(threads − Min) has passed since the last (SSCLI 2.0).
//   - InjectCLR4: the CLR 4+ controller. A goal (the threads allowed to
//     work at once) starts at Min; threads up to the goal are created
//     when work needs them, without delay. Hill climbing moves the goal
//     on completions (HillClimbing); the gate thread raises it by one
//     when work waits and nothing was dequeued or completed for longer
//     than the starvation threshold (GateTick).
//
// Idle threads above Min retire after IdleTimeout (with InjectCLR4 the
// goal follows them down, never below Min).
//
// The pool decides; its executor keeps time: it calls GateTick and
// RetireTick when the delays the pool asked for (ArmGate, ArmRetire) have
// passed, and Acquire and Release, with the (simulated) instant.
//
// A "thread" is a slot: the simulator's request holds it for as long as
// the modelled request would hold its thread, as real mode's goroutine
// does. Threads counts the threads that exist, as a dump shows them.
type ThreadPool struct {
	Slots
	Spec    Pool
	Threads int

	// ArmGate asks for GateTick after d; ArmRetire for RetireTick after
	// d. OnGrow is called after Threads changed.
	ArmGate, ArmRetire func(d time.Duration)
	OnGrow             func()

	// InjectCLR4 only. Goal is the threads allowed to work at once (the
	// runtime's NumThreadsGoal, MaxWorking); HC the hill climber. CPU, if
	// set, returns the machine's CPU use in percent since its last call
	// (the gate thread's reading); nil reads 0.
	Goal int
	HC   *HillClimbing
	CPU  func(now time.Duration) int
	// Trace, if set, is told every change of the goal and why.
	Trace func(now time.Duration, goal int, why HillClimbingTransition)

	gateArmed, retireArmed bool
	minIdle                int           // fewest idle threads since the last retire check
	created                time.Duration // when the last thread above Min was injected

	cpu              int           // the gate's last CPU reading
	progress         time.Duration // the last dequeue or completion
	completions      int64
	priorCompletions int64
	priorTime        time.Duration // the last hill-climbing sample's end
	interval         time.Duration // the current sample's least length
}

// Rand is a source of random whole numbers (a sim.Stream).
type Rand interface{ IntN(n int) int }

// NewThreadPool returns a pool of spec with no thread yet. rnd, a named
// stream, draws hill climbing's sample intervals (InjectCLR4 only; nil
// otherwise).
func NewThreadPool(spec Pool, rnd Rand) *ThreadPool {
	p := &ThreadPool{Spec: spec}
	p.Limit = -1 // no thread yet; -1 keeps Slots from treating 0 as unlimited
	if spec.Injection == InjectCLR4 {
		p.Goal = p.minGoal()
		p.Limit = p.Goal
		p.HC = NewHillClimbing(DefaultHillClimbing(), rnd)
		p.HC.ForceChange(p.Goal, HCInitializing)
	}
	return p
}

// minGoal is the least goal: Min, at least 1 (ThreadPool.SetMinThreads
// takes max(1, n)).
func (p *ThreadPool) minGoal() int { return max(p.Spec.Min, 1) }

// Busy is the threads in use; Queued the requests waiting for one.
func (p *ThreadPool) Busy() int   { return p.InUse }
func (p *ThreadPool) Queued() int { return p.Waiting }

// Acquire takes a thread at now (creating one if it may) and returns
// true, or queues w (see Slots.Acquire).
func (p *ThreadPool) Acquire(w *Waiter, now time.Duration) bool {
	if p.HC != nil {
		if p.Slots.Acquire(w) {
			p.progress = now
			p.follow()
			return true
		}
		p.armGate(now)
		return false
	}
	if p.InUse >= p.Threads && p.Waiting == 0 && p.canCreateNow() {
		p.add()
	}
	if p.InUse < p.Threads && p.Waiting == 0 {
		p.InUse++
		p.changed()
		return true
	}
	p.Slots.Acquire(w)
	p.starved()
	return false
}

// Rejects reports whether a request asking for its first thread now is
// turned away: the pool's queue is bounded (Pool.BoundedQueue), no thread
// is free or can be created at once, and the queue is full.
func (p *ThreadPool) Rejects() bool {
	if !p.Spec.BoundedQueue {
		return false
	}
	if p.Waiting == 0 && (p.InUse < p.Threads || p.canCreateNow()) {
		return false
	}
	return p.Waiting >= p.Spec.QueueLimit
}

// Release returns a thread to the pool at now: a work item completed.
func (p *ThreadPool) Release(now time.Duration) {
	if p.HC != nil {
		// The thread that completed counts as working while hill
		// climbing looks (PortableThreadPool.NotifyWorkItemComplete);
		// then it takes the next item, unless the goal fell below the
		// threads working (ShouldStopProcessingWorkNow).
		p.completions++
		p.progress = now
		p.climb(now)
		p.Limit = max(p.Goal, p.InUse-1)
		p.Slots.Release()
		p.Limit = max(p.Goal, p.InUse)
		p.follow()
		p.noteIdle()
		return
	}
	p.Slots.Release()
	p.noteIdle()
}

func (p *ThreadPool) canCreateNow() bool {
	if p.HC != nil {
		return p.InUse < p.Goal
	}
	if p.Threads >= p.Spec.Max {
		return false
	}
	return p.Threads < p.Spec.Min || p.Spec.Injection == InjectNone
}

func (p *ThreadPool) add() {
	p.Threads++
	p.syncLimit()
	if p.OnGrow != nil {
		p.OnGrow()
	}
}

// syncLimit mirrors the thread count into the slots' limit; with no thread
// at all the limit is -1, since 0 would mean unlimited.
func (p *ThreadPool) syncLimit() {
	p.Limit = p.Threads
	if p.Threads == 0 {
		p.Limit = -1
	}
}

// follow creates the threads the working ones need (InjectCLR4: up to the
// goal, on demand).
func (p *ThreadPool) follow() {
	if p.InUse > p.Threads {
		p.Threads = p.InUse
		if p.OnGrow != nil {
			p.OnGrow()
		}
	}
}

func (p *ThreadPool) trace(now time.Duration, why HillClimbingTransition) {
	if p.Trace != nil {
		p.Trace(now, p.Goal, why)
	}
}

// setGoal moves the goal at now and hands what it frees to the waiting
// work: a thread that takes an item dequeues it (progress). The slots'
// limit is the goal, or the threads working if more (after the goal
// fell, they finish their items before they stop).
func (p *ThreadPool) setGoal(g int, now time.Duration) {
	p.Goal = g
	busy := p.InUse
	p.Slots.SetLimit(max(g, p.InUse))
	if p.InUse > busy {
		p.progress = now
	}
	p.follow()
}

// starved creates what may be created now and arms the gate when work
// still waits.
func (p *ThreadPool) starved() {
	for p.Waiting > 0 && p.canCreateNow() {
		p.add()
		p.grant()
		p.changed()
	}
	if p.Waiting > 0 && !p.gateArmed && p.Threads < p.Spec.Max {
		p.gateArmed = true
		p.ArmGate(p.Spec.GateDelay)
	}
}

// armGate starts the CLR 4 gate thread's ticks, unless they run: its
// first CPU reading covers an arbitrary span and is dropped
// (PortableThreadPool.GateThread.GateThreadStart).
func (p *ThreadPool) armGate(now time.Duration) {
	if p.gateArmed || p.InUse >= p.Spec.Max {
		return
	}
	if p.CPU != nil {
		p.CPU(now)
	}
	p.gateArmed = true
	p.ArmGate(p.Spec.GateDelay)
}

func (p *ThreadPool) noteIdle() {
	idle := p.Threads - p.InUse
	if idle < p.minIdle {
		p.minIdle = idle
	}
	if p.Threads > p.Spec.Min && !p.retireArmed && p.Spec.IdleTimeout > 0 {
		p.minIdle = idle
		p.retireArmed = true
		p.ArmRetire(p.Spec.IdleTimeout)
	}
}

// GateTick is the CLR gate thread's tick at now: a thread more if the
// injection rule allows; the gate ticks again while work waits.
func (p *ThreadPool) GateTick(now time.Duration) {
	p.gateArmed = false
	if p.HC != nil {
		p.gateCLR4(now)
		return
	}
	if ShouldInject(p.Threads, p.InUse, p.Spec.Max, p.Waiting) && p.injectionDue(now) {
		p.created = now
		p.add()
		p.grant()
		p.changed()
	}
	if p.Waiting > 0 && p.Threads < p.Spec.Max {
		p.gateArmed = true
		p.ArmGate(p.Spec.GateDelay)
	}
}

// gateCLR4 is the CLR 4+ gate thread's starvation check
// (PortableThreadPool.GateThread.GateThreadStart, CoreCLR
// ThreadpoolMgr::GateThreadStart): work waits, nothing was dequeued or
// completed for longer than the threshold, and the threads working have
// reached the goal — the goal becomes one more than they.
func (p *ThreadPool) gateCLR4(now time.Duration) {
	if p.CPU != nil {
		p.cpu = p.CPU(now)
	}
	if p.Waiting > 0 && p.Starved(now) && p.InUse < p.Spec.Max && p.InUse >= p.Goal {
		g := p.InUse + 1
		p.HC.ForceChange(g, HCStarvation)
		p.setGoal(g, now)
		p.trace(now, HCStarvation)
	}
	if p.Waiting > 0 {
		p.armGate(now)
	}
}

// Starved reports the gate's test at now (SufficientDelaySinceLastDequeue):
// nothing dequeued or completed for more than GateDelay while the CPU is
// below 80 %, or for more than goal × 2 × GateDelay at 80 % or more.
func (p *ThreadPool) Starved(now time.Duration) bool {
	limit := p.Spec.GateDelay
	if p.cpu >= cpuUtilizationLow {
		limit = time.Duration(p.Goal) * 2 * p.Spec.GateDelay
	}
	return now-p.progress > limit
}

// cpuUtilizationLow is the CPU use below which the gate injects after
// one period without progress (PortableThreadPool.CpuUtilizationLow).
const cpuUtilizationLow = 80

// climb calls hill climbing when a completion ends a sample
// (PortableThreadPool.ShouldAdjustMaxWorkersActive and
// AdjustMaxWorkersActive): the sample's least length has passed, and no
// more threads work than the goal (if more do, the goal fell and the
// pool waits for them to stop).
func (p *ThreadPool) climb(now time.Duration) {
	if now-p.priorTime < p.interval || p.InUse > p.Goal {
		return
	}
	elapsed := now - p.priorTime
	goal, next := p.HC.Update(p.Goal, elapsed.Seconds(), int(p.completions-p.priorCompletions), p.cpu, p.minGoal(), p.Spec.Max)
	p.interval = next
	p.priorCompletions = p.completions
	p.priorTime = now
	if goal != p.Goal {
		p.setGoal(goal, now)
		p.trace(now, p.HC.Last.State)
	}
}

// RetireTick retires the threads above Min that stayed idle since the
// last check; it checks again while threads above Min remain. With
// InjectCLR4 the goal follows the threads down, never below Min
// (PortableThreadPool.WorkerThread: a thread that times out lowers the
// goal to the threads left).
func (p *ThreadPool) RetireTick(now time.Duration) {
	p.retireArmed = false
	n := min(p.minIdle, p.Threads-p.InUse, p.Threads-p.Spec.Min)
	if n > 0 && p.Waiting == 0 {
		p.Threads -= n
		if p.HC != nil {
			if g := max(p.minGoal(), min(p.Threads, p.Goal)); g != p.Goal {
				p.HC.ForceChange(g, HCThreadTimedOut)
				p.Goal = g
				p.Limit = max(g, p.InUse)
				p.trace(now, HCThreadTimedOut)
			}
		} else {
			p.syncLimit()
		}
		p.changed()
		if p.OnGrow != nil {
			p.OnGrow()
		}
	}
	p.minIdle = p.Threads - p.InUse
	if p.Threads > p.Spec.Min {
		p.retireArmed = true
		p.ArmRetire(p.Spec.IdleTimeout)
	}
}

// injectionDue applies InjectCLR2's growing delay between injected threads
// (SSCLI 2.0 SufficientDelaySinceLastSample: 500 ms × 1.1^(threads − min)).
func (p *ThreadPool) injectionDue(now time.Duration) bool {
	if p.Spec.Injection != InjectCLR2 || p.Threads <= p.Spec.Min {
		return true
	}
	need := float64(p.Spec.GateDelay) * math.Pow(1.1, float64(p.Threads-p.Spec.Min))
	return float64(now-p.created) >= need
}
