package experiments

// The stories of seeds 003 and 004 (netTcp): ~29,000 calls/s with the
// client on the service's box, the listener's limits, idle call latency.
// Each test asserts the figures its document reports within the
// document's own precision, and lists as skipped subtests the figures
// tsim cannot reproduce (docs/stories.md, rows 74–86).

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// Seed 004, Snyder: ~29,000 calls/s on netTcp with client and service on
// one dual-core box; Open() helps; debug+debug without server GC is 29×
// slower.
func TestStoryNetTcp29k(t *testing.T) {
	runs := runStory(t, "nettcp-29k.toml", 4*time.Second) // 2 s measured: ~60,000 calls a variant
	storyCClean(t, runs)
	tcp, tcpNo := storyCRun(t, runs, "netTcp-opened"), storyCRun(t, runs, "netTcp-not-opened")
	http, httpNo := storyCRun(t, runs, "basicHttp-opened"), storyCRun(t, runs, "basicHttp-not-opened")
	// "~29,000 requests per second" (by construction: this box's binding
	// CPU is calibrated to it), ±1,000.
	figure(t, "netTcp calls/s, client on the same dual core", tcp.GoodputPerS, 29000, 1000.0/29000)
	// "client and server were running on same": the box's two cores are
	// full, and half of that is the client's.
	cl, svc := tierOf(t, tcp, "client"), tierOf(t, tcp, "svc")
	if cl.CPUUtil+svc.CPUUtil < 0.99 || math.Abs(cl.CPUUtil-svc.CPUUtil) > 0.02 {
		t.Errorf("netTcp: client CPU %.1f%%, service %.1f%% of the shared box; want ~50%% each, 100%% in all", 100*cl.CPUUtil, 100*svc.CPUUtil)
	}
	// The same client on a box of its own: twice the calls.
	if r := storyCRun(t, runs, "netTcp-client-elsewhere").GoodputPerS / tcp.GoodputPerS; math.Abs(r-2) > 0.04 {
		t.Errorf("client elsewhere: %.2f× the shared box's calls/s, want 2×", r)
	}
	// "By far the best channel is netTcpBinding"
	if http.GoodputPerS > 0.5*tcp.GoodputPerS {
		t.Errorf("basicHttp %.0f/s against netTcp %.0f/s; want netTcp far ahead", http.GoodputPerS, tcp.GoodputPerS)
	}
	// "Calling svc.Open() ... helps" (shape: the charts' values are not in the text)
	for name, c := range map[string][2]*results.Run{"netTcp": {tcp, tcpNo}, "basicHttp": {http, httpNo}} {
		if c[1].GoodputPerS > 0.6*c[0].GoodputPerS || tierOf(t, c[1], "svc").ExecutingMax != 1 {
			t.Errorf("%s: %.0f/s without Open() against %.0f/s with; want one call at a time and much less", name, c[1].GoodputPerS, c[0].GoodputPerS)
		}
	}
	// "debug+debug without server GC ... 29x slower" (by construction: the
	// extra CPU is calibrated to it), ±1.
	dbg := storyCRun(t, runs, "debug-debug-no-server-gc")
	figure(t, "debug+debug without server GC: times slower", tcp.GoodputPerS/dbg.GoodputPerS, 29, 1.0/29)
	notYet(t, "what the debug client, the debug service and workstation GC each cost", "the chart's values (not in the text) and a GC model")
}

