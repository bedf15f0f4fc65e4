package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// tierRT is a tier at run time.
type tierRT struct {
	r     *runner
	idx   int
	spec  *model.Tier
	wcf   bool
	entry bool // its replies count as the system's throughput (EntryTiers)

	cpu   *sim.PS
	cores *slots // CPUFCFS: a slot per core, first come first served
	// mach is the machine the tier shares with others (Tier.Machine), nil
	// for a machine of its own; onCPU its demands on that machine's CPU.
	mach       *machineRT
	onCPU      int
	worker, io *threadPool

	walk    []model.Phase    // spec.Walk(), once per run
	msgWalk [2][]model.Phase // spec.WalkOf(MsgNegotiate), spec.WalkOf(MsgClose)
	pipes   *model.AppPool   // ASP.NET hosts: the HttpApplication pool

	admQ    []*job // admission FIFO (ring-free: head index)
	admHead int
	st      model.TierState // what the walk's decisions read and change

	model.Throttles[*slots]
	sessions *slots

	// StartUp: the host is open, or opening, and the requests waiting for it.
	open, opening bool
	startQ        []*job

	execList []jobRef // executionTimeout candidates in start order
	execHead int
	execTick sim.EventID

	demandSampler []sim.Sampler // per step, CPU and wait demands
	waitFixed     []fixedDelay  // per step, a constant wait (d = 0: not constant)

	out []*callStat // calls made from this tier

	lv     [model.NumLv]level // the levels (docs/counters.md)
	cpuInt integ

	counts model.TierCounts // the requests' counts and durations, as real mode keeps them
	ends   model.TierEnds   // completed, rejected, aborted, wasted CPU, response times

	cont *contRT // the contention mechanisms (contention.go); nil when all are off
}

func newTierRT(r *runner, i int) *tierRT {
	spec := &r.top.Tiers[i]
	t := &tierRT{r: r, idx: i, spec: spec, wcf: spec.WCF != nil}
	e := r.e
	if spec.Machine > 0 {
		// A machine shared with other tiers (machine.go).
		m := r.machine(spec.Machine, spec)
		m.tiers = append(m.tiers, t)
		t.mach, t.cpu, t.cores = m, m.cpu, m.fcfs
	} else {
		t.cpu = sim.NewPS(e, spec.Cores)
		t.cpu.OnChange = func(now sim.Time, n int) {
			busy := n
			if busy > spec.Cores {
				busy = spec.Cores
			}
			t.lv[model.LvCPU].Set(now, float64(busy))
			t.cpuInt.set(now, float64(busy))
		}
		if spec.CPU == model.CPUFCFS {
			t.cores = newSlots(e, spec.Cores)
			t.cores.OnChange = func() {
				now := e.Now()
				t.lv[model.LvCPU].Set(now, float64(t.cores.InUse))
				t.cpuInt.set(now, float64(t.cores.InUse))
			}
		}
	}
	t.walk = spec.Walk()
	t.msgWalk = [2][]model.Phase{spec.WalkOf(model.MsgNegotiate), spec.WalkOf(model.MsgClose)}
	for _, n := range spec.Gates {
		t.Gates = append(t.Gates, newSlots(e, n))
	}
	if spec.IsASPNet() {
		t.pipes = model.NewAppPool(model.LegacyASPNet(spec.DotNet))
	}
	t.ends = model.NewTierEnds()
	t.worker = newTierPool(t, "worker", spec.Worker)
	t.io = newTierPool(t, "io", spec.IO)
	// A pool's busy and waiting threads change on every request, its
	// thread count seldom (onGrow follows every change of it): each
	// callback sets only the levels it can change.
	busy := func(own *level, p *threadPool) func() {
		return func() {
			now := e.Now()
			t.lv[model.LvThreadsBusy].Set(now, float64(t.worker.Busy()+t.io.Busy()))
			t.lv[model.LvThreadQueue].Set(now, float64(t.worker.Queued()+t.io.Queued()))
			own.Set(now, float64(p.Busy()))
		}
	}
	grown := func(own *level, p *threadPool) func() {
		return func() {
			now := e.Now()
			t.lv[model.LvThreads].Set(now, float64(t.worker.Threads+t.io.Threads))
			own.Set(now, float64(p.Threads))
			if t.cont != nil {
				t.cont.memChanged()
			}
		}
	}
	t.worker.OnChange, t.io.OnChange = busy(&t.lv[model.LvWorkerBusy], t.worker), busy(&t.lv[model.LvIOBusy], t.io)
	t.worker.OnGrow, t.io.OnGrow = grown(&t.lv[model.LvWorkers], t.worker), grown(&t.lv[model.LvIOThreads], t.io)
	if w := spec.WCF; w != nil {
		t.Calls = newSlots(e, w.MaxCalls)
		t.sessions = newSlots(e, w.MaxSessions)
		t.Instances = newSlots(e, w.MaxInstances)
		t.Instances.OnChange = func() { t.lv[model.LvInstances].Set(e.Now(), float64(t.Instances.InUse)) }
		if w.Instancing == model.SingleInstance && w.Concurrency != model.ConcurrencyMultiple {
			t.Singleton = newSlots(e, 1)
		}
	}
	for range spec.LockCount() {
		t.Locks = append(t.Locks, newSlots(e, 1))
	}
	t.cont = newContRT(t)
	t.demandSampler = make([]sim.Sampler, len(spec.Steps))
	for si := range spec.Steps {
		if d, stream, ok := spec.StepDemand(si); ok {
			t.demandSampler[si] = d.Sampler(e.Stream(stream))
			if c, ok := t.demandSampler[si].Const(); ok && c > 0 && spec.Steps[si].Kind == model.StepWait {
				if t.waitFixed == nil {
					t.waitFixed = make([]fixedDelay, len(spec.Steps))
				}
				t.waitFixed[si] = r.fixedDelay(c, sim.ClassCompletion)
			}
		}
	}
	return t
}

