package model

import (
	"fmt"
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// The walk: what a request does in a tier after admission, in order. Both
// executors follow it — the simulator's job (job.go) as an event-driven
// state machine, real mode's (realmode/tier.go) as one goroutine with
// blocking waits — so a mechanism added here is taken by both. Each phase
// takes something and holds it until the request ends, which gives it
// back in the reverse order; the steps phase runs the operation.
//
// What a phase means at run time stays with each executor (a slot in the
// calendar, a semaphore with a context); what the walk fixes is which
// phases a tier's requests take and in what order, from the tier's
// settings alone. Conditions that depend on the request (its binding is
// sessionful, its proxy already has a session) are checked by the
// executors inside the phase.

// PhaseKind is what a phase of the walk takes.
type PhaseKind uint8

const (
	// PhaseAdmission: the tier's admission (the ASP.NET request queue,
	// MaxConcurrentRequestsPerCPU, a thread server's accept queue), which
	// each executor decides with the shared functions of admit.go before
	// the rest of the walk; a request waiting there is in this phase.
	PhaseAdmission PhaseKind = iota
	// PhaseWorker: the ASP.NET pipeline. The request starts executing;
	// the synchronous module or a page holds a worker thread for it
	// (Tier.HoldsWorker).
	PhaseWorker
	// PhaseSession: the proxy's WCF session on a sessionful binding, with
	// a MaxConcurrentSessions slot (and its PerSession instance).
	PhaseSession
	// PhaseInstance: a MaxConcurrentInstances slot, for PerCall instancing,
	// PerSession without a session, or the Single instance's creation.
	PhaseInstance
	// PhaseCallSlot: a MaxConcurrentCalls slot.
	PhaseCallSlot
	// PhaseChannel: a session's PerSession instance with ConcurrencyMode
	// Single, one call at a time, taken before the message is decoded:
	// WCF does not pump such a channel concurrently
	// (ConcurrencyBehavior.IsConcurrent is false for Single with a
	// session), so the session's next message is read only once the call
	// before it ended.
	PhaseChannel
	// PhaseConcurrency: an instance lock taken after the message was
	// decoded (see Walk): the singleton's (InstanceContextMode Single,
	// ConcurrencyMode Single or Reentrant), or a session's PerSession
	// instance's with ConcurrencyMode Reentrant (its channel is pumped
	// concurrently). A request that must wait for it gives its thread
	// back meanwhile and takes one again once it holds the lock.
	PhaseConcurrency
	// PhaseActivate: CPU to create the service instance, when this call
	// is the one that creates it (WCF.InstanceCPU; WCF's
	// EnsureServiceInstance, inside the lock), and a singleton's per-call
	// lock (WCF.SingleLockCPU).
	PhaseActivate
	// PhaseGate: one of the tier's counted gates (Tier.Gates), such as a
	// semaphore in the application's code.
	PhaseGate
	// PhaseThread: the thread the operation runs on (Tier.RunsOnIO says
	// which pool); an ASP.NET page keeps the worker it was given.
	PhaseThread
	// PhaseDecode: CPU to decode the request (binding cost, proxy set-up):
	// the channel's and the encoder's work.
	PhaseDecode
	// PhaseAccept: a one-way operation's answer (WCF.OneWay): the
	// caller's call ends; on an ASP.NET host the request ends there too,
	// giving back its worker thread and its admission.
	PhaseAccept
	// PhaseSteps: the operation's steps, in order.
	PhaseSteps
	// PhaseEncode: CPU to encode the reply.
	PhaseEncode
	// PhaseDone: the reply; the request ends completed.
	PhaseDone
	// PhaseNegotiate: a security negotiation leg's effect (MsgNegotiate):
	// the last leg issues the session's token, unless the tier already
	// has MaxPendingSessions sessions negotiated and not yet opened
	// (DecideNegotiation).
	PhaseNegotiate
	// PhaseSessionClose: a close message's effect (MsgClose): the proxy's
	// server session ends.
	PhaseSessionClose
)

var phaseNames = [...]string{"admission", "worker", "session", "instance", "call-slot", "channel", "concurrency", "activate", "gate", "thread", "decode", "accept", "steps", "encode", "done", "negotiate", "session-close"}

func (k PhaseKind) String() string { return phaseNames[k] }

// Phase is one phase of a tier's walk.
type Phase struct {
	Kind PhaseKind
	Gate int // PhaseGate: the index into Tier.Gates
}

// Walk returns the phases a request of the tier takes, in order, from
// PhaseAdmission to PhaseDone. Executors compute it once per run.
//
// A WCF singleton takes its instance lock after decoding the request and
// keeps it until the reply has been sent, as WCF's dispatcher does
// (ImmutableDispatchRuntime, .NET 3.0–4.8): the channel and the message
// encoder read the message before the ChannelHandler takes the call
// throttle; ProcessMessage2 takes the lock (LockInstance) — a request
// that finds it taken is paused and holds no thread; ProcessMessage41
// creates the service instance, ProcessMessage5 runs the operation,
// ProcessMessage9 encodes and sends the reply, and ProcessMessageCleanup
// releases the lock (UnlockInstance) after that. So decoding runs outside
// the lock, in parallel with the call holding it, and encoding inside.
// On a sessionful channel with ConcurrencyMode Single WCF reads one
// message at a time (ProcessMessage41 starts the next receive only for a
// concurrent channel): a PerSession instance's calls are serialised
// decoding included (PhaseChannel). (WCF does so for PerCall too; tsim
// does not serialise a PerCall service's sessions.)
func (t *Tier) Walk() []Phase {
	w := make([]Phase, 0, 12+len(t.Gates))
	w = append(w, Phase{Kind: PhaseAdmission})
	if t.IsASPNet() {
		w = append(w, Phase{Kind: PhaseWorker})
	}
	if t.WCF != nil {
		w = append(w, Phase{Kind: PhaseSession}, Phase{Kind: PhaseInstance}, Phase{Kind: PhaseCallSlot}, Phase{Kind: PhaseChannel})
	}
	for i := range t.Gates {
		w = append(w, Phase{Kind: PhaseGate, Gate: i})
	}
	w = append(w, Phase{Kind: PhaseThread}, Phase{Kind: PhaseDecode})
	if t.OneWay() {
		// ProcessMessage11 replies to a one-way request before
		// EnsureInstanceContext and LockInstance.
		w = append(w, Phase{Kind: PhaseAccept})
	}
	if t.WCF != nil {
		w = append(w, Phase{Kind: PhaseConcurrency}, Phase{Kind: PhaseActivate})
	}
	return append(w, Phase{Kind: PhaseSteps}, Phase{Kind: PhaseEncode}, Phase{Kind: PhaseDone})
}

// MsgKind is what a message to a tier is: a call of its operation, or one
// of the infrastructure messages of a sessionful binding that reach the
// service on their own (Binding.NegotiationLegs, Binding.CloseMessage).
type MsgKind uint8

const (
	MsgCall      MsgKind = iota // a call of the operation: the tier's Walk
	MsgNegotiate                // one leg of a new proxy's security negotiation
	MsgClose                    // a proxy's close (WS-SecureConversation Cancel)
)

var msgNames = [...]string{"call", "negotiate", "close"}

func (m MsgKind) String() string { return msgNames[m] }

// WalkOf returns the phases a message of kind m takes in the tier. A call
// takes Walk. A negotiation leg or a close is handled by the channel
// stack, below the service's throttles and instances: it passes the
// tier's admission and (on ASP.NET) its worker thread like any HTTP
// request, runs on a handler thread, costs CPU (PhaseDecode), then has its
// effect.
func (t *Tier) WalkOf(m MsgKind) []Phase {
	if m == MsgCall {
		return t.Walk()
	}
	w := []Phase{{Kind: PhaseAdmission}}
	if t.IsASPNet() {
		w = append(w, Phase{Kind: PhaseWorker})
	}
	effect := PhaseNegotiate
	if m == MsgClose {
		effect = PhaseSessionClose
	}
	return append(w, Phase{Kind: PhaseThread}, Phase{Kind: PhaseDecode}, Phase{Kind: effect}, Phase{Kind: PhaseDone})
}

// DecideNegotiation is the service's decision at a negotiation's last leg:
// whether it may issue one more session token with pending sessions
// already negotiated and not yet opened (SecuritySessionServerSettings.
// AddPendingSession: more than MaxPendingSessions is a quota error).
func DecideNegotiation(pending, maxPending int) bool {
	return maxPending <= 0 || pending+1 <= maxPending
}

// NegotiationLegCPU is the service's CPU for one leg of a negotiation.
func (b *Binding) NegotiationLegCPU() time.Duration {
	if b.NegotiationLegs <= 0 {
		return 0
	}
	return b.SessionCPU / time.Duration(b.NegotiationLegs)
}

// ---------------------------------------------------------------------------
// taking a phase

// Res is a resource a phase of the walk waits for. Each executor maps it
// to its own slots (simulated or real); which one a phase takes, and on
// what conditions, is decided here (Need), once for both.
type Res uint8

const (
	ResNone          Res = iota
	ResWorker            // the ASP.NET worker pool (Tier.Worker)
	ResHandler           // the pool the operation runs on (Tier.RunsOnIO: I/O, else worker)
	ResInstances         // MaxConcurrentInstances
	ResCalls             // MaxConcurrentCalls
	ResSingletonLock     // the Single instance's lock (WCF.SingleLock)
	ResSessionLock       // the request's session's PerSession instance lock
	ResGate              // Tier.Gates[Need.Index]
)

// Throttles are an executor's slots (S) of a tier's WCF throttles, its
// Single instance's lock, its gates and the operation's own locks, found
// by the walk's names for them; the thread pools and sessions are the
// executor's own.
type Throttles[S any] struct {
	Calls, Instances S   // MaxConcurrentCalls, MaxConcurrentInstances
	Singleton        S   // the Single instance's lock (ResSingletonLock)
	Gates            []S // Tier.Gates, in order
	Locks            []S // the operation's locks (Step.Lock, LockCount)
}

// Of is the slots of resource r (ResGate: gate i); session is the
// request's session's instance lock (ResSessionLock), which the executor
// keeps with the session. ok is false for a thread pool's.
func (th *Throttles[S]) Of(r Res, i int, session S) (s S, ok bool) {
	switch r {
	case ResInstances:
		return th.Instances, true
	case ResCalls:
		return th.Calls, true
	case ResSingletonLock:
		return th.Singleton, true
	case ResSessionLock:
		return session, true
	case ResGate:
		return th.Gates[i], true
	}
	return s, false
}

// Holding is the slots a holding of kind k gives back to (HoldGate: gate
// i, HoldLock: lock i); ok is false for a kind that is not a throttle's or
// a lock's.
func (th *Throttles[S]) Holding(k Hold, i int) (s S, ok bool) {
	switch k {
	case HoldLock:
		return th.Locks[i], true
	case HoldGate:
		return th.Gates[i], true
	case HoldCallSlot:
		return th.Calls, true
	case HoldInstance:
		return th.Instances, true
	}
	return s, false
}

// Act is what a phase asks its executor to do.
type Act uint8

const (
	ActNone         Act = iota // nothing: on to the next phase
	ActAcquire                 // wait for Need.Res, then Got
	ActReuseWorker             // the handler thread is the worker thread held (an ASP.NET page), then Got
	ActCPU                     // use Need.CPU of the tier's CPU
	ActSession                 // open the proxy's WCF session, or wait for it (Session)
	ActAccept                  // answer a one-way request (PhaseAccept)
	ActSteps                   // run the operation's steps
	ActDone                    // the reply: the request ends completed
	ActNegotiate               // a negotiation's last leg issues the session's token (DecideNegotiation)
	ActCloseSession            // a proxy's close ends its session
)

// Need is what taking one phase asks of the executor.
type Need struct {
	Act   Act
	Res   Res  // ActAcquire: the resource to wait for
	Index int  // ResGate: which gate
	Hold  Hold // what the request holds once granted; NoHold for nothing (the singleton's instance lives for the run)
	Cat   int  // ActAcquire: the breakdown category of the wait (results.Bd*)
	// Bounded: the request asks for its first thread; it is refused when
	// the pool's bounded queue is full (ThreadPool.Rejects).
	Bounded bool
	// Pause: a request that must wait gives its thread back meanwhile and
	// takes one again once granted (WCF pauses a MessageRpc that finds the
	// instance lock taken).
	Pause bool
	// Exec: the request starts executing once past the phase (Visit.StartExec).
	Exec bool
	CPU  time.Duration // ActCPU
}

// NoHold is Need.Hold for a resource that is not held (Got records nothing).
const NoHold = numHolds

// Need decides what phase ph asks of request r in the tier, whose run-time
// state is st. It changes st and r only where taking the phase decides
// something at once (the call that creates the service instance).
func (t *Tier) Need(ph Phase, r *Req, st *TierState) Need {
	w := t.WCF
	switch ph.Kind {
	case PhaseWorker:
		n := Need{Exec: t.ExecStartsAt() == PhaseWorker}
		if t.HoldsWorker() {
			n.Act, n.Res, n.Hold, n.Cat, n.Bounded = ActAcquire, ResWorker, HoldWorker, results.BdThread, true
		}
		return n
	case PhaseSession:
		return Need{Act: ActSession}
	case PhaseInstance:
		switch {
		case w == nil:
		case w.Instancing == SingleInstance:
			if !st.SingleInstance {
				return Need{Act: ActAcquire, Res: ResInstances, Hold: NoHold, Cat: results.BdThrottle}
			}
		case w.Instancing == PerCall || !r.Sessionful:
			// PerCall, or PerSession without a session: an instance per
			// call. (A session keeps its own PerSession instance.)
			return Need{Act: ActAcquire, Res: ResInstances, Hold: HoldInstance, Cat: results.BdThrottle}
		}
	case PhaseCallSlot:
		if w != nil {
			return Need{Act: ActAcquire, Res: ResCalls, Hold: HoldCallSlot, Cat: results.BdThrottle}
		}
	case PhaseChannel:
		if l := t.InstanceLock(false, r.Sessionful); l != ResNone {
			return Need{Act: ActAcquire, Res: l, Hold: HoldChannel, Cat: results.BdLock}
		}
	case PhaseConcurrency:
		if l := t.InstanceLock(true, r.Sessionful); l != ResNone {
			return Need{Act: ActAcquire, Res: l, Hold: HoldInstanceLock, Cat: results.BdLock, Pause: true, Exec: t.ExecStartsAt() == PhaseThread}
		}
	case PhaseActivate:
		if d := w.ActivateCPU(st.createsInstance(t, r)); d > 0 {
			return Need{Act: ActCPU, CPU: d}
		}
	case PhaseGate:
		return Need{Act: ActAcquire, Res: ResGate, Index: ph.Gate, Hold: HoldGate, Cat: results.BdThrottle}
	case PhaseThread:
		n := Need{Act: ActAcquire, Res: ResHandler, Hold: HoldThread, Cat: results.BdThread, Bounded: !t.HoldsWorker(),
			Exec: t.ExecStartsAt() == PhaseThread && t.InstanceLock(true, r.Sessionful) == ResNone} // else once past its instance lock
		if !t.RunsOnIO() && r.Held.Holds(HoldWorker) {
			n.Act = ActReuseWorker // an ASP.NET page runs on the worker thread it was given
		}
		return n
	case PhaseDecode:
		d := r.ExtraCPU
		if r.Msg == MsgCall {
			d += r.Call.Binding.Cost(r.Call.RequestKB)
		}
		if d > 0 {
			return Need{Act: ActCPU, CPU: d}
		}
	case PhaseAccept:
		return Need{Act: ActAccept}
	case PhaseSteps:
		return Need{Act: ActSteps}
	case PhaseEncode:
		if d := r.Call.Binding.Cost(r.Call.ReplyKB); d > 0 && !t.OneWay() { // a one-way operation has no reply message
			return Need{Act: ActCPU, CPU: d}
		}
	case PhaseDone:
		return Need{Act: ActDone}
	case PhaseNegotiate:
		if r.Last && w != nil && r.Session != nil {
			return Need{Act: ActNegotiate}
		}
	case PhaseSessionClose:
		if r.Session != nil {
			return Need{Act: ActCloseSession}
		}
	}
	return Need{}
}

// Got records what request r holds once the resource of n was granted (or,
// for ActReuseWorker, reused).
func (t *Tier) Got(n Need, r *Req, st *TierState) {
	switch {
	case n.Act == ActReuseWorker:
		r.Held.Move(HoldWorker, HoldThread)
	case n.Res == ResInstances && n.Hold == NoHold:
		st.SingleInstance = true // the Single instance lives for the run
	case n.Hold == HoldGate:
		r.Held.TakeGate()
	case n.Hold != NoHold:
		r.Held.Take(n.Hold)
	}
}

// InstanceLock is the instance lock a request takes before decoding (a
// session's PerSession instance with ConcurrencyMode Single: WCF does not
// pump such a channel concurrently) or after (afterDecode: the singleton's,
// or a session's with ConcurrencyMode Reentrant), or ResNone.
func (t *Tier) InstanceLock(afterDecode, sessionful bool) Res {
	w := t.WCF
	switch {
	case w == nil || w.Concurrency == ConcurrencyMultiple:
	case w.Instancing == SingleInstance:
		if afterDecode {
			return ResSingletonLock
		}
	case w.Instancing == PerSession && sessionful && afterDecode == (w.Concurrency == ConcurrencyReentrant):
		return ResSessionLock
	}
	return ResNone
}

// GivesBackDuringCalls reports what a request gives back while it waits
// for a downstream call, and takes again before it goes on: its thread
// (an asynchronous handler) and its instance lock (ConcurrencyMode
// Reentrant).
func (t *Tier) GivesBackDuringCalls() (thread, lock bool) {
	return t.Async, t.WCF != nil && t.WCF.Concurrency == ConcurrencyReentrant
}

// LockCount is the number of the operation's own locks (Step.Lock).
func (t *Tier) LockCount() int {
	n := 0
	for si := range t.Steps {
		if st := &t.Steps[si]; (st.Kind == StepLock || st.Kind == StepUnlock) && st.Lock >= n {
			n = st.Lock + 1
		}
	}
	return n
}

// StepDemand is the demand of CPU or wait step si (its CPU scaled by
// CostMultiplier) and the name of the random stream it is drawn from, the
// same in both executors so that one seed gives both the same demands
// (common random numbers); ok is false for other steps.
func (t *Tier) StepDemand(si int) (d sim.Dist, stream string, ok bool) {
	st := &t.Steps[si]
	if st.Kind != StepCPU && st.Kind != StepWait {
		return sim.Dist{}, "", false
	}
	d = st.Demand
	if st.Kind == StepCPU && t.CostMultiplier > 0 && t.CostMultiplier != 1 {
		d = d.Scale(t.CostMultiplier)
	}
	return d, fmt.Sprintf("tier/%s/step/%d/%s", t.Name, si, st.Kind), true
}
