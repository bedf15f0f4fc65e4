package simmode

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
	"github.com/tsim-dev/tsim/sim"
)

// randomTopology builds a small random system that exercises every
// mechanism at once: tiers with every host kind, WCF modes, pools with
// injection, admission limits, locks, sync and async handlers, calls with
// limits, proxies, bindings, timeouts, retries, executionTimeout.
func randomTopology(seed uint64) *model.Topology {
	r := sim.NewStreams(seed).Stream("random-topology")
	pick := func(n int) int { return r.IntN(n) }
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+pick(hi-lo+1)) * time.Millisecond }
	nt := 1 + pick(4)
	top := &model.Topology{Duration: 2 * time.Minute, SampleEvery: time.Second}
	if pick(3) == 0 {
		top.Warmup = 20 * time.Second
	}
	for i := 0; i < nt; i++ {
		t := model.Tier{Name: fmt.Sprintf("t%d", i), Host: model.HostKind(pick(4)), Cores: 1 + pick(8), CostMultiplier: 1,
			Async: pick(2) == 0, MemoryPerRequest: int64(pick(100000))}
		inj := model.Injection(pick(2))
		t.Worker = model.Pool{Min: 1 + pick(4), Max: 2 + pick(50), Injection: inj, GateDelay: 500 * time.Millisecond, IdleTimeout: 20 * time.Second}
		t.IO = model.Pool{Min: 1 + pick(4), Max: 2 + pick(50), Injection: model.Injection(pick(2)), GateDelay: 500 * time.Millisecond, IdleTimeout: 20 * time.Second}
		if t.Worker.Min > t.Worker.Max {
			t.Worker.Min = t.Worker.Max
		}
		if t.IO.Min > t.IO.Max {
			t.IO.Min = t.IO.Max
		}
		if pick(4) == 0 {
			t.Worker.BoundedQueue, t.Worker.QueueLimit = true, pick(5)
		}
		if pick(3) == 0 {
			t.CPU = model.CPUFCFS
		}
		t.DotNet = []string{"", "3.5", "4.0"}[pick(3)]
		switch pick(3) {
		case 1:
			t.Admission = model.Admission{Kind: model.AdmitClassic, MinFreeThreads: pick(t.Worker.Max), QueueLimit: pick(30), SyncModule: pick(2) == 0}
		case 2:
			t.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 1 + pick(20), QueueLimit: pick(30), CountExecuting: pick(2) == 0, SyncModule: pick(2) == 0}
		}
		if pick(4) == 0 {
			t.Admission.ExecutionTimeout = ms(1000, 20000)
			t.Admission.ExecutionCheck = ms(100, 5000)
		}
		if pick(2) == 0 {
			t.WCF = &model.WCF{MaxCalls: 1 + pick(20), MaxSessions: 1 + pick(20), MaxInstances: 1 + pick(40),
				Instancing: model.Instancing(pick(3)), Concurrency: model.Concurrency(pick(3))}
		}
		if pick(2) == 0 {
			t.Steps = append(t.Steps, model.Step{Kind: model.StepCPU, Demand: sim.Exp(ms(1, 50))})
		}
		if pick(3) == 0 {
			t.Steps = append(t.Steps, model.Step{Kind: model.StepLock, Lock: 0}, model.Step{Kind: model.StepWait, Demand: sim.Exp(ms(1, 20))}, model.Step{Kind: model.StepUnlock, Lock: 0})
		}
		if pick(2) == 0 {
			t.Steps = append(t.Steps, model.Step{Kind: model.StepLock, Lock: 1}) // never unlocked: released at the end
		}
		top.Tiers = append(top.Tiers, t)
	}
	mkCall := func(target int) *model.Call {
		c := &model.Call{Target: target, Timeout: ms(200, 5000), Conn: model.Conn{Limit: pick(5)},
			Proxy:   model.Proxy{Kind: model.ProxyKind(pick(5)), PoolSize: 1 + pick(4), CreateCost: sim.Const(ms(0, 5))},
			Binding: model.Binding{CPUBase: ms(0, 2), CPUPerKB: time.Duration(pick(100)) * time.Microsecond, Sessionful: pick(2) == 0, SessionCPU: ms(0, 3), SessionRoundTrips: pick(3)},
			Network: model.Network{Latency: ms(0, 3), Bandwidth: float64(pick(2)) * 1e7},
			Retry:   model.Retry{Attempts: 1 + pick(3), Backoff: sim.Exp(ms(10, 500)), Jitter: 0.5}, RequestKB: float64(pick(50)), ReplyKB: float64(pick(50))}
		if pick(4) == 0 {
			c.Conn.MaxPending = 1 + pick(5)
		}
		if pick(4) == 0 {
			c.Conn.WaitTimeout = ms(50, 2000)
		}
		if pick(6) == 0 {
			c.Conn.MaxPending, c.Conn.NoPending = 0, true
		}
		if pick(5) == 0 {
			c.Timeout = 0
		}
		return c
	}
	for i := 0; i+1 < nt; i++ { // a chain, plus some forward calls
		top.Tiers[i].Steps = append(top.Tiers[i].Steps, model.Step{Kind: model.StepCall, Call: mkCall(i + 1)})
		if i+2 < nt && pick(2) == 0 {
			top.Tiers[i].Steps = append(top.Tiers[i].Steps, model.Step{Kind: model.StepCall, Call: mkCall(i + 2)})
		}
		top.Tiers[i].Steps = append(top.Tiers[i].Steps, model.Step{Kind: model.StepWait, Demand: sim.Exp(ms(1, 100))})
	}
	lc := mkCall(0)
	if lc.Proxy.Kind == model.ProxySharedNoOpen || pick(2) == 0 {
		lc.Proxy.Kind = model.ProxyPerUser
	}
	if pick(2) == 0 {
		top.Load = model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: float64(1 + pick(30))}, {At: time.Minute, Value: float64(1 + pick(60))}, {At: 90 * time.Second, Value: float64(pick(20))}},
			Think: sim.Exp(ms(10, 2000)), Call: *lc}
	} else {
		top.Load = model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: float64(1 + pick(50))}, {At: time.Minute, Value: float64(pick(100))}}, Call: *lc}
		if pick(2) == 0 {
			top.Load.Interarrival = sim.MustParseDist("lognormal(mean=1s,cv=2)")
		}
	}
	return top
}