func (t *tierRT) resetStats(now sim.Time) {
	t.syncPipes(now)
	for k := range t.lv {
		t.lv[k].Reset(now)
	}
	t.ends.Reset()
	t.counts.ResetMeasured()
	if t.cont != nil {
		t.cont.reset(now)
	}
}

// syncPipes brings the Pipeline Instance Count up to now (its trims are
// lazy, see AppPool).
func (t *tierRT) syncPipes(now sim.Time) {
	if t.pipes != nil {
		t.lv[model.LvPipelines].Set(now, float64(t.pipes.Count(time.Duration(now))))
	}
}

func (t *tierRT) sample(now sim.Time, interval time.Duration) results.TierSample {
	cpu, perS := 0.0, 0.0
	if now > 0 {
		cpu = t.spec.CPUPercent(t.cpuInt.take(now), interval)
		perS = 1 / interval.Seconds()
	}
	t.syncPipes(now)
	s := model.TierSample(func(k model.Lv) float64 { return t.lv[k].Value() }, cpu, &t.counts, perS)
	for _, c := range t.out {
		c.each(func(c *callStat) {
			s.ConnsInUse += float64(c.conns.InUse)
			s.ConnsWaiting += float64(c.conns.Waiting)
		})
	}
	return s
}

func (t *tierRT) result(now sim.Time, span time.Duration) results.Tier {
	t.syncPipes(now)
	perS := 0.0
	if span > 0 {
		perS = 1 / span.Seconds()
	}
	r := model.TierResult(t.spec, func(k model.Lv) (float64, float64) { return t.lv[k].Mean(now), t.lv[k].Max(now) }, &t.counts, perS, &t.ends)
	if t.cont != nil {
		t.cont.fill(&r, now, span)
	}
	return r
}

// The tier's counters for model.Visit (model.Tally).

func (t *tierRT) Level(k model.Lv, delta float64) {
	t.lv[k].Add(t.r.e.Now(), delta)
	if k == model.LvMemory && t.cont != nil {
		t.cont.memChanged()
	}
}

func (t *tierRT) Waited(d time.Duration) {
	t.counts.Waited(d, t.r.measuring)
	if t.pipes != nil {
		now := t.r.e.Now()
		t.pipes.Take(time.Duration(now))
		t.lv[model.LvPipelines].Set(now, float64(t.pipes.Count(time.Duration(now))))
	}
}

func (t *tierRT) Executed(d time.Duration) {
	t.counts.Executed(d, t.r.measuring)
	if t.pipes != nil {
		now := t.r.e.Now()
		t.pipes.Return(time.Duration(now))
		t.lv[model.LvPipelines].Set(now, float64(t.pipes.Count(time.Duration(now))))
	}
}

func (t *tierRT) OpStarted()              { t.counts.OpStarted(t.r.measuring) }
func (t *tierRT) OpEnded(d time.Duration) { t.counts.OpEnded(d, t.r.measuring) }

// ---------------------------------------------------------------------------
// admission

func (t *tierRT) arrive(j *job) {
	now := t.r.e.Now()
	if t.spec.StartUp > 0 && !t.open {
		t.waitOpen(j)
		return
	}
	t.counts.Arrived(t.r.measuring)
	if t.cont != nil && t.cont.fails() {
		// OutOfMemoryException: the process cannot commit the request's
		// memory (model.Memory); it fails before it holds anything.
		if t.r.measuring {
			t.cont.oom++
		}
		j.finish(results.Failed)
		return
	}
	d := t.spec.Admit(t.worker.Busy(), t.st.Executing, len(t.admQ)-t.admHead)
	if d == model.DecisionReject {
		// Refused at the door: never queued, never held anything.
		t.reject(j)
		return
	}
	j.visit.Enter(t, t.spec.MemoryPerRequest)
	switch d {
	case model.DecisionRun:
		t.admit(j)
	case model.DecisionQueue:
		j.phaseAt = now
		t.admQ = append(t.admQ, j)
		t.lv[model.LvAppQueued].Add(now, 1)
	}
}

