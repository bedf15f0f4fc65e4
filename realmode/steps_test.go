package realmode

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/internal/stallprobe"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// Step tables run for real: the model's step-table tests (model/steps_test.go)
// in short form. n users each send one request at t0; each table lists
// the latency and outcome of every request. The simulator must give the
// table exactly, the real executor the same outcomes and latencies within
// its resolution: 8 ms of real time plus 2%, plus what a probe beside the
// run measured, a round trip per request of the burst and the stalls
// (tableFloor). (The users of a burst do not all send at one real
// instant: their HTTP requests compete for 2 cores, and the last of 20
// starts 1–7 ms after the first, measured on this busy machine. A late
// request that queues ends with the others, so its latency is short by
// that much. A stall of the process delays what is due during it.) A run
// that disagrees is run again only when the probe saw it disturbed
// (crosscheck_test.go).

const t0 = 2 * time.Second

// leave is when the users leave after their request (retired while busy,
// they finish it first): late enough that no scheduling delay of the real
// executor makes it come before their request, early enough that a user
// whose request ended at once does not send another: halfway between
// the two, so that a timer late by up to t0/2 of simulated time (50 ms of
// real time at stepScale) on either side changes nothing. (At 400 ms, 20
// ms of real time, a busy machine retired all four users of a burst
// before they sent, one run in a hundred.)
const leave = t0 / 2

// burst builds a topology where n users each send one request at t0 and
// then leave; it runs until t0 + horizon.
func burst(n int, timeout, horizon time.Duration, tiers ...model.Tier) *model.Topology {
	return &model.Topology{
		Duration: t0 + horizon, SampleEvery: time.Second, Tiers: tiers,
		Load: model.Load{Kind: model.LoadClosed,
			Users: model.Schedule{{At: 0, Value: float64(n)}, {At: t0 + leave, Value: float64(n)}, {At: t0 + leave, Value: 0}},
			Think: sim.Const(t0),
			Call:  model.Call{Target: 0, Timeout: timeout}},
	}
}

func cnst(d time.Duration) sim.Dist { return sim.Const(d) }

func cpuStep(d time.Duration) model.Step { return model.Step{Kind: model.StepCPU, Demand: cnst(d)} }
func waitFor(d time.Duration) model.Step { return model.Step{Kind: model.StepWait, Demand: cnst(d)} }

type outcome struct {
	lat float64
	o   results.Outcome
}

func outcomesOf(res *results.Run) []outcome {
	var out []outcome
	for _, p := range res.Points {
		out = append(out, outcome{p.Latency, p.Outcome})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].lat != out[j].lat {
			return out[i].lat < out[j].lat
		}
		return out[i].o < out[j].o
	})
	return out
}

func parseTable(t *testing.T, s string) []outcome {
	var out []outcome
	for _, f := range strings.Fields(s) {
		lat, o, _ := strings.Cut(f, "/")
		v, err := strconv.ParseFloat(lat, 64)
		if err != nil {
			t.Fatalf("bad table entry %q", f)
		}
		oc := results.Completed
		for k := results.Completed; k <= results.Failed; k++ {
			if k.String() == o {
				oc = k
			}
		}
		out = append(out, outcome{v, oc})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].lat != out[j].lat {
			return out[i].lat < out[j].lat
		}
		return out[i].o < out[j].o
	})
	return out
}

