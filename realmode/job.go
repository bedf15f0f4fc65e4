package realmode

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// job is one request inside a tier, from arrival to reply: one goroutine
// that takes the tier's walk phase by phase, waiting where the phase asks
// (model.Tier.Need), then gives back what it holds in the reverse of the
// walk's order (model.Holdings).
type job struct {
	t      *tierRT
	id     uint64
	root   *rootReq
	parent *job
	reqCtx context.Context // done when the caller stopped waiting
	ctx    context.Context // the job's own: ends at an abort or the run's end
	cancel context.CancelCauseFunc

	// Req is what the walk's decisions know of it: how it was called, what
	// it holds, its proxy's session (sess, the server's state of it).
	model.Req
	sess *sessState
	user *user // a load agent's job: the user it calls for

	startedAt time.Duration // real instant of admission (executionTimeout)
	ended     atomic.Bool

	// visit is its passage through the tier's counters; arrived the
	// simulated instant it arrived.
	visit   model.Visit
	arrived time.Duration
	// A one-way request (model.WCF.OneWay): acked is closed when it is
	// answered (PhaseAccept), accepted set.
	acked                  chan struct{}
	accepted               atomic.Bool
	queued, threadRejected bool

	workerW *waiter // its worker thread, asked for at admission and not yet granted
	thread  *pool
	conc    *sem // the instance lock it takes, once known
}

var (
	errAborted = errors.New("aborted by executionTimeout")
	errStopped = errors.New("run ended")
)

// orphaned reports whether nobody waits for this job's reply any more.
func (j *job) orphaned() bool {
	if j.accepted.Load() {
		return false // a one-way operation: answered, still wanted
	}
	if j.reqCtx.Err() != nil {
		return true
	}
	return j.parent != nil && j.parent.orphaned()
}

func (t *tierRT) handlerPool() *pool {
	if t.spec.RunsOnIO() {
		return t.io
	}
	return t.worker
}

// charge adds the real time since t0 to a category of the root's breakdown.
func (j *job) charge(cat int, t0 time.Duration) {
	j.root.charge(cat, j.t.rt.clk.now()-t0)
}

// waitFor runs an acquisition and charges its wait to cat.
func (j *job) waitFor(cat int, acquire func(context.Context) error) error {
	t0 := j.t.rt.clk.now()
	err := acquire(j.ctx)
	j.charge(cat, t0)
	return err
}

// run takes the phases after admission and the steps. A non-nil context
// error (abort, end of run) ends the job as failed.
func (j *job) run() results.Outcome {
	if j.threadRejected {
		return j.t.countRejected() // the worker pool's bounded queue was full
	}
	walk := j.t.walk
	if j.Msg != model.MsgCall {
		walk = j.t.msgWalk[j.Msg-1]
	}
	for _, ph := range walk {
		if o, end := j.take(ph); end {
			return o
		}
	}
	return results.Completed
}

// take takes one phase of the tier's walk: what it asks is the model's
// (model.Tier.Need), the same as the simulator's job takes; end reports
// that the request ended there, with outcome o.
func (j *job) take(ph model.Phase) (o results.Outcome, end bool) {
	t := j.t
	t.mu.Lock()
	n := t.spec.Need(ph, &j.Req, &t.st)
	if t.cont != nil {
		t.cont.contend(j, ph, &n)
	}
	var s *sem
	var w *waiter
	if n.Act == model.ActAcquire && n.Res != model.ResWorker && n.Res != model.ResHandler {
		// A permit: asked for under the lock that took the decision, as
		// the simulator takes both at one instant.
		s = j.semOf(n.Res, n.Index)
		if n.Hold == model.HoldChannel || n.Hold == model.HoldInstanceLock {
			j.conc = s
		}
		if w = s.begin(); w == nil {
			t.spec.Got(n, &j.Req, &t.st)
		}
	}
	t.mu.Unlock()
	switch n.Act {
	case model.ActAcquire:
		if o, end := j.acquire(n, s, w); end {
			return o, true
		}
	case model.ActReuseWorker:
		j.thread = t.worker
		t.spec.Got(n, &j.Req, &t.st)
	case model.ActCPU:
		if j.useCPU(n.CPU) != nil {
			return results.Failed, true
		}
	case model.ActSession:
		// The proxy's session: opened by the first call on the proxy,
		// waited for by the others.
		if err := j.openSession(); err != nil {
			if errors.Is(err, errRefused) {
				return t.countRejected(), true
			}
			if errors.Is(err, errClientGone) {
				// The client gave up while the call waited for its session:
				// its channel was never accepted; dropped.
				t.countAborted()
			}
			return results.Failed, true
		}
	case model.ActAccept:
		j.accept()
	case model.ActSteps:
		return j.steps()
	case model.ActDone:
		return results.Completed, true
	case model.ActNegotiate:
		t.mu.Lock()
		ok := t.pendLocked(j.sess)
		t.mu.Unlock()
		if !ok {
			return results.Failed, true // QuotaExceeded: SecurityNegotiationException at the client
		}
	case model.ActCloseSession:
		t.mu.Lock()
		t.closeSessionLocked(j.sess) // the Cancel ends the session
		t.mu.Unlock()
	}
	if n.Exec {
		j.startExec()
	}
	return 0, false
}

