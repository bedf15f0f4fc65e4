package simmode

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// job is one request inside a tier, from arrival to reply. It walks the
// phases below, then its operation's steps, then releases what it holds in
// reverse order.
type job struct {
	t     *tierRT
	call  *call       // the call that brought it; nil once that caller gave up (orphaned work)
	spec  *model.Call // how it was called (binding, sizes): still needed once orphaned
	root  rootRef
	proxy *proxyInst
	msg   model.MsgKind // a call, or a negotiation leg or close of its proxy (WalkOf)
	last  bool          // MsgNegotiate: the negotiation's last leg, which issues the token

	phase int
	step  int
	ended bool
	// starting: the job is inside startCall, so a call that ends at once
	// hands its outcome over by an event rather than re-entering the job
	// (see call.end).
	starting bool
	err      results.Outcome

	wr       waitRec
	waitCat  int
	cpu      sim.PSJob
	cpuStart sim.Time
	cpuNeed  time.Duration
	timer    sim.EventID
	sub      *call

	held     model.Holdings // what it holds in the tier, given back in reverse (finish)
	holdCore bool           // CPUFCFS: holds a core for its CPU demand
	// pausedThread: it gave its thread back to wait for the instance lock
	// (a paused MessageRpc) and takes one again once it holds the lock.
	pausedThread bool
	sessStage    int
	inListen     bool // waits for its session among the netTcp listener's connections
	// accepted: a one-way request answered (PhaseAccept); its operation
	// goes on for nobody waiting, and is not orphaned work. leftHost: its
	// ASP.NET request ended there (counters, worker, admission).
	accepted, leftHost bool

	// The counters (docs/counters.md): inTier once counted as arrived (a
	// request refused at the door never is); isExec from the start of
	// execution (execAt); inOp while its operation runs (from opAt);
	// waited is its time in the tier's queues.
	inTier, isExec, inOp bool
	execAt, opAt         sim.Time
	waited               time.Duration
	thread               *threadPool
	locks                []int
	extraCPU             time.Duration

	arrived, started, phaseAt sim.Time
	gen                       uint32 // bumped when the job is recycled
	free                      bool   // on the free list
}

// jobRef names a job that may have been recycled since.
type jobRef struct {
	j   *job
	gen uint32
}

func (r jobRef) live() bool { return r.j.gen == r.gen && !r.j.ended }

// The job's phase is an index into its tier's walk (walk.go); these are
// the kinds of phase it switches on.
const (
	jpAdmission = model.PhaseAdmission
	jpWorker    = model.PhaseWorker
	jpSession   = model.PhaseSession
	jpInstance  = model.PhaseInstance
	jpCallSlot  = model.PhaseCallSlot
	jpChannel   = model.PhaseChannel
	jpConc      = model.PhaseConcurrency
	jpActivate  = model.PhaseActivate
	jpGate      = model.PhaseGate
	jpThread    = model.PhaseThread
	jpDecode    = model.PhaseDecode
	jpAccept    = model.PhaseAccept
	jpSteps     = model.PhaseSteps
	jpEncode    = model.PhaseEncode
	jpDone      = model.PhaseDone
	jpNegotiate = model.PhaseNegotiate
	jpClose     = model.PhaseSessionClose
)

// kind is what the job's current phase of the walk takes.
func (j *job) kind() model.PhaseKind {
	if j.msg != model.MsgCall {
		return j.t.msgWalk[j.msg-1][j.phase].Kind
	}
	return j.t.walk[j.phase].Kind
}

// event kinds
const (
	jkGranted int32 = iota
	jkCPUDone
	jkWaitDone
	jkSubDone
	jkRethread // an async handler got a thread back after a call
	jkRelock   // a reentrant handler got its instance lock back after a call
	jkRetry    // run the current phase again (a session another job was opening is ready)
	jkCore     // CPUFCFS: a core was granted
	jkResume   // a request paused at the instance lock got a thread again
)

func (t *tierRT) newJob(c *call) *job {
	now := t.r.e.Now()
	var j *job
	r := t.r
	if n := len(r.freeJobs); n > 0 {
		j = r.freeJobs[n-1]
		r.freeJobs = r.freeJobs[:n-1]
		j.held.Reset()
		*j = job{held: j.held, gen: j.gen}
	} else {
		j = &job{}
	}
	j.t, j.call, j.spec, j.root, j.proxy, j.arrived = t, c, c.spec, c.root, c.proxy, now
	return j
}

