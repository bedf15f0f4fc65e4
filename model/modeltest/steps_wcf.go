package modeltest

import (
	"fmt"
	"math"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// wcfTables are the step tables of where WCF's instance lock sits in the
// walk (model's walk.go) — decoding runs before it, on the request's
// thread, in parallel with the call that holds it; a request that finds
// it taken waits without a thread —, of one-way operations (WCF.OneWay,
// PhaseAccept): the caller's call ends when the service has a call slot
// for the request and has decoded it; the operation runs on, holding its
// throttles —, and of sessions over HTTP: a session that outlives its
// aborted client, the security negotiation as its own exchange, the close
// as a message of its own.
var wcfTables = []StepTable{
	{
		// A singleton, ConcurrencyMode Single; 2 s to decode, 1 s of
		// operation, 8 cores. All four decode at once (0–2 s), then the
		// lock serialises the operations: 3, 4, 5, 6. Decoding inside the
		// lock would give 3 6 9 12. Thread-seconds: 4 × 2 s decoding, then
		// 1 s each on the lock's thread; a request paused at the lock
		// holds none (18 if it did). Waiting for the lock is queued, not
		// executing (docs/counters.md).
		Name: "DecodeOutsideInstanceLock",
		Top: func() *model.Topology {
			svc := Tier("svc", 8, CPU(time.Second))
			svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.SingleInstance, Concurrency: model.ConcurrencySingle}
			top := Burst(4, 0, 8*time.Second, svc)
			top.Load.Call.Binding = decodeCost(2 * time.Second)
			top.Load.Call.RequestKB = 1
			return top
		},
		Want: "3 4 5 6",
		Check: func(r *results.Run, tol float64) (out []string) {
			tr := r.Tiers[0]
			if tr.ExecutingMax > 1 || tr.IOBusyMax > 4 {
				errorf(&out, "executing max %v (want 1: the lock's holder), I/O threads busy max %v (want ≤ 4)", tr.ExecutingMax, tr.IOBusyMax)
			}
			if tol > 0 {
				return out // a real run samples its levels
			}
			if busy := tr.IOBusyMean * (r.Duration - r.Warmup); math.Abs(busy-12) > 0.01 {
				errorf(&out, "I/O thread-seconds %.3f, want 12 (the requests waiting for the lock hold no thread)", busy)
			}
			if tr.IOBusyMax != 4 || tr.ExecutingMax != 1 {
				errorf(&out, "I/O threads busy max %v (want 4: all decoding at once), executing max %v (want 1)", tr.IOBusyMax, tr.ExecutingMax)
			}
			return out
		},
	},
	{
		// Two I/O threads, three requests: the second pauses at the lock
		// and gives its thread to the third, which decodes meanwhile.
		Name: "LockPausesWithoutThread",
		Top: func() *model.Topology {
			svc := Tier("svc", 8, CPU(time.Second))
			svc.IO = model.Pool{Min: 2, Max: 2}
			svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.SingleInstance, Concurrency: model.ConcurrencySingle}
			top := Burst(3, 0, 8*time.Second, svc)
			top.Load.Call.Binding = decodeCost(2 * time.Second)
			top.Load.Call.RequestKB = 1
			return top
		},
		Want: "3 4 5",
	},
	// 1 s to create an instance, 1 s of operation, 8 cores; SingleLockCPU
	// 0.5 s where a singleton's lock is taken.
	instanceCost(model.PerCall, model.ConcurrencySingle, 2, "2 2"),              // an instance per call, each its own lock
	instanceCost(model.PerSession, model.ConcurrencySingle, 2, "2 2"),           // sessionless: PerCall
	instanceCost(model.SingleInstance, model.ConcurrencySingle, 3, "2.5 4 5.5"), // created once, then 1.5 s a call under the lock
	instanceCost(model.SingleInstance, model.ConcurrencyMultiple, 3, "1 1 2"),   // no lock to pay; the first call creates
	// PerSession on a sessionful binding, one shared proxy: the session's
	// first call creates its instance (1 s), the second does not. Under
	// the session's lock they run one after the other (2, 3); with
	// ConcurrencyMode Multiple side by side (1, 2).
	sessionInstance(model.ConcurrencySingle, "2 3"),
	sessionInstance(model.ConcurrencyMultiple, "1 2"),
	{
		// PerSession on a sessionful binding with one shared proxy: one
		// session, whose channel WCF reads one message at a time
		// (PhaseChannel, before decoding, unlike a singleton's lock). The
		// front end encodes the three calls (0–2 s); the service decodes
		// and runs them one after the other: 2–5, 5–8, 8–11 s.
		Name:  "PerSessionChannelOneAtATime",
		Top:   func() *model.Topology { return sessionChannel(model.ConcurrencySingle, 13*time.Second) },
		Want:  "5 8 11",
		Check: nil,
	},
	{
		// ConcurrencyMode Reentrant: the session's channel is pumped
		// concurrently (only Single with a session is not), so the three
		// calls decode together (2–4 s) and then take the session's
		// instance lock one at a time: 5, 6, 7.
		Name: "ReentrantSessionDecodesOutsideItsLock",
		Top:  func() *model.Topology { return sessionChannel(model.ConcurrencyReentrant, 10*time.Second) },
		Want: "5 6 7",
	},
	{
		// MaxConcurrentCalls 2, 5 s operations. Two calls are accepted at
		// once (latency 0); the third waits for a call slot until 5 s and
		// is accepted then: a one-way call blocks while the service is
		// throttled. The service runs all three (5, 5, 10 s).
		Name: "OneWayEndsAtAcceptance",
		Top:  func() *model.Topology { return Burst(3, 0, 12*time.Second, oneWaySvc(2, Wait(5*time.Second))) },
		Want: "0 0 5",
		Check: func(r *results.Run, tol float64) (out []string) {
			if tr := r.Tiers[0]; tr.Completed != 3 || tr.OutstandingMax > 2 || (tol == 0 && tr.OutstandingMax != 2) {
				errorf(&out, "service completed %d (want 3: the operations run on), calls outstanding max %v (want 2: the throttle)", tr.Completed, tr.OutstandingMax)
			}
			return out
		},
	},
	// IIS-hosted behind the synchronous module, at most 2 requests
	// executing, 5 s operations. Two-way: each request holds its worker
	// and its place for 5 s (5 5 10 10). One-way: the request completes
	// as the operation starts, giving both back, so all four are answered
	// at once and their operations run together.
	oneWayASPNet(false, "5 5 10 10"),
	oneWayASPNet(true, "0 0 0 0"),
	// Sessions over HTTP (wsHttp's security session). MaxSessions 1, a 3 s
	// operation, clients give up after 2 s. wsHttp (idle 4 s): user 1's
	// session lingers until 4 s after its orphaned job's end (T0+3 →
	// T0+7); user 2's call stays queued, runs T0+7 to T0+10 orphaned: both
	// complete at the service. netTcp-like (idle 0): the aborted sessions
	// end at once and user 2's call is dropped when its client goes.
	sessionOutlives(4*time.Second, 2, 0),
	sessionOutlives(0, 1, 1),
	// Two legs of 1 s of service CPU each, 100 ms each way on the wire,
	// then the call (1 s): 2 × (1 + 0.2) + 0.1 + 1 + 0.1 = 3.6 s. A
	// negotiation timeout of 1.5 s ends it during the second leg.
	negotiation(0, "3.6"),
	negotiation(1500*time.Millisecond, "1.5/timed_out"),
	// One request executes at a time (admission), MaxSessions 1, a 1 s
	// operation, per-call proxies closed by a message of their own. User
	// 1's call runs 0–1 s; its close queues behind user 2's call, which is
	// admitted at 1 s and waits for the session user 1 still holds: a
	// deadlock. User 1's close times out at 4 s (CloseTimeout 3 s) and it
	// aborts; user 2 times out at 5 s. Without the close message the
	// session ends with the call and both complete.
	closeMessage(true, "4/timed_out 5/timed_out"),
	closeMessage(false, "1 2"),
}