// acquire waits for what n asks (model.Need): a thread of a pool (refused
// when its bounded queue is full), or the permit of s that take asked for
// (w: nil if it was granted at once), giving the thread back meanwhile
// when n says so (Pause).
func (j *job) acquire(n model.Need, s *sem, w *waiter) (o results.Outcome, end bool) {
	t := j.t
	switch n.Res {
	case model.ResWorker:
		// The worker thread's wait began at admission (admitLocked).
		if j.workerW != nil {
			err := j.waitFor(n.Cat, func(ctx context.Context) error { return t.worker.wait(ctx, j.workerW) })
			// The wait is over either way: when it failed, the wait already
			// gave the place or the granted thread back, so finish must not
			// do it a second time.
			j.workerW = nil
			if err != nil {
				return results.Failed, true
			}
		}
	case model.ResHandler:
		p := t.handlerPool()
		j.thread = p
		var tw *waiter
		if n.Bounded {
			var rejected bool
			if tw, rejected = p.beginBounded(); rejected {
				return t.countRejected(), true // its first thread: the pool's queue is full
			}
		} else {
			tw = p.begin()
		}
		j.queued = j.queued || tw != nil
		if err := j.waitFor(n.Cat, func(ctx context.Context) error { return p.wait(ctx, tw) }); err != nil {
			return results.Failed, true
		}
	default:
		if w == nil {
			return 0, false // granted at once, and recorded (take)
		}
		j.queued = true
		paused := n.Pause && j.Held.Drop(model.HoldThread)
		if paused {
			j.thread.release()
			t.drain()
		}
		if err := j.waitFor(n.Cat, func(ctx context.Context) error { return s.wait(ctx, w) }); err != nil {
			return results.Failed, true
		}
		if j.handoff(n.Res, -1) != nil {
			return results.Failed, true
		}
		t.mu.Lock()
		t.spec.Got(n, &j.Req, &t.st)
		t.mu.Unlock()
		if paused {
			if err := j.waitFor(results.BdThread, j.queueThread(j.thread)); err != nil {
				return results.Failed, true
			}
			j.Held.Take(model.HoldThread)
		}
		return 0, false
	}
	t.mu.Lock()
	t.spec.Got(n, &j.Req, &t.st)
	t.mu.Unlock()
	return 0, false
}

// semOf is real mode's semaphore of a resource (t.mu held;
// model.Throttles.Of).
func (j *job) semOf(r model.Res, i int) *sem {
	var session *sem
	if r == model.ResSessionLock {
		if j.sess.lock == nil {
			j.sess.lock = newSem(1)
		}
		session = j.sess.lock
	}
	s, _ := j.t.Of(r, i, session)
	return s
}

// steps runs the operation's steps.
func (j *job) steps() (o results.Outcome, end bool) {
	t := j.t
	j.visit.StartOp(t, t.simNow())
	for si := range t.spec.Steps {
		st := &t.spec.Steps[si]
		switch st.Kind {
		case model.StepCPU:
			d := t.demand[si].sample()
			if t.cont != nil {
				t.cont.allocate(t.spec.StepAlloc(si))
			}
			if j.useCPU(d) != nil {
				return results.Failed, true
			}
		case model.StepWait:
			d := t.demand[si].sample()
			t0 := t.rt.clk.now()
			err := t.rt.clk.sleep(j.ctx, d)
			j.charge(results.BdExternal, t0)
			if err != nil {
				return results.Failed, true
			}
		case model.StepLock:
			s, waited := t.Locks[st.Lock], false
			if err := j.waitFor(results.BdLock, func(ctx context.Context) error {
				w := s.begin()
				if w != nil {
					j.queued, waited = true, true
				}
				return s.wait(ctx, w)
			}); err != nil {
				return results.Failed, true
			}
			j.Held.TakeLock(st.Lock)
			if waited && j.handoff(model.ResNone, si) != nil {
				return results.Failed, true
			}
		case model.StepUnlock:
			if j.Held.DropLock(st.Lock) {
				t.Locks[st.Lock].release()
			}
		case model.StepCall:
			o, err := j.call(st.Call)
			if err != nil {
				return results.Failed, true
			}
			if o != results.Completed {
				return o, true
			}
		}
	}
	j.visit.EndOp(t, t.simNow())
	return 0, false
}

// startExec is the request leaving the queues (model.Visit.StartExec).
func (j *job) startExec() { j.visit.StartExec(j.t, j.t.simNow(), j.arrived) }

// queue is s.acquire, noting whether the job had to wait (P(wait)).
func (j *job) queue(s *sem) func(context.Context) error {
	return func(ctx context.Context) error {
		w := s.begin()
		if w != nil {
			j.queued = true
		}
		return s.wait(ctx, w)
	}
}

