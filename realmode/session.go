package realmode

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// WCF sessions: model.Session's state and rules, kept by the target tier
// under its lock. The client names its proxy in a header of every request
// (hdrProxy); the target tier keeps the proxy's server-side state in its
// session map.
//
// A per-call proxy's session ends with its job. A long-lived proxy's
// session ends when the client has closed or aborted the proxy and no job
// is in flight on it. Client and servers share one process, so the client
// tells the target of a proxy's close directly (tierRT.closeProxy), as
// bookkeeping, like the root and job registries (rt.roots, rt.jobs) that
// the headers refer to: no network message stands for it, as none does in
// the model.

const (
	hdrProxy   = "X-Tsim-Proxy"   // the client proxy (sessionful WCF bindings): its id
	hdrPerCall = "X-Tsim-PerCall" // "1": the proxy lives for one call
)

// errClientGone is the cause of a session wait ended by the client giving
// up (timeout or abort): the request is dropped
// (model.Binding.DropsWaitingCall).
var errClientGone = errors.New("client gone while waiting for its session")

// errRefused is a new connection the netTcp listener refuses: its pending
// connections and backlog are full (model.DecideListener).
var errRefused = errors.New("connection refused: the netTcp listener's pending connections and backlog are full")

// sessState is one client proxy as its target tier sees it. Its fields
// are guarded by the tier's mu.
type sessState struct {
	model.Session
	id      uint64
	perCall bool
	opener  *job // the job opening the session, if one is
	// ready is closed when the opener has opened the session or given up;
	// the jobs waiting for it then look again.
	ready chan struct{}
	lock  *sem // PerSession + ConcurrencyMode Single/Reentrant: the session's instance lock
	// idle is the session's inactivity timer (model.Session.Settle;
	// LastActive is real time); pendTimer the expiry of its pending
	// security session (WCF.PendingSessionTimeout).
	idle      *time.Timer
	pendTimer *time.Timer
	idleAfter time.Duration // the binding's SessionIdleTimeout
}

// sessionful reports whether calls through cs have WCF sessions at their
// target.
func (cs *callStat) sessionful() bool {
	return cs.spec.Binding.Sessionful && cs.rt.top.Tiers[cs.spec.Target].WCF != nil
}

// setProxyHeader names the attempt's proxy for the target.
func (cs *callStat) setProxyHeader(h http.Header, p *proxyInst) {
	h.Set(hdrProxy, strconv.FormatUint(p.id, 10))
	if p.PerCall {
		h.Set(hdrPerCall, "1")
	}
}

// closeInstLocked marks p closed or aborted by the client; ps.mu is held. It reports whether the target must be
// told (closeInst), which the caller does once it has let go of ps.mu.
func (cs *callStat) closeInstLocked(p *proxyInst) bool {
	if p.Dead {
		return false
	}
	p.Dead = true
	return cs.sessionful()
}

// closeInst tells the target that the client closed the proxy p, or
// aborted it (model.Session.ClientClosed).
func (cs *callStat) closeInst(p *proxyInst, aborted bool) {
	cs.closeProxyAt(p.id, aborted)
}

// sessionFor registers a job on its proxy's state, creating it at the
// proxy's first request.
func (t *tierRT) sessionFor(id uint64, perCall bool, idle time.Duration, msg model.MsgKind) *sessState {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sessMap[id]
	if s == nil {
		s = &sessState{id: id, perCall: perCall, idleAfter: idle}
		t.sessMap[id] = s
	}
	if msg == model.MsgCall {
		s.Jobs++ // a negotiation leg or a close holds nothing on the session
	}
	return s
}

// closeProxy is the client closing (or aborting) a long-lived proxy: its
// session ends now if no job is in flight on it, else when the last ends.
// A request on the proxy may still be on its way: the state is kept (dead)
// so that it finds the proxy closed, opens a session if it must and
// closes it at its end, as the model does for a job on a dead proxy.
func (t *tierRT) closeProxy(id uint64, aborted bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.sessMap[id]
	if s == nil {
		s = &sessState{id: id}
		t.sessMap[id] = s
	}
	if s.ClientClosed(aborted) {
		t.settleLocked(s)
		if s.Pending && s.pendTimer == nil && t.spec.WCF != nil && t.spec.WCF.PendingSessionTimeout > 0 {
			// Negotiated, but the call that would open it never came.
			s.pendTimer = time.AfterFunc(t.rt.clk.toReal(t.spec.WCF.PendingSessionTimeout), func() {
				t.mu.Lock()
				defer t.mu.Unlock()
				if s.Jobs == 0 {
					t.unpendLocked(s)
				}
			})
		}
	}
}

// settleLocked is a closed proxy's last job ending (model.Session.Settle).
func (t *tierRT) settleLocked(s *sessState) {
	if s.idle != nil && s.Aborted && s.idleAfter > 0 && s.Open {
		return // its inactivity timer runs
	}
	now := t.rt.clk.now()
	closeNow, at := s.Settle(now, t.rt.clk.toReal(s.idleAfter))
	if closeNow {
		t.closeSessionLocked(s)
		return
	}
	s.idle = time.AfterFunc(at-now, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if s.Jobs == 0 {
			t.closeSessionLocked(s) // receiveTimeout: the idle session is dropped
		}
	})
}

