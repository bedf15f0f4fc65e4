package model

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
)

func TestConnRefuses(t *testing.T) {
	for _, c := range []struct {
		conn   Conn
		free   bool
		queued int
		want   bool
	}{
		{Conn{}, false, 100, false},                            // waits, however many wait
		{Conn{NoPending: true}, true, 0, false},                // a connection is free
		{Conn{NoPending: true}, false, 0, true},                // none free: refused
		{Conn{MaxPending: 2}, false, 1, false},                 // one waits: room for another
		{Conn{MaxPending: 2}, false, 2, true},                  // two wait already
		{Conn{MaxPending: 2}, true, 5, false},                  // free: taken at once
		{Conn{MaxPending: 2, NoPending: true}, false, 0, true}, // NoPending wins
		{Conn{MaxPending: 2, NoPending: true}, true, 0, false}, // but not over a free one
	} {
		if got := c.conn.Refuses(c.free, c.queued); got != c.want {
			t.Errorf("%+v free %v queued %d: refuses %v, want %v", c.conn, c.free, c.queued, got, c.want)
		}
	}
}

func TestBindingMessages(t *testing.T) {
	b := Binding{CPUBase: time.Millisecond, SessionCPU: 30 * time.Millisecond, NegotiationLegs: 3, CloseMessage: true}
	for leg, wantLast := range []bool{false, false, true} {
		if cpu, last := b.Message(MsgNegotiate, leg); cpu != 11*time.Millisecond || last != wantLast {
			t.Errorf("leg %d: %v %v, want 11ms %v", leg, cpu, last, wantLast)
		}
	}
	if cpu, last := b.Message(MsgClose, 0); cpu != time.Millisecond || last {
		t.Errorf("close: %v %v", cpu, last)
	}
	if !b.NegotiatesApart() || b.ServiceSessionCPU(true) != 0 {
		t.Error("legs of its own: no session CPU with the first call")
	}
	b.NegotiationLegs = 0
	if b.ServiceSessionCPU(true) != 30*time.Millisecond || b.ServiceSessionCPU(false) != 0 {
		t.Error("a handshake: the session CPU with a new proxy's first call only")
	}
	if !b.SendsClose(true, true) || b.SendsClose(false, true) || b.SendsClose(true, false) {
		t.Error("a close message for an open per-call session only")
	}
}

func TestCallAnswer(t *testing.T) {
	c := Call{ReplyKB: 10, RequestKB: 2, Network: Network{Latency: time.Millisecond}, Binding: Binding{CPUPerKB: time.Millisecond}}
	if c.AnswerKB(true) != 0 || c.AnswerKB(false) != 10 {
		t.Error("a one-way answer has no message")
	}
	if c.DecodeCPU(true) != 0 || c.DecodeCPU(false) != 10*time.Millisecond || c.EncodeCPU() != 2*time.Millisecond {
		t.Errorf("decode %v/%v encode %v", c.DecodeCPU(true), c.DecodeCPU(false), c.EncodeCPU())
	}
	if c.ReplyWire(true) != time.Millisecond || c.LegWire() != 2*time.Millisecond {
		t.Errorf("reply wire %v, leg %v", c.ReplyWire(true), c.LegWire())
	}
}

func TestAttemptFailed(t *testing.T) {
	r := Retry{Attempts: 3}
	var counts CallCounts
	long := &ClientProxy{}
	if abort, retry := AttemptFailed(long, &r, &counts, results.TimedOut, false, 1, false); !abort || !retry {
		t.Errorf("a timeout on a long-lived proxy: abort %v retry %v", abort, retry)
	}
	if abort, retry := AttemptFailed(&ClientProxy{PerCall: true}, &r, &counts, results.TimedOut, false, 3, false); abort || retry {
		t.Errorf("the last attempt, per-call: abort %v retry %v", abort, retry)
	}
	if abort, retry := AttemptFailed(nil, &r, nil, results.Rejected, false, 1, true); abort || retry {
		t.Errorf("caller gone: abort %v retry %v", abort, retry)
	}
	if counts.TimedOut != 2 || counts.Retries != 1 {
		t.Errorf("counted %+v", counts)
	}
}

func TestThrottlesByTheWalksNames(t *testing.T) {
	th := Throttles[string]{Calls: "calls", Instances: "instances", Singleton: "singleton", Gates: []string{"g0", "g1"}, Locks: []string{"l0"}}
	for _, c := range []struct {
		r    Res
		i    int
		want string
		ok   bool
	}{
		{ResCalls, 0, "calls", true}, {ResInstances, 0, "instances", true}, {ResSingletonLock, 0, "singleton", true},
		{ResSessionLock, 0, "session", true}, {ResGate, 1, "g1", true}, {ResWorker, 0, "", false}, {ResHandler, 0, "", false},
	} {
		if got, ok := th.Of(c.r, c.i, "session"); got != c.want || ok != c.ok {
			t.Errorf("Of(%d, %d) = %q %v, want %q %v", c.r, c.i, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		k    Hold
		i    int
		want string
		ok   bool
	}{
		{HoldCallSlot, 0, "calls", true}, {HoldInstance, 0, "instances", true}, {HoldGate, 0, "g0", true},
		{HoldLock, 0, "l0", true}, {HoldThread, 0, "", false}, {HoldSession, 0, "", false},
	} {
		if got, ok := th.Holding(c.k, c.i); got != c.want || ok != c.ok {
			t.Errorf("Holding(%v, %d) = %q %v, want %q %v", c.k, c.i, got, ok, c.want, c.ok)
		}
	}
}

func TestPickLane(t *testing.T) {
	for _, c := range []struct {
		bound []int
		want  int
	}{
		{nil, -1}, {[]int{2, 0, 0}, 1}, {[]int{3, 1, 2, 1}, 1}, {[]int{2, 2}, 0},
	} {
		if got := PickLane(len(c.bound), func(k int) int { return c.bound[k] }); got != c.want {
			t.Errorf("PickLane(%v) = %d, want %d", c.bound, got, c.want)
		}
	}
}