// TestRandomTopologiesConserveRequests runs many random systems: none may
// panic, every one must conserve requests (Run checks it), and each must be
// a function of its seed.
func TestRandomTopologiesConserveRequests(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 60
	}
	for s := uint64(0); s < uint64(n); s++ {
		top := randomTopology(s)
		a, err := Run(top, model.Options{Seed: s})
		if err != nil {
			t.Fatalf("topology %d: %v", s, err)
		}
		if s%10 == 0 {
			b, err := Run(randomTopology(s), model.Options{Seed: s})
			if err != nil {
				t.Fatal(err)
			}
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if string(ja) != string(jb) || a.TraceHash != b.TraceHash {
				t.Fatalf("topology %d: two runs with one seed differ", s)
			}
		}
		for _, tr := range a.Tiers {
			if tr.ExecutingMax < 0 || tr.QueuedMax < 0 || tr.ThreadsBusyMax > tr.ThreadsMax ||
				tr.CurrentMax > tr.ExecutingMax+tr.QueuedMax || tr.OutstandingMax > tr.ExecutingMax ||
				tr.WorkerBusyMax > tr.WorkersMax || tr.IOBusyMax > tr.IOThreadsMax ||
				tr.PWait < 0 || tr.PWait > 1 {
				t.Fatalf("topology %d: tier %s counters impossible: %+v", s, tr.Name, tr)
			}
		}
		// At the end every level is back where the requests still in the
		// tiers put it: nothing is held that nobody holds.
		if last := a.Series[len(a.Series)-1]; len(last.Tiers) > 0 {
			for ti, ts := range last.Tiers {
				if ts.Current != ts.Executing+ts.Queued || ts.Outstanding > ts.Executing || ts.AppQueued > ts.Queued {
					t.Fatalf("topology %d: tier %d at the end: %+v", s, ti, ts)
				}
			}
		}
	}
}

func TestDifferentSeedsDiffer(t *testing.T) {
	top := modeltest.Pipeline(20*time.Second, 5*time.Minute)
	a, _ := Run(top, model.Options{Seed: 1})
	b, _ := Run(top, model.Options{Seed: 2})
	if a.TraceHash == b.TraceHash || a.Requests == b.Requests {
		t.Fatal("seeds 1 and 2 gave the same run")
	}
}
