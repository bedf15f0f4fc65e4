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

	// execPhase is the phase whose end makes a request executing: the
	// worker thread on an ASP.NET host (ASP.NET's Requests Executing), the
	// handler thread elsewhere.
	execPhase model.PhaseKind
	walk      []model.Phase    // spec.Walk(), once per run
	msgWalk   [2][]model.Phase // spec.WalkOf(MsgNegotiate), spec.WalkOf(MsgClose)
	gates     []*slots         // spec.Gates
	pipes     *model.AppPool   // ASP.NET hosts: the HttpApplication pool

	admQ      []*job // admission FIFO (ring-free: head index)
	admHead   int
	executing int // admitted and not finished

	calls, sessions, instances *slots
	listenWaiting              int    // connections waiting in the netTcp listener for a session (WCF.Listener)
	lvListen                   level  // listenWaiting over time
	pending                    int    // security sessions negotiated, not yet opened (MaxPendingSessions)
	concLock                   *slots // InstanceContextMode Single with ConcurrencyMode Single/Reentrant
	singleInstance             bool   // the Single instance exists
	singleCreated              bool   // and a call has paid its creation (WCF.InstanceCPU)
	locks                      []*slots

	// StartUp: the host is open, or opening, and the requests waiting for it.
	open, opening bool
	startQ        []*job

	execList []jobRef // executionTimeout candidates in start order
	execHead int
	execTick sim.EventID

	demandSampler []sim.Sampler // per step, CPU and wait demands
	waitFixed     []fixedDelay  // per step, a constant wait (d = 0: not constant)

	out []*callStat // calls made from this tier

	// levels (docs/counters.md): lvQueued counts the requests not yet
	// executing, lvAppQ the admission queue alone, lvCur both queued and
	// executing, lvOut the operations in progress.
	lvExec, lvQueued, lvOut, lvBusy, lvThreads, lvTQ, lvMem, lvCPU     level
	lvCur, lvAppQ, lvPipe, lvInst, lvWBusy, lvWorkers, lvIOBusy, lvIOs level
	cpuInt                                                             integ
	completed, rejected, aborted                                       int64
	wasted                                                             time.Duration

	counts         model.TierCounts // the requests' counts and durations, as real mode keeps them
	resp           *sim.Histogram   // arrival to reply of the requests completed after warm-up
	served, waited int64            // completed after warm-up, and of those the ones that waited
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
			t.lvCPU.Set(now, float64(busy))
			t.cpuInt.set(now, float64(busy))
		}
		if spec.CPU == model.CPUFCFS {
			t.cores = newSlots(e, spec.Cores)
			t.cores.OnChange = func() {
				now := e.Now()
				t.lvCPU.Set(now, float64(t.cores.InUse))
				t.cpuInt.set(now, float64(t.cores.InUse))
			}
		}
	}
	t.walk = spec.Walk()
	t.msgWalk = [2][]model.Phase{spec.WalkOf(model.MsgNegotiate), spec.WalkOf(model.MsgClose)}
	for _, n := range spec.Gates {
		t.gates = append(t.gates, newSlots(e, n))
	}
	t.execPhase = jpThread
	if spec.Host == model.HostASPNetClassic || spec.Host == model.HostIISIntegrated {
		t.execPhase = jpWorker
		t.pipes = model.NewAppPool(model.LegacyASPNet(spec.DotNet))
	}
	t.resp = sim.NewHistogram()
	t.worker = newTierPool(t, "worker", spec.Worker)
	t.io = newTierPool(t, "io", spec.IO)
	// A pool's busy and waiting threads change on every request, its
	// thread count seldom (onGrow follows every change of it): each
	// callback sets only the levels it can change.
	busy := func(own *level, p *threadPool) func() {
		return func() {
			now := e.Now()
			t.lvBusy.Set(now, float64(t.worker.Busy()+t.io.Busy()))
			t.lvTQ.Set(now, float64(t.worker.Queued()+t.io.Queued()))
			own.Set(now, float64(p.Busy()))
		}
	}
	grown := func(own *level, p *threadPool) func() {
		return func() {
			now := e.Now()
			t.lvThreads.Set(now, float64(t.worker.Threads+t.io.Threads))
			own.Set(now, float64(p.Threads))
		}
	}
	t.worker.OnChange, t.io.OnChange = busy(&t.lvWBusy, t.worker), busy(&t.lvIOBusy, t.io)
	t.worker.OnGrow, t.io.OnGrow = grown(&t.lvWorkers, t.worker), grown(&t.lvIOs, t.io)
	if w := spec.WCF; w != nil {
		t.calls = newSlots(e, w.MaxCalls)
		t.sessions = newSlots(e, w.MaxSessions)
		t.instances = newSlots(e, w.MaxInstances)
		t.instances.OnChange = func() { t.lvInst.Set(e.Now(), float64(t.instances.InUse)) }
		if w.Instancing == model.SingleInstance && w.Concurrency != model.ConcurrencyMultiple {
			t.concLock = newSlots(e, 1)
		}
	}
	maxLock := -1
	for si := range spec.Steps {
		st := &spec.Steps[si]
		if (st.Kind == model.StepLock || st.Kind == model.StepUnlock) && st.Lock > maxLock {
			maxLock = st.Lock
		}
	}
	for k := 0; k <= maxLock; k++ {
		t.locks = append(t.locks, newSlots(e, 1))
	}
	t.demandSampler = make([]sim.Sampler, len(spec.Steps))
	for si := range spec.Steps {
		st := &spec.Steps[si]
		if st.Kind == model.StepCPU || st.Kind == model.StepWait {
			d := st.Demand
			if st.Kind == model.StepCPU && spec.CostMultiplier > 0 && spec.CostMultiplier != 1 {
				d = d.Scale(spec.CostMultiplier)
			}
			t.demandSampler[si] = d.Sampler(e.Stream(fmtPath("tier", spec.Name, "step", si, st.Kind.String())))
			if c, ok := t.demandSampler[si].Const(); ok && c > 0 && st.Kind == model.StepWait {
				if t.waitFixed == nil {
					t.waitFixed = make([]fixedDelay, len(spec.Steps))
				}
				t.waitFixed[si] = r.fixedDelay(c, sim.ClassCompletion)
			}
		}
	}
	return t
}