// Seed 004 and dotnet.md §4/§5: a burst of netTcp clients against the session
// throttle and the listener behind it.
func TestStoryNetTcpListenerLimits(t *testing.T) {
	runs := runStory(t, "nettcp-listener-limits.toml", 0)
	waitingMax := func(r *results.Run) float64 { return tierOf(t, r, "service").ListenerWaitingMax }
	old := storyCRun(t, runs, "wcf35-defaults")
	// MaxConcurrentSessions 10: ten clients served; maxConnections 10 +
	// listenBacklog 10 wait and time out at the 1 min timeout; the rest are
	// refused at once.
	if s := tierOf(t, old, "service"); s.InstancesMax != 10 || s.CPUUtil > 0.03 {
		t.Errorf("wcf35: %.0f sessions at most, CPU %.1f%%; want 10 and idle", s.InstancesMax, 100*s.CPUUtil)
	}
	if w := waitingMax(old); w != 20 {
		t.Errorf("wcf35: %.0f connections waiting at most, want 10 pending + 10 backlog", w)
	}
	if n, at := storyBTimeouts(old, 60, 0.001); old.Requests.TimedOut < 40 || at != n {
		t.Errorf("wcf35: %d timeouts (%d of %d sampled at 60 s); want the 20 waiting every minute, all at the 1 min timeout", old.Requests.TimedOut, at, n)
	}
	if old.Requests.Rejected < 100*old.Requests.TimedOut {
		t.Errorf("wcf35: %d refused against %d timed out; want the 170 beyond the listener refused again and again", old.Requests.Rejected, old.Requests.TimedOut)
	}
	// "max listen backlog": nobody refused, everybody beyond the sessions waits.
	big := storyCRun(t, runs, "max-listen-backlog")
	if w := waitingMax(big); big.Requests.Rejected != 0 || w != 190 {
		t.Errorf("max listen backlog: %d refused, %.0f waiting; want none refused, 190 waiting", big.Requests.Rejected, w)
	}
	// Port sharing: "the configuration of the netTcpBinding is ignored":
	// SMSvcHost's 100 pending and 10 backlog, not the binding's 1000s.
	ps := storyCRun(t, runs, "port-sharing-max-listen-backlog")
	if w := waitingMax(ps); ps.Requests.Rejected == 0 || w != 110 {
		t.Errorf("port sharing: %d refused, %.0f waiting; want 110 waiting, the rest refused", ps.Requests.Rejected, w)
	}
	if l := storyTopology(t, "nettcp-listener-limits.toml", "port-sharing-max-listen-backlog").Tiers[0].WCF.Listener; !strings.Contains(l.Resolution, "ignored") {
		t.Errorf("port sharing: listener %+v; want the binding's values ignored", l)
	}
	// Targeting .NET 4.5: 12 × 4 pending and backlog (dotnet.md §5).
	if w := waitingMax(storyCRun(t, runs, "net45-targeting")); w != 96 {
		t.Errorf(".NET 4.5 targeting: %.0f waiting, want 48 + 48", w)
	}
	raised := storyCRun(t, runs, "sessions-raised")
	if raised.Requests.TimedOut+raised.Requests.Rejected != 0 || raised.GoodputPerS < 15*old.GoodputPerS {
		t.Errorf("sessions raised: %d timeouts, %d refused, %.0f calls/s against %.1f; want none and all 200 clients served",
			raised.Requests.TimedOut, raised.Requests.Rejected, raised.GoodputPerS, old.GoodputPerS)
	}
}

// Seed 003: one call at a time to an empty operation, RC1 on a VM.
func TestStoryIdleCallLatency(t *testing.T) {
	runs := runStory(t, "idle-call-latency.toml", 0)
	storyCClean(t, runs)
	// "around 200 ms" (HTTP), "the 7 ms neighbourhood" (TCP), "5 ms" (named
	// pipes): the order holds in tsim.
	order := []string{"wsHttp", "basicHttp", "netTcp", "namedPipe"}
	for i := 1; i < len(order); i++ {
		a, b := storyCRun(t, runs, order[i-1]), storyCRun(t, runs, order[i])
		if a.Latency.P50 <= b.Latency.P50 {
			t.Errorf("%s %.2f ms should be slower than %s %.2f ms", order[i-1], 1000*a.Latency.P50, order[i], 1000*b.Latency.P50)
		}
	}
	if l := storyCRun(t, runs, "netTcp").Latency.P50; l > 0.001 {
		t.Errorf("netTcp: %.2f ms a call; tsim's binding table gives well under 1 ms", 1000*l)
	}
	// The figures themselves, contradicted (rows 74–77): each of tsim's
	// below the post's by more than its precision ("around" 200 ms and
	// "the 7 ms neighbourhood" ±10 %, "5 ms" and "30 times" ±5 %); the
	// header: ~2.6 ms, ~0.35 ms, ~0.08 ms, ~7×.
	ws, tcpW, pipe := storyCRun(t, runs, "wsHttp").Latency.P50, storyCRun(t, runs, "netTcp").Latency.P50, storyCRun(t, runs, "namedPipe").Latency.P50
	for _, c := range []struct {
		what           string
		got, want, tol float64
	}{{"wsHttp (s)", ws, 0.200, 0.10}, {"netTcp (s)", tcpW, 0.007, 0.10}, {"namedPipe (s)", pipe, 0.005, 0.05}, {"wsHttp against netTcp (×)", ws / tcpW, 30, 0.05}} {
		if c.got >= (1-c.tol)*c.want {
			t.Errorf("%s: tsim %.4g, the post %.4g; the header says contradicted, below it by more than %.0f%%", c.what, c.got, c.want, 100*c.tol)
		}
	}
	notYet(t, "200 ms / 7 ms / 5 ms a call on the RC1 VM", "binding costs measured on that VM (the table is calibrated to 2009 throughput ratios)")
	// "Load times were over 1 second for the netTcpBinding service; the
	// customBinding service was roughly 10 times faster" (by construction:
	// start_up is 1.2 s and 0.12 s): only the first call pays it.
	tcp, cold, custom := storyCRun(t, runs, "netTcp"), storyCRun(t, runs, "netTcp-first-call"), storyCRun(t, runs, "custom-binding-first-call")
	if cold.Latency.Max <= 1 || cold.Latency.P50 != tcp.Latency.P50 {
		t.Errorf("netTcp start-up: first call %.2f s, p50 %.2f ms (warm %.2f ms); want over 1 s, the others unchanged", cold.Latency.Max, 1000*cold.Latency.P50, 1000*tcp.Latency.P50)
	}
	figure(t, "start-up, netTcp against the custom binding: times slower", cold.Latency.Max/custom.Latency.Max, 10, 0.2)
}
