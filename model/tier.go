package model

import (
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// tierRT is a tier at run time.
type tierRT struct {
	r    *runner
	idx  int
	spec *Tier
	wcf  bool

	cpu        *sim.PS
	worker, io *threadPool

	admQ      []*job // admission FIFO (ring-free: head index)
	admHead   int
	executing int // admitted and not finished

	calls, sessions, instances *slots
	concLock                   *slots // InstanceContextMode Single with ConcurrencyMode Single/Reentrant
	singleInstance             bool   // the Single instance exists
	locks                      []*slots

	execList []jobRef // executionTimeout candidates in start order
	execHead int
	execTick sim.EventID

	demandSampler []sim.Sampler // per step, CPU and wait demands

	out []*callStat // calls made from this tier

	// levels
	lvExec, lvQueued, lvOut, lvBusy, lvThreads, lvTQ, lvMem, lvCPU sim.Level
	cpuInt                                                         integ
	completed, rejected, aborted                                   int64
	wasted                                                         time.Duration
}

func newTierRT(r *runner, i int) *tierRT {
	spec := &r.top.Tiers[i]
	t := &tierRT{r: r, idx: i, spec: spec, wcf: spec.WCF != nil}
	e := r.e
	t.cpu = sim.NewPS(e, spec.Cores)
	t.cpu.OnChange = func(now sim.Time, n int) {
		busy := n
		if busy > spec.Cores {
			busy = spec.Cores
		}
		t.lvCPU.Set(now, float64(busy))
		t.cpuInt.set(now, float64(busy))
	}
	t.worker = newThreadPool(e, spec.Worker)
	t.io = newThreadPool(e, spec.IO)
	onThreads := func() {
		now := e.Now()
		t.lvBusy.Set(now, float64(t.worker.busy()+t.io.busy()))
		t.lvThreads.Set(now, float64(t.worker.threads+t.io.threads))
		t.lvTQ.Set(now, float64(t.worker.waiting()+t.io.waiting()))
	}
	t.worker.s.onChange, t.io.s.onChange = onThreads, onThreads
	t.worker.onGrow, t.io.onGrow = onThreads, onThreads
	if w := spec.WCF; w != nil {
		t.calls = newSlots(e, w.MaxCalls)
		t.sessions = newSlots(e, w.MaxSessions)
		t.instances = newSlots(e, w.MaxInstances)
		if w.Instancing == SingleInstance && w.Concurrency != ConcurrencyMultiple {
			t.concLock = newSlots(e, 1)
		}
	}
	maxLock := -1
	for si := range spec.Steps {
		st := &spec.Steps[si]
		if (st.Kind == StepLock || st.Kind == StepUnlock) && st.Lock > maxLock {
			maxLock = st.Lock
		}
	}
	for k := 0; k <= maxLock; k++ {
		t.locks = append(t.locks, newSlots(e, 1))
	}
	t.demandSampler = make([]sim.Sampler, len(spec.Steps))
	for si := range spec.Steps {
		st := &spec.Steps[si]
		if st.Kind == StepCPU || st.Kind == StepWait {
			d := st.Demand
			if st.Kind == StepCPU && spec.CostMultiplier > 0 && spec.CostMultiplier != 1 {
				d = d.Scale(spec.CostMultiplier)
			}
			t.demandSampler[si] = d.Sampler(e.Stream(fmtPath("tier", spec.Name, "step", si, st.Kind.String())))
		}
	}
	return t
}

func (t *tierRT) resetStats(now sim.Time) {
	for _, l := range []*sim.Level{&t.lvExec, &t.lvQueued, &t.lvOut, &t.lvBusy, &t.lvThreads, &t.lvTQ, &t.lvMem, &t.lvCPU} {
		l.Reset(now)
	}
	t.completed, t.rejected, t.aborted, t.wasted = 0, 0, 0, 0
}

func (t *tierRT) sample(now sim.Time, interval time.Duration) results.TierSample {
	every := float64(interval)
	cpu := 0.0
	if now > 0 {
		cpu = 100 * t.cpuInt.take(now) / (every * float64(t.spec.Cores))
	}
	s := results.TierSample{
		Executing:   t.lvExec.Value(),
		Queued:      t.lvQueued.Value(),
		Outstanding: t.lvOut.Value(),
		ThreadsBusy: t.lvBusy.Value(),
		Threads:     t.lvThreads.Value(),
		ThreadQueue: t.lvTQ.Value(),
		CPU:         cpu,
		MemoryMB:    t.lvMem.Value() / (1 << 20),
	}
	for _, c := range t.out {
		s.ConnsInUse += float64(c.conns.inUse)
		s.ConnsWaiting += float64(c.conns.waiting)
	}
	return s
}

func (t *tierRT) result(now sim.Time) results.Tier {
	return results.Tier{
		Name:             t.spec.Name,
		Cores:            t.spec.Cores,
		CPUUtil:          t.lvCPU.Mean(now) / float64(t.spec.Cores),
		ExecutingMean:    t.lvExec.Mean(now),
		ExecutingMax:     t.lvExec.Max(),
		QueuedMean:       t.lvQueued.Mean(now),
		QueuedMax:        t.lvQueued.Max(),
		OutstandingMean:  t.lvOut.Mean(now),
		OutstandingMax:   t.lvOut.Max(),
		ThreadsBusyMean:  t.lvBusy.Mean(now),
		ThreadsBusyMax:   t.lvBusy.Max(),
		ThreadsMax:       t.lvThreads.Max(),
		ThreadQueueMean:  t.lvTQ.Mean(now),
		MemoryMaxMB:      t.lvMem.Max() / (1 << 20),
		Completed:        t.completed,
		Rejected:         t.rejected,
		Aborted:          t.aborted,
		WastedCPUSeconds: t.wasted.Seconds(),
	}
}

// ---------------------------------------------------------------------------
// admission

func (t *tierRT) arrive(j *job) {
	now := t.r.e.Now()
	t.lvOut.Add(now, 1)
	t.lvMem.Add(now, float64(t.spec.MemoryPerRequest))
	a := &t.spec.Admission
	var d Decision
	queued := len(t.admQ) - t.admHead
	switch a.Kind {
	case AdmitNone:
		d = DecisionRun
	case AdmitClassic:
		d = DecideClassic(t.spec.Worker.Max, t.worker.busy(), a.MinFreeThreads, queued, a.QueueLimit)
	case AdmitConcurrent:
		d = DecideConcurrent(t.executing, a.MaxExecuting, queued, a.QueueLimit, a.CountExecuting)
	}
	switch d {
	case DecisionRun:
		t.admit(j)
	case DecisionQueue:
		j.phaseAt = now
		t.admQ = append(t.admQ, j)
		t.lvQueued.Add(now, 1)
	case DecisionReject:
		if t.r.measuring {
			t.rejected++
		}
		j.finish(results.Rejected)
	}
}

func (t *tierRT) admit(j *job) {
	t.executing++
	j.admitted = true
	j.started = t.r.e.Now()
	t.lvExec.Add(j.started, 1)
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
		case AdmitClassic:
			ok = CanDrainClassic(t.spec.Worker.Max, t.worker.busy(), a.MinFreeThreads)
		case AdmitConcurrent:
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
		t.lvQueued.Add(now, -1)
		if cc := a.ClientConnectedCheck; cc > 0 && j.orphaned() && now.Sub(j.phaseAt) > cc {
			// clientConnectedCheck: the client has gone; drop it unserved.
			t.drop(j)
			continue
		}
		j.root.charge(bdAdmit, now.Sub(j.phaseAt))
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

const evExecCheck int32 = 100

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
	if kind != evExecCheck {
		return
	}
	t.execTick = sim.EventID{}
	now := e.Now()
	limit := t.spec.Admission.ExecutionTimeout
	for t.execHead < len(t.execList) {
		ref := t.execList[t.execHead]
		if !ref.live() {
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