func (t *tierRT) levels() []*level {
	return []*level{&t.lvExec, &t.lvQueued, &t.lvOut, &t.lvBusy, &t.lvThreads, &t.lvTQ, &t.lvMem, &t.lvCPU,
		&t.lvCur, &t.lvAppQ, &t.lvPipe, &t.lvInst, &t.lvWBusy, &t.lvWorkers, &t.lvIOBusy, &t.lvIOs, &t.lvListen}
}

func (t *tierRT) resetStats(now sim.Time) {
	t.syncPipes(now)
	for _, l := range t.levels() {
		l.Reset(now)
	}
	t.completed, t.rejected, t.aborted, t.wasted = 0, 0, 0, 0
	t.counts.ResetMeasured()
	t.resp.Reset()
	t.served, t.waited = 0, 0
}

// syncPipes brings the Pipeline Instance Count up to now (its trims are
// lazy, see AppPool).
func (t *tierRT) syncPipes(now sim.Time) {
	if t.pipes != nil {
		t.lvPipe.Set(now, float64(t.pipes.Count(time.Duration(now))))
	}
}

func (t *tierRT) sample(now sim.Time, interval time.Duration) results.TierSample {
	every := float64(interval)
	cpu, perS := 0.0, 0.0
	if now > 0 {
		cpu = 100 * t.cpuInt.take(now) / (every * float64(t.spec.Cores))
		perS = 1 / interval.Seconds()
	}
	t.syncPipes(now)
	s := results.TierSample{
		Executing:   t.lvExec.Value(),
		Queued:      t.lvQueued.Value(),
		Outstanding: t.lvOut.Value(),
		ThreadsBusy: t.lvBusy.Value(),
		Threads:     t.lvThreads.Value(),
		ThreadQueue: t.lvTQ.Value(),
		CPU:         cpu,
		MemoryMB:    t.lvMem.Value() / (1 << 20),

		Current:    t.lvCur.Value(),
		AppQueued:  t.lvAppQ.Value(),
		Pipelines:  t.lvPipe.Value(),
		Instances:  t.lvInst.Value(),
		WorkerBusy: t.lvWBusy.Value(),
		Workers:    t.lvWorkers.Value(),
		IOBusy:     t.lvIOBusy.Value(),
		IOThreads:  t.lvIOs.Value(),
	}
	t.counts.Sample(&s, perS)
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
	r := results.Tier{
		Name:                t.spec.Name,
		Cores:               t.spec.Cores,
		Machine:             t.spec.Machine,
		Host:                t.spec.Host.String(),
		DotNet:              t.spec.DotNet,
		WCF:                 t.wcf,
		CPUUtil:             t.lvCPU.Mean(now) / float64(t.spec.Cores),
		ExecutingMean:       t.lvExec.Mean(now),
		ExecutingMax:        t.lvExec.Max(now),
		QueuedMean:          t.lvQueued.Mean(now),
		QueuedMax:           t.lvQueued.Max(now),
		CurrentMean:         t.lvCur.Mean(now),
		CurrentMax:          t.lvCur.Max(now),
		AppQueuedMean:       t.lvAppQ.Mean(now),
		AppQueuedMax:        t.lvAppQ.Max(now),
		PipelinesMean:       t.lvPipe.Mean(now),
		PipelinesMax:        t.lvPipe.Max(now),
		OutstandingMean:     t.lvOut.Mean(now),
		OutstandingMax:      t.lvOut.Max(now),
		InstancesMean:       t.lvInst.Mean(now),
		InstancesMax:        t.lvInst.Max(now),
		ListenerWaitingMean: t.lvListen.Mean(now),
		ListenerWaitingMax:  t.lvListen.Max(now),
		ThreadsBusyMean:     t.lvBusy.Mean(now),
		ThreadsBusyMax:      t.lvBusy.Max(now),
		ThreadsMax:          t.lvThreads.Max(now),
		ThreadQueueMean:     t.lvTQ.Mean(now),
		WorkerBusyMean:      t.lvWBusy.Mean(now),
		WorkerBusyMax:       t.lvWBusy.Max(now),
		WorkersMean:         t.lvWorkers.Mean(now),
		WorkersMax:          t.lvWorkers.Max(now),
		IOBusyMean:          t.lvIOBusy.Mean(now),
		IOBusyMax:           t.lvIOBusy.Max(now),
		IOThreadsMean:       t.lvIOs.Mean(now),
		IOThreadsMax:        t.lvIOs.Max(now),
		MemoryMaxMB:         t.lvMem.Max(now) / (1 << 20),
		Completed:           t.completed,
		Rejected:            t.rejected,
		Aborted:             t.aborted,
		WastedCPUSeconds:    t.wasted.Seconds(),
	}
	t.counts.Fill(&r, perS)
	if t.resp.Count() > 0 {
		r.ResponseMean = t.resp.Mean().Seconds()
		r.ResponseP50 = t.resp.Quantile(0.5).Seconds()
		r.ResponseP99 = t.resp.Quantile(0.99).Seconds()
	}
	if t.served > 0 {
		r.PWait = float64(t.waited) / float64(t.served)
	}
	return r
}