// orphaned reports whether nobody waits for this job's reply any more.
func (j *job) orphaned() bool {
	if j.accepted {
		return false // a one-way operation: answered, still wanted
	}
	return j.call == nil || j.call.orphaned()
}

func (j *job) OnEvent(e *sim.Engine, kind int32, arg any) {
	if j.free {
		if kind == jkSubDone {
			return // the caller was aborted while its call's reply was on its way
		}
		panic(fmt.Sprintf("model: event %d for a recycled job", kind))
	}
	if j.ended {
		return // a reply that was on its way when the job was aborted
	}
	if kind == jkGranted || kind == jkRethread || kind == jkRelock || kind == jkCore || kind == jkResume {
		if !j.wr.TakeGrant() {
			return // a grant that was given back (see model.Waiter.Cancel)
		}
	}
	now := e.Now()
	switch kind {
	case jkGranted:
		j.root.charge(j.waitCat, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.grantedPhase()
		if j.kind() == jpConc && !j.resume() {
			return
		}
		j.phase++
		j.advance()
	case jkCPUDone:
		if j.holdCore {
			j.timer = sim.EventID{}
			j.holdCore = false
			j.t.cores.Release()
		}
		j.t.cpuOut()
		j.cpuDone(now)
		j.next()
	case jkCore:
		j.waited += now.Sub(j.phaseAt) // charged as CPU wait by cpuDone
		j.onCore()
	case jkWaitDone:
		j.timer = sim.EventID{}
		j.root.charge(bdExternal, now.Sub(j.phaseAt))
		j.next()
	case jkSubDone:
		j.subDone(arg.(*call))
	case jkRethread:
		j.root.charge(bdThread, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.held.Take(model.HoldThread)
		j.afterCall()
	case jkRetry:
		if j.kind() != jpSession || j.wr.Waiting() {
			return // not (or no longer) waiting for a session someone else opens
		}
		j.root.charge(bdThrottle, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.advance()
	case jkRelock:
		j.root.charge(bdLock, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.held.Take(model.HoldInstanceLock)
		j.afterCall()
	case jkResume:
		j.root.charge(bdThread, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.held.Take(model.HoldThread)
		j.pausedThread = false
		j.lockedIn()
		j.phase++
		j.advance()
	}
}

// pause gives the job's thread back while it waits for the instance lock:
// WCF pauses a MessageRpc that finds the lock taken (ConcurrencyBehavior
// queues a MessageRpcWaiter) and resumes it when the lock is released.
func (j *job) pause() {
	if !j.held.Drop(model.HoldThread) {
		return
	}
	j.thread.Release()
	j.pausedThread = true
	j.t.drain()
}

// resume takes a thread again for a job that was granted the instance
// lock after pausing; it reports whether the job may go on now.
func (j *job) resume() bool {
	if j.pausedThread {
		if !j.waitThread(j.thread, jkResume) {
			return false
		}
		j.held.Take(model.HoldThread)
		j.pausedThread = false
	}
	j.lockedIn()
	return true
}

// lockedIn is the job past its instance lock, on its thread: off an
// ASP.NET host it is executing now.
func (j *job) lockedIn() {
	if j.t.execPhase == jpThread {
		j.startExec()
	}
}

// next moves past a completed step (or the decode/encode phase).
func (j *job) next() {
	if j.kind() == jpSteps {
		j.step++
	} else {
		j.phase++
	}
	j.advance()
}

func (j *job) grantedPhase() {
	switch j.kind() {
	case jpWorker:
		j.held.Take(model.HoldWorker)
		if j.t.execPhase == jpWorker {
			j.startExec()
		}
	case jpSession:
		// The session slot (stage 0) or the session's instance (stage 1)
		// was granted; openSession goes on from there.
		j.leaveListener()
		j.sessStage++
		j.phase--
	case jpInstance:
		if j.t.spec.WCF.Instancing == model.SingleInstance {
			j.t.singleInstance = true // the Single instance lives for the run
		} else {
			j.held.Take(model.HoldInstance)
		}
	case jpCallSlot:
		j.held.Take(model.HoldCallSlot)
	case jpChannel:
		j.held.Take(model.HoldChannel)
	case jpConc:
		j.held.Take(model.HoldInstanceLock)
	case jpGate:
		j.held.TakeGate()
	case jpThread:
		j.held.Take(model.HoldThread)
		if j.t.execPhase == jpThread && j.lockAfterDecode() == nil {
			j.startExec()
		}
	case jpSteps:
		// a lock step
		j.held.TakeLock(j.t.spec.Steps[j.step].Lock)
		j.step++
		j.phase-- // jkGranted increments the phase; stay in the steps
	}
}

// wait queues the job on s; it reports whether the slot was taken at once.
func (j *job) wait(s *slots, cat int) bool {
	j.waitCat = cat
	j.phaseAt = j.t.r.e.Now()
	return j.wr.acquire(s, j, jkGranted, nil)
}

func (j *job) waitThread(p *threadPool, kind int32) bool {
	j.waitCat = bdThread
	j.phaseAt = j.t.r.e.Now()
	return p.acquire(&j.wr, j, kind, nil)
}

func (t *tierRT) usesWorker() bool { return t.spec.HoldsWorker() }

// handlerPool is the pool the operation runs on.
func (t *tierRT) handlerPool() *threadPool {
	if t.spec.RunsOnIO() {
		return t.io
	}
	return t.worker
}

func (j *job) sessionful() bool {
	return j.t.wcf && j.spec.Binding.Sessionful
}

// advance runs phases until one must wait.
func (j *job) advance() {
	t := j.t
	w := t.spec.WCF
	for !j.ended {
		switch j.kind() {
		case jpAdmission:
			// admitted (tier.go): the walk goes on
		case jpWorker:
			if t.usesWorker() {
				if t.worker.Rejects() {
					t.reject(j)
					return
				}
				if !j.waitThread(t.worker, jkGranted) {
					return
				}
				j.held.Take(model.HoldWorker)
			}
			if t.execPhase == jpWorker {
				j.startExec()
			}
		case jpSession:
			if !j.openSession() {
				return
			}
		case jpInstance:
			if w != nil {
				switch {
				case w.Instancing == model.SingleInstance:
					if !t.singleInstance {
						if !j.wait(t.instances, bdThrottle) {
							return
						}
						t.singleInstance = true
					}
				case w.Instancing == model.PerCall || !j.sessionful():
					if !j.wait(t.instances, bdThrottle) {
						return
					}
					j.held.Take(model.HoldInstance)
				}
			}
		case jpCallSlot:
			if w != nil {
				if !j.wait(t.calls, bdThrottle) {
					return
				}
				j.held.Take(model.HoldCallSlot)
			}
		case jpChannel:
			if l := j.lockBeforeDecode(); l != nil {
				if !j.wait(l, bdLock) {
					return
				}
				j.held.Take(model.HoldChannel)
			}
		case jpConc:
			if l := j.lockAfterDecode(); l != nil {
				if !j.wait(l, bdLock) {
					j.pause()
					return
				}
				j.held.Take(model.HoldInstanceLock)
				j.lockedIn()
			}
		case jpActivate:
			if need := w.ActivateCPU(j.createsInstance()); need > 0 {
				j.useCPU(need)
				return
			}
		case jpGate:
			if !j.wait(t.gates[t.walk[j.phase].Gate], bdThrottle) {
				return
			}
			j.held.TakeGate()
		case jpThread:
			p := t.handlerPool()
			j.thread = p
			if p == t.worker && j.held.Holds(model.HoldWorker) {
				// An ASP.NET page runs on the worker thread it was given.
				j.held.Move(model.HoldWorker, model.HoldThread)
			} else {
				if !t.usesWorker() && p.Rejects() {
					t.reject(j) // its first thread: the pool's queue is full
					return
				}
				if !j.waitThread(p, jkGranted) {
					return
				}
				j.held.Take(model.HoldThread)
			}
			if t.execPhase == jpThread && j.lockAfterDecode() == nil {
				j.startExec() // else once past its instance lock (lockedIn)
			}
		case jpDecode:
			need := j.extraCPU
			if j.msg == model.MsgCall {
				need += j.spec.Binding.Cost(j.spec.RequestKB)
			}
			if need > 0 {
				j.useCPU(need)
				return
			}
		case jpAccept:
			j.accept()
		case jpSteps:
			if !j.inOp {
				j.startOp()
			}
			if j.step >= len(t.spec.Steps) {
				j.endOp()
				break
			}
			if !j.runStep() {
				return
			}
			j.step++
			continue
		case jpEncode:
			if t.spec.OneWay() {
				break // no reply message
			}
			if need := j.spec.Binding.Cost(j.spec.ReplyKB); need > 0 {
				j.useCPU(need)
				return
			}
		case jpDone:
			j.finish(results.Completed)
			return
		case jpNegotiate:
			if j.last && w != nil && j.proxy != nil {
				if !model.DecideNegotiation(t.pending, w.MaxPendingSessions) {
					// QuotaExceededException: the client's negotiation
					// fails (SecurityNegotiationException).
					j.finish(results.Failed)
					return
				}
				j.proxy.pend(t)
			}
		case jpClose:
			if j.proxy != nil {
				j.proxy.closeSession() // the Cancel ends the session
			}
		}
		j.phase++
	}
}

// runStep starts the current step; it reports whether the step completed
// at once (so the caller moves on).
func (j *job) runStep() bool {
	t := j.t
	st := &t.spec.Steps[j.step]
	switch st.Kind {
	case model.StepCPU:
		j.useCPU(t.demandSampler[j.step].Sample())
		return false
	case model.StepWait:
		j.phaseAt = t.r.e.Now()
		if t.waitFixed != nil && t.waitFixed[j.step].d > 0 {
			j.timer = t.waitFixed[j.step].schedule(t.r.e, j, jkWaitDone)
			return false
		}
		d := t.demandSampler[j.step].Sample()
		j.timer = t.r.e.Schedule(d, sim.ClassCompletion, j, jkWaitDone, nil)
		return false
	case model.StepLock:
		if !j.wait(t.locks[st.Lock], bdLock) {
			return false
		}
		j.held.TakeLock(st.Lock)
		return true
	case model.StepUnlock:
		j.unlock(st.Lock)
		return true
	case model.StepCall:
		j.startCall(st.Call)
		return false
	}
	return true
}

func (j *job) unlock(l int) {
	if j.held.DropLock(l) {
		j.t.locks[l].Release()
	}
}

func (j *job) useCPU(d time.Duration) {
	t := j.t
	j.cpuStart = t.r.e.Now()
	j.cpuNeed = d
	if t.cores != nil {
		// FCFS: wait for a core, then hold it for the whole demand.
		j.waitCat = bdCPUWait
		j.phaseAt = j.cpuStart
		if !j.wr.acquire(t.cores, j, jkCore, nil) {
			return
		}
		j.onCore()
		return
	}
	t.cpuIn()
	t.cpu.Start(&j.cpu, d, j, jkCPUDone, nil)
}

// onCore runs the demand on the core the job holds.
func (j *job) onCore() {
	j.holdCore = true
	j.t.cpuIn()
	j.timer = j.t.r.e.Schedule(j.cpuNeed, sim.ClassCompletion, j, jkCPUDone, nil)
}

// startExec is the request leaving the queues: it is executing now
// (ASP.NET's Requests Executing; Request Wait Time ends), and on an
// ASP.NET host it takes an HttpApplication instance.
func (j *job) startExec() {
	if j.isExec {
		return
	}
	t := j.t
	now := t.r.e.Now()
	j.isExec, j.execAt = true, now
	t.lvQueued.Add(now, -1)
	t.lvExec.Add(now, 1)
	w := now.Sub(j.arrived)
	t.counts.Waited(w, t.r.measuring)
	if t.pipes != nil {
		t.pipes.Take(time.Duration(now))
		t.lvPipe.Set(now, float64(t.pipes.Count(time.Duration(now))))
	}
}

// startOp is the operation starting (WCF's MethodCalled: Calls, Calls Per
// Second, Calls Outstanding).
func (j *job) startOp() {
	t := j.t
	now := t.r.e.Now()
	j.inOp, j.opAt = true, now
	t.lvOut.Add(now, 1)
	t.counts.OpStarted(t.r.measuring)
}

// endOp is the operation returning, or ending with the request (Calls
// Duration).
func (j *job) endOp() {
	t := j.t
	now := t.r.e.Now()
	j.inOp = false
	t.lvOut.Add(now, -1)
	d := now.Sub(j.opAt)
	t.counts.OpEnded(d, t.r.measuring)
}

func (j *job) cpuDone(now sim.Time) {
	el := now.Sub(j.cpuStart)
	j.root.charge(bdCPU, j.cpuNeed)
	if el > j.cpuNeed {
		j.root.charge(bdCPUWait, el-j.cpuNeed)
	}
	if j.orphaned() && j.t.r.measuring {
		j.t.wasted += j.cpuNeed
	}
}

// lockBeforeDecode is the instance lock the job takes before decoding
// (PhaseChannel): a session's PerSession instance with ConcurrencyMode
// Single, whose channel WCF reads one message at a time.
// lockAfterDecode is the one it takes after (PhaseConcurrency): the
// singleton's, or a session's with ConcurrencyMode Reentrant (a
// concurrent channel: ConcurrencyBehavior.IsConcurrent is false only for
// Single with a session).
func (j *job) lockBeforeDecode() *slots {
	if j.t.concLock != nil || j.t.spec.WCF.Concurrency != model.ConcurrencySingle {
		return nil
	}
	return j.concLock()
}

func (j *job) lockAfterDecode() *slots {
	if j.t.concLock != nil {
		return j.t.concLock
	}
	if w := j.t.spec.WCF; w == nil || w.Concurrency != model.ConcurrencyReentrant {
		return nil
	}
	return j.concLock()
}

func (j *job) concLock() *slots {
	t := j.t
	w := t.spec.WCF
	if w == nil || w.Concurrency == model.ConcurrencyMultiple {
		return nil
	}
	if t.concLock != nil {
		return t.concLock
	}
	if w.Instancing == model.PerSession && j.sessionful() && j.proxy != nil {
		if j.proxy.lock == nil {
			j.proxy.lock = newSlots(t.r.e, 1)
		}
		return j.proxy.lock
	}
	return nil
}

// createsInstance reports whether the job is the call that creates its
// service instance (WCF.InstanceCPU): every call PerCall or without a
// session, a session's first, the singleton's first.
func (j *job) createsInstance() bool {
	t := j.t
	switch {
	case t.spec.WCF.Instancing == model.SingleInstance:
		if t.singleCreated {
			return false
		}
		t.singleCreated = true
		return true
	case t.spec.WCF.Instancing == model.PerSession && j.sessionful() && j.proxy != nil:
		if j.proxy.created {
			return false
		}
		j.proxy.created = true
		return true
	}
	return true
}

// openSession makes sure the job's proxy has a server session (a
// sessionful binding: netTcp, wsHttp with a secure session, named pipes):
// the first call on a proxy takes a MaxConcurrentSessions slot and, for
// PerSession instancing, a MaxConcurrentInstances slot that the session
// keeps; later calls on the proxy, and calls that arrive while it is being
// opened, wait for it. It reports whether the job may go on now.
func (j *job) openSession() bool {
	t := j.t
	p := j.proxy
	if t.spec.WCF == nil || p == nil || !j.sessionful() || p.session {
		return true
	}
	if p.opener != nil && p.opener != j {
		j.phaseAt = t.r.e.Now()
		p.sessWait = append(p.sessWait, jobRef{j, j.gen})
		return false
	}
	p.opener = j
	for {
		switch j.sessStage {
		case 0:
			if j.spec.Binding.Listener && !t.sessions.Free() {
				// A new connection through the netTcp listener: it waits
				// among its pending and backlogged connections, or is
				// refused when they are full.
				if model.DecideListener(&t.spec.WCF.Listener, t.listenWaiting) == model.DecisionReject {
					t.reject(j)
					return false
				}
				j.inListen = true
				t.listenWaiting++
				t.lvListen.Set(t.r.e.Now(), float64(t.listenWaiting))
			}
			if !j.wait(t.sessions, bdThrottle) {
				return false
			}
			j.leaveListener()
			j.sessStage = 1
		case 1:
			if t.spec.WCF.Instancing == model.PerSession {
				if !j.wait(t.instances, bdThrottle) {
					return false
				}
				p.instance = true
			}
			j.sessStage = 2
		case 2:
			p.session, p.sessionTier, p.opener = true, t, nil
			p.unpend() // accepted: no longer a pending security session
			if p.perCall {
				j.held.Take(model.HoldSession)
			}
			p.wakeSessionWaiters()
			return true
		}
	}
}

// keepsSession reports whether a per-call proxy's session outlives its
// job: its client closes it with a message of its own (CloseMessage), or
// has aborted it unseen by the server (SessionIdleTimeout), which then
// waits for the session's inactivity timeout (proxyInst.settle).
func (j *job) keepsSession() bool {
	b := &j.spec.Binding
	return b.CloseMessage || (b.SessionIdleTimeout > 0 && j.orphaned())
}

// clientGone is the job's client giving up (timeout or abort). A call
// still waiting for its WCF session is dropped: its channel was never
// accepted, and the aborted connection leaves the listener's backlog
// (facts §4). Work already under way goes on, orphaned.
func (j *job) clientGone() {
	if j.ended || j.kind() != jpSession {
		return
	}
	p := j.proxy
	if p == nil || p.session {
		return
	}
	if j.spec.Binding.SessionIdleTimeout > 0 {
		// A session over HTTP: the server never learns that the client
		// aborted; the channel stays queued for its session, orphaned.
		return
	}
	if p.opener != j {
		for i, w := range p.sessWait {
			if w.j == j && w.gen == j.gen {
				p.sessWait = append(p.sessWait[:i], p.sessWait[i+1:]...)
				break
			}
		}
	}
	j.t.drop(j)
}

// abandonSession is the opener leaving before the session is open: the
// slots it took go back and the waiters try again.
func (j *job) abandonSession() {
	j.leaveListener()
	p := j.proxy
	if p == nil || p.opener != j {
		return
	}
	t := j.t
	if j.sessStage >= 1 {
		t.sessions.Release()
	}
	if p.instance && !p.session {
		p.instance = false
		t.instances.Release()
	}
	p.opener = nil
	p.unpend() // its channel went away unopened
	p.wakeSessionWaiters()
}

// leaveListener is the job's connection leaving the netTcp listener's
// queue: its session slot granted, or the job ended.
func (j *job) leaveListener() {
	if j.inListen {
		j.inListen = false
		t := j.t
		t.listenWaiting--
		t.lvListen.Set(t.r.e.Now(), float64(t.listenWaiting))
	}
}

func (p *proxyInst) wakeSessionWaiters() {
	for _, w := range p.sessWait {
		if w.live() {
			w.j.t.r.e.Schedule(0, sim.ClassRelease, w.j, jkRetry, nil)
		}
	}
	p.sessWait = p.sessWait[:0]
}

// endRequest ends the request's counters (Requests Current, Executing or
// Queued, Request Execution Time, its HttpApplication instance).
func (j *job) endRequest(now sim.Time) {
	t := j.t
	t.lvCur.Add(now, -1)
	if j.isExec {
		t.lvExec.Add(now, -1)
		d := now.Sub(j.execAt)
		t.counts.Executed(d, t.r.measuring)
		if t.pipes != nil {
			t.pipes.Return(time.Duration(now))
			t.lvPipe.Set(now, float64(t.pipes.Count(time.Duration(now))))
		}
	} else {
		t.lvQueued.Add(now, -1)
	}
}

// accept answers a one-way request (PhaseAccept): WCF's dispatcher replies
// to it before it takes the instance lock and runs the operation
// (ImmutableDispatchRuntime.ProcessMessage11: RequestContext.Reply(null),
// an HTTP 202 Accepted). On an ASP.NET host the request is complete then
// and gives back its worker thread and its admission: "When the WCF
// operation is one-way, the request has to be completed before the service
// operation is invoked. So the ASP.NET worker thread has to return
// earlier" (seed 000). The caller's call ends; the operation goes on,
// holding its throttles, and ends the job as usual (the tier counts it
// completed then).
func (j *job) accept() {
	t := j.t
	if t.execPhase == jpWorker {
		now := t.r.e.Now()
		if j.inTier {
			j.endRequest(now)
			j.leftHost = true
		}
		if j.held.Drop(model.HoldWorker) {
			t.worker.Release()
		}
		if j.held.Drop(model.HoldAdmission) {
			t.executing--
		}
		t.drain()
	}
	c := j.call
	if c == nil {
		return // its caller has gone: nobody to answer
	}
	j.call, j.accepted = nil, true
	c.serverDone(results.Completed)
}

// ---------------------------------------------------------------------------
// downstream calls

func (j *job) startCall(spec *model.Call) {
	t := j.t
	async := t.spec.Async
	if async && j.held.Drop(model.HoldThread) {
		j.thread.Release()
		t.drain()
	}
	if t.spec.WCF != nil && t.spec.WCF.Concurrency == model.ConcurrencyReentrant && j.held.Drop(model.HoldInstanceLock) {
		j.concLock().Release()
	}
	j.phaseAt = t.r.e.Now()
	var u *user
	if t.spec.Agent && j.call != nil {
		u = j.call.user // a load agent calls on behalf of its user (per-user proxies)
	}
	j.sub = t.r.newCall(spec, t, j, u, j.root)
	j.starting = true
	j.sub.begin()
	j.starting = false
}

func (j *job) subDone(c *call) {
	if j.sub != c {
		return
	}
	j.sub = nil
	if c.outcome != results.Completed {
		j.err = c.outcome
	}
	c.r.releaseCall(c)
	j.afterCall()
}

// afterCall re-takes what an async or reentrant handler gave up during the
// call, then moves on (or fails if the call failed).
func (j *job) afterCall() {
	t := j.t
	if t.spec.Async && !j.held.Holds(model.HoldThread) {
		if !j.waitThread(j.thread, jkRethread) {
			return
		}
		j.held.Take(model.HoldThread)
	}
	if t.spec.WCF != nil && t.spec.WCF.Concurrency == model.ConcurrencyReentrant && !j.held.Holds(model.HoldInstanceLock) {
		if l := j.concLock(); l != nil {
			j.waitCat = bdLock
			j.phaseAt = t.r.e.Now()
			if !j.wr.acquire(l, j, jkRelock, nil) {
				return
			}
			j.held.Take(model.HoldInstanceLock)
		}
	}
	if j.err != results.Completed {
		j.finish(j.err)
		return
	}
	j.step++
	j.advance()
}

// ---------------------------------------------------------------------------
// the end

// abort stops the job wherever it is (ASP.NET executionTimeout).
func (j *job) abort() {
	if j.ended {
		return
	}
	t := j.t
	j.wr.Leave()
	if j.cpu.InService() {
		t.cpu.Remove(&j.cpu)
		t.cpuOut()
	}
	if j.timer.Valid() {
		t.r.e.Cancel(j.timer)
		j.timer = sim.EventID{}
	}
	if j.sub != nil {
		s := j.sub
		j.sub = nil
		s.abandon()
	}
	j.finish(results.Failed)
}

// Give gives back one of the job's holdings (model.Holdings.Release).
func (j *job) Give(k model.Hold, i int) {
	t := j.t
	switch k {
	case model.HoldLock:
		t.locks[i].Release()
	case model.HoldInstanceLock, model.HoldChannel:
		j.concLock().Release()
	case model.HoldThread:
		j.thread.Release()
	case model.HoldGate:
		t.gates[i].Release()
	case model.HoldCallSlot:
		t.calls.Release()
	case model.HoldInstance:
		t.instances.Release()
	case model.HoldSession:
		if !j.keepsSession() {
			j.proxy.closeSession()
		}
	case model.HoldWorker:
		t.worker.Release()
	case model.HoldAdmission:
		t.executing--
	}
}

func (j *job) finish(o results.Outcome) {
	if j.ended {
		return
	}
	j.ended = true
	t := j.t
	now := t.r.e.Now()
	// A slot handed over at this instant whose grant event has not run yet
	// goes back; the job is then not recycled, so the event finds it ended.
	keep := j.wr.Cancel()
	j.abandonSession()
	j.held.Release(j)
	if j.holdCore {
		t.cores.Release()
		t.cpuOut()
	}
	if j.inOp {
		j.endOp()
	}
	if j.inTier {
		t.lvMem.Add(now, -float64(t.spec.MemoryPerRequest))
		if !j.leftHost {
			j.endRequest(now)
		}
	}
	if o == results.Completed && t.r.measuring && j.msg == model.MsgCall {
		t.completed++
		if t.entry {
			t.r.entryDone++
		}
		t.resp.Record(now.Sub(j.arrived))
		t.served++
		if j.waited > 0 {
			t.waited++
		}
	}
	if p := j.proxy; p != nil && j.msg == model.MsgCall {
		p.jobs--
		p.lastActive = now
		if p.dead && p.jobs == 0 {
			p.settle()
		}
	}
	t.drain()
	if c := j.call; c != nil {
		j.call = nil
		c.serverDone(o)
	}
	// Nothing refers to the job any more but generation-checked references
	// (execution-timeout list, session waiters): recycle it.
	j.gen++
	if !keep {
		j.free = true
		t.r.freeJobs = append(t.r.freeJobs, j)
	}
}