// queueThread is queue for a thread pool.
func (j *job) queueThread(p *pool) func(context.Context) error {
	return func(ctx context.Context) error {
		w := p.begin()
		if w != nil {
			j.queued = true
		}
		return p.wait(ctx, w)
	}
}

// useCPU runs a CPU demand of the job on its tier; work done for nobody
// (orphaned) is counted as wasted, as the simulator does.
func (j *job) useCPU(d time.Duration) error {
	err := j.t.useCPU(j.ctx, d, j.root)
	if err == nil && j.orphaned() && j.t.rt.measuring.Load() {
		j.t.cmu.Lock()
		j.t.ends.Wasted += d
		j.t.cmu.Unlock()
	}
	return err
}

// call makes a downstream call: what the handler gives back while it
// waits (an asynchronous handler its thread, a reentrant instance its
// lock: model.Tier.GivesBackDuringCalls) is taken back before the job goes
// on. The error is the job's own context ending (abort or end of run).
func (j *job) call(spec *model.Call) (results.Outcome, error) {
	t := j.t
	rt := t.rt
	thread, lock := t.spec.GivesBackDuringCalls()
	if thread && j.Held.Drop(model.HoldThread) {
		j.thread.release()
		t.drain()
	}
	if lock && j.Held.Drop(model.HoldInstanceLock) {
		j.conc.release()
	}
	o, gone := rt.doCall(j.ctx, rt.callOf[spec], t, j, j.user, j.root)
	if gone {
		return results.Failed, context.Cause(j.ctx)
	}
	if thread && !j.Held.Holds(model.HoldThread) {
		if err := j.waitFor(results.BdThread, j.queueThread(j.thread)); err != nil {
			return results.Failed, err
		}
		j.Held.Take(model.HoldThread)
	}
	if lock && !j.Held.Holds(model.HoldInstanceLock) && j.conc != nil {
		if err := j.waitFor(results.BdLock, j.queue(j.conc)); err != nil {
			return results.Failed, err
		}
		j.Held.Take(model.HoldInstanceLock)
	}
	return o, nil
}

// accept answers a one-way request (PhaseAccept): on an ASP.NET host the
// request ends there, giving back its worker thread and its admission;
// the handler replies (acked) while the walk goes on.
func (j *job) accept() {
	t := j.t
	if t.spec.IsASPNet() {
		j.visit.Answered(t, t.simNow())
		if j.Held.Drop(model.HoldWorker) {
			t.worker.release()
		}
		t.mu.Lock()
		if j.Held.Drop(model.HoldAdmission) {
			t.st.Executing--
		}
		t.mu.Unlock()
		t.drain()
	}
	if j.acked != nil {
		j.accepted.Store(true)
		close(j.acked)
		j.acked = nil
	}
}

// Give gives back one of the job's holdings (model.Holdings.Release).
func (j *job) Give(k model.Hold, i int) {
	t := j.t
	switch k {
	case model.HoldInstanceLock, model.HoldChannel:
		j.conc.release()
	case model.HoldThread:
		j.thread.release()
	case model.HoldLock, model.HoldGate, model.HoldCallSlot, model.HoldInstance:
		s, _ := t.Holding(k, i)
		s.release()
	case model.HoldSession:
		if !j.keepsSession() {
			t.mu.Lock()
			t.closeSessionLocked(j.sess)
			t.mu.Unlock()
		}
	case model.HoldWorker:
		t.worker.release()
	case model.HoldAdmission:
		t.mu.Lock()
		t.st.Executing--
		t.mu.Unlock()
	}
}

// finish gives back what the job holds, in the reverse of the walk's
// order (model.Holdings), and records the end.
func (j *job) finish(o results.Outcome) results.Outcome {
	t := j.t
	rt := t.rt
	j.ended.Store(true)
	if j.workerW != nil {
		// Still queued for its worker (abort or end of run): give up the
		// place, or the thread if it was granted meanwhile.
		t.worker.mu.Lock()
		j.workerW.Cancel()
		t.worker.mu.Unlock()
		j.workerW = nil
	}
	// The request's counters end first, then it gives back what it
	// holds: whoever gets those next counts from then on.
	now := t.simNow()
	j.visit.Leave(t, now, t.spec.MemoryPerRequest)
	j.Held.Release(j)
	if o == results.Completed && t.entry && j.Msg == model.MsgCall {
		rt.watch.served.Add(1)
	}
	if o == results.Completed && rt.measuring.Load() && j.Msg == model.MsgCall {
		t.cmu.Lock()
		t.ends.Done(now-j.arrived, j.queued)
		t.cmu.Unlock()
		if t.entry {
			rt.entryDone.Add(1)
		}
	}
	j.leaveSession()
	t.drain()
	rt.jobs.Delete(j.id)
	j.cancel(nil)
	return o
}