// HTTPSession is a wsHttp-like sessionful binding with no per-message CPU
// and the given idle timeout.
func HTTPSession(idle time.Duration) model.Binding {
	return model.Binding{Name: "wsHttp", Sessionful: true, SessionIdleTimeout: idle}
}

func sessionOutlives(idle time.Duration, completed, aborted int64) StepTable {
	return StepTable{
		Name: "SessionOutlivesAbortedClient/idle " + idle.String(),
		Top: func() *model.Topology {
			svc := Tier("svc", 8, Wait(3*time.Second))
			svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
			top := Burst(2, 2*time.Second, 12*time.Second, svc)
			top.Load.Call.Binding = HTTPSession(idle)
			top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
			return top
		},
		Want: "2/timed_out 2/timed_out",
		Check: func(r *results.Run, _ float64) (out []string) {
			if tr := r.Tiers[0]; tr.Completed != completed || tr.Aborted != aborted {
				errorf(&out, "svc completed %d (want %d, orphaned), dropped %d (want %d)", tr.Completed, completed, tr.Aborted, aborted)
			}
			return out
		},
	}
}

func negotiation(timeout time.Duration, want string) StepTable {
	return StepTable{
		Name: "NegotiationIsItsOwnExchange/timeout " + timeout.String(),
		Top: func() *model.Topology {
			svc := Tier("svc", 8, Wait(time.Second))
			svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple}
			top := Burst(1, 0, 5*time.Second, svc)
			b := HTTPSession(time.Minute)
			b.SessionCPU, b.NegotiationLegs, b.NegotiationTimeout = 2*time.Second, 2, timeout
			top.Load.Call.Binding = b
			top.Load.Call.Network.Latency = 100 * time.Millisecond
			top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
			return top
		},
		Want: want,
		Check: func(r *results.Run, _ float64) (out []string) {
			if n := r.Calls[0].NegotiationTimedOut; (timeout > 0) != (n == 1) {
				errorf(&out, "%d calls timed out in the negotiation", n)
			}
			if tr := r.Tiers[0]; timeout == 0 && (tr.Completed != 1 || tr.CPUUtil == 0) {
				errorf(&out, "service completed %d calls (want 1: the legs are not calls), CPU %v", tr.Completed, tr.CPUUtil)
			}
			return out
		},
	}
}

