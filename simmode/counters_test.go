package simmode

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// Step tables of the PerfMon counters (docs/counters.md): small systems
// whose every event can be worked out by hand, each counter pinned at named
// instants. Levels are the values at the instant, after every event of the
// instant; rates and durations cover the interval that ends there.

// at returns tier ti's sample at second sec.
func at(t *testing.T, res *results.Run, ti int, sec float64) results.TierSample {
	t.Helper()
	for _, s := range res.Series {
		if s.T == sec {
			return s.Tiers[ti]
		}
	}
	t.Fatalf("no sample at %v s", sec)
	return results.TierSample{}
}

// row is one line of a step table: the counters' values at an instant.
type row struct {
	at   float64
	want string
}

// checkRows compares each row with the counters got(s) formats.
func checkRows(t *testing.T, res *results.Run, ti int, rows []row, got func(s results.TierSample) string) {
	t.Helper()
	for _, r := range rows {
		if g := got(at(t, res, ti, r.at)); g != r.want {
			t.Errorf("at %v s:\n got  %s\n want %s", r.at, g, r.want)
		}
	}
}

func TestASPNetCountersStepTable(t *testing.T) {
	// IIS 7 integrated, MaxConcurrentRequests 2, a queue of 2, one worker
	// thread, 1 s pages; five requests at 300 s. r1 runs; r2 is admitted
	// but waits for the thread (queued, as ASP.NET counts it, though not
	// in the application queue); r3 and r4 wait in the application queue;
	// r5 finds it full and is refused. Each second one page ends and the
	// next starts.
	web := tier("web", wait(time.Second))
	web.Host = model.HostIISIntegrated
	web.DotNet = "4.0"
	web.Worker = model.Pool{Min: 1, Max: 1}
	web.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 2, QueueLimit: 2}
	top := burst(5, 0, web)
	top.SampleEvery = 500 * time.Millisecond
	got, res := outcomes(t, top)
	expect(t, "latencies", got, "0/rejected 1 2 3 4")
	checkRows(t, res, 0, []row{
		// executing queued current app-queue | worker busy/threads | pipelines | requests/s | wait ms (mean/max) | exec ms (mean/max) | rejected total
		{299.5, "0 0 0 0 | 0/0 | 0 | 0 | 0/0 | 0/0 | 0"},
		{300, "1 3 4 2 | 1/1 | 1 | 10 | 0/0 | 0/0 | 1"},
		{300.5, "1 3 4 2 | 1/1 | 1 | 0 | 0/0 | 0/0 | 1"},
		{301, "1 2 3 1 | 1/1 | 1 | 0 | 1000/1000 | 1000/1000 | 1"},
		{302, "1 1 2 0 | 1/1 | 1 | 0 | 2000/2000 | 1000/1000 | 1"},
		{303, "1 0 1 0 | 1/1 | 1 | 0 | 3000/3000 | 1000/1000 | 1"},
		{304, "0 0 0 0 | 0/1 | 1 | 0 | 0/0 | 1000/1000 | 1"},
	}, func(s results.TierSample) string {
		return fmt.Sprintf("%g %g %g %g | %g/%g | %g | %g | %g/%g | %g/%g | %g", s.Executing, s.Queued, s.Current, s.AppQueued,
			s.WorkerBusy, s.Workers, s.Pipelines, s.RequestsPerS, s.WaitTimeMS, s.WaitTimeMaxMS, s.ExecTimeMS, s.ExecTimeMaxMS, s.RequestsRejected)
	})
	tr := res.Tiers[0]
	want := "exec 1 queued 3 current 4 appq 2 | arrived 5 rejected 1 completed 4 | wait 1.5/3 exec 1/1 | resp 2.5 p(wait) 0.75"
	if g := fmt.Sprintf("exec %g queued %g current %g appq %g | arrived %d rejected %d completed %d | wait %g/%g exec %g/%g | resp %g p(wait) %g",
		tr.ExecutingMax, tr.QueuedMax, tr.CurrentMax, tr.AppQueuedMax, tr.Arrived, tr.Rejected, tr.Completed,
		tr.WaitTimeMean, tr.WaitTimeMax, tr.ExecTimeMean, tr.ExecTimeMax, roundMS(tr.ResponseMean), tr.PWait); g != want {
		t.Errorf("summary:\n got  %s\n want %s", g, want)
	}
}

