package analysis

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

func load(t *testing.T, name, src string) *format.Experiment {
	t.Helper()
	x, err := format.LoadExperiment(name, []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestExplainCrackTyped reads the story's diagnosis from the typed result
// rather than the text: the knob, key and values proposed and what binds
// next, which cmd/tsim's TestExplainCrack finds in the words.
func TestExplainCrackTyped(t *testing.T) {
	const path = "../experiments/crack-throttling.toml"
	l, err := input.Load(path, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := l.X
	ex, err := Explain(context.Background(), x, ExplainOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Name != "crack-throttling" || ex.Seed != x.Seed || len(ex.Variants) != 2 {
		t.Fatalf("name %q seed %d, %d variants", ex.Name, ex.Seed, len(ex.Variants))
	}
	mis, fixed := ex.Variants[0], ex.Variants[1]
	if b := mis.Bounds.Binding; b == nil || b.Throttle != "connections web→service" || !mis.Bounds.Saturated {
		t.Fatalf("misconfigured binds %+v (saturated %v)", b, mis.Bounds.Saturated)
	}
	ch := mis.Change
	want := Change{Knob: "maxconnection web→service", From: 2,
		Set:         format.Param{Key: "tier.web.calls.maxconnection", Value: "3"},
		Comfortable: format.Param{Key: "tier.web.calls.maxconnection", Value: "4"},
		Past:        format.Param{Key: "tier.web.calls.maxconnection", Value: "92"}}
	if ch.Knob != want.Knob || ch.From != want.From || ch.Set != want.Set || ch.Comfortable != want.Comfortable || ch.Past != want.Past {
		t.Errorf("change %+v, want %+v", ch, want)
	}
	if ch.Next == nil || ch.Next.Throttle != "ASP.NET request queue web" {
		t.Errorf("next binds %+v, want the ASP.NET request queue", ch.Next)
	}
	if !strings.Contains(mis.Diagnosis, "Smallest change: "+ch.Text[:20]) || !strings.HasPrefix(mis.Diagnosis, "variant misconfigured:") {
		t.Errorf("the diagnosis text does not carry the change:\n%s", mis.Diagnosis)
	}
	if share := mis.Run.Breakdown.ConnWait / breakdownTotal(mis.Run.Breakdown); share < 0.8 {
		t.Errorf("connection waiting is %.0f%% of the misconfigured response time", 100*share)
	}
	// The fixed variant holds its load: nothing needs to change, but the
	// change past the binding limit is still named.
	if fixed.Bounds.Saturated || fixed.Change.Set.Key != "" || fixed.Change.Past.Key == "" {
		t.Errorf("fixed: saturated %v, change %+v", fixed.Bounds.Saturated, fixed.Change)
	}

	// The same seed gives the same explanation; another seed, another run.
	again, err := Explain(context.Background(), x, ExplainOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if again.Variants[0].Diagnosis != mis.Diagnosis {
		t.Errorf("two explanations with one seed differ")
	}
	seed := uint64(5)
	other, err := Explain(context.Background(), x, ExplainOptions{Path: path, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if other.Seed != 5 || other.Variants[0].Run.Seed == mis.Run.Seed {
		t.Errorf("seed 5: explanation seed %d, run seed %d", other.Seed, other.Variants[0].Run.Seed)
	}
}

// planSmall's front end connection limit decides whether the goal holds;
// short, to simulate a few dozen times.
const planSmall = `name = "small"
seed = 7
duration = "30s"
warmup = "5s"

[load]
users = 40
think = "exp(1s)"
timeout = "3s"

[[tier]]
name = "fe"
cores = 4
worker.max = 400
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
cpu = "exp(10ms)"
[[tier.step]]
wait = "exp(100ms)"
`

// recording runs on the simulator and records every seed it was given.
type recording struct {
	mu    sync.Mutex
	seeds map[uint64]int
}

func (r *recording) Run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	r.mu.Lock()
	r.seeds[seed]++
	r.mu.Unlock()
	return runner.Sim{}.Run(ctx, top, seed, opt)
}

func (r *recording) Parallel() bool { return true }

// TestPlanBisection checks the answer of a bisection against its own
// points — the answer meets the goal and the value below it, evaluated,
// misses — and that every point ran the replications of 'tsim run': its
// seeds, on the executor given.
func TestPlanBisection(t *testing.T) {
	x := load(t, "small.toml", planSmall)
	goal, err := ParseGoal("p99<1s,timeouts<0.5%")
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseVary("tier.fe.calls.maxconnection=1..32")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recording{seeds: map[uint64]int{}}
	r, err := Plan(context.Background(), x, PlanOptions{Path: "small.toml", Goal: goal, Vary: []*Axis{a}, Executor: rec})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != MethodBisect || !r.Found || r.Best == nil || !r.Best.OK || r.Answer != r.Best.X[0] {
		t.Fatalf("method %s found %v best %+v answer %v", r.Method, r.Found, r.Best, r.Answer)
	}
	if len(r.Points) > 8 {
		t.Errorf("%d points for a bisection of 1..32", len(r.Points))
	}
	below := slices.IndexFunc(r.Points, func(p *Point) bool { return p.X[0] == r.Answer-1 })
	if r.Answer > 1 && (below < 0 || r.Points[below].OK) {
		t.Errorf("answer %v: the value below it was not evaluated, or met the goal", r.Answer)
	}
	for i, p := range r.Points {
		if p.Order != i+1 || len(p.Mean) != len(goal) || len(p.Values[0]) != r.Reps {
			t.Errorf("point %d: %+v", i, p)
		}
		all := true
		for g := range goal {
			m, b, ok := goal[g].Judge(p.Values[g])
			if m != p.Mean[g] || b != p.Bound[g] {
				t.Errorf("point %d clause %d: judged %v → %v, stored %v → %v", i, g, m, b, p.Mean[g], p.Bound[g])
			}
			all = all && ok
		}
		if all != p.OK || all != (len(r.Missed(p)) == 0) {
			t.Errorf("point %d: ok %v, clauses all met %v, missed %v", i, p.OK, all, r.Missed(p))
		}
	}
	if r.Reps != 3 || len(rec.seeds) != 3 {
		t.Fatalf("%d replications per point, %d seeds", r.Reps, len(rec.seeds))
	}
	for k := range 3 {
		if n := rec.seeds[runner.ReplicationSeed(x.Seed, k)]; n != len(r.Points) {
			t.Errorf("replication %d's seed ran %d times for %d points", k, n, len(r.Points))
		}
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "answer: tier.fe.calls.maxconnection = ") {
		t.Errorf("text:\n%s", text.String())
	}
}

func TestPlanErrors(t *testing.T) {
	x := load(t, "small.toml", planSmall)
	goal, _ := ParseGoal("p99<1s")
	var lk *LoadKindError
	if _, err := Plan(context.Background(), x, PlanOptions{Path: "small.toml", Goal: goal, Find: "rate"}); !errors.As(err, &lk) || !lk.Closed {
		t.Errorf("a rate searched on a closed load: %v", err)
	}
	a, _ := ParseVary("tier.fe.nope=1..4")
	var ke *KeyError
	if _, err := Plan(context.Background(), x, PlanOptions{Goal: goal, Vary: []*Axis{a}}); !errors.As(err, &ke) || ke.Key != "tier.fe.nope" {
		t.Errorf("an unknown key: %v", err)
	}
	b, _ := ParseVary("tier.fe.cores=1,2")
	if _, err := Plan(context.Background(), x, PlanOptions{Goal: goal, Vary: []*Axis{b}, Search: "bisect"}); err == nil {
		t.Errorf("bisection of a list: no error")
	}
	if _, err := Plan(context.Background(), x, PlanOptions{Goal: goal}); err == nil {
		t.Errorf("nothing to search: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, _ := ParseVary("tier.fe.calls.maxconnection=1..4")
	if _, err := Plan(ctx, x, PlanOptions{Goal: goal, Vary: []*Axis{c}}); err == nil || err.Error() != "interrupted" {
		t.Errorf("cancelled: %v", err)
	}
}

// Requests that time out where no bound binds: one user whose calls wait
// 2 s against a 1 s timeout. explain must not call that "nothing to
// change".
func TestExplainTimeoutsWithoutABindingLimit(t *testing.T) {
	x := load(t, "slow.toml", `
name = "slow"
duration = "2m"
warmup = "10s"

[load]
users = 1
think = "const(1s)"
timeout = "1s"

[[tier]]
name = "svc"
cores = 8
  [[tier.step]]
  wait = "const(2s)"
`)
	ex, err := Explain(context.Background(), x, ExplainOptions{Path: "slow.toml"})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := ex.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "Nothing to change for this load") || !strings.Contains(out, "By the bounds nothing binds, yet requests fail") {
		t.Errorf("explain of a run whose every request times out:\n%s", out)
	}
}

// When a contention mechanism dominates, explain says what helps against
// it and marks the bounds' change as the bounds' alone: on the lock-convoy
// story, more cores (what the bounds propose) only lengthen the convoy.
func TestExplainDominantMechanismRemedy(t *testing.T) {
	const path = "../experiments/trace-lock-convoy.toml"
	l, err := input.Load(path, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Explain(context.Background(), l.X, ExplainOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Variants) != 2 {
		t.Fatalf("%d variants, want release and tracing-in-hot-path", len(ex.Variants))
	}
	release, tracing := ex.Variants[0].Diagnosis, ex.Variants[1].Diagnosis
	for _, want := range []string{"a lock convoy dominates", "Against it: hold the lock for less time", "Smallest change by the bounds alone, which do not see it: raise the cores"} {
		if !strings.Contains(tracing, want) {
			t.Errorf("tracing-in-hot-path's diagnosis lacks %q:\n%s", want, tracing)
		}
	}
	if strings.Contains(release, "Against it") || strings.Contains(release, "dominates") {
		t.Errorf("release (no lock contended) names a mechanism:\n%s", release)
	}
}