func closeMessage(close bool, want string) StepTable {
	return StepTable{
		Name: fmt.Sprintf("CloseMessageDeadlocksBehindAdmission/close message=%v", close),
		Top: func() *model.Topology {
			svc := Tier("svc", 8, Wait(time.Second))
			svc.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 1, QueueLimit: 100}
			svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
			top := Burst(2, 5*time.Second, 8*time.Second, svc)
			b := HTTPSession(10 * time.Second)
			b.CloseMessage, b.CloseTimeout = close, 3*time.Second
			top.Load.Call.Binding = b
			top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
			return top
		},
		Want: want,
	}
}

// decodeCost is a binding whose receiver spends d decoding a 1 KB request
// and nothing encoding an empty reply.
func decodeCost(d time.Duration) model.Binding { return model.Binding{Name: "test", CPUPerKB: d} }

func instanceCost(inst model.Instancing, conc model.Concurrency, n int, want string) StepTable {
	return StepTable{
		Name: "InstanceCreationCost/" + inst.String() + "/" + conc.String(),
		Top: func() *model.Topology {
			svc := Tier("svc", 8, CPU(time.Second))
			svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: inst, Concurrency: conc,
				InstanceCPU: time.Second, SingleLockCPU: 500 * time.Millisecond}
			return Burst(n, 0, 8*time.Second, svc)
		},
		Want: want,
	}
}

func sessionInstance(conc model.Concurrency, want string) StepTable {
	return StepTable{
		Name: "SessionCreatesOneInstance/" + conc.String(),
		Top: func() *model.Topology {
			be := Tier("be", 8, CPU(time.Second))
			be.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: conc, InstanceCPU: time.Second}
			fe := Tier("fe", 8, Call(1, model.Call{Proxy: model.Proxy{Kind: model.ProxyShared}, Binding: model.Binding{Name: "netTcp", Sessionful: true}}))
			return Burst(2, 0, 6*time.Second, fe, be)
		},
		Want: want,
	}
}

