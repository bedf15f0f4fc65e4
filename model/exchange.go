package model

import (
	"time"

	"github.com/tsim-dev/tsim/results"
)

// What a call site exchanges with its target, and what it does when an
// attempt fails: the client side's decisions, the same for both
// executors (the simulator's call phases, real mode's HTTP requests).

// PicksHost reports whether the caller balances the call itself: it
// addresses each machine of a farm by its own name (PerHost) and picks
// the machine before it looks for a connection, again on each retry.
func (c *Call) PicksHost() bool { return c.Farm != nil && c.PerHost }

// Refuses reports whether a call is refused at once instead of waiting
// for a connection of the call site's pool (Envoy's max_pending): no
// connection is free (free) and NoPending, or queued calls already wait
// beyond the connections, MaxPending or more.
func (c *Conn) Refuses(free bool, queued int) bool {
	return !free && (c.NoPending || (c.MaxPending > 0 && queued >= c.MaxPending))
}

// NegotiatesApart reports whether a new proxy's security negotiation is an
// exchange of its own (NegotiationLegs, each a message to the target, the
// service's SessionCPU shared among them) rather than a handshake before
// the proxy's first call (SessionRoundTrips on the wire, SessionCPU at the
// service with that call: ServiceSessionCPU).
func (b *Binding) NegotiatesApart() bool { return b.NegotiationLegs > 0 }

// HandshakeWire is a new proxy's handshake on the wire before its first
// call: SessionRoundTrips round trips (taken only when the negotiation is
// not apart).
func (c *Call) HandshakeWire() time.Duration {
	return time.Duration(2*c.Binding.SessionRoundTrips) * c.Network.Latency
}

// ServiceSessionCPU is what a call costs its service on top of its
// decoding for the security session of a new proxy (newProxy): its side
// of a negotiation that is not an exchange apart.
func (b *Binding) ServiceSessionCPU(newProxy bool) time.Duration {
	if !newProxy || b.NegotiatesApart() {
		return 0
	}
	return b.SessionCPU
}

// Message is one of a proxy's own messages to its target (MsgNegotiate:
// leg leg of the negotiation, MsgClose: a per-call proxy's close): the
// service's CPU to decode it, and whether it is the negotiation's last leg
// (the one that issues the session's token).
func (b *Binding) Message(m MsgKind, leg int) (cpu time.Duration, last bool) {
	if m == MsgNegotiate {
		return b.CPUBase + b.NegotiationLegCPU(), leg == b.NegotiationLegs-1
	}
	return b.CPUBase, false
}

// LegWire is a negotiation leg's round trip on the wire after the
// service's answer, before the next leg.
func (c *Call) LegWire() time.Duration { return 2 * c.Network.Latency }

// SendsClose reports whether a completed call's proxy closes with a
// message of its own (Binding.CloseMessage), with its own timeout
// (CloseTimeout), to its session at the target: a per-call proxy
// (perCall) whose session is open (session).
func (b *Binding) SendsClose(perCall, session bool) bool {
	return b.CloseMessage && perCall && session
}

// EncodeCPU is the caller's CPU to encode the request message.
func (c *Call) EncodeCPU() time.Duration { return c.Binding.Cost(c.RequestKB) }

// AnswerKB is the size of the answer's message: none for a one-way
// operation (oneWay: the target's), whose answer is the transport's
// acknowledgement (HTTP 202).
func (c *Call) AnswerKB(oneWay bool) float64 {
	if oneWay {
		return 0
	}
	return c.ReplyKB
}

// ReplyWire is the answer's time on the wire (AnswerKB).
func (c *Call) ReplyWire(oneWay bool) time.Duration { return c.Wire(c.AnswerKB(oneWay)) }

// DecodeCPU is the caller's CPU to decode the answer: none for a one-way
// operation's acknowledgement.
func (c *Call) DecodeCPU(oneWay bool) time.Duration {
	if oneWay {
		return 0
	}
	return c.Binding.Cost(c.ReplyKB)
}

// AttemptFailed is a call site's decision once attempt n of a call ended
// with o short of completion (negotiating: during its proxy's
// negotiation): whether the client aborts its long-lived proxy p (nil:
// none; ClientProxy.AbortsAfter), and whether it tries again
// (Retry.Again; callerGone: its caller gave up). counts, when not nil
// (the measured period), counts the attempt's end and the retry.
func AttemptFailed(p *ClientProxy, r *Retry, counts *CallCounts, o results.Outcome, negotiating bool, n int, callerGone bool) (abort, retry bool) {
	abort = p != nil && p.AbortsAfter(o, negotiating)
	retry = r.Again(o, n, callerGone)
	if counts != nil {
		counts.Ended(o, negotiating)
		if retry {
			counts.Retries++
		}
	}
	return abort, retry
}