func fmtOutcomes(os []outcome) string {
	var b []string
	for _, o := range os {
		s := fmt.Sprintf("%.3f", o.lat)
		if o.o != results.Completed {
			s += "/" + o.o.String()
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

// stepScale makes 1 simulated second 50 ms of real time.
const stepScale = 0.05

// table runs top in both executors and checks both against want. The
// real run is nil when every run was disturbed (realTable).
func table(t *testing.T, name string, top *model.Topology, want string, opt Options) (simRes, realRes *results.Run) {
	t.Helper()
	w := parseTable(t, want)
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	s, err := simmode.Run(top, model.Options{Seed: opt.Seed})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomesOf(s); fmtOutcomes(got) != fmtOutcomes(w) {
		t.Fatalf("%s: the simulator disagrees with the table:\n got  %s\n want %s", name, fmtOutcomes(got), fmtOutcomes(w))
	}
	return s, realTable(t, name, top, w, opt)
}

// realTable runs top for real and checks it against the table w; it runs
// again, up to maxRuns times, only when a run disagrees and the probe saw
// it disturbed (crosscheck_test.go). It returns the run that agreed or
// disagreed undisturbed, nil when every run was disturbed.
func realTable(t *testing.T, name string, top *model.Topology, w []outcome, opt Options) *results.Run {
	t.Helper()
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	if opt.TimeScale == 0 {
		opt.TimeScale = stepScale
	}
	var r *results.Run
	for k := 1; ; k++ {
		var n noise
		var self float64
		var err error
		r, n, self, err = runProbed(top, opt)
		if err != nil {
			t.Fatal(err)
		}
		floor := tableFloor(n, len(w), opt.TimeScale)
		got := outcomesOf(r)
		ok := len(got) == len(w)
		for i := 0; ok && i < len(w); i++ {
			ok = got[i].o == w[i].o && math.Abs(got[i].lat-w[i].lat) <= floor+0.02*w[i].lat
		}
		if ok {
			return r
		}
		msg := fmt.Sprintf("%s: real run %d:\n got  %s\n want %s (±%.3fs +2%%)\n noise: %v", name, k, fmtOutcomes(got), fmtOutcomes(w), floor, n)
		// A stall longer than a table's margins (the users leave 20 ms of
		// real time after they send at stepScale, 14 ms before one would
		// send again in the head-of-line test) can make a request go
		// missing or come in excess: the run says nothing.
		d := n.Disturbed(self, tableStall)
		switch {
		case d == "":
			t.Error(msg)
			return r
		case k == maxRuns:
			t.Logf("%s\n%s: INCONCLUSIVE: all %d runs disturbed (%s)", msg, name, k, d)
			return nil
		}
		t.Logf("%s\n disturbed (%s): running again", msg, d)
	}
}

// tableStall is the longest stall a step table's run may see and still
// be judged; see realTable.
const tableStall = 10 * time.Millisecond

// judged is the simulated run and the real one, if it was judged.
func judged(s, r *results.Run) []*results.Run {
	if r == nil {
		return []*results.Run{s}
	}
	return []*results.Run{s, r}
}

// runProbed runs top for real with the noise probe beside it; it returns
// what the probe measured and the CPU the process used, in cores.
func runProbed(top *model.Topology, opt Options) (*results.Run, noise, float64, error) {
	stop := stallprobe.Start()
	cpu0, wall0 := stallprobe.CPUTime(), time.Now()
	r, err := Run(context.Background(), top, opt)
	self := float64(stallprobe.CPUTime()-cpu0) / float64(max(time.Since(wall0), 1))
	return r, stop(), self, err
}

// tableFloor is how far, in simulated seconds at the given scale, a real
// latency may be from its table entry when a burst of n requests is sent:
// 8 ms of real time (the spread of a burst's starts on 2 cores, measured
// quiet), plus a round trip per request of the burst (the starts spread
// further when each costs more: a burst of 20 at a measured 1.2 ms a round
// trip came 8–22 ms late), plus the stalls measured during the run, all of
// which may have delayed one request (ten requests of 50 ms each came 22
// ms late in a run whose longest stall was 12 ms, of 32 ms in all); ×10
// under the race detector.
func tableFloor(n noise, requests int, scale float64) float64 {
	floor := (8*time.Millisecond + time.Duration(requests)*n.RTT + max(n.MaxLate, n.Stalled)).Seconds() / scale
	if raceEnabled {
		floor *= 10
	}
	return floor
}

func TestStepConnectionLimitHandOffAndTimeout(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// Limit 2, service 1 s, client timeout 2.5 s: requests 3–4 get the
	// freed connections at 1 s, 5 gets one at 2 s and times out at 2.5 s
	// while the back end goes on until 3 s (orphaned work).
	be := tier("be", 8, waitFor(time.Second))
	fe := tier("fe", 8, callStep(1, model.Call{Conn: model.Conn{Limit: 2}}))
	top := burst(5, 2500*time.Millisecond, 4*time.Second, fe, be)
	s, r := table(t, "conn limit", top, "1 1 2 2 2.5/timed_out", Options{})
	for _, res := range judged(s, r) {
		if c := res.Calls[1]; c.From != "fe" || c.InUseMax != 2 || c.WaitingMax != 3 {
			t.Errorf("fe→be call stats %+v", c)
		}
		if res.Tiers[1].Completed != 5 {
			t.Errorf("back end completed %d, want 5 (the orphan runs on)", res.Tiers[1].Completed)
		}
	}
}

func TestStepConnectionWaitCountsAgainstTimeout(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	be := tier("be", 8, waitFor(time.Second))
	fe := tier("fe", 8, callStep(1, model.Call{Conn: model.Conn{Limit: 1}, Timeout: 1500 * time.Millisecond}))
	table(t, "conn wait", burst(2, 0, 3*time.Second, fe, be), "1 1.5/timed_out", Options{})
}

func TestStepMaxPendingRejects(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	be := tier("be", 8, waitFor(time.Second))
	fe := tier("fe", 8, callStep(1, model.Call{Conn: model.Conn{Limit: 1, MaxPending: 1}}))
	table(t, "max pending", burst(3, 0, 3*time.Second, fe, be), "0/rejected 1 2", Options{})
}

func TestStepConnectionWaitTimeoutFails(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	be := tier("be", 8, waitFor(time.Second))
	fe := tier("fe", 8, callStep(1, model.Call{Conn: model.Conn{Limit: 1, WaitTimeout: 500 * time.Millisecond}}))
	table(t, "wait timeout", burst(2, 0, 2*time.Second, fe, be), "0.5/failed 1", Options{})
}

func TestStepCLRThreadInjection(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// Min 2 threads, 10 requests each holding a thread 10 s: two start at
	// once, then one more every 500 ms gate tick (model.ShouldInject).
	be := tier("be", 8, waitFor(10*time.Second))
	be.Worker = model.Pool{Min: 2, Max: 100, Injection: model.InjectCLR, GateDelay: 500 * time.Millisecond, IdleTimeout: 20 * time.Second}
	s, r := table(t, "CLR injection", burst(10, 0, 15*time.Second, be), "10 10 10.5 11 11.5 12 12.5 13 13.5 14", Options{})
	for _, res := range judged(s, r) {
		if res.Tiers[0].ThreadsMax != 10 {
			t.Errorf("threads max %v, want 10", res.Tiers[0].ThreadsMax)
		}
	}
}

func TestStepClassicAdmission(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// 100 workers − 88 minFree = 12 executing; queue limit 5: of 20, 12
	// run, 5 wait a round, 3 are refused (model.DecideClassic).
	web := tier("web", 1, waitFor(time.Second))
	web.Host = model.HostASPNetClassic
	web.Worker = model.Pool{Min: 100, Max: 100}
	web.Admission = model.Admission{Kind: model.AdmitClassic, MinFreeThreads: 88, QueueLimit: 5}
	want := "0/rejected 0/rejected 0/rejected" + strings.Repeat(" 1", 12) + strings.Repeat(" 2", 5)
	s, r := table(t, "classic admission", burst(20, 0, 3*time.Second, web), want, Options{})
	for _, res := range judged(s, r) {
		if tr := res.Tiers[0]; tr.ExecutingMax != 12 || tr.QueuedMax != 5 || tr.Rejected != 3 {
			t.Errorf("tier %+v", tr)
		}
	}
}

func TestStepConcurrentAdmission(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	web := tier("web", 8, waitFor(time.Second))
	web.Host = model.HostIISIntegrated
	web.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 2, QueueLimit: 4, CountExecuting: true}
	table(t, "concurrent admission", burst(6, 0, 3*time.Second, web), "0/rejected 0/rejected 1 1 2 2", Options{})
}

func TestStepWCFCallThrottleOrphans(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	svc := tier("svc", 8, waitFor(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 2, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple}
	s, r := table(t, "WCF throttle", burst(5, 1500*time.Millisecond, 4*time.Second, svc), "1 1 1.5/timed_out 1.5/timed_out 1.5/timed_out", Options{})
	for _, res := range judged(s, r) {
		if res.Tiers[0].Completed != 5 {
			t.Errorf("service completed %d, want 5", res.Tiers[0].Completed)
		}
	}
}

func TestStepInstancingConcurrency(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	cases := []struct {
		inst model.Instancing
		conc model.Concurrency
		want string
	}{
		{model.SingleInstance, model.ConcurrencySingle, "1 2 3 4"},
		{model.SingleInstance, model.ConcurrencyMultiple, "1 1 1 1"},
		{model.PerSession, model.ConcurrencySingle, "1 1 1 1"},
		{model.PerCall, model.ConcurrencySingle, "1 1 1 1"},
		{model.SingleInstance, model.ConcurrencyReentrant, "1 2 3 4"},
	}
	for _, c := range cases {
		svc := tier("svc", 8, cpuStep(time.Second))
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: c.inst, Concurrency: c.conc}
		table(t, c.inst.String()+"/"+c.conc.String(), burst(4, 0, 5*time.Second, svc), c.want, Options{})
	}
}

func TestStepSharedProxyWithoutOpen(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	for _, c := range []struct {
		kind model.ProxyKind
		want string
	}{{model.ProxySharedNoOpen, "1 2 3"}, {model.ProxyShared, "1 1 1"}} {
		be := tier("be", 8, waitFor(time.Second))
		fe := tier("fe", 8, callStep(1, model.Call{Proxy: model.Proxy{Kind: c.kind}}))
		table(t, c.kind.String(), burst(3, 0, 4*time.Second, fe, be), c.want, Options{})
	}
}

func TestStepSyncVersusAsync(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	for _, c := range []struct {
		async bool
		want  string
	}{{false, "1 2 3"}, {true, "1 1 1"}} {
		be := tier("be", 8, waitFor(time.Second))
		mid := tier("mid", 8, callStep(1, model.Call{}))
		mid.Worker = model.Pool{Min: 1, Max: 1}
		mid.Async = c.async
		table(t, fmt.Sprintf("async=%v", c.async), burst(3, 0, 4*time.Second, mid, be), c.want, Options{})
	}
}

func TestStepTwoThreadsPerRequest(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	svc := tier("svc", 8, waitFor(time.Second))
	svc.Host = model.HostIISIntegrated
	svc.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 100, QueueLimit: 5000, SyncModule: true}
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple}
	_, r := table(t, "sync module", burst(10, 0, 2*time.Second, svc), strings.TrimSpace(strings.Repeat(" 1", 10)), Options{})
	if r != nil && r.Tiers[0].ThreadsBusyMax != 20 {
		got := r.Tiers[0].ThreadsBusyMax
		t.Errorf("sync module: threads busy max %v, want 20 (worker + I/O per request)", got)
	}
	svc.Admission.SyncModule = false
	_, r = table(t, "async module", burst(10, 0, 2*time.Second, svc), strings.TrimSpace(strings.Repeat(" 1", 10)), Options{})
	if r != nil && r.Tiers[0].ThreadsBusyMax != 10 {
		got := r.Tiers[0].ThreadsBusyMax
		t.Errorf("async module: threads busy max %v, want 10", got)
	}
}