// ---------------------------------------------------------------------------
// admission

func (t *tierRT) arrive(j *job) {
	now := t.r.e.Now()
	if t.spec.StartUp > 0 && !t.open {
		t.waitOpen(j)
		return
	}
	t.counts.Arrived(t.r.measuring)
	a := &t.spec.Admission
	var d model.Decision
	queued := len(t.admQ) - t.admHead
	switch a.Kind {
	case model.AdmitNone:
		d = model.DecisionRun
	case model.AdmitClassic:
		d = model.DecideClassic(t.spec.Worker.Max, t.worker.Busy(), a.MinFreeThreads, queued, a.QueueLimit)
	case model.AdmitConcurrent:
		d = model.DecideConcurrent(t.executing, a.MaxExecuting, queued, a.QueueLimit, a.CountExecuting)
	}
	if d == model.DecisionReject {
		// Refused at the door: never queued, never held anything.
		t.reject(j)
		return
	}
	j.inTier = true
	t.lvCur.Add(now, 1)
	t.lvQueued.Add(now, 1)
	t.lvMem.Add(now, float64(t.spec.MemoryPerRequest))
	switch d {
	case model.DecisionRun:
		t.admit(j)
	case model.DecisionQueue:
		j.phaseAt = now
		t.admQ = append(t.admQ, j)
		t.lvAppQ.Add(now, 1)
	}
}

// reject ends a request the tier refuses (HTTP 503 Server Too Busy).
func (t *tierRT) reject(j *job) {
	t.counts.Rejected()
	if t.r.measuring {
		t.rejected++
	}
	j.finish(results.Rejected)
}

func (t *tierRT) admit(j *job) {
	t.executing++
	j.held.Take(model.HoldAdmission)
	j.started = t.r.e.Now()
	if t.spec.Admission.ExecutionTimeout > 0 {
		t.execList = append(t.execList, jobRef{j, j.gen})
		t.armExecCheck()
	}
	j.advance()
}

// drain starts queued requests while the admission rule allows.
func (t *tierRT) drain() {
	a := &t.spec.Admission
	for t.admHead < len(t.admQ) {
		ok := false
		switch a.Kind {
		case model.AdmitClassic:
			ok = model.CanDrainClassic(t.spec.Worker.Max, t.worker.Busy(), a.MinFreeThreads)
		case model.AdmitConcurrent:
			ok = t.executing < a.MaxExecuting
		default:
			ok = true
		}
		if !ok {
			break
		}
		j := t.admQ[t.admHead]
		t.admQ[t.admHead] = nil
		t.admHead++
		now := t.r.e.Now()
		t.lvAppQ.Add(now, -1)
		if cc := a.ClientConnectedCheck; cc > 0 && j.orphaned() && now.Sub(j.phaseAt) > cc {
			// clientConnectedCheck: the client has gone; drop it unserved.
			t.drop(j)
			continue
		}
		w := now.Sub(j.phaseAt)
		j.root.charge(bdAdmit, w)
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
		t.aborted++
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
		j.root.charge(bdAdmit, w)
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
		if !ref.live() || ref.j.leftHost { // ended, or a one-way request ASP.NET has completed
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
			t.aborted++
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
