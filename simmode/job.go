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
	call  *call // the call that brought it; nil once that caller gave up (orphaned work)
	root  rootRef
	proxy *proxyInst
	// Req is what the walk's decisions know of it (model.Tier.Need): how
	// it was called (still needed once orphaned), what it holds, its
	// proxy's session; need is what its current phase asked.
	model.Req
	need model.Need

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

	holdCore bool // CPUFCFS: holds a core for its CPU demand
	// pausedThread: it gave its thread back to wait for the instance lock
	// (a paused MessageRpc) and takes one again once it holds the lock.
	pausedThread bool
	sessStage    int
	inListen     bool // waits for its session among the netTcp listener's connections
	// accepted: a one-way request answered (PhaseAccept); its operation
	// goes on for nobody waiting, and is not orphaned work.
	accepted bool
	// handedOff: it was handed a contended lock and has waited for its
	// thread to wake (model.Handoff); granted goes on.
	handedOff bool

	// visit is its passage through the tier's counters (docs/counters.md);
	// waited its time in the tier's queues.
	visit  model.Visit
	waited time.Duration
	thread *threadPool

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

// phaseOf is the job's current phase: an index into its tier's walk
// (model.Tier.Walk, WalkOf).
func (j *job) phaseOf() model.Phase {
	if j.Msg != model.MsgCall {
		return j.t.msgWalk[j.Msg-1][j.phase]
	}
	return j.t.walk[j.phase]
}

// kind is what the job's current phase of the walk takes.
func (j *job) kind() model.PhaseKind { return j.phaseOf().Kind }

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
	jkHandoff  // a lock handed to the job: its thread has woken (model.Handoff)
)

