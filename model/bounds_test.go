package model

import (
	"math"
	"testing"
	"time"
)

func TestAnalysePipeline(t *testing.T) {
	// The reference pipeline: the 2 back-end connections, each held 150 ms
	// (50 ms CPU + 100 ms wait), bind at 2/0.15 = 13.33 req/s; at one user
	// a request takes D = 0.15 s, so with Z = 1 s they saturate at
	// (D+Z)·13.33 = 15.3 users, far below the 100 the load brings.
	a := Analyse(pipelineTopology(20*time.Second, time.Hour))
	if a.Binding == nil || a.Binding.Kind != "connection" || a.Binding.Tier != "fe" {
		t.Fatalf("binding = %+v", a.Binding)
	}
	if math.Abs(a.MaxPerSec-13.333) > 0.01 {
		t.Errorf("max throughput %.3f, want 13.333", a.MaxPerSec)
	}
	if a.D != 150*time.Millisecond {
		t.Errorf("D = %v, want 150ms", a.D)
	}
	if math.Abs(a.SaturatesAt-15.33) > 0.01 || !a.Saturated {
		t.Errorf("saturates at %.2f users (saturated=%v), want 15.33", a.SaturatesAt, a.Saturated)
	}
	// What binds next: the front end's 96 threads each held 150 ms → 640/s;
	// the back-end CPU: 8 cores / 50 ms = 160/s.
	if a.Bounds[1].Kind != "cpu" || math.Abs(a.Bounds[1].PerSec-160) > 0.01 {
		t.Errorf("second bound = %+v, want back-end CPU at 160/s", a.Bounds[1])
	}
}

func TestAnalyseAsyncFreesThreads(t *testing.T) {
	be := tier("be", wait(time.Second))
	mid := tier("mid", cpu(10*time.Millisecond), callTo(1, Call{}))
	mid.Worker = Pool{Min: 4, Max: 4}
	top := burst(10, 0, mid, be)
	threads := func() Bound {
		for _, b := range Analyse(top).Bounds {
			if b.Kind == "threads" && b.Tier == "mid" {
				return b
			}
		}
		t.Fatal("no thread bound for mid")
		return Bound{}
	}
	// Sync: 4 threads each held 1.01 s → 3.96/s. Async: held 10 ms → 400/s.
	if b := threads(); math.Abs(b.PerSec-4/1.01) > 0.01 {
		t.Errorf("sync: %+v", b)
	}
	top.Tiers[0].Async = true
	if b := threads(); math.Abs(b.PerSec-400) > 0.01 {
		t.Errorf("async: %+v", b)
	}
}

func TestAnalyseSessionsCapUsers(t *testing.T) {
	// 50 users each keep a netTcp session; MaxConcurrentSessions 10 binds
	// at 10 users.
	svc := tier("svc", wait(100*time.Millisecond))
	svc.WCF = &WCF{MaxCalls: 16, MaxSessions: 10, MaxInstances: 26, Instancing: PerSession}
	top := burst(50, time.Minute, svc)
	top.Load.Think = cnst(time.Second)
	top.Load.Call.Binding = Binding{Name: "netTcp", Sessionful: true}
	top.Load.Call.Proxy = Proxy{Kind: ProxyPerUser}
	a := Analyse(top)
	if a.Binding == nil || a.Binding.Kind != "wcf-sessions" || math.Abs(a.SaturatesAt-10) > 1e-9 {
		t.Fatalf("binding %+v at %.2f users, want MaxConcurrentSessions at 10", a.Binding, a.SaturatesAt)
	}
}

func TestAnalyseSessionSetUpCostsTheService(t *testing.T) {
	// A new proxy per call on a sessionful binding: every visit brings a
	// session, whose set-up (20 ms, over two negotiation legs of 1 ms base
	// each) and close message (1 ms) are the service's CPU on top of the
	// operation's 10 ms: 33 ms a visit, 2 cores → 60.6/s. A long-lived
	// proxy sets its session up once: 10 ms a visit → 200/s.
	svc := tier("svc", cpu(10*time.Millisecond))
	svc.Cores = 2
	svc.WCF = &WCF{MaxCalls: 1000, MaxSessions: 1000, MaxInstances: 1000, Instancing: PerCall}
	top := burst(50, time.Minute, svc)
	top.Load.Call.Binding = Binding{Name: "wsHttp", Sessionful: true, SessionCPU: 20 * time.Millisecond,
		CPUBase: time.Millisecond, NegotiationLegs: 2, CloseMessage: true}
	cpuBound := func() Bound {
		for _, b := range Analyse(top).Bounds {
			if b.Kind == "cpu" && b.Tier == "svc" {
				return b
			}
		}
		t.Fatal("no CPU bound for svc")
		return Bound{}
	}
	// The visit's own message costs CPUBase to decode and to encode: 2 ms.
	top.Load.Call.Proxy = Proxy{Kind: ProxyPerCall}
	if b := cpuBound(); b.Hold != 35*time.Millisecond {
		t.Errorf("per-call proxy: CPU held %v a visit, want 35ms (10 + 2 + 20 + 2 legs + 1 close)", b.Hold)
	}
	top.Load.Call.Proxy = Proxy{Kind: ProxyPerUser}
	if b := cpuBound(); b.Hold != 12*time.Millisecond {
		t.Errorf("long-lived proxy: CPU held %v a visit, want 12ms", b.Hold)
	}
}