func TestStepExecutionTimeoutAborts(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// executionTimeout 110 s checked every 15 s from the first admission:
	// a 200 s page is aborted at 120 s.
	web := tier("web", 8, waitFor(200*time.Second))
	web.Host = model.HostASPNetClassic
	web.Worker = model.Pool{Min: 100, Max: 100}
	web.Admission = model.Admission{Kind: model.AdmitClassic, MinFreeThreads: 8, QueueLimit: 5000, ExecutionTimeout: 110 * time.Second, ExecutionCheck: 15 * time.Second}
	_, r := table(t, "execution timeout", burst(1, 0, 122*time.Second, web), "120/failed", Options{TimeScale: 0.01})
	if r != nil && r.Tiers[0].Aborted != 1 {
		t.Errorf("aborted %d, want 1", r.Tiers[0].Aborted)
	}
}

func TestStepRetriesAfterTimeout(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// 10 s service, 2 s timeout, 3 attempts 1 s apart: the last times out
	// at 8 s; the service runs all three (orphans).
	svc := tier("svc", 8, waitFor(10*time.Second))
	top := burst(1, 2*time.Second, 17*time.Second, svc)
	top.Load.Call.Retry = model.Retry{Attempts: 3, Backoff: cnst(time.Second)}
	_, r := table(t, "retries", top, "8/timed_out", Options{})
	if r != nil && (r.Tiers[0].Completed != 3 || r.Calls[0].Retries != 2) {
		t.Errorf("service completed %d (want 3), retries %d (want 2)", r.Tiers[0].Completed, r.Calls[0].Retries)
	}
}

