package runner

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReplicationSeed(t *testing.T) {
	if ReplicationSeed(42, 0) != 42 {
		t.Errorf("replication 0 must use the experiment seed, so that --seed S --reps 1 replays it")
	}
	// Nearby seeds do not share replications.
	seen := map[uint64]bool{}
	for _, s := range []uint64{0, 1, 2, 3} {
		for k := range 50 {
			r := ReplicationSeed(s, k)
			if seen[r] {
				t.Fatalf("seed %d replication %d repeats an earlier seed's", s, k)
			}
			seen[r] = true
		}
	}
}

type failing struct{}

func (*failing) Parallel() bool { return true }

func (f *failing) Run(_ context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	return nil, errors.New("model: requests not conserved")
}

func TestExecuteFailureSaysHowToReplay(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	p := testPlan(t, f, 3, 2, Shard{})
	_, err := Execute(context.Background(), p, &failing{}, 1, nil)
	if err == nil {
		t.Fatal("no error from a failing replication")
	}
	for _, s := range []string{f + ": variant broken, replication 1 (seed 3): model: requests not conserved", "tsim run " + f + " --seed 3 --reps 1"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q lacks %q", err, s)
		}
	}
}

func TestAggregateRuns(t *testing.T) {
	tier := func(cpu, execMean, execMax float64, completed int64) results.Tier {
		return results.Tier{Name: "fe", Cores: 4, CPUUtil: cpu, ExecutingMean: execMean, ExecutingMax: execMax, Completed: completed}
	}
	runs := []*results.Run{
		{Duration: 60, Warmup: 10, Requests: results.Counts{Generated: 10, Completed: 8, TimedOut: 2},
			ThroughputPerS: 2, GoodputPerS: 1, TimeoutRate: 0.2, FirstTimeout: 30,
			Latency:   results.Latency{Mean: 1, P99: 3, Max: 4},
			Tiers:     []results.Tier{tier(0.5, 10, 20, 100)},
			TierNames: []string{"fe", "be"},
			Calls: []results.Call{
				{From: "fe", To: "be", InUseMean: 2, InUseMax: 2, WaitMean: 1, Calls: 10},
				{From: "load", To: "fe", InUseMean: 4, Calls: 10},
			}},
		{Duration: 60, Warmup: 10, Requests: results.Counts{Generated: 12, Completed: 12},
			ThroughputPerS: 4, GoodputPerS: 3, TimeoutRate: 0, FirstTimeout: -1,
			Latency:   results.Latency{Mean: 3, P99: 5, Max: 6},
			Tiers:     []results.Tier{tier(0.7, 20, 25, 50)},
			TierNames: []string{"fe", "be"},
			Calls: []results.Call{
				{From: "load", To: "fe", InUseMean: 6, Calls: 12},
			}},
		{Duration: 60, Warmup: 10, Requests: results.Counts{Generated: 5, TimedOut: 5},
			ThroughputPerS: 3, GoodputPerS: 0, TimeoutRate: 1, FirstTimeout: 20,
			Tiers:     []results.Tier{tier(0.3, 30, 40, 0)},
			TierNames: []string{"fe", "be"}},
	}
	a := aggregateRuns(runs)
	if want := (results.Counts{Generated: 27, Completed: 20, TimedOut: 7}); a.Requests != want {
		t.Errorf("counts %+v, want %+v", a.Requests, want)
	}
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("throughput", a.ThroughputPerS, 3)
	near("goodput", a.GoodputPerS, 4.0/3)
	near("timeout rate", a.TimeoutRate, 0.4)
	// Latency averages only the replications that completed requests.
	near("latency mean", a.Latency.Mean, 2)
	near("latency max", a.Latency.Max, 6)
	near("first timeout", a.FirstTimeoutS, 20)
	near("tier cpu", a.Tiers[0].CPUUtil, 0.5)
	near("tier executing max", a.Tiers[0].ExecutingMax, 40)
	if a.Tiers[0].Completed != 150 {
		t.Errorf("tier completed %d, want 150", a.Tiers[0].Completed)
	}
	// Calls are matched by name and listed load first.
	if len(a.Calls) != 2 || a.Calls[0].From != "load" || a.Calls[1].From != "fe" {
		t.Fatalf("calls %+v", a.Calls)
	}
	near("load in use", a.Calls[0].InUseMean, 10.0/3)
	near("fe wait mean", a.Calls[1].WaitMean, 1)
	if a.Calls[0].Calls != 22 {
		t.Errorf("load calls %d, want 22", a.Calls[0].Calls)
	}
	// 95% half-width of {2, 4, 3}: t(0.975, 2) = 4.303, s = 1, n = 3.
	if a.CI == nil || a.CI.ThroughputPerS == nil {
		t.Fatal("no confidence interval with three replications")
	}
	near("ci throughput", math.Round(*a.CI.ThroughputPerS*1000)/1000, math.Round(4.302653*1/math.Sqrt(3)*1000)/1000)
	if a.CI.LatencyMeanS == nil {
		t.Errorf("latency CI missing with two replications that completed requests")
	}
	if one := aggregateRuns(runs[:1]); one.CI != nil {
		t.Errorf("a CI from one replication")
	}
}

