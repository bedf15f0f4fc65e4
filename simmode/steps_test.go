package simmode

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// Step-table tests: small deterministic systems whose every event can be
// worked out by hand. n users all send their one request at t = 100 s (their
// first think time); each table lists the (latency, outcome) of every
// request, in completion order, at named virtual instants.

const t0 = 300 * time.Second

var plenty = model.Pool{Min: 1000, Max: 1000}

func cnst(d time.Duration) sim.Dist { return sim.Const(d) }

func tier(name string, steps ...model.Step) model.Tier {
	return model.Tier{Name: name, Cores: 8, CostMultiplier: 1, Worker: plenty, IO: plenty, Steps: steps}
}

func cpu(d time.Duration) model.Step  { return model.Step{Kind: model.StepCPU, Demand: cnst(d)} }
func wait(d time.Duration) model.Step { return model.Step{Kind: model.StepWait, Demand: cnst(d)} }
func callTo(target int, c model.Call) model.Step {
	c.Target = target
	return model.Step{Kind: model.StepCall, Call: &c}
}

// burst builds a topology where n users each send one request at t0.
func burst(n int, timeout time.Duration, tiers ...model.Tier) *model.Topology {
	return &model.Topology{
		Duration: 2*t0 - time.Second, SampleEvery: time.Second, Tiers: tiers,
		Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: float64(n)}}, Think: cnst(t0),
			Call: model.Call{Target: 0, Timeout: timeout}},
	}
}

// outcomes returns "latency/outcome" of every ended request in completion order.
func outcomes(t *testing.T, top *model.Topology) (string, *results.Run) {
	t.Helper()
	res, err := Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pts := append([]results.Point(nil), res.Points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].T < pts[j].T })
	var b []string
	for _, p := range pts {
		if p.T < t0.Seconds() {
			t.Fatalf("request ended at %v before the burst", p.T)
		}
		s := fmt.Sprintf("%g", roundMS(p.Latency))
		if p.Outcome != results.Completed {
			s += "/" + p.Outcome.String()
		}
		b = append(b, s)
	}
	return strings.Join(b, " "), res
}

func roundMS(s float64) float64 { return float64(int64(s*1000+0.5)) / 1000 }

func expect(t *testing.T, name, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got  %s\n want %s", name, got, want)
	}
}

func TestConnectionLimitHandOffAndTimeout(t *testing.T) {
	// Limit 2, service 1 s, client timeout 2.5 s. Requests 1–2 run 100–101,
	// 3–4 get the freed connections at 101 and finish at 102, 5 gets one at
	// 102 and times out at 102.5 while the back end goes on until 103.
	be := tier("be", wait(time.Second))
	fe := tier("fe", callTo(1, model.Call{Conn: model.Conn{Limit: 2}}))
	top := burst(5, 2500*time.Millisecond, fe, be)
	got, res := outcomes(t, top)
	expect(t, "latencies", got, "1 1 2 2 2.5/timed_out")
	if c := res.Calls[1]; c.From != "fe" || c.InUseMax != 2 || c.WaitingMax != 3 {
		t.Errorf("fe→be call stats %+v", c)
	}
	if res.Tiers[1].Completed != 5 {
		t.Errorf("back end completed %d, want 5 (the orphan runs on)", res.Tiers[1].Completed)
	}
}

func TestConnectionWaitCountsAgainstTimeout(t *testing.T) {
	// Limit 1, service 1 s, timeout 1.5 s: the second request waits 1 s for
	// the connection, then has 0.5 s left and times out at 101.5 while its
	// server work (started at 101) is orphaned.
	be := tier("be", wait(time.Second))
	fe := tier("fe", callTo(1, model.Call{Conn: model.Conn{Limit: 1}, Timeout: 1500 * time.Millisecond}))
	top := burst(2, 0, fe, be)
	got, _ := outcomes(t, top)
	expect(t, "latencies", got, "1 1.5/timed_out")
}