func TestStepLock(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	svc := tier("svc", 8, model.Step{Kind: model.StepLock, Lock: 0}, waitFor(time.Second), model.Step{Kind: model.StepUnlock, Lock: 0}, waitFor(time.Second))
	table(t, "lock", burst(3, 0, 5*time.Second, svc), "2 3 4", Options{})
}

func TestStepCPU(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// 2 cores, 4 demands of 1 s. Processor sharing (the model, and
	// CPUSharing): all end at 2 s. Core permits (CPUCores): two end at
	// 1 s, two at 2 s; the same mean.
	svc := tier("svc", 2, cpuStep(time.Second))
	table(t, "sharing", burst(4, 0, 3*time.Second, svc), "2 2 2 2", Options{CPU: CPUSharing})
	svc.CostMultiplier = 1.5
	table(t, "sharing ×1.5", burst(4, 0, 4*time.Second, svc), "3 3 3 3", Options{CPU: CPUSharing})

	svc.CostMultiplier = 1
	realTable(t, "cores", burst(4, 0, 3*time.Second, svc), parseTable(t, "1 1 2 2"), Options{})
}

func TestStepPerConnectionHeadOfLine(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// System.Net binds a waiting call to one connection (Conn.PerConnection)
	// and it waits for that one even when the other frees first; a shared
	// FIFO (Go's MaxConnsPerHost) gives it the first free connection. Six
	// users send one request each, 200 ms apart, to a back end taking
	// exp(1 s), through 2 connections. With seed 3 one request is held up
	// behind a long one: 3.086 s bound to its connection, 1.191 s shared.
	top := func(perConn bool) *model.Topology {
		be := tier("be", 8, waitStep(sim.Exp(time.Second)))
		fe := tier("fe", 8, callStep(1, model.Call{Conn: model.Conn{Limit: 2, PerConnection: perConn}}))
		var users model.Schedule
		for k := range 6 {
			at := time.Duration(k) * 200 * time.Millisecond
			users = append(users, model.Point{At: at, Value: float64(k)}, model.Point{At: at, Value: float64(k + 1)})
		}
		// after the last user (at 1 s) sends, at 2 s, and before the
		// first one done (at 1.343 s) would send again: 200 and 143 ms
		// apart, 20 and 14 ms of real time
		leaveAt := 2200 * time.Millisecond
		users = append(users, model.Point{At: leaveAt, Value: 6}, model.Point{At: leaveAt, Value: 0})
		return &model.Topology{Duration: 7 * time.Second, SampleEvery: time.Second, Tiers: []model.Tier{fe, be},
			Load: model.Load{Kind: model.LoadClosed, Users: users, Think: sim.Const(time.Second), Call: model.Call{Target: 0}}}
	}
	// The demands go to requests in the order they start, so the real run
	// must start them in the model's order: at 1 s = 100 ms the closest
	// starts are a few ms of real time apart, well above the noise.
	table(t, "per connection", top(true), "0.003 0.143 0.165 1.254 3.086 3.949", Options{Seed: 3, TimeScale: 0.1})
	table(t, "shared", top(false), "0.003 0.143 0.165 1.191 1.254 3.949", Options{Seed: 3, TimeScale: 0.1})
}

