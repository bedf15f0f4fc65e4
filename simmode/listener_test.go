package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"testing"
	"time"
)

// listenerTop: a netTcp service with one session slot and a listener of
// pending connections and backlog, each call on a new proxy (a session
// and a connection per call) holding its session for 1 s.
func listenerTop(n int, timeout time.Duration, l model.Listener) *model.Topology {
	svc := tier("svc", wait(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 10, MaxSessions: 1, MaxInstances: 10, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple, Listener: l}
	top := burst(n, timeout, svc)
	top.Load.Call.Binding = model.Binding{Name: "netTcp", Sessionful: true, Listener: true}
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
	return top
}

func TestListenerRefusesBeyondPendingAndBacklog(t *testing.T) {
	// One session; one connection pending, one in the backlog: the first
	// runs 0–1 s, the second and third wait and run 1–2 and 2–3 s, the
	// fourth is refused at once.
	got, res := outcomes(t, listenerTop(4, 0, model.Listener{MaxPending: 1, Backlog: 1}))
	expect(t, "pending 1, backlog 1", got, "0/rejected 1 2 3")
	if r := res.Tiers[0].Rejected; r != 1 {
		t.Errorf("service rejected %d, want 1", r)
	}
	if w := res.Tiers[0].ListenerWaitingMax; w != 2 {
		t.Errorf("%.0f connections waiting in the listener at most, want 2", w)
	}
	// Without a listener limit every connection waits.
	got, _ = outcomes(t, listenerTop(4, 0, model.Listener{}))
	expect(t, "no limit", got, "1 2 3 4")
	// Five: the fourth and fifth are refused at once; the third, given its
	// session at 2 s, times out at 2.5 s (SendTimeout).
	got, _ = outcomes(t, listenerTop(5, 2500*time.Millisecond, model.Listener{MaxPending: 1, Backlog: 1}))
	expect(t, "timeout", got, "0/rejected 0/rejected 1 2 2.5/timed_out")
	// A binding that does not go through the listener (wsHttp's sessions)
	// is not refused.
	top := listenerTop(4, 0, model.Listener{MaxPending: 1, Backlog: 1})
	top.Load.Call.Binding.Listener = false
	got, _ = outcomes(t, top)
	expect(t, "not through the listener", got, "1 2 3 4")
}