func TestShardOwnership(t *testing.T) {
	for n := 1; n <= 5; n++ {
		for total := 0; total <= 13; total++ {
			seen := make([]int, total)
			count := 0
			for i := range n {
				s := Shard{i, n}
				got := 0
				for k := s.first(); k < total; k = s.after(k) {
					if !s.owns(k) {
						t.Fatalf("%d/%d walks to item %d it does not own", i, n, k)
					}
					seen[k]++
					got++
				}
				if got != s.count(total) {
					t.Errorf("%d/%d of %d: walked %d items, count says %d", i, n, total, got, s.count(total))
				}
				count += got
			}
			for k, c := range seen {
				if c != 1 {
					t.Errorf("n %d: item %d run %d times", n, k, c)
				}
			}
			if count != total {
				t.Errorf("n %d: %d of %d items", n, count, total)
			}
		}
	}
}

type slow struct {
	mu            sync.Mutex
	started, took atomic.Int64
	maxOut        int64
}

func (*slow) Parallel() bool { return true }

func (s *slow) Run(_ context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	out := s.started.Add(1) - s.took.Load()
	s.mu.Lock()
	s.maxOut = max(s.maxOut, out)
	s.mu.Unlock()
	time.Sleep(time.Duration(seed%3) * time.Millisecond)
	return &results.Run{Seed: seed, Duration: 1, FirstTimeout: -1, Tiers: []results.Tier{{Name: "fe"}}}, nil
}

type recorder struct {
	ex    *slow
	items []int
}

func (r *recorder) Take(it Item) error {
	r.ex.took.Add(1)
	r.items = append(r.items, it.Index)
	return nil
}

func TestRunItemsInOrder(t *testing.T) {
	f := writeFile(t, "sweep.toml", sweep)
	for _, sh := range []Shard{{}, {1, 4}} {
		ex := &slow{}
		rec := &recorder{ex: ex}
		p := testPlan(t, f, 1, 5, sh)
		workers := 3
		if err := RunItems(context.Background(), p, ex, workers, nil, rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.items) != sh.count(p.Items()) {
			t.Errorf("shard %v: %d items of %d", sh, len(rec.items), sh.count(p.Items()))
		}
		for i := 1; i < len(rec.items); i++ {
			if rec.items[i] <= rec.items[i-1] {
				t.Fatalf("shard %v: item %d after item %d", sh, rec.items[i], rec.items[i-1])
			}
		}
		if window := int64(4*workers + p.Reps); ex.maxOut > window {
			t.Errorf("shard %v: %d items out at once; the window is %d", sh, ex.maxOut, window)
		}
	}
}

const small = `name = "small"
description = "Two connections, then enough."
seed = 3
replications = 2
duration = "30s"
warmup = "5s"
sample_every = "1s"

[load]
users = 40
think = "exp(1s)"
timeout = "2s"

[[tier]]
name = "fe"
cores = 4
worker.max = 64
calls.client = "dotnet"
calls.maxconnection = 2
[[tier.step]]
cpu = "exp(2ms)"
[[tier.step]]
call = "be"

[[tier]]
name = "be"
cores = 4
[[tier.step]]
cpu = "exp(20ms)"
[[tier.step]]
wait = "exp(50ms)"

[[variant]]
name = "broken"

[[variant]]
name = "fixed"
set = { "tier.fe.calls.maxconnection" = 64 }
`

const sweep = `name = "sweep"
seed = 5
replications = 2
duration = "20s"
warmup = "2s"

[load]
users = 30
think = "exp(1s)"
timeout = "2s"

[[tier]]
name = "fe"
cores = 4
calls.client = "dotnet"
calls.maxconnection = 2
[[tier.step]]
call = "be"

[[tier]]
name = "be"
cores = 4
[[tier.step]]
cpu = "exp(20ms)"
[[tier.step]]
wait = "exp(50ms)"

[sweep]
key = "tier.fe.calls.maxconnection"
values = [1, 2, 4, 8, 16, 32]
`