func TestStepClientConnectedCheckDropsAbandonedQueued(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// Classic queue, 12 executing, 10 s pages, clients give up after 8 s:
	// the 3 queued requests time out; dequeued at 10 s (more than 5 s in
	// the queue, client gone), they are dropped unserved.
	web := tier("web", 1, waitFor(10*time.Second))
	web.Host = model.HostASPNetClassic
	web.Worker = model.Pool{Min: 100, Max: 100}
	web.Admission = model.Admission{Kind: model.AdmitClassic, MinFreeThreads: 88, QueueLimit: 5000, ClientConnectedCheck: 5 * time.Second}
	s, r := table(t, "clientConnectedCheck", burst(15, 8*time.Second, 12*time.Second, web), strings.TrimSpace(strings.Repeat("8/timed_out ", 15)), Options{})
	for _, res := range judged(s, r) {
		if tr := res.Tiers[0]; tr.Completed != 12 || tr.Aborted != 3 {
			t.Errorf("web completed %d (want 12, orphaned), dropped %d (want 3)", tr.Completed, tr.Aborted)
		}
	}
}

func TestStepCLR2InjectionSlowsDown(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// SSCLI 2.0: a thread only once 500 ms × 1.1^(threads − min) has passed
	// since the last, on 500 ms ticks: every other tick after the first.
	// The first margin is 50 ms (550 ms needed, 500 ms between ticks), so
	// 1 s lasts 100 ms here.
	be := tier("be", 8, waitFor(10*time.Second))
	be.Worker = model.Pool{Min: 2, Max: 100, Injection: model.InjectCLR2, GateDelay: 500 * time.Millisecond}
	table(t, "CLR2", burst(10, 0, 18*time.Second, be), "10 10 10.5 11.5 12.5 13.5 14.5 15.5 16.5 17.5", Options{TimeScale: 0.1})
}

