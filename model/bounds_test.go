package model_test

import (
	. "github.com/tsim-dev/tsim/model"
	mt "github.com/tsim-dev/tsim/model/modeltest"
	"math"
	"testing"
	"time"
)

func TestAnalysePipeline(t *testing.T) {
	// The reference pipeline: the 2 back-end connections, each held 150 ms
	// (50 ms CPU + 100 ms wait), bind at 2/0.15 = 13.33 req/s; at one user
	// a request takes D = 0.15 s, so with Z = 1 s they saturate at
	// (D+Z)·13.33 = 15.3 users, far below the 100 the load brings.
	a := Analyse(mt.Pipeline(20*time.Second, time.Hour))
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
	be := mt.Tier("be", 8, mt.Wait(time.Second))
	mid := mt.Tier("mid", 8, mt.CPU(10*time.Millisecond), mt.Call(1, Call{}))
	mid.Worker = Pool{Min: 4, Max: 4}
	top := mt.Burst(10, 0, 5*time.Second, mid, be)
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
	svc := mt.Tier("svc", 8, mt.Wait(100*time.Millisecond))
	svc.WCF = &WCF{MaxCalls: 16, MaxSessions: 10, MaxInstances: 26, Instancing: PerSession}
	top := mt.Burst(50, time.Minute, 5*time.Second, svc)
	top.Load.Think = mt.Const(time.Second)
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
	svc := mt.Tier("svc", 8, mt.CPU(10*time.Millisecond))
	svc.Cores = 2
	svc.WCF = &WCF{MaxCalls: 1000, MaxSessions: 1000, MaxInstances: 1000, Instancing: PerCall}
	top := mt.Burst(50, time.Minute, 5*time.Second, svc)
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

func TestAnalyseInstanceLockAndOneWay(t *testing.T) {
	// The bounds follow the walk: a singleton's lock is held for the
	// operation, the activation and the reply, not the decoding; a one-way
	// call holds its caller until its request is decoded; an instance per
	// call adds its creation to the service's CPU.
	svc := mt.Tier("svc", 8, mt.CPU(time.Second))
	svc.WCF = &WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: SingleInstance, Concurrency: ConcurrencySingle,
		InstanceCPU: 3 * time.Second, SingleLockCPU: 500 * time.Millisecond}
	top := mt.Burst(4, 0, 5*time.Second, svc)
	top.Load.Call.Binding = Binding{Name: "test", CPUPerKB: 2 * time.Second}
	top.Load.Call.RequestKB, top.Load.Call.ReplyKB = 1, 0.25
	hold := func(a Analysis, kind string) time.Duration {
		for _, b := range a.Bounds {
			if b.Kind == kind {
				return b.Hold
			}
		}
		t.Fatalf("no %s bound in %+v", kind, a.Bounds)
		return 0
	}
	// lock: 1 s operation + 0.5 s lock + 0.5 s reply; the 2 s decode outside.
	if h := hold(Analyse(top), "instance-lock"); h != 2*time.Second {
		t.Errorf("instance lock held %v a request, want 2s", h)
	}
	if h := hold(Analyse(top), "cpu"); h != 4*time.Second {
		t.Errorf("CPU %v a request, want 4s (decode 2, operation 1, lock 0.5, reply 0.5; the singleton's creation spread over its calls)", h)
	}
	svc.WCF.Instancing = PerCall
	top.Tiers[0] = svc
	if h := hold(Analyse(top), "cpu"); h != 6500*time.Millisecond {
		t.Errorf("PerCall: CPU %v a request, want 6.5s (an instance a call, no singleton lock)", h)
	}
	svc.WCF.OneWay = true
	top.Tiers[0] = svc
	a := Analyse(top)
	if a.D != 2*time.Second {
		t.Errorf("one-way: D = %v, want 2s (answered once decoded)", a.D)
	}
	if h := hold(a, "cpu"); h != 6*time.Second {
		t.Errorf("one-way: CPU %v a request, want 6s (no reply to encode)", h)
	}
}

func TestMachineBoundSumsDemands(t *testing.T) {
	// The operational bound of a shared machine is its cores over the
	// demands of all its tiers: 1 core / 2 s = 0.5 requests per second.
	a := Analyse(sharedMachine(1))
	var cpus []Bound
	for _, b := range a.Bounds {
		if b.Kind == "cpu" {
			cpus = append(cpus, b)
		}
	}
	if len(cpus) != 1 || cpus[0].Throttle != "CPU cl+svc" || math.Abs(cpus[0].PerSec-0.5) > 1e-9 {
		t.Fatalf("cpu bounds %+v, want one, CPU cl+svc at 0.5/s", cpus)
	}
	a = Analyse(sharedMachine(0))
	n := 0
	for _, b := range a.Bounds {
		if b.Kind == "cpu" {
			n++
			if math.Abs(b.PerSec-1) > 1e-9 {
				t.Errorf("%s: %.3f/s, want 1", b.Throttle, b.PerSec)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d cpu bounds on two machines, want 2", n)
	}
}

// sharedMachine is a client and its service, on one core each (machine 0)
// or on one machine of one core (machine 1).
func sharedMachine(machine int) *Topology {
	cl := mt.Tier("cl", 1, mt.Lock(0), mt.Wait(time.Second), mt.Unlock(0), mt.CPU(time.Second), mt.Call(1, Call{}))
	svc := mt.Tier("svc", 1, mt.CPU(time.Second))
	cl.Machine, svc.Machine = machine, machine
	return mt.Burst(2, 0, 6*time.Second, cl, svc)
}
