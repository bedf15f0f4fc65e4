package realmode

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// The real executor takes WCF's instance lock where the simulator does
// (model/instancing_steps_test.go): after decoding, the decode of the
// waiting requests overlapping the call that holds it.
func TestStepDecodeOutsideInstanceLock(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	svc := tier("svc", 8, cpuStep(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.SingleInstance, Concurrency: model.ConcurrencySingle}
	top := burst(4, 0, 8*time.Second, svc)
	top.Load.Call.Binding = model.Binding{Name: "test", CPUPerKB: 2 * time.Second}
	top.Load.Call.RequestKB = 1
	s, r := table(t, "decode outside the lock", top, "3 4 5 6", Options{})
	for _, res := range judged(s, r) {
		if tr := res.Tiers[0]; tr.ExecutingMax > 1 || tr.IOBusyMax > 4 {
			t.Errorf("executing max %v (want 1: the lock's holder), I/O threads busy max %v (want ≤ 4)", tr.ExecutingMax, tr.IOBusyMax)
		}
	}
}

func TestStepLockPausesWithoutThread(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// Two I/O threads, three requests: the second pauses at the lock and
	// gives its thread to the third, which decodes meanwhile.
	svc := tier("svc", 8, cpuStep(time.Second))
	svc.IO = model.Pool{Min: 2, Max: 2}
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.SingleInstance, Concurrency: model.ConcurrencySingle}
	top := burst(3, 0, 8*time.Second, svc)
	top.Load.Call.Binding = model.Binding{Name: "test", CPUPerKB: 2 * time.Second}
	top.Load.Call.RequestKB = 1
	table(t, "paused at the lock", top, "3 4 5", Options{})
}

func TestStepInstanceCreationCost(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	for _, c := range []struct {
		inst model.Instancing
		n    int
		want string
	}{
		{model.PerCall, 2, "2 2"},
		{model.SingleInstance, 3, "2.5 4 5.5"},
	} {
		svc := tier("svc", 8, cpuStep(time.Second))
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: c.inst, Concurrency: model.ConcurrencySingle,
			InstanceCPU: time.Second, SingleLockCPU: 500 * time.Millisecond}
		table(t, "instance cost "+c.inst.String(), burst(c.n, 0, 8*time.Second, svc), c.want, Options{})
	}
}

func TestStepSessionCreatesOneInstance(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	be := tier("be", 8, cpuStep(time.Second))
	be.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle, InstanceCPU: time.Second}
	fe := tier("fe", 8, callStep(1, model.Call{Proxy: model.Proxy{Kind: model.ProxyShared}, Binding: model.Binding{Name: "netTcp", Sessionful: true}}))
	table(t, "a session's instance", burst(2, 0, 6*time.Second, fe, be), "2 3", Options{})
}

func TestStepPerSessionChannelOneAtATime(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	svc := tier("svc", 8, cpuStep(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
	fe := tier("fe", 8, callStep(1, model.Call{Proxy: model.Proxy{Kind: model.ProxyShared}, Binding: model.Binding{Name: "netTcp", Sessionful: true, CPUPerKB: 2 * time.Second}, RequestKB: 1}))
	table(t, "a session's channel", burst(3, 0, 13*time.Second, fe, svc), "5 8 11", Options{})
}

func TestStepReentrantSessionDecodesOutsideItsLock(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	svc := tier("svc", 8, cpuStep(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencyReentrant}
	fe := tier("fe", 8, callStep(1, model.Call{Proxy: model.Proxy{Kind: model.ProxyShared}, Binding: model.Binding{Name: "netTcp", Sessionful: true, CPUPerKB: 2 * time.Second}, RequestKB: 1}))
	table(t, "a reentrant session", burst(3, 0, 10*time.Second, fe, svc), "5 6 7", Options{})
}