func TestStepPerSessionSessionfulSerialisesPerProxy(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// netTcp-like sessionful binding, PerSession + Single: each user's own
	// proxy is one session; users run in parallel. MaxSessions 2: the
	// third user waits for a session that never frees and times out.
	svc := tier("svc", 8, waitFor(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 2, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
	top := burst(3, 5*time.Second, 6*time.Second, svc)
	top.Load.Call.Binding = model.Binding{Name: "netTcp", Sessionful: true}
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerUser}
	s, r := table(t, "per-session sessionful", top, "1 1 5/timed_out", Options{})
	for _, res := range judged(s, r) {
		if tr := res.Tiers[0]; tr.Completed != 2 || tr.Aborted != 1 {
			t.Errorf("svc completed %d (want 2), dropped %d (want 1)", tr.Completed, tr.Aborted)
		}
	}
}

func TestStepSessionWaitersDroppedWhenClientGone(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// MaxSessions 1 held by user 1's proxy; user 2 waits for a session and
	// times out at 5 s: its unopened session leaves the queue.
	svc := tier("svc", 8, waitFor(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple}
	top := burst(2, 5*time.Second, 6*time.Second, svc)
	top.Load.Call.Binding = model.Binding{Name: "netTcp", Sessionful: true}
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerUser}
	s, r := table(t, "session waiters", top, "1 5/timed_out", Options{})
	for _, res := range judged(s, r) {
		if tr := res.Tiers[0]; tr.Aborted != 1 || tr.CurrentMax != 2 {
			t.Errorf("dropped %d (want 1), requests current max %v (want 2)", tr.Aborted, tr.CurrentMax)
		}
		if last := res.Series[len(res.Series)-1].Tiers[0].Current; last != 0 {
			t.Errorf("requests current at the end = %v, want 0 (the dead session request left)", last)
		}
	}
}

func TestStepSessionfulProxies(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// Four users, a sessionful binding, one 1 s wait per call.
	cases := []struct {
		name  string
		proxy model.ProxyKind
		inst  model.Instancing
		conc  model.Concurrency
		sess  int
		want  string
	}{
		// One shared proxy, one session: PerSession + Single serialises
		// its calls on the session's instance; Multiple does not.
		{"shared/PerSession/Single", model.ProxyShared, model.PerSession, model.ConcurrencySingle, 100, "1 2 3 4"},
		{"shared/PerSession/Multiple", model.ProxyShared, model.PerSession, model.ConcurrencyMultiple, 100, "1 1 1 1"},
		// Per-call proxies give their session back at the end of their
		// call: MaxSessions 2 lets two through at a time.
		{"per-call/PerCall/MaxSessions 2", model.ProxyPerCall, model.PerCall, model.ConcurrencyMultiple, 2, "1 1 2 2"},
		{"per-call/PerSession/MaxSessions 2", model.ProxyPerCall, model.PerSession, model.ConcurrencySingle, 2, "1 1 2 2"},
	}
	for _, c := range cases {
		svc := tier("svc", 8, waitFor(time.Second))
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: c.sess, MaxInstances: 100, Instancing: c.inst, Concurrency: c.conc}
		top := burst(4, 0, 5*time.Second, svc)
		top.Load.Call.Binding = model.Binding{Name: "netTcp", Sessionful: true}
		top.Load.Call.Proxy = model.Proxy{Kind: c.proxy}
		table(t, c.name, top, c.want, Options{})
	}
}