func TestMaxPendingRejects(t *testing.T) {
	// Envoy-style: 1 connection, at most 1 pending; the third is refused at once.
	be := tier("be", wait(time.Second))
	fe := tier("fe", callTo(1, model.Call{Conn: model.Conn{Limit: 1, MaxPending: 1}}))
	got, _ := outcomes(t, burst(3, 0, fe, be))
	expect(t, "latencies", got, "0/rejected 1 2")
}

func TestConnectionWaitTimeoutFails(t *testing.T) {
	// HikariCP-style: pool 1, wait at most 0.5 s, then an error.
	be := tier("be", wait(time.Second))
	fe := tier("fe", callTo(1, model.Call{Conn: model.Conn{Limit: 1, WaitTimeout: 500 * time.Millisecond}}))
	got, _ := outcomes(t, burst(2, 0, fe, be))
	expect(t, "latencies", got, "0.5/failed 1")
}

func TestCLRThreadInjection(t *testing.T) {
	// Min 2 threads, 10 requests each holding a thread 10 s: two start at
	// once, then one more every 500 ms gate tick while work is queued.
	be := tier("be", wait(10*time.Second))
	be.Worker = model.Pool{Min: 2, Max: 100, Injection: model.InjectCLR, GateDelay: 500 * time.Millisecond, IdleTimeout: 20 * time.Second}
	got, res := outcomes(t, burst(10, 0, be))
	expect(t, "latencies", got, "10 10 10.5 11 11.5 12 12.5 13 13.5 14")
	if res.Tiers[0].ThreadsMax != 10 {
		t.Errorf("threads max %v, want 10", res.Tiers[0].ThreadsMax)
	}
}

func TestThreadRetireWhenIdle(t *testing.T) {
	be := tier("be", wait(time.Second))
	be.Worker = model.Pool{Min: 1, Max: 100, Injection: model.InjectNone, IdleTimeout: 20 * time.Second}
	top := burst(5, 0, be)
	top.SampleEvery = 10 * time.Second
	_, res := outcomes(t, top)
	threadsAt := func(sec float64) float64 {
		for _, s := range res.Series {
			if s.T == sec {
				return s.Tiers[0].Threads
			}
		}
		t.Fatalf("no sample at %v", sec)
		return 0
	}
	if got := threadsAt(t0.Seconds() - 10); got != 0 {
		t.Errorf("threads before the burst = %v, want 0 (created on demand)", got)
	}
	if got := threadsAt(t0.Seconds() + 10); got != 5 {
		t.Errorf("threads just after the burst = %v, want 5", got)
	}
	if got := threadsAt(t0.Seconds() + 100); got != 1 {
		t.Errorf("threads long after = %v, want 1 (the minimum)", got)
	}
}

func TestClassicAdmission(t *testing.T) {
	// 1 CPU, autoConfig: 100 workers − 88 minFree = 12 executing; queue
	// limit 5. 20 requests: 12 run, 5 wait one round, 3 are refused (503).
	web := tier("web", wait(time.Second))
	web.Host = model.HostASPNetClassic
	web.Cores = 1
	web.Worker = model.Pool{Min: 100, Max: 100}
	web.Admission = model.Admission{Kind: model.AdmitClassic, MinFreeThreads: 88, QueueLimit: 5}
	got, res := outcomes(t, burst(20, 0, web))
	want := "0/rejected 0/rejected 0/rejected" + strings.Repeat(" 1", 12) + strings.Repeat(" 2", 5)
	expect(t, "latencies", got, want)
	if tr := res.Tiers[0]; tr.ExecutingMax != 12 || tr.QueuedMax != 5 || tr.Rejected != 3 {
		t.Errorf("tier %+v", tr)
	}
}

