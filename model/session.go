package model

import "time"

// Session is a client proxy's WCF session as its service sees it (a
// sessionful binding: netTcp, wsHttp with a secure session, named pipes),
// the same state and rules in both executors (real mode locks it with its
// tier). The first call on a proxy opens the session: a
// MaxConcurrentSessions slot and, PerSession, a MaxConcurrentInstances
// slot that the session keeps; later calls on the proxy, and calls that
// arrive while it is being opened, wait for it.
type Session struct {
	Open     bool // holds a MaxConcurrentSessions slot
	Instance bool // holds its PerSession instance's MaxConcurrentInstances slot
	// Created: its PerSession service instance was created
	// (WCF.InstanceCPU paid).
	Created bool
	// Pending: its security session was negotiated and is not yet opened
	// (WCF.MaxPendingSessions).
	Pending bool
	Jobs    int // calls in progress on the proxy
	// Closed: the client closed or aborted the proxy; Aborted: aborted,
	// unseen by the server (after a timeout or a fault); LastActive: when
	// its last call ended.
	Closed, Aborted bool
	LastActive      time.Duration
}

// Opened is the session opened by the call that opened it (PerSession:
// with its instance); it is then no longer a pending security session
// (Unpend).
func (s *Session) Opened(perSession bool) { s.Open, s.Instance = true, perSession }

// Close ends the session; it reports the slots to give back (its session
// slot, its instance's).
func (s *Session) Close() (session, instance bool) {
	if !s.Open {
		return false, false
	}
	instance = s.Instance
	s.Open, s.Instance = false, false
	return true, instance
}

// ClientClosed is the client closing the proxy, or aborting it (aborted:
// no message tells the server); it reports whether the session settles
// now (Settle), no call being in progress on it.
func (s *Session) ClientClosed(aborted bool) (settle bool) {
	if !s.Closed && aborted {
		s.Aborted = true
	}
	s.Closed = true
	return s.Jobs == 0
}

// CallEnded is a call on the proxy ending at now; it reports whether the
// session settles now (a closed proxy's last call).
func (s *Session) CallEnded(now time.Duration) (settle bool) {
	s.Jobs--
	s.LastActive = now
	return s.Closed && s.Jobs == 0
}

// Settle is a closed proxy's session once no call is in progress on it: a
// closed proxy's session ends now (closeNow); an aborted one's, unseen by
// a server that waits for more messages, at its last message plus
// idleAfter (the binding's SessionIdleTimeout), now if that has passed.
func (s *Session) Settle(now, idleAfter time.Duration) (closeNow bool, at time.Duration) {
	if !s.Aborted || idleAfter <= 0 || !s.Open {
		return true, now
	}
	at = s.LastActive + idleAfter
	return at <= now, at
}

// Pend is a negotiation's last leg issuing the session's token at a tier
// of state st: refused (false) when the tier already has maxPending
// sessions negotiated and not yet opened (DecideNegotiation).
func (s *Session) Pend(st *TierState, maxPending int) bool {
	if !DecideNegotiation(st.Pending, maxPending) {
		return false
	}
	if !s.Pending {
		s.Pending = true
		st.Pending++
	}
	return true
}

// Unpend ends the session's pending state (opened, gone, or expired); it
// reports whether it was pending (its expiry timer then goes).
func (s *Session) Unpend(st *TierState) bool {
	if !s.Pending {
		return false
	}
	s.Pending = false
	st.Pending--
	return true
}

// KeepsSession reports whether a per-call proxy's session outlives its
// call: its client closes it with a message of its own (CloseMessage), or
// has aborted it unseen by the server (orphaned, SessionIdleTimeout),
// which then waits for the session's inactivity timeout (Settle).
func (b *Binding) KeepsSession(orphaned bool) bool {
	return b.CloseMessage || (b.SessionIdleTimeout > 0 && orphaned)
}

// DropsWaitingCall reports whether a call still waiting for its session is
// dropped when its client gives up: its channel was never accepted, and
// the aborted connection leaves the listener's backlog. Over HTTP
// (SessionIdleTimeout) the server never learns that the client aborted:
// the call stays queued, orphaned.
func (b *Binding) DropsWaitingCall() bool { return b.SessionIdleTimeout <= 0 }

// Listens reports whether a call opening a session at the tier waits in
// its netTcp listener first (its binding goes through it and no session
// slot is free), and refused whether the listener refuses it: its pending
// connections and backlog are full (DecideListener). waiting counts the
// connections already waiting there.
func (t *Tier) Listens(b *Binding, sessionsFree bool, waiting int) (listens, refused bool) {
	if !b.Listener || sessionsFree {
		return false, false
	}
	return true, DecideListener(&t.WCF.Listener, waiting) == DecisionReject
}