// pendLocked counts s's security session pending (its token issued); it
// reports false when the tier has WCF.MaxPendingSessions already
// (model.Session.Pend).
func (t *tierRT) pendLocked(s *sessState) bool {
	return s.Pend(&t.st, t.spec.WCF.MaxPendingSessions)
}

// unpendLocked ends s's pending state (model.Session.Unpend).
func (t *tierRT) unpendLocked(s *sessState) {
	if !s.Unpend(&t.st) {
		return
	}
	if s.pendTimer != nil {
		s.pendTimer.Stop()
		s.pendTimer = nil
	}
}

// closeSessionLocked ends the proxy's server session, if any
// (model.Session.Close).
func (t *tierRT) closeSessionLocked(s *sessState) {
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	if session, instance := s.Close(); session {
		t.sessions.release()
		if instance {
			t.Instances.release()
		}
	}
}

// leaveSession is a job's end on its proxy: a per-call proxy's session
// ends with its job (model.HoldSession), a closed proxy's with its last job.
func (j *job) leaveSession() {
	s := j.sess
	if s == nil || j.Msg != model.MsgCall {
		return
	}
	t := j.t
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.CallEnded(t.rt.clk.now()) {
		t.settleLocked(s)
	}
	if s.perCall && s.Jobs == 0 && s.opener == nil && !s.Open && !s.Pending {
		// A per-call proxy carries one call: nothing will come on it again.
		delete(t.sessMap, s.id)
	}
}

// keepsSession reports whether a per-call proxy's session outlives its job
// (model.Binding.KeepsSession).
func (j *job) keepsSession() bool { return j.Call.Binding.KeepsSession(j.orphaned()) }

// openSession makes sure the job's proxy has a server session
// (model.Session). It returns errClientGone when the client gave up
// while the job waited for the session (the caller drops the request),
// or the job's own context's cause.
func (j *job) openSession() error {
	t := j.t
	s := j.sess
	if !j.Sessionful {
		return nil
	}
	// The wait ends when the job's context ends or its client gives up.
	// A client that had already gone when the job got here (while it
	// waited for admission or a worker thread) leaves it orphaned, not
	// dropped: the model drops only a call waiting for its session at the
	// instant its client goes.
	ctx, cancel := context.WithCancelCause(j.ctx)
	defer cancel(nil)
	if j.reqCtx.Err() == nil && j.Call.Binding.DropsWaitingCall() {
		stop := context.AfterFunc(j.reqCtx, func() { cancel(errClientGone) })
		defer stop()
	}
	for {
		t.mu.Lock()
		if s.Open {
			t.mu.Unlock()
			return nil
		}
		if s.opener != nil {
			// Another call on the proxy is opening it: wait, then look again.
			ch := s.ready
			t.mu.Unlock()
			t0 := t.rt.clk.now()
			select {
			case <-ch:
				j.charge(results.BdThrottle, t0)
				continue
			case <-ctx.Done():
				j.charge(results.BdThrottle, t0)
				return context.Cause(ctx)
			}
		}
		s.opener = j
		s.ready = make(chan struct{})
		t.mu.Unlock()
		break
	}
	// A new connection through the netTcp listener: it waits among the
	// listener's pending and backlogged connections, or is refused when
	// they are full (model.Tier.Listens).
	t.mu.Lock()
	listen, refused := t.spec.Listens(&j.Call.Binding, t.sessions.free(), t.st.ListenWaiting)
	if refused {
		s.opener = nil
		close(s.ready)
		t.mu.Unlock()
		return errRefused
	}
	if listen {
		t.st.ListenWaiting++
		t.lv[model.LvListenerWaiting].add(1)
	}
	t.mu.Unlock()
	err := j.waitFor2(ctx, results.BdThrottle, t.sessions.acquire)
	if listen {
		t.mu.Lock()
		t.st.ListenWaiting--
		t.lv[model.LvListenerWaiting].add(-1)
		t.mu.Unlock()
	}
	gotSession := err == nil
	if err == nil && t.spec.WCF.Instancing == model.PerSession {
		err = j.waitFor2(ctx, results.BdThrottle, t.Instances.acquire)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		// The opener leaves before the session is open: the slots it took go back and the waiters try
		// again.
		if gotSession {
			t.sessions.release()
		}
		t.unpendLocked(s) // its channel went away unopened
		s.opener = nil
		close(s.ready)
		return err
	}
	s.opener = nil
	s.Opened(t.spec.WCF.Instancing == model.PerSession)
	t.unpendLocked(s) // accepted: no longer a pending security session
	if s.perCall {
		j.Held.Take(model.HoldSession)
	}
	close(s.ready)
	return nil
}

// waitFor2 is waitFor under another context than the job's.
func (j *job) waitFor2(ctx context.Context, cat int, acquire func(context.Context) error) error {
	t0 := j.t.rt.clk.now()
	err := acquire(ctx)
	j.charge(cat, t0)
	if err != nil {
		return context.Cause(ctx)
	}
	return nil
}