func TestConcurrentAdmissionCountingExecuting(t *testing.T) {
	// .NET 4 style: 2 executing, requestQueueLimit 4 counts executing too:
	// 2 run, 2 queue, the rest are refused.
	web := tier("web", wait(time.Second))
	web.Host = model.HostIISIntegrated
	web.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 2, QueueLimit: 4, CountExecuting: true}
	got, _ := outcomes(t, burst(6, 0, web))
	expect(t, "latencies", got, "0/rejected 0/rejected 1 1 2 2")
}

func TestWCFCallThrottleOrphans(t *testing.T) {
	// MaxConcurrentCalls 2, 1 s per call, client timeout 1.5 s: the queued
	// calls time out at 101.5 but still run (101–102, 102–103 — no throttle
	// timeout of their own), so the service completes all 5.
	svc := tier("svc", wait(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 2, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple}
	got, res := outcomes(t, burst(5, 1500*time.Millisecond, svc))
	expect(t, "latencies", got, "1 1 1.5/timed_out 1.5/timed_out 1.5/timed_out")
	if res.Tiers[0].Completed != 5 {
		t.Errorf("service completed %d, want 5", res.Tiers[0].Completed)
	}
}

func TestInstancingConcurrency(t *testing.T) {
	cases := []struct {
		inst model.Instancing
		conc model.Concurrency
		want string
	}{
		{model.SingleInstance, model.ConcurrencySingle, "1 2 3 4"},    // one instance, one thread: serial
		{model.SingleInstance, model.ConcurrencyMultiple, "1 1 1 1"},  // one instance, many threads
		{model.PerSession, model.ConcurrencySingle, "1 1 1 1"},        // sessionless binding: behaves as PerCall
		{model.PerCall, model.ConcurrencySingle, "1 1 1 1"},           // an instance per call
		{model.SingleInstance, model.ConcurrencyReentrant, "1 2 3 4"}, // no outbound call to re-enter on
	}
	for _, c := range cases {
		svc := tier("svc", cpu(time.Second))
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: c.inst, Concurrency: c.conc}
		got, _ := outcomes(t, burst(4, 0, svc))
		expect(t, c.inst.String()+"/"+c.conc.String(), got, c.want)
	}
}

func TestPerSessionSessionfulSerialisesPerProxy(t *testing.T) {
	// netTcp-like sessionful binding, PerSession + Single: each user's own
	// proxy is one session; a user's calls are serial but users are parallel.
	// MaxSessions 2: the third user waits for a session that never frees
	// and times out.
	svc := tier("svc", wait(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 2, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
	top := burst(3, 5*time.Second, svc)
	top.Load.Call.Binding = model.Binding{Name: "netTcp", Sessionful: true}
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerUser}
	got, _ := outcomes(t, top)
	expect(t, "latencies", got, "1 1 5/timed_out")
}

func TestSharedProxyWithoutOpenSerialises(t *testing.T) {
	// Calls through a shared proxy never opened explicitly are released one
	// at a time until the open queue drains; explicitly opened: concurrent.
	for _, c := range []struct {
		kind model.ProxyKind
		want string
	}{{model.ProxySharedNoOpen, "1 2 3"}, {model.ProxyShared, "1 1 1"}} {
		be := tier("be", wait(time.Second))
		fe := tier("fe", callTo(1, model.Call{Proxy: model.Proxy{Kind: c.kind}}))
		got, _ := outcomes(t, burst(3, 0, fe, be))
		expect(t, c.kind.String(), got, c.want)
	}
}

func TestSyncVersusAsyncHandler(t *testing.T) {
	// One thread in the middle tier; a 1 s downstream call. A synchronous
	// handler keeps its thread while it waits (requests serialise); an
	// asynchronous one returns it (all three wait together).
	for _, c := range []struct {
		async bool
		want  string
	}{{false, "1 2 3"}, {true, "1 1 1"}} {
		be := tier("be", wait(time.Second))
		mid := tier("mid", callTo(1, model.Call{}))
		mid.Worker = model.Pool{Min: 1, Max: 1}
		mid.Async = c.async
		got, _ := outcomes(t, burst(3, 0, mid, be))
		expect(t, fmt.Sprintf("async=%v", c.async), got, c.want)
	}
}

func TestTwoThreadsPerRequestWithSyncModule(t *testing.T) {
	svc := tier("svc", wait(time.Second))
	svc.Host = model.HostIISIntegrated
	svc.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 100, QueueLimit: 5000, SyncModule: true}
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple}
	_, res := outcomes(t, burst(10, 0, svc))
	if got := res.Tiers[0].ThreadsBusyMax; got != 20 {
		t.Errorf("sync module: threads busy max %v, want 20 (worker + I/O per request)", got)
	}
	svc.Admission.SyncModule = false
	_, res = outcomes(t, burst(10, 0, svc))
	if got := res.Tiers[0].ThreadsBusyMax; got != 10 {
		t.Errorf("async module: threads busy max %v, want 10", got)
	}
}

