package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"math"
	"testing"
	"time"
)

// Step tables for where WCF's instance lock sits in the walk (walk.go):
// decoding runs before it, on the request's thread, in parallel with the
// call that holds it; a request that finds it taken waits without a
// thread.

// decodeCost is a binding whose receiver spends d decoding a 1 KB request
// and nothing encoding an empty reply.
func decodeCost(d time.Duration) model.Binding { return model.Binding{Name: "test", CPUPerKB: d} }

func TestDecodeOutsideInstanceLock(t *testing.T) {
	// A singleton, ConcurrencyMode Single; 2 s to decode, 1 s of operation,
	// 8 cores. All four decode at once (100–102), then the lock serialises
	// the operations: 103, 104, 105, 106. Decoding inside the lock would
	// give 3 6 9 12.
	svc := tier("svc", cpu(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.SingleInstance, Concurrency: model.ConcurrencySingle}
	top := burst(4, 0, svc)
	top.Load.Call.Binding = decodeCost(2 * time.Second)
	top.Load.Call.RequestKB = 1
	got, res := outcomes(t, top)
	expect(t, "latencies", got, "3 4 5 6")
	// Thread-seconds: 4 × 2 s decoding, then 1 s each on the lock's
	// thread; a request paused at the lock holds none (18 if it did).
	tr := res.Tiers[0]
	if busy := tr.IOBusyMean * top.Duration.Seconds(); math.Abs(busy-12) > 0.01 {
		t.Errorf("I/O thread-seconds %.3f, want 12 (the requests waiting for the lock hold no thread)", busy)
	}
	if tr.IOBusyMax != 4 {
		t.Errorf("I/O threads busy max %v, want 4 (all decoding at once)", tr.IOBusyMax)
	}
	// Waiting for the lock is queued, not executing (docs/counters.md).
	if tr.ExecutingMax != 1 {
		t.Errorf("executing max %v, want 1: only the request holding the lock executes", tr.ExecutingMax)
	}
}

func TestLockResumesOnAFreedThread(t *testing.T) {
	// One I/O thread. The first request decodes (100–102) and runs under
	// the lock (102–103) on it; the second waits for the thread until 103,
	// decodes until 105 and runs until 106: with a single thread nothing
	// overlaps, and nothing deadlocks on a thread held by a paused call.
	svc := tier("svc", cpu(time.Second))
	svc.IO = model.Pool{Min: 1, Max: 1}
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.SingleInstance, Concurrency: model.ConcurrencySingle}
	top := burst(2, 0, svc)
	top.Load.Call.Binding = decodeCost(2 * time.Second)
	top.Load.Call.RequestKB = 1
	got, _ := outcomes(t, top)
	expect(t, "latencies", got, "3 6")

	// Two threads: both decode (100–102); the second pauses at the lock,
	// giving its thread back, and resumes on the first's at 103.
	svc.IO = model.Pool{Min: 2, Max: 2}
	top = burst(2, 0, svc)
	top.Load.Call.Binding = decodeCost(2 * time.Second)
	top.Load.Call.RequestKB = 1
	got, _ = outcomes(t, top)
	expect(t, "latencies", got, "3 4")
}

func TestPerSessionChannelOneAtATime(t *testing.T) {
	// PerSession on a sessionful binding with one shared proxy: one
	// session, whose channel WCF reads one message at a time (PhaseChannel,
	// before decoding, unlike a singleton's lock). The front end encodes
	// the three calls (100–102); the service decodes and runs them one
	// after the other: 102–105, 105–108, 108–111.
	svc := tier("svc", cpu(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
	fe := tier("fe", callTo(1, model.Call{Proxy: model.Proxy{Kind: model.ProxyShared}, Binding: model.Binding{Name: "netTcp", Sessionful: true, CPUPerKB: 2 * time.Second}, RequestKB: 1}))
	got, _ := outcomes(t, burst(3, 0, fe, svc))
	expect(t, "latencies", got, "5 8 11")
}

func TestInstanceCreationCost(t *testing.T) {
	// 1 s to create an instance, 1 s of operation, 8 cores; SingleLockCPU
	// 0.5 s where a singleton's lock is taken.
	for _, c := range []struct {
		inst model.Instancing
		conc model.Concurrency
		n    int
		want string
	}{
		{model.PerCall, model.ConcurrencySingle, 2, "2 2"},              // an instance per call, each its own lock
		{model.PerSession, model.ConcurrencySingle, 2, "2 2"},           // sessionless: PerCall
		{model.SingleInstance, model.ConcurrencySingle, 3, "2.5 4 5.5"}, // created once, then 1.5 s a call under the lock
		{model.SingleInstance, model.ConcurrencyMultiple, 3, "1 1 2"},   // no lock to pay; the first call creates
	} {
		svc := tier("svc", cpu(time.Second))
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: c.inst, Concurrency: c.conc,
			InstanceCPU: time.Second, SingleLockCPU: 500 * time.Millisecond}
		got, _ := outcomes(t, burst(c.n, 0, svc))
		expect(t, c.inst.String()+"/"+c.conc.String(), got, c.want)
	}
}

func TestSessionCreatesOneInstance(t *testing.T) {
	// PerSession on a sessionful binding, one shared proxy: the session's
	// first call creates its instance (1 s), the second does not. Under
	// the session's lock they run one after the other (2, 3); with
	// ConcurrencyMode Multiple side by side (1, 2).
	for _, c := range []struct {
		conc model.Concurrency
		want string
	}{{model.ConcurrencySingle, "2 3"}, {model.ConcurrencyMultiple, "1 2"}} {
		be := tier("be", cpu(time.Second))
		be.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: c.conc, InstanceCPU: time.Second}
		fe := tier("fe", callTo(1, model.Call{Proxy: model.Proxy{Kind: model.ProxyShared}, Binding: model.Binding{Name: "netTcp", Sessionful: true}}))
		got, _ := outcomes(t, burst(2, 0, fe, be))
		expect(t, "PerSession/"+c.conc.String(), got, c.want)
	}
}

func TestReentrantSessionDecodesOutsideItsLock(t *testing.T) {
	// ConcurrencyMode Reentrant: the session's channel is pumped
	// concurrently (only Single with a session is not), so the three calls
	// decode together (102–104) and then take the session's instance lock
	// one at a time: 105, 106, 107. Single gives 5 8 11
	// (TestPerSessionChannelOneAtATime).
	svc := tier("svc", cpu(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencyReentrant}
	fe := tier("fe", callTo(1, model.Call{Proxy: model.Proxy{Kind: model.ProxyShared}, Binding: model.Binding{Name: "netTcp", Sessionful: true, CPUPerKB: 2 * time.Second}, RequestKB: 1}))
	got, _ := outcomes(t, burst(3, 0, fe, svc))
	expect(t, "latencies", got, "5 6 7")
}
