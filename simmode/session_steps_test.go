package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// Step tables for sessions over HTTP (wsHttp's security session): a
// session that outlives its aborted client, the security negotiation as
// its own exchange, and the close as a message of its own. The tables
// both executors run are modeltest's (steps_wcf.go); these check, to the
// instant, how long the sessions live.

// httpSession is a wsHttp-like sessionful binding with no per-message CPU.
func httpSession(idle time.Duration) model.Binding {
	return model.Binding{Name: "wsHttp", Sessionful: true, SessionIdleTimeout: idle}
}

// instancesAt returns the service's Instances counter (one per PerSession
// session) in the sample taken at sec seconds.
func instancesAt(t *testing.T, res *results.Run, sec float64) float64 {
	t.Helper()
	for _, s := range res.Series {
		if s.T == sec {
			return s.Tiers[0].Instances
		}
	}
	t.Fatalf("no sample at %v s", sec)
	return 0
}

func TestSessionOutlivesAbortedClient(t *testing.T) {
	// MaxSessions 1, a 3 s operation, clients give up after 2 s (at 302).
	// wsHttp (idle 10 s): user 1's session ends 10 s after its last
	// message (the orphaned job's end at 303), at 313; user 2's call stays
	// queued for a session, gets it at 313, runs orphaned to 316, and its
	// session lingers until 326. netTcp (idle 0): the aborted sessions end
	// at once and user 2's call is dropped at 302.
	for _, c := range []struct {
		idle               time.Duration
		completed, aborted int64
		inst               [4]float64 // at 301, 310, 320, 330 s
	}{
		{10 * time.Second, 2, 0, [4]float64{1, 1, 1, 0}},
		{0, 1, 1, [4]float64{1, 0, 0, 0}},
	} {
		svc := tier("svc", wait(3*time.Second))
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
		top := burst(2, 2*time.Second, svc)
		top.Load.Call.Binding = httpSession(c.idle)
		top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
		got, res := outcomes(t, top)
		expect(t, "latencies", got, "2/timed_out 2/timed_out")
		if tr := res.Tiers[0]; tr.Completed != c.completed || tr.Aborted != c.aborted {
			t.Errorf("idle %v: service completed %d (want %d, orphaned), dropped %d (want %d)", c.idle, tr.Completed, c.completed, tr.Aborted, c.aborted)
		}
		for i, sec := range []float64{301, 310, 320, 330} {
			if got := instancesAt(t, res, sec); got != c.inst[i] {
				t.Errorf("idle %v: sessions (instances) at %v s = %v, want %v", c.idle, sec, got, c.inst[i])
			}
		}
	}
}

func TestNegotiationFailsAtPendingSessionQuota(t *testing.T) {
	// MaxSessions 1, MaxPendingSessions 1, instantaneous negotiation:
	// user 1 opens its session at once; user 2's session is negotiated and
	// pending while its call waits for user 1's; user 3's negotiation
	// would be a second pending session: SecurityNegotiationException.
	svc := tier("svc", wait(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple, MaxPendingSessions: 1}
	top := burst(3, 0, svc)
	b := httpSession(time.Minute)
	b.NegotiationLegs = 1
	top.Load.Call.Binding = b
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
	got, res := outcomes(t, top)
	expect(t, "latencies", got, "0/failed 1 2")
	if res.Calls[0].NegotiationFailed != 1 {
		t.Errorf("%d negotiations failed, want 1", res.Calls[0].NegotiationFailed)
	}
	if res.Requests.Failed != 1 || res.Requests.Completed != 2 {
		t.Errorf("failed %d completed %d, want 1 and 2", res.Requests.Failed, res.Requests.Completed)
	}
}

func TestCloseMessageDeadlocksBehindAdmission(t *testing.T) {
	// One request executes at a time (admission), MaxSessions 1, a 1 s
	// operation, per-call proxies closed by a message of their own. User
	// 1's call runs 300–301; its close queues behind user 2's call, which
	// is admitted at 301 and waits for the session user 1 still holds:
	// a deadlock. User 1's close times out at 304 (CloseTimeout 3 s) and
	// it aborts; user 2 times out at 305. User 1's session ends 10 s after
	// its last message (311); user 2's orphaned call then runs 311–312 and
	// its own session lingers to 322. Without the close message the
	// session ends with the call and both complete.
	for _, c := range []struct {
		close bool
		want  string
		inst  [3]float64 // at 306, 312, 320 s
	}{
		{true, "4/timed_out 5/timed_out", [3]float64{1, 1, 1}},
		{false, "1 2", [3]float64{0, 0, 0}},
	} {
		svc := tier("svc", wait(time.Second))
		svc.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 1, QueueLimit: 100}
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
		top := burst(2, 5*time.Second, svc)
		b := httpSession(10 * time.Second)
		b.CloseMessage, b.CloseTimeout = c.close, 3*time.Second
		top.Load.Call.Binding = b
		top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
		got, res := outcomes(t, top)
		expect(t, "latencies", got, c.want)
		for i, sec := range []float64{306, 312, 320} {
			if got := instancesAt(t, res, sec); got != c.inst[i] {
				t.Errorf("close %v: sessions at %v s = %v, want %v", c.close, sec, got, c.inst[i])
			}
		}
		if last := instancesAt(t, res, 330); last != 0 {
			t.Errorf("close %v: sessions at 330 s = %v, want 0", c.close, last)
		}
	}
}
