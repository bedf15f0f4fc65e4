package model

import "time"

// TierState is the state of a tier at run time that the walk's decisions
// read and change (Tier.Need, Tier.Got, the admission): the same fields in
// both executors (real mode guards them with the tier's mutex).
type TierState struct {
	Executing      int  // admitted and not ended (HoldAdmission)
	SingleInstance bool // the Single instance exists
	SingleCreated  bool // and a call has paid its creation (WCF.InstanceCPU)
	Pending        int  // security sessions negotiated and not yet opened (WCF.MaxPendingSessions)
	ListenWaiting  int  // connections waiting in the netTcp listener for a session (WCF.Listener)
}

// Req is what the walk's decisions know of one request in a tier: how it
// was called, what it holds, its proxy's session.
type Req struct {
	Msg      MsgKind // a call, or a negotiation leg or close of its proxy (WalkOf)
	Last     bool    // MsgNegotiate: the negotiation's last leg, which issues the token
	Call     *Call   // how it was called (binding, sizes)
	ExtraCPU time.Duration
	// Sessionful: it runs in its proxy's WCF session (a sessionful binding
	// into a WCF tier), whose server side is Session.
	Sessionful bool
	Session    *Session
	Held       Holdings
}

// createsInstance reports whether r is the call that creates its service
// instance (WCF.InstanceCPU): every call PerCall or without a session, a
// session's first, the singleton's first.
func (st *TierState) createsInstance(t *Tier, r *Req) bool {
	switch {
	case t.WCF.Instancing == SingleInstance:
		if st.SingleCreated {
			return false
		}
		st.SingleCreated = true
		return true
	case t.WCF.Instancing == PerSession && r.Sessionful:
		if r.Session.Created {
			return false
		}
		r.Session.Created = true
		return true
	}
	return true
}

// Admit counts r admitted: executing, by the admission rule, until it
// gives HoldAdmission back.
func (st *TierState) Admit(r *Req) {
	st.Executing++
	r.Held.Take(HoldAdmission)
}
