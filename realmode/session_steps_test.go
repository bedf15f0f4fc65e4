package realmode

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// Sessions over HTTP for real (model/session_steps_test.go): a session
// that outlives its aborted client, the security negotiation as its own
// exchange, the pending-session quota and the close as a message of its
// own. Users send at t0 = 2 s.

func httpSession(idle time.Duration) model.Binding {
	return model.Binding{Name: "wsHttp", Sessionful: true, SessionIdleTimeout: idle}
}

func TestStepSessionOutlivesAbortedClient(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// MaxSessions 1, a 3 s operation, clients give up after 2 s. wsHttp
	// (idle 4 s): user 1's session lingers until 4 s after its orphaned
	// job's end (t0+3 → t0+7); user 2's call stays queued, runs t0+7 to
	// t0+10 orphaned: both complete at the service. netTcp (idle 0): user
	// 2's call is dropped when its client goes.
	for _, c := range []struct {
		idle               time.Duration
		completed, aborted int64
	}{{4 * time.Second, 2, 0}, {0, 1, 1}} {
		svc := tier("svc", 8, waitFor(3*time.Second))
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
		top := burst(2, 2*time.Second, 12*time.Second, svc)
		top.Load.Call.Binding = httpSession(c.idle)
		top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
		s, r := table(t, "session idle "+c.idle.String(), top, "2/timed_out 2/timed_out", Options{})
		for _, res := range judged(s, r) {
			if tr := res.Tiers[0]; tr.Completed != c.completed || tr.Aborted != c.aborted {
				t.Errorf("idle %v: svc completed %d (want %d, orphaned), dropped %d (want %d)", c.idle, tr.Completed, c.completed, tr.Aborted, c.aborted)
			}
		}
	}
}

func TestStepNegotiationIsItsOwnExchange(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// Two legs of 1 s of service CPU, 100 ms each way, then the 1 s call:
	// 3.6 s; a 1.5 s negotiation timeout ends it in the second leg.
	for _, c := range []struct {
		timeout time.Duration
		want    string
	}{{0, "3.6"}, {1500 * time.Millisecond, "1.5/timed_out"}} {
		svc := tier("svc", 8, waitFor(time.Second))
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple}
		top := burst(1, 0, 5*time.Second, svc)
		b := httpSession(time.Minute)
		b.SessionCPU, b.NegotiationLegs, b.NegotiationTimeout = 2*time.Second, 2, c.timeout
		top.Load.Call.Binding = b
		top.Load.Call.Network.Latency = 100 * time.Millisecond
		top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
		s, r := table(t, "negotiation timeout "+c.timeout.String(), top, c.want, Options{})
		if c.timeout == 0 {
			for _, res := range judged(s, r) {
				if tr := res.Tiers[0]; tr.Completed != 1 {
					t.Errorf("svc completed %d calls, want 1 (the legs are not calls)", tr.Completed)
				}
			}
		}
	}
}

func TestRealNegotiationPendingQuota(t *testing.T) {
	t.Parallel()
	// MaxSessions 1, MaxPendingSessions 1, four users at once: one session
	// open, at most one negotiated and waiting; the others' negotiations
	// fail. Which users fail depends on the real order of arrival, so
	// only the counts are checked: every request ends, at least one
	// fails, at least one completes. (Two complete when the first user
	// has taken its session before the second's negotiation ends; the
	// four negotiate at once, and in one run in five the first was still
	// pending then, so the second failed too: a race WCF has as well.)
	svc := tier("svc", 8, waitFor(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple, MaxPendingSessions: 1}
	top := burst(4, 0, 6*time.Second, svc)
	b := httpSession(time.Minute)
	b.NegotiationLegs = 1
	top.Load.Call.Binding = b
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
	r, err := Run(t.Context(), top, Options{Seed: 1, TimeScale: stepScale})
	if err != nil {
		t.Fatal(err)
	}
	q := r.Requests
	if q.Completed+q.Failed != 4 || q.Failed < 1 || q.Completed < 1 {
		t.Errorf("requests %+v: want 4 ended, ≥ 1 failed (SecurityNegotiationException), ≥ 1 completed", q)
	}
}

func TestStepCloseMessageDeadlocksBehindAdmission(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// One request executes at a time, MaxSessions 1, per-call proxies
	// closed by a message: user 1's close queues behind user 2's call,
	// which waits for user 1's session: user 1's close times out at 4 s,
	// user 2 at 5 s. Without the close message both complete.
	for _, c := range []struct {
		close bool
		want  string
	}{{true, "4/timed_out 5/timed_out"}, {false, "1 2"}} {
		svc := tier("svc", 8, waitFor(time.Second))
		svc.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 1, QueueLimit: 100}
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
		top := burst(2, 5*time.Second, 8*time.Second, svc)
		b := httpSession(10 * time.Second)
		b.CloseMessage, b.CloseTimeout = c.close, 3*time.Second
		top.Load.Call.Binding = b
		top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
		table(t, "close message", top, c.want, Options{})
	}
}