func TestWCFCountersStepTable(t *testing.T) {
	// A self-hosted WCF service, MaxConcurrentCalls 2, PerCall: four 1 s
	// calls at 300 s. Two run (Calls Outstanding 2), two wait for the call
	// throttle, queued (a self-hosted request executes once it has its
	// thread); at 301 s they run; at 302 s all are done. Instances counts
	// the instance throttle's slots: every PerCall request takes one
	// before the call throttle.
	svc := tier("svc", wait(time.Second))
	svc.WCF = &model.WCF{MaxCalls: 2, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple}
	got, res := outcomes(t, burst(4, 0, svc))
	expect(t, "latencies", got, "1 1 2 2")
	checkRows(t, res, 0, []row{
		// executing queued outstanding instances | io busy | calls total, calls/s | duration s (mean/max)
		{299, "0 0 0 0 | 0 | 0 0 | 0/0"},
		{300, "2 2 2 4 | 2 | 2 2 | 0/0"},
		{301, "2 0 2 2 | 2 | 4 2 | 1/1"},
		{302, "0 0 0 0 | 0 | 4 0 | 1/1"},
		{303, "0 0 0 0 | 0 | 4 0 | 0/0"},
	}, func(s results.TierSample) string {
		return fmt.Sprintf("%g %g %g %g | %g | %g %g | %g/%g", s.Executing, s.Queued, s.Outstanding, s.Instances,
			s.IOBusy, s.Calls, s.CallsPerS, s.CallDuration, s.CallDurationMax)
	})
	tr := res.Tiers[0]
	if tr.OutstandingMax != 2 || tr.Calls != 4 || tr.CallDurationMean != 1 || tr.WaitTimeMean != 0.5 || tr.PWait != 0.5 {
		t.Errorf("summary: outstanding max %v (2), calls %d (4), calls duration %v (1), wait %v (0.5), P(wait) %v (0.5)",
			tr.OutstandingMax, tr.Calls, tr.CallDurationMean, tr.WaitTimeMean, tr.PWait)
	}
}

func TestPipelineInstanceCount(t *testing.T) {
	// 150 pages at once on an ASP.NET 4 front end: 150 HttpApplication
	// instances, kept in the free list after the burst. Trims run every
	// 30 s (300, 330, 360, ...) but only if the free list stayed above 1
	// since the last one: not at 330 (it was empty at 300), then 3% + 1 of
	// the free list each time: 150 → 145 → 140. On .NET 3.5 the free list
	// holds at most 100 and a trim takes one: 100 → 99 → 98.
	for _, c := range []struct {
		dotnet string
		want   string
	}{
		{"4.0", "0 150 150 150 150 145 140"},
		{"3.5", "0 150 100 100 100 99 98"},
	} {
		web := tier("web", wait(time.Second))
		web.Host = model.HostIISIntegrated
		web.DotNet = c.dotnet
		web.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 1000, QueueLimit: 5000}
		_, res := outcomes(t, burst(150, 0, web))
		var got []string
		for _, sec := range []float64{299, 300, 301, 329, 330, 360, 390} {
			got = append(got, fmt.Sprint(at(t, res, 0, sec).Pipelines))
		}
		expect(t, ".NET "+c.dotnet+" pipelines at 299 300 301 329 330 360 390", strings.Join(got, " "), c.want)
		if tr := res.Tiers[0]; tr.PipelinesMax != 150 || tr.ExecutingMax != 150 {
			t.Errorf(".NET %s: pipelines max %v, executing max %v, want 150, 150", c.dotnet, tr.PipelinesMax, tr.ExecutingMax)
		}
	}
}