func TestStepSessionReentrantReleasesDuringCalls(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// A shared sessionful proxy, PerSession: the session's instance lock
	// is held across the 1 s back-end call with ConcurrencyMode Single
	// (calls serialise), given back during it with Reentrant (only the
	// 0.5 s of work before the call serialises).
	for _, c := range []struct {
		conc model.Concurrency
		want string
	}{{model.ConcurrencySingle, "1.5 3 4.5"}, {model.ConcurrencyReentrant, "1.5 2 2.5"}} {
		be := tier("be", 8, waitFor(time.Second))
		svc := tier("svc", 8, waitFor(500*time.Millisecond), callStep(1, model.Call{}))
		svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerSession, Concurrency: c.conc}
		top := burst(3, 0, 6*time.Second, svc, be)
		top.Load.Call.Binding = model.Binding{Name: "netTcp", Sessionful: true}
		top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyShared}
		table(t, c.conc.String(), top, c.want, Options{})
	}
}

func TestStepSessionEndsWhenProxyCloses(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// Pool-create proxies with no room in the pool are closed after their
	// call: the client's close ends the session (no job in flight on it),
	// so with MaxSessions 1 the second user's call opens one when the
	// first's proxy closes, instead of waiting out its 5 s timeout.
	svc := tier("svc", 8, waitFor(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle}
	top := burst(2, 5*time.Second, 4*time.Second, svc)
	top.Load.Call.Binding = model.Binding{Name: "netTcp", Sessionful: true}
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPoolCreate, PoolSize: 0}
	table(t, "closed proxies", top, "1 2", Options{})
}

func TestStepMachineSharedByTiers(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// model TestMachineSharedByTiers: a client and its service on one core.
	// The client's lock spaces its two requests 1 s apart; on a core each
	// they take 3 and 4 s, on one shared core (processor sharing) 4 and 5 s.
	mk := func(machine int) *model.Topology {
		cl := tier("cl", 1, model.Step{Kind: model.StepLock, Lock: 0}, waitFor(time.Second), model.Step{Kind: model.StepUnlock, Lock: 0},
			cpuStep(time.Second), callStep(1, model.Call{}))
		svc := tier("svc", 1, cpuStep(time.Second))
		cl.Machine, svc.Machine = machine, machine
		return burst(2, 0, 6*time.Second, cl, svc)
	}
	table(t, "a machine each", mk(0), "3 4", Options{CPU: CPUSharing})
	_, r := table(t, "one machine", mk(1), "4 5", Options{CPU: CPUSharing})
	if r != nil {
		// Each tier counts its own demands (2 s each), not the machine's
		// 4 busy seconds.
		for _, tr := range r.Tiers {
			if d := tr.CPUUtil * (r.Duration - r.Warmup); d < 1.5 || d > 2.5 {
				t.Errorf("tier %s: %.2f s of CPU, want ~2", tr.Name, d)
			}
		}
	}
}

func TestStepListenerRefusesBeyondBacklog(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// model TestListenerRefusesBeyondPendingAndBacklog: one session slot,
	// one connection pending and one in the backlog, a connection (a
	// per-call proxy) per call holding its session 1 s: the fourth of four
	// is refused at once.
	svc := tier("svc", 8, waitFor(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 1, MaxInstances: 100, Instancing: model.PerCall,
		Concurrency: model.ConcurrencyMultiple, Listener: model.Listener{MaxPending: 1, Backlog: 1}}
	top := burst(4, 0, 5*time.Second, svc)
	top.Load.Call.Binding = model.Binding{Name: "netTcp", Sessionful: true, Listener: true}
	top.Load.Call.Proxy = model.Proxy{Kind: model.ProxyPerCall}
	_, r := table(t, "pending 1, backlog 1", top, "0/rejected 1 2 3", Options{})
	if r != nil && (r.Tiers[0].Rejected != 1 || r.Tiers[0].ListenerWaitingMax > 2) {
		t.Errorf("service rejected %d, %.0f waiting in the listener at most; want 1 and at most 2", r.Tiers[0].Rejected, r.Tiers[0].ListenerWaitingMax)
	}
}

func TestStepStartUpFirstCallWaits(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// model TestStartUpFirstCallWaits: the host takes 1 s to open, at the
	// first call (sent at 1 s); two users both wait for it, then call every
	// 1.1 s and find it open.
	svc := tier("svc", 8, waitFor(100*time.Millisecond))
	svc.StartUp = time.Second
	top := &model.Topology{
		Duration: 4500 * time.Millisecond, SampleEvery: time.Second, Tiers: []model.Tier{svc},
		Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: 2}}, Think: cnst(time.Second), Call: model.Call{Target: 0}},
	}
	table(t, "two users", top, "1.1 1.1 0.1 0.1 0.1 0.1", Options{})
}
