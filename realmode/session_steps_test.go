package realmode

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
	"github.com/tsim-dev/tsim/results"
)

// Sessions over HTTP for real: the pending-session quota, whose table
// depends on the real order of arrival (the others are modeltest's
// shared step tables). Users send at t0 = 2 s.

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
	b := modeltest.HTTPSession(time.Minute)
	b.NegotiationLegs = 1
	top.Load.Call.Binding = b
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
	r, err := Run(t.Context(), top, Options{Seed: 1, TimeScale: stepScale})
	if err != nil {
		t.Fatal(err)
	}
	// The four sent at t0 (a request starts at its end less its latency);
	// on a busy machine a user whose request failed at once may send
	// another before it leaves, half a t0 later (measured at a load
	// average of 25: two more), which is accounted for but not judged.
	var ended, failed, completed int
	for _, p := range r.Points {
		if p.T-p.Latency > (t0 + t0/2).Seconds() {
			continue
		}
		ended++
		switch p.Outcome {
		case results.Failed:
			failed++
		case results.Completed:
			completed++
		}
	}
	if q := r.Requests; !q.Conserved() || ended != 4 || failed < 1 || completed < 1 || failed+completed != 4 {
		t.Errorf("requests %+v; of the four sent at t0, %d ended, %d failed, %d completed: want 4 ended, ≥ 1 failed (SecurityNegotiationException), ≥ 1 completed", q, ended, failed, completed)
	}
}