func TestPipelinesOutnumberExecuting(t *testing.T) {
	// The post's front end: 91 pipelines against 69 executing on average.
	// Pipelines are the requests executing plus the free list, which keeps
	// the peak concurrency for a while: a burst of 20 pages, then a
	// steady 5 at a time, shows 20 pipelines and 5 executing.
	web := tier("web", wait(time.Second))
	web.Host = model.HostIISIntegrated
	web.DotNet = "4.0"
	web.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 1000, QueueLimit: 5000}
	top := burst(20, 0, web)
	// 20 users from 300 s, 5 from 300.5 s; they send again at once.
	top.Load.Users = model.Schedule{{At: 0, Value: 0}, {At: t0, Value: 0}, {At: t0, Value: 20}, {At: t0 + 500*time.Millisecond, Value: 20}, {At: t0 + 500*time.Millisecond, Value: 5}}
	top.Load.Think = cnst(0)
	top.Duration = t0 + 20*time.Second
	res, err := Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := at(t, res, 0, t0.Seconds()+10)
	if s.Executing != 5 || s.Pipelines != 20 {
		t.Errorf("at 310 s: %v executing, %v pipelines; want 5 and 20", s.Executing, s.Pipelines)
	}
}

func TestRefusedRequestIsNeverHeld(t *testing.T) {
	// M/M/1/10 in a burst: one page at a time, a queue of 9; twelve
	// requests at once. The two refused at the instant they arrive must
	// not show as held: 10 requests in the tier at most, and the load's
	// connections (a loopback call, no wire time) at most 10 in use.
	web := tier("web", wait(time.Second))
	web.Host = model.HostIISIntegrated
	web.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 1, QueueLimit: 9}
	got, res := outcomes(t, burst(12, 0, web))
	expect(t, "latencies", got, "0/rejected 0/rejected 1 2 3 4 5 6 7 8 9 10")
	tr := res.Tiers[0]
	if tr.CurrentMax != 10 || tr.ExecutingMax != 1 || tr.QueuedMax != 9 || tr.OutstandingMax != 1 {
		t.Errorf("current max %v (10), executing max %v (1), queued max %v (9), outstanding max %v (1)",
			tr.CurrentMax, tr.ExecutingMax, tr.QueuedMax, tr.OutstandingMax)
	}
	if c := res.Calls[0]; c.From != "load" || c.InUseMax != 10 {
		t.Errorf("load → web connections in use max %v, want 10", c.InUseMax)
	}
}

func TestThreadPoolBoundedQueue(t *testing.T) {
	// A plain pool of one thread with room for one waiter: the third of
	// three requests is refused; with no room at all, the second too.
	for _, c := range []struct {
		limit int
		want  string
	}{{1, "0/rejected 1 2"}, {0, "0/rejected 0/rejected 1"}} {
		svc := tier("svc", wait(time.Second))
		svc.Worker = model.Pool{Min: 1, Max: 1, BoundedQueue: true, QueueLimit: c.limit}
		got, res := outcomes(t, burst(3, 0, svc))
		expect(t, fmt.Sprintf("queue_limit %d", c.limit), got, c.want)
		if tr := res.Tiers[0]; tr.Rejected != int64(2-c.limit) || tr.CurrentMax != float64(1+c.limit) {
			t.Errorf("queue_limit %d: rejected %d, current max %v", c.limit, tr.Rejected, tr.CurrentMax)
		}
	}
}

func TestNoPendingIsALossSystem(t *testing.T) {
	// Envoy with max_pending_requests = 0: one connection, and a call
	// that finds it busy is refused at once.
	be := tier("be", wait(time.Second))
	fe := tier("fe", callTo(1, model.Call{Conn: model.Conn{Limit: 1, NoPending: true}}))
	got, res := outcomes(t, burst(3, 0, fe, be))
	expect(t, "latencies", got, "0/rejected 0/rejected 1")
	if c := res.Calls[1]; c.Rejected != 2 || c.WaitingMax != 0 || c.InUseMax != 1 {
		t.Errorf("fe → be: rejected %d (2), waiting max %v (0), in use max %v (1)", c.Rejected, c.WaitingMax, c.InUseMax)
	}
}