func TestExecutionTimeoutAborts(t *testing.T) {
	// executionTimeout 110 s, checked every 15 s: a 200 s page is aborted at
	// the first check after 110 s of execution, i.e. at 120 s.
	web := tier("web", wait(200*time.Second))
	web.Host = model.HostASPNetClassic
	web.Worker = model.Pool{Min: 100, Max: 100}
	web.Admission = model.Admission{Kind: model.AdmitClassic, MinFreeThreads: 8, QueueLimit: 5000, ExecutionTimeout: 110 * time.Second, ExecutionCheck: 15 * time.Second}
	top := burst(1, 0, web)
	got, res := outcomes(t, top)
	// The check ticks every 15 s from the first admission (t = 100 s).
	expect(t, "latencies", got, "120/failed")
	if res.Tiers[0].Aborted != 1 {
		t.Errorf("aborted %d, want 1", res.Tiers[0].Aborted)
	}
}

func TestRetriesAfterTimeout(t *testing.T) {
	// 10 s service, 2 s timeout, 3 attempts with a 1 s backoff: attempts at
	// 100, 103, 106; the last times out at 108; the service runs all three.
	svc := tier("svc", wait(10*time.Second))
	top := burst(1, 2*time.Second, svc)
	top.Load.Call.Retry = model.Retry{Attempts: 3, Backoff: cnst(time.Second)}
	got, res := outcomes(t, top)
	expect(t, "latencies", got, "8/timed_out")
	if res.Tiers[0].Completed != 3 || res.Calls[0].Retries != 2 {
		t.Errorf("service completed %d (want 3), retries %d (want 2)", res.Tiers[0].Completed, res.Calls[0].Retries)
	}
}

func TestLockStep(t *testing.T) {
	svc := tier("svc", model.Step{Kind: model.StepLock, Lock: 0}, wait(time.Second), model.Step{Kind: model.StepUnlock, Lock: 0}, wait(time.Second))
	got, _ := outcomes(t, burst(3, 0, svc))
	expect(t, "latencies", got, "2 3 4")
}

func TestProcessorSharingCPU(t *testing.T) {
	// 2 cores, 4 requests of 1 s CPU: each runs at rate 1/2, all end at 2 s.
	svc := tier("svc", cpu(time.Second))
	svc.Cores = 2
	got, res := outcomes(t, burst(4, 0, svc))
	expect(t, "latencies", got, "2 2 2 2")
	svc.CostMultiplier = 1.5
	got, _ = outcomes(t, burst(4, 0, svc))
	expect(t, "cost multiplier 1.5", got, "3 3 3 3")
	_ = res
}

