package model

// Hold is a kind of resource a request holds in a tier, in the order the
// walk takes them (Tier.Walk): a request gives back what it still holds
// when it ends, in the reverse of that order (Holdings.Release), in both
// executors.
type Hold uint8

const (
	HoldAdmission    Hold = iota // counted by the admission rule as executing (PhaseAdmission)
	HoldWorker                   // an ASP.NET worker thread (PhaseWorker)
	HoldSession                  // a per-call proxy's WCF session, which ends with its request (PhaseSession)
	HoldInstance                 // a MaxConcurrentInstances slot (PhaseInstance)
	HoldCallSlot                 // a MaxConcurrentCalls slot (PhaseCallSlot)
	HoldChannel                  // a session's instance lock taken before decoding (PhaseChannel)
	HoldGate                     // the tier's counted gates (PhaseGate), in order
	HoldThread                   // the thread the operation runs on (PhaseThread)
	HoldInstanceLock             // an instance lock taken after decoding (PhaseConcurrency)
	HoldLock                     // the operation's own locks (StepLock), in the order taken
	numHolds
)

var holdNames = [...]string{"admission", "worker", "session", "instance", "call-slot", "channel", "gate", "thread", "instance-lock", "lock"}

func (k Hold) String() string { return holdNames[k] }

// Holdings is what one request holds in its tier. A resource given back
// early (a handler's thread during an asynchronous call, a reentrant
// instance's lock, an unlock step, a one-way request's worker) and taken
// again keeps its place in the order: the order is the walk's, not the
// order of the takes.
type Holdings struct {
	held  uint16 // bit k: holds a resource of kind k (not gates or locks)
	gates int    // the first gates of the tier's gates
	locks []int  // the operation's locks, in the order taken
}

// Giver gives a resource back: the executor's, since a resource is a
// simulated slot in one and a semaphore in the other. index is the
// gate's (Tier.Gates) or the lock's (Step.Lock), else 0.
type Giver interface {
	Give(k Hold, index int)
}

// Take records a resource of kind k taken (not HoldGate or HoldLock).
func (h *Holdings) Take(k Hold) { h.held |= 1 << k }

// Holds reports whether a resource of kind k is held (HoldGate: any gate,
// HoldLock: any lock).
func (h *Holdings) Holds(k Hold) bool {
	switch k {
	case HoldGate:
		return h.gates > 0
	case HoldLock:
		return len(h.locks) > 0
	}
	return h.held&(1<<k) != 0
}

// Drop records a resource of kind k given back early (not HoldGate or
// HoldLock); it reports whether it was held, so that the caller gives it
// back once.
func (h *Holdings) Drop(k Hold) bool {
	if h.held&(1<<k) == 0 {
		return false
	}
	h.held &^= 1 << k
	return true
}

// Move records a resource of kind from becoming one of kind to (an ASP.NET
// page runs on the worker thread it was given).
func (h *Holdings) Move(from, to Hold) {
	if h.Drop(from) {
		h.Take(to)
	}
}

// TakeGate records the tier's next gate taken; gates are taken in order.
func (h *Holdings) TakeGate() { h.gates++ }

// TakeLock records lock l taken.
func (h *Holdings) TakeLock(l int) { h.locks = append(h.locks, l) }

// DropLock records lock l given back (an unlock step); it reports whether
// it was held.
func (h *Holdings) DropLock(l int) bool {
	for i, x := range h.locks {
		if x == l {
			h.locks = append(h.locks[:i], h.locks[i+1:]...)
			return true
		}
	}
	return false
}

// Release gives back everything still held to g, in the reverse of the
// walk's order: the last lock taken first, the admission last.
func (h *Holdings) Release(g Giver) {
	for len(h.locks) > 0 {
		l := h.locks[len(h.locks)-1]
		h.locks = h.locks[:len(h.locks)-1]
		g.Give(HoldLock, l)
	}
	for k := HoldLock - 1; ; k-- {
		if k == HoldGate {
			for ; h.gates > 0; h.gates-- {
				g.Give(HoldGate, h.gates-1)
			}
		} else if h.Drop(k) {
			g.Give(k, 0)
		}
		if k == HoldAdmission {
			return
		}
	}
}

// Reset empties the holdings for a new request, keeping their room.
func (h *Holdings) Reset() { *h = Holdings{locks: h.locks[:0]} }