func TestFCFSCores(t *testing.T) {
	// Two cores, first come first served: of four 1 s demands two run at
	// once and two wait a second (processor sharing ends all four at 2 s,
	// TestProcessorSharingCPU); both keep the cores 100% busy.
	svc := tier("svc", cpu(time.Second))
	svc.Cores = 2
	svc.CPU = model.CPUFCFS
	got, res := outcomes(t, burst(4, 0, svc))
	expect(t, "latencies", got, "1 1 2 2")
	if c := at(t, res, 0, 301).CPU; c != 100 {
		t.Errorf("CPU %% over (300, 301] = %v, want 100", c)
	}
	if c := at(t, res, 0, 303).CPU; c != 0 {
		t.Errorf("CPU %% over (302, 303] = %v, want 0", c)
	}
	if tr := res.Tiers[0]; tr.PWait != 0.5 || tr.ResponseMean != 1.5 {
		t.Errorf("P(wait) %v (0.5), response mean %v (1.5)", tr.PWait, tr.ResponseMean)
	}
	// The caller's own CPU (a binding's encode and decode) queues for the
	// same cores. Each call: encode 1 s on fe's one core, then 3 s at be
	// (decode, wait, encode, on be's own cores), then decode 1 s on fe's
	// core. FCFS: r1 encodes 0–1, r2 1–2; r1 decodes 4–5, r2 5–6.
	// Processor sharing: both encode 0–2 and decode 5–7.
	for _, c := range []struct {
		d    model.CPUDiscipline
		want string
	}{{model.CPUFCFS, "5 6"}, {model.CPUSharing, "7 7"}} {
		be := tier("be", wait(time.Second))
		fe := tier("fe", callTo(1, model.Call{Binding: model.Binding{CPUBase: time.Second}}))
		fe.Cores = 1
		fe.CPU = c.d
		got, _ = outcomes(t, burst(2, 0, fe, be))
		expect(t, "caller CPU, "+c.d.String(), got, c.want)
	}
}

func TestCountsCoverTheMeasuredPeriod(t *testing.T) {
	// A warm-up of 300.5 s ends while the burst's five 1 s requests run:
	// the requests block counts them as under way at the warm-up, none as
	// generated after it; all five end in the measured period.
	be := tier("be", wait(time.Second))
	top := burst(5, 0, be)
	top.Warmup = t0 + 500*time.Millisecond
	_, res := outcomes(t, top)
	want := results.Counts{Generated: 0, InFlightAtWarmup: 5, Completed: 5}
	if res.Requests != want || !res.Requests.Conserved() {
		t.Errorf("requests %+v, want %+v", res.Requests, want)
	}
	if res.Tiers[0].Arrived != 0 || res.Tiers[0].Completed != 5 {
		t.Errorf("tier arrived %d (0 after warm-up), completed %d (5)", res.Tiers[0].Arrived, res.Tiers[0].Completed)
	}
}

func TestWaitingForAThreadIsQueued(t *testing.T) {
	// A plain process with one thread and no admission limit: of three
	// requests one runs and two wait for the thread. They are queued, as
	// ASP.NET counts a request waiting for a thread pool thread, not
	// executing (the artefact read 3 executing, 0 queued).
	svc := tier("svc", wait(time.Second))
	svc.Worker = model.Pool{Min: 1, Max: 1}
	got, res := outcomes(t, burst(3, 0, svc))
	expect(t, "latencies", got, "1 2 3")
	checkRows(t, res, 0, []row{
		// executing queued current | thread queue | wait ms (mean/max)
		{300, "1 2 3 | 2 | 0/0"},
		{301, "1 1 2 | 1 | 1000/1000"},
		{302, "1 0 1 | 0 | 2000/2000"},
		{303, "0 0 0 | 0 | 0/0"},
	}, func(s results.TierSample) string {
		return fmt.Sprintf("%g %g %g | %g | %g/%g", s.Executing, s.Queued, s.Current, s.ThreadQueue, s.WaitTimeMS, s.WaitTimeMaxMS)
	})
}