// sessionChannel: a front end calls a PerSession service through one
// shared sessionful proxy whose binding spends 2 s a KB; three users.
func sessionChannel(conc model.Concurrency, horizon time.Duration) *model.Topology {
	svc := Tier("svc", 8, CPU(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: conc}
	fe := Tier("fe", 8, Call(1, model.Call{Proxy: model.Proxy{Kind: model.ProxyShared}, Binding: model.Binding{Name: "netTcp", Sessionful: true, CPUPerKB: 2 * time.Second}, RequestKB: 1}))
	return Burst(3, 0, horizon, fe, svc)
}

func oneWaySvc(maxCalls int, steps ...model.Step) model.Tier {
	svc := Tier("svc", 8, steps...)
	svc.WCF = &model.WCF{MaxCalls: maxCalls, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencySingle, OneWay: true}
	return svc
}

func oneWayASPNet(oneWay bool, want string) StepTable {
	name := "two-way"
	if oneWay {
		name = "one-way"
	}
	return StepTable{
		Name: "OneWayReleasesASPNetWorker/" + name,
		Top: func() *model.Topology {
			svc := oneWaySvc(100, Wait(5*time.Second))
			svc.WCF.OneWay = oneWay
			svc.Host = model.HostIISIntegrated
			svc.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 2, QueueLimit: 5000, SyncModule: true}
			return Burst(4, 0, 12*time.Second, svc)
		},
		Want: want,
		Check: func(r *results.Run, tol float64) (out []string) {
			tr := r.Tiers[0]
			if tr.Completed != 4 || tr.ExecutingMax > 2 {
				errorf(&out, "completed %d (want 4), executing max %v (want ≤ 2)", tr.Completed, tr.ExecutingMax)
			}
			if oneWay && tol == 0 && tr.OutstandingMax != 4 {
				errorf(&out, "calls outstanding max %v, want 4 (all operations at once)", tr.OutstandingMax)
			}
			return out
		},
	}
}

// factoryTables: a front end whose one request makes its calls in turn
// through one call site, a new proxy each; a ChannelFactory takes 1 s of
// the front end's CPU, the service 1 s (model's factorycache.go).
var factoryTables = []StepTable{
	// .NET 3.0: every proxy builds its factory: 2 s a call.
	factoryCache("3.0", 1, 2, model.Proxy{}, "4", 2, 0, 0),
	// 3.5: the first builds and adds it, the second finds it.
	factoryCache("3.5", 1, 2, model.Proxy{FactoryCache: model.FactoryCacheSize}, "3", 1, 1, 0),
	// Three users at once: all three miss (none is added before its
	// channel exists), their second calls hit.
	factoryCache("3.5, three at once", 3, 2, model.Proxy{FactoryCache: model.FactoryCacheSize}, "3 3 3", 3, 3, 0),
	factoryCache("Binding constructor", 1, 2, model.Proxy{FactoryCache: model.FactoryCacheSize, Construction: model.ConstructBinding}, "4", 2, 0, 0),
	factoryCache("touched", 1, 2, model.Proxy{FactoryCache: model.FactoryCacheSize, Construction: model.ConstructTouched}, "4", 2, 0, 0),
	// Approach 2 on 3.0: the application's factory, built once.
	factoryCache("own ChannelFactory on 3.0", 1, 3, model.Proxy{Construction: model.ConstructChannelFactory}, "4", 1, 2, 0),
	// A cache of 2, round-robin over 2 endpoints: two misses, then hits
	// (6 calls: 2+2+1+1+1+1 s).
	factoryCache("2 endpoints fit", 1, 6, model.Proxy{FactoryCache: 2, Endpoints: 2, Pick: model.PickRoundRobin}, "8", 2, 4, 0),
	// Over 3 endpoints each add purges the one asked for next: every call
	// misses (12 s); the 3rd to 6th adds purge.
	factoryCache("3 endpoints thrash", 1, 6, model.Proxy{FactoryCache: 2, Endpoints: 3, Pick: model.PickRoundRobin}, "12", 6, 0, 4),
}

func factoryCache(name string, users, calls int, p model.Proxy, want string, built, hits, purged int64) StepTable {
	return StepTable{
		Name: "FactoryCache/" + name,
		Top: func() *model.Topology {
			p := p
			p.Kind = model.ProxyPerCall
			p.FactoryCost = Const(time.Second)
			c := &model.Call{Target: 1, Proxy: p}
			var steps []model.Step
			for range calls {
				steps = append(steps, model.Step{Kind: model.StepCall, Call: c})
			}
			return Burst(users, 0, time.Duration(calls*2+2)*time.Second, Tier("fe", 8, steps...), Tier("be", 8, Wait(time.Second)))
		},
		Want: want,
		Check: func(r *results.Run, _ float64) (out []string) {
			cs := r.Calls[1]
			if cs.FactoriesBuilt != built || cs.FactoryHits != hits || cs.FactoriesPurged != purged || cs.Proxies != int64(users*calls) {
				errorf(&out, "proxies %d, built %d, hits %d, purged %d; want %d, %d, %d, %d",
					cs.Proxies, cs.FactoriesBuilt, cs.FactoryHits, cs.FactoriesPurged, users*calls, built, hits, purged)
			}
			return out
		},
	}
}
