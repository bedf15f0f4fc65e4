package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"testing"
	"time"
)

// Step tables for one-way operations (WCF.OneWay, PhaseAccept): the
// caller's call ends when the service has a call slot for the request and
// has decoded it; the operation runs on, holding its throttles. The
// tables both executors run are modeltest's (steps_wcf.go); these check
// what only the simulator can.

func oneWaySvc(maxCalls int, steps ...model.Step) model.Tier {
	svc := tier("svc", steps...)
	svc.WCF = &model.WCF{MaxCalls: maxCalls, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencySingle, OneWay: true}
	return svc
}

func TestOneWayEndsAtAcceptance(t *testing.T) {
	// The table (modeltest's OneWayEndsAtAcceptance): MaxConcurrentCalls
	// 2, 5 s operations, two accepted at once and the third at 105. With
	// a 2 s timeout the third times out waiting for its slot; the service
	// still runs it once the slot frees (orphaned, 105–110).
	got, res := outcomes(t, burst(3, 2*time.Second, oneWaySvc(2, wait(5*time.Second))))
	expect(t, "latencies", got, "0 0 2/timed_out")
	if tr := res.Tiers[0]; tr.Completed != 3 {
		t.Errorf("with a timeout: service completed %d, want 3", tr.Completed)
	}
	if c := res.Requests; c.Completed != 2 || c.TimedOut != 1 || c.InFlight != 0 {
		t.Errorf("requests %+v, want 2 completed, 1 timed out", c)
	}
}

func TestOneWayNoReplyMessage(t *testing.T) {
	// 100 ms each way, a binding of 1 s a KB; a 1 KB request, a 1 KB reply.
	// Two-way: send 0.1 + decode 1 + op 1 + encode 1 + receive 0.1 = 3.2.
	// One-way: send 0.1 + decode 1, answered, receive 0.1 = 1.2, with no
	// reply to encode or decode.
	for _, c := range []struct {
		oneWay bool
		want   string
	}{{false, "3.2"}, {true, "1.2"}} {
		svc := oneWaySvc(100, cpu(time.Second))
		svc.WCF.OneWay = c.oneWay
		top := burst(1, 0, svc)
		top.Load.Call.Binding = model.Binding{Name: "test", CPUPerKB: time.Second}
		top.Load.Call.RequestKB, top.Load.Call.ReplyKB = 1, 1
		top.Load.Call.Network.Latency = 100 * time.Millisecond
		got, _ := outcomes(t, top)
		expect(t, "latencies", got, c.want)
	}
}

func TestOneWaySingletonLock(t *testing.T) {
	// A singleton, ConcurrencyMode Single, one-way: all three are answered
	// at once; their operations still run one at a time (101, 102, 103).
	svc := oneWaySvc(100, cpu(time.Second))
	svc.WCF.Instancing = model.SingleInstance
	got, res := outcomes(t, burst(3, 0, svc))
	expect(t, "latencies", got, "0 0 0")
	if tr := res.Tiers[0]; tr.Completed != 3 || tr.OutstandingMax != 1 || tr.CallDurationMax > 1.0001 {
		t.Errorf("completed %d (want 3), outstanding max %v (want 1), calls duration max %v (want 1 s)", tr.Completed, tr.OutstandingMax, tr.CallDurationMax)
	}
}