func TestUserScheduleRamp(t *testing.T) {
	s := model.Schedule{{At: 0, Value: 60}, {At: 2 * time.Minute, Value: 100}}
	cases := []struct {
		at   time.Duration
		want float64
	}{{0, 60}, {time.Minute, 80}, {2 * time.Minute, 100}, {time.Hour, 100}}
	for _, c := range cases {
		if got := s.At(c.at); got != c.want {
			t.Errorf("At(%v) = %v, want %v", c.at, got, c.want)
		}
	}
	// The rounded user count changes every 3 s on this ramp (40 users in 120 s).
	n, now := 0, time.Duration(0)
	for {
		next, ok := model.NextChange(s, now)
		if !ok {
			break
		}
		if next <= now {
			t.Fatalf("nextChange did not advance at %v", now)
		}
		now = next
		n++
	}
	if n != 40 {
		t.Errorf("%d changes, want 40", n)
	}
	// A spike and back: a step up and a step down.
	spike := model.Schedule{{At: 0, Value: 10}, {At: time.Minute, Value: 10}, {At: time.Minute, Value: 50}, {At: 2 * time.Minute, Value: 50}, {At: 2 * time.Minute, Value: 10}}
	if next, _ := model.NextChange(spike, 0); next != time.Minute {
		t.Errorf("spike: first change at %v, want 1m", next)
	}
	if next, _ := model.NextChange(spike, time.Minute); next != 2*time.Minute {
		t.Errorf("spike: second change at %v, want 2m", next)
	}
}

func TestClientConnectedCheckDropsAbandonedQueued(t *testing.T) {
	// Classic queue, 1 CPU (12 executing), 10 s pages, clients give up after
	// 8 s: the 3 queued requests time out; when dequeued at 10 s (after more
	// than 5 s in the queue, client gone) they are dropped unserved.
	web := tier("web", wait(10*time.Second))
	web.Host = model.HostASPNetClassic
	web.Cores = 1
	web.Worker = model.Pool{Min: 100, Max: 100}
	web.Admission = model.Admission{Kind: model.AdmitClassic, MinFreeThreads: 88, QueueLimit: 5000, ClientConnectedCheck: 5 * time.Second}
	got, res := outcomes(t, burst(15, 8*time.Second, web))
	expect(t, "latencies", got, strings.TrimSpace(strings.Repeat("8/timed_out ", 15)))
	if tr := res.Tiers[0]; tr.Completed != 12 || tr.Aborted != 3 {
		t.Errorf("web completed %d (want 12, orphaned), dropped %d (want 3)", tr.Completed, tr.Aborted)
	}
}

func TestSessionWaitersDroppedWhenClientGone(t *testing.T) {
	// MaxSessions 1 held by user 1's proxy; user 2 waits for a session and
	// times out at 5 s: its unopened session leaves the queue.
	svc := tier("svc", wait(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple}
	top := burst(2, 5*time.Second, svc)
	top.Load.Call.Binding = model.Binding{Name: "netTcp", Sessionful: true}
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerUser}
	got, res := outcomes(t, top)
	expect(t, "latencies", got, "1 5/timed_out")
	if tr := res.Tiers[0]; tr.Aborted != 1 || tr.CurrentMax != 2 || tr.OutstandingMax != 1 {
		t.Errorf("dropped %d (want 1), requests current max %v (want 2), calls outstanding max %v (want 1: the other never ran)", tr.Aborted, tr.CurrentMax, tr.OutstandingMax)
	}
	if last := res.Series[len(res.Series)-1].Tiers[0].Current; last != 0 {
		t.Errorf("requests current at the end = %v, want 0 (the dead session request left)", last)
	}
}

func TestCLR2InjectionSlowsDown(t *testing.T) {
	// The SSCLI 2.0 rule: a thread only once 500 ms × 1.1^(threads − min)
	// has passed since the last. Ticks every 500 ms: the first injection
	// at 0.5 s; then 550 ms, 605 ms, … are needed, so every other tick.
	be := tier("be", wait(10*time.Second))
	be.Worker = model.Pool{Min: 2, Max: 100, Injection: model.InjectCLR2, GateDelay: 500 * time.Millisecond}
	got, _ := outcomes(t, burst(10, 0, be))
	expect(t, "latencies", got, "10 10 10.5 11.5 12.5 13.5 14.5 15.5 16.5 17.5")
}