// panicking panics in every replication, as a bug in the model would.
type panicking struct{}

func (panicking) Parallel() bool { return true }

func (panicking) Run(context.Context, *model.Topology, uint64, model.Options) (*results.Run, error) {
	panic("index out of range")
}

// A panic in a replication is that replication's error, not a crash.
func TestPanicIsAnError(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	p := testPlan(t, f, 3, 1, Shard{})
	_, err := Execute(context.Background(), p, panicking{}, 2, nil)
	if err == nil || !strings.Contains(err.Error(), "internal error: index out of range") || !strings.Contains(err.Error(), "--seed 3") {
		t.Fatalf("error %v", err)
	}
}

// concurrent counts the replications running at once. The first plan's
// (known by its seed; it has no more items than workers) wait, up to a few
// seconds, for ExecuteAll to start the plan after it; so a busy machine's
// scheduler cannot hide whether ExecuteAll lets the next plan start beside
// the last of the one before.
type concurrent struct {
	mu        sync.Mutex
	cond      *sync.Cond
	now, most int
	first     uint64 // the first plan's seed
	started   uint64 // the highest plan seed started so far
	overlap   bool   // a plan started while one before it was running
}

func newConcurrent(first uint64) *concurrent {
	c := &concurrent{first: first}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// start is ExecuteAll's started hook.
func (c *concurrent) start(p *Plan) {
	c.mu.Lock()
	c.started = max(c.started, p.Seed)
	c.cond.Broadcast()
	c.mu.Unlock()
}

func (*concurrent) Parallel() bool { return true }

func (c *concurrent) Run(_ context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	c.mu.Lock()
	c.now++
	c.most = max(c.most, c.now)
	stop := time.AfterFunc(5*time.Second, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	for deadline := time.Now().Add(5 * time.Second); seed == c.first && c.started <= seed && time.Now().Before(deadline); {
		c.cond.Wait()
	}
	stop.Stop()
	if seed == c.first && c.started > seed {
		c.overlap = true
	}
	c.now--
	c.mu.Unlock()
	return &results.Run{Seed: seed, Duration: 1, FirstTimeout: -1, Tiers: []results.Tier{{Name: "fe"}}}, nil
}

// ExecuteAll gives each plan what Execute gives it, in plan order, runs
// the next plan's replications beside the last of the one before, and never
// more replications at once than workers.
func TestExecuteAll(t *testing.T) {
	var plans []*Plan
	for i, src := range []string{small, sweep, small, sweep} {
		f := writeFile(t, "p.toml", src)
		plans = append(plans, testPlan(t, f, uint64(10+i), 1+i%2, Shard{}))
	}
	var got []*results.Experiment
	ExecuteAll(context.Background(), plans, Sim{}, 2, nil, nil, func(p *Plan, res *results.Experiment, err error) bool {
		if err != nil {
			t.Fatal(err)
		}
		if p != plans[len(got)] {
			t.Fatalf("plan %d handed on in place %d", slices.Index(plans, p), len(got))
		}
		got = append(got, res)
		return true
	})
	if len(got) != len(plans) {
		t.Fatalf("%d plans finished of %d", len(got), len(plans))
	}
	for i, p := range plans {
		want, err := Execute(context.Background(), p, Sim{}, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("plan %d: ExecuteAll's result differs from Execute's", i)
		}
	}

	// Each plan has its own seed, so the executor sees which are running.
	c := newConcurrent(plans[0].Seed)
	for _, p := range plans {
		p.Reps = 1
	}
	ExecuteAll(context.Background(), plans, c, 2, nil, c.start, func(*Plan, *results.Experiment, error) bool { return true })
	if c.most > 2 {
		t.Errorf("%d replications ran at once on 2 workers", c.most)
	}
	if !c.overlap {
		t.Error("no plan started before the one before it had finished")
	}

	// When finished says stop, it is not called again.
	n := 0
	ExecuteAll(context.Background(), plans, Sim{}, 2, nil, nil, func(*Plan, *results.Experiment, error) bool {
		n++
		return false
	})
	if n != 1 {
		t.Errorf("finished called %d times after it said stop", n)
	}
}

// testPlan loads f and plans it with seed, reps and shard.
func testPlan(t *testing.T, f string, seed uint64, reps int, sh Shard) *Plan {
	t.Helper()
	l, err := input.Load(f, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(l, Options{Seed: &seed, Reps: reps, Shard: sh})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