func (t *tierRT) newJob(c *call) *job {
	now := t.r.e.Now()
	var j *job
	r := t.r
	if n := len(r.freeJobs); n > 0 {
		j = r.freeJobs[n-1]
		r.freeJobs = r.freeJobs[:n-1]
		j.Held.Reset()
		*j = job{Req: model.Req{Held: j.Held}, gen: j.gen}
	} else {
		j = &job{}
	}
	j.t, j.call, j.Call, j.root, j.proxy, j.arrived = t, c, c.spec, c.root, c.proxy, now
	if p := c.proxy; p != nil {
		j.Session = &p.Session
		j.Sessionful = t.wcf && c.spec.Binding.Sessionful
	}
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
		j.granted()
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
		j.root.charge(results.BdExternal, now.Sub(j.phaseAt))
		j.next()
	case jkSubDone:
		j.subDone(arg.(*call))
	case jkRethread:
		j.root.charge(results.BdThread, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.Held.Take(model.HoldThread)
		j.afterCall()
	case jkRetry:
		if j.kind() != model.PhaseSession || j.wr.Waiting() {
			return // not (or no longer) waiting for a session someone else opens
		}
		j.root.charge(results.BdThrottle, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.advance()
	case jkRelock:
		j.root.charge(results.BdLock, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.Held.Take(model.HoldInstanceLock)
		j.afterCall()
	case jkHandoff:
		j.timer = sim.EventID{}
		j.root.charge(results.BdLock, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.granted()
	case jkResume:
		j.root.charge(results.BdThread, now.Sub(j.phaseAt))
		j.waited += now.Sub(j.phaseAt)
		j.Held.Take(model.HoldThread)
		j.pausedThread = false
		if j.need.Exec {
			j.startExec()
		}
		j.phase++
		j.advance()
	}
}

// pause gives the job's thread back while it waits for the instance lock:
// WCF pauses a MessageRpc that finds the lock taken (ConcurrencyBehavior
// queues a MessageRpcWaiter) and resumes it when the lock is released.
func (j *job) pause() {
	if !j.Held.Drop(model.HoldThread) {
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
		j.Held.Take(model.HoldThread)
		j.pausedThread = false
	}
	return true
}

// next moves past a completed step (or the decode/encode phase).
func (j *job) next() {
	if j.kind() == model.PhaseSteps {
		j.step++
	} else {
		j.phase++
	}
	j.advance()
}

// granted goes on once a slot the job waited for was handed to it.
func (j *job) granted() {
	n := j.need
	if j.t.cont != nil && j.handoff(n) {
		return
	}
	switch n.Act {
	case model.ActSession:
		// The session slot (stage 0) or the session's instance (stage 1)
		// was granted; openSession goes on from there.
		j.leaveListener()
		j.sessStage++
		j.advance()
		return
	case model.ActSteps:
		// a lock step
		j.Held.TakeLock(j.t.spec.Steps[j.step].Lock)
		j.step++
		j.advance()
		return
	}
	j.t.spec.Got(n, &j.Req, &j.t.st)
	if n.Pause && !j.resume() {
		return
	}
	if n.Exec {
		j.startExec()
	}
	j.phase++
	j.advance()
}

// wait queues the job on s; it reports whether the slot was taken at once.
func (j *job) wait(s *slots, cat int) bool {
	j.waitCat = cat
	j.phaseAt = j.t.r.e.Now()
	return j.wr.acquire(s, j, jkGranted, nil)
}

func (j *job) waitThread(p *threadPool, kind int32) bool {
	j.waitCat = results.BdThread
	j.phaseAt = j.t.r.e.Now()
	return p.acquire(&j.wr, j, kind, nil)
}

// handlerPool is the pool the operation runs on.
func (t *tierRT) handlerPool() *threadPool {
	if t.spec.RunsOnIO() {
		return t.io
	}
	return t.worker
}

// advance takes phases until one must wait: what each asks is the
// model's (model.Tier.Need), how to wait for it the simulator's.
func (j *job) advance() {
	t := j.t
	for !j.ended {
		n := t.spec.Need(j.phaseOf(), &j.Req, &t.st)
		if t.cont != nil {
			t.cont.contend(j, &n)
		}
		j.need = n
		switch n.Act {
		case model.ActAcquire:
			if !j.take(n) {
				return
			}
		case model.ActReuseWorker:
			j.thread = t.worker
			t.spec.Got(n, &j.Req, &t.st)
		case model.ActCPU:
			j.useCPU(n.CPU)
			return
		case model.ActSession:
			if !j.openSession() {
				return
			}
		case model.ActAccept:
			j.accept()
		case model.ActSteps:
			if !j.visit.InOp {
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
		case model.ActDone:
			j.finish(results.Completed)
			return
		case model.ActNegotiate:
			if !j.proxy.pend(t) {
				// QuotaExceededException: the client's negotiation fails
				// (SecurityNegotiationException).
				j.finish(results.Failed)
				return
			}
		case model.ActCloseSession:
			j.proxy.closeSession() // the Cancel ends the session
		}
		if n.Exec {
			j.startExec()
		}
		j.phase++
	}
}

// take starts waiting for what n asks; it reports whether it was granted
// at once (and recorded: model.Tier.Got).
func (j *job) take(n model.Need) bool {
	t := j.t
	var p *threadPool
	switch n.Res {
	case model.ResWorker:
		p = t.worker
	case model.ResHandler:
		p = t.handlerPool()
		j.thread = p
	}
	if p != nil {
		if n.Bounded && p.Rejects() {
			t.reject(j) // its first thread: the pool's queue is full
			return false
		}
		if !j.waitThread(p, jkGranted) {
			return false
		}
	} else if !j.wait(j.slotsOf(n.Res, n.Index), n.Cat) {
		if n.Pause {
			j.pause()
		}
		return false
	}
	t.spec.Got(n, &j.Req, &t.st)
	return true
}

// slotsOf is the simulator's slots of a resource (model.Throttles.Of).
func (j *job) slotsOf(r model.Res, i int) *slots {
	var session *slots
	if r == model.ResSessionLock {
		if j.proxy.lock == nil {
			j.proxy.lock = newSlots(j.t.r.e, 1)
		}
		session = j.proxy.lock
	}
	s, _ := j.t.Of(r, i, session)
	return s
}

// instanceLock is the instance lock the job took before decoding or
// after (model.Tier.InstanceLock), nil for none.
func (j *job) instanceLock(afterDecode bool) *slots {
	return j.slotsOf(j.t.spec.InstanceLock(afterDecode, j.Sessionful), 0)
}

// runStep starts the current step; it reports whether the step completed
// at once (so the caller moves on).
func (j *job) runStep() bool {
	t := j.t
	st := &t.spec.Steps[j.step]
	switch st.Kind {
	case model.StepCPU:
		d := t.demandSampler[j.step].Sample()
		if t.cont != nil {
			t.cont.allocate(t.spec.StepAlloc(j.step))
		}
		j.useCPU(d)
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
		if !j.wait(t.Locks[st.Lock], results.BdLock) {
			return false
		}
		j.Held.TakeLock(st.Lock)
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
	if j.Held.DropLock(l) {
		j.t.Locks[l].Release()
	}
}

func (j *job) useCPU(d time.Duration) {
	t := j.t
	j.cpuStart = t.r.e.Now()
	j.cpuNeed = d
	if t.cores != nil {
		// FCFS: wait for a core, then hold it for the whole demand.
		j.waitCat = results.BdCPUWait
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

// startExec, startOp and endOp count the request's execution and its
// operation (model.Visit).
func (j *job) startExec() {
	j.visit.StartExec(j.t, time.Duration(j.t.r.e.Now()), time.Duration(j.arrived))
}
func (j *job) startOp() { j.visit.StartOp(j.t, time.Duration(j.t.r.e.Now())) }
func (j *job) endOp()   { j.visit.EndOp(j.t, time.Duration(j.t.r.e.Now())) }

func (j *job) cpuDone(now sim.Time) {
	el := now.Sub(j.cpuStart)
	j.root.charge(results.BdCPU, j.cpuNeed)
	if el > j.cpuNeed {
		j.root.charge(results.BdCPUWait, el-j.cpuNeed)
	}
	if j.orphaned() && j.t.r.measuring {
		j.t.ends.Wasted += j.cpuNeed
	}
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
	if t.spec.WCF == nil || p == nil || !j.Sessionful || p.Open {
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
			// A new connection through the netTcp listener: it waits among
			// its pending and backlogged connections, or is refused when
			// they are full.
			if listens, refused := t.spec.Listens(&j.Call.Binding, t.sessions.Free(), t.st.ListenWaiting); refused {
				t.reject(j)
				return false
			} else if listens {
				j.inListen = true
				t.st.ListenWaiting++
				t.lv[model.LvListenerWaiting].Set(t.r.e.Now(), float64(t.st.ListenWaiting))
			}
			if !j.wait(t.sessions, results.BdThrottle) {
				return false
			}
			j.leaveListener()
			j.sessStage = 1
		case 1:
			if t.spec.WCF.Instancing == model.PerSession {
				if !j.wait(t.Instances, results.BdThrottle) {
					return false
				}
				p.Instance = true
			}
			j.sessStage = 2
		case 2:
			p.sessionTier, p.opener = t, nil
			p.Opened(t.spec.WCF.Instancing == model.PerSession)
			p.unpend() // accepted: no longer a pending security session
			if p.PerCall {
				j.Held.Take(model.HoldSession)
			}
			p.wakeSessionWaiters()
			return true
		}
	}
}

// keepsSession reports whether a per-call proxy's session outlives its
// job (model.Binding.KeepsSession).
func (j *job) keepsSession() bool { return j.Call.Binding.KeepsSession(j.orphaned()) }

// clientGone is the job's client giving up (timeout or abort). A call
// still waiting for its WCF session is dropped: its channel was never
// accepted, and the aborted connection leaves the listener's backlog
// (docs/dotnet.md §4, §5). Work already under way goes on, orphaned.
func (j *job) clientGone() {
	if j.ended || j.kind() != model.PhaseSession {
		return
	}
	p := j.proxy
	if p == nil || p.Open || !j.Call.Binding.DropsWaitingCall() {
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
	if p.Instance && !p.Open {
		p.Instance = false
		t.Instances.Release()
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
		t.st.ListenWaiting--
		t.lv[model.LvListenerWaiting].Set(t.r.e.Now(), float64(t.st.ListenWaiting))
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
	if t.spec.IsASPNet() {
		j.visit.Answered(t, time.Duration(t.r.e.Now()))
		if j.Held.Drop(model.HoldWorker) {
			t.worker.Release()
		}
		if j.Held.Drop(model.HoldAdmission) {
			t.st.Executing--
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
	thread, lock := t.spec.GivesBackDuringCalls()
	if thread && j.Held.Drop(model.HoldThread) {
		j.thread.Release()
		t.drain()
	}
	if lock && j.Held.Drop(model.HoldInstanceLock) {
		j.instanceLock(true).Release()
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
	thread, lock := t.spec.GivesBackDuringCalls()
	if thread && !j.Held.Holds(model.HoldThread) {
		if !j.waitThread(j.thread, jkRethread) {
			return
		}
		j.Held.Take(model.HoldThread)
	}
	if lock && !j.Held.Holds(model.HoldInstanceLock) {
		if l := j.instanceLock(true); l != nil {
			j.waitCat = results.BdLock
			j.phaseAt = t.r.e.Now()
			if !j.wr.acquire(l, j, jkRelock, nil) {
				return
			}
			j.Held.Take(model.HoldInstanceLock)
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
	case model.HoldInstanceLock, model.HoldChannel:
		j.instanceLock(k == model.HoldInstanceLock).Release()
	case model.HoldThread:
		j.thread.Release()
	case model.HoldLock, model.HoldGate, model.HoldCallSlot, model.HoldInstance:
		s, _ := t.Holding(k, i)
		s.Release()
	case model.HoldSession:
		if !j.keepsSession() {
			j.proxy.closeSession()
		}
	case model.HoldWorker:
		t.worker.Release()
	case model.HoldAdmission:
		t.st.Executing--
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
	// The request's counters end first, then it gives back what it
	// holds (real mode's order; here all is at one instant).
	j.visit.Leave(t, time.Duration(now), t.spec.MemoryPerRequest)
	j.abandonSession()
	j.Held.Release(j)
	if j.holdCore {
		t.cores.Release()
		t.cpuOut()
	}
	if o == results.Completed && t.entry && j.Msg == model.MsgCall {
		t.r.watch.served++
	}
	if o == results.Completed && t.r.measuring && j.Msg == model.MsgCall {
		t.ends.Done(now.Sub(j.arrived), j.waited > 0)
		if t.entry {
			t.r.entryDone++
		}
	}
	if p := j.proxy; p != nil && j.Msg == model.MsgCall {
		if p.CallEnded(time.Duration(now)) {
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