// reject ends a request the tier refuses (HTTP 503 Server Too Busy).
func (t *tierRT) reject(j *job) {
	t.counts.Rejected()
	if t.r.measuring {
		t.ends.Rejected++
	}
	j.finish(results.Rejected)
}

func (t *tierRT) admit(j *job) {
	t.st.Admit(&j.Req)
	j.started = t.r.e.Now()
	if t.spec.Admission.ExecutionTimeout > 0 {
		t.execList = append(t.execList, jobRef{j, j.gen})
		t.armExecCheck()
	}
	j.advance()
}

// drain starts queued requests while the admission rule allows.
func (t *tierRT) drain() {
	for t.admHead < len(t.admQ) && t.spec.CanStart(t.worker.Busy(), t.st.Executing) {
		j := t.admQ[t.admHead]
		t.admQ[t.admHead] = nil
		t.admHead++
		now := t.r.e.Now()
		t.lv[model.LvAppQueued].Add(now, -1)
		if t.spec.Admission.DropsQueued(j.orphaned(), now.Sub(j.phaseAt)) {
			// clientConnectedCheck: the client has gone; drop it unserved.
			t.drop(j)
			continue
		}
		w := now.Sub(j.phaseAt)
		j.root.charge(results.BdAdmit, w)
		j.waited += w
		t.admit(j)
	}
	if t.admHead > 1024 && t.admHead*2 > len(t.admQ) {
		n := copy(t.admQ, t.admQ[t.admHead:])
		for i := n; i < len(t.admQ); i++ {
			t.admQ[i] = nil
		}
		t.admQ, t.admHead = t.admQ[:n], 0
	}
}

// drop ends a request that will never run because its client has gone.
func (t *tierRT) drop(j *job) {
	if t.r.measuring {
		t.ends.Aborted++
	}
	j.finish(results.Failed)
}

// ---------------------------------------------------------------------------
// executionTimeout: a periodic check aborts requests that have run too long.

const (
	evExecCheck int32 = 100
	evOpened    int32 = 101 // the host has opened (StartUp)
)

// waitOpen holds a request that arrived before the service host opened;
// the first one starts it opening.
func (t *tierRT) waitOpen(j *job) {
	j.phaseAt = t.r.e.Now()
	t.startQ = append(t.startQ, j)
	if !t.opening {
		t.opening = true
		t.r.e.Schedule(t.spec.StartUp, sim.ClassCompletion, t, evOpened, nil)
	}
}

// opened lets the requests that waited for the host in, in arrival order.
func (t *tierRT) opened(now sim.Time) {
	t.open = true
	q := t.startQ
	t.startQ = nil
	for _, j := range q {
		if j.ended || j.free {
			continue
		}
		w := now.Sub(j.phaseAt)
		j.root.charge(results.BdAdmit, w)
		j.waited += w
		t.arrive(j)
	}
}

func (t *tierRT) armExecCheck() {
	if t.execTick.Valid() {
		return
	}
	every := t.spec.Admission.ExecutionCheck
	if every <= 0 {
		every = 15 * time.Second
	}
	t.execTick = t.r.e.Schedule(every, sim.ClassTimeout, t, evExecCheck, nil)
}

func (t *tierRT) OnEvent(e *sim.Engine, kind int32, arg any) {
	if kind == evOpened {
		t.opened(e.Now())
		return
	}
	if kind != evExecCheck {
		return
	}
	t.execTick = sim.EventID{}
	now := e.Now()
	limit := t.spec.Admission.ExecutionTimeout
	for t.execHead < len(t.execList) {
		ref := t.execList[t.execHead]
		if !ref.live() || ref.j.visit.Left { // ended, or a one-way request ASP.NET has completed
			t.execList[t.execHead] = jobRef{}
			t.execHead++
			continue
		}
		j := ref.j
		if now.Sub(j.started) < limit {
			break
		}
		t.execList[t.execHead] = jobRef{}
		t.execHead++
		if t.r.measuring {
			t.ends.Aborted++
		}
		j.abort()
	}
	if t.execHead > 1024 && t.execHead*2 > len(t.execList) {
		n := copy(t.execList, t.execList[t.execHead:])
		t.execList, t.execHead = t.execList[:n], 0
	}
	if t.execHead < len(t.execList) {
		t.armExecCheck()
	}
}
