package analysis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// curve is an executor that simulates nothing: its goodput is a function
// of the topology (the front end's connection limit, or the users) with a
// small noise of the seed (the same at every point: common random
// numbers), so that a search can be checked against a known answer. It
// records the loads and limits it was given.
type curve struct {
	mu     sync.Mutex
	f      func(top *model.Topology) float64
	limits []int
	users  []float64
}

func (c *curve) Run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.limits = append(c.limits, top.Tiers[0].Steps[1].Call.Conn.Limit)
	c.users = append(c.users, top.Load.Users.Max())
	c.mu.Unlock()
	x := c.f(top) * (1 + 0.002*float64(seed%7))
	return &results.Run{Seed: seed, GoodputPerS: x, ThroughputPerS: x, Latency: results.Latency{P99: 0.1}}, nil
}

func (c *curve) Parallel() bool { return true }

func connLimit(top *model.Topology) float64 { return float64(top.Tiers[0].Steps[1].Call.Conn.Limit) }

// A goal that holds at every load: the search for the most users stops
// at its cap, 4 × the load at which the binding throttle saturates, with
// the verdict that the goal holds up to the cap. Before, it doubled up to
// a million users.
func TestPlanFindUsersStopsAtTheCap(t *testing.T) {
	x := load(t, "small.toml", planSmall)
	goal, _ := ParseGoal("goodput>0.001")
	ex := &curve{f: func(*model.Topology) float64 { return 1 }}
	r, err := Plan(context.Background(), x, PlanOptions{Path: "small.toml", Goal: goal, Find: "users", Executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := x.Scenario(0)
	a := model.Analyse(&sc.Topology)
	want := math.Ceil(4 * a.SaturatesAt)
	if !r.Found || !r.Capped || r.Cap != want || r.Answer != want || slices.Max(ex.users) != want {
		t.Errorf("found %v capped %v, cap %v, answer %v, most users tried %v; want all at 4 × %v = %v",
			r.Found, r.Capped, r.Cap, r.Answer, slices.Max(ex.users), a.SaturatesAt, want)
	}
	if len(r.Points) > 4 {
		t.Errorf("%d points from 40 users to a cap of %v", len(r.Points), want)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(unwrapText(b.String()), "the goal holds up to the cap: "+fmtCount(want)+" users") || !strings.Contains(b.String(), "at most") {
		t.Errorf("text:\n%s", b.String())
	}
	// A cap given is the cap.
	r, err = Plan(context.Background(), x, PlanOptions{Path: "small.toml", Goal: goal, Find: "users", Executor: ex, MaxLoad: 100})
	if err != nil || !r.Capped || r.Answer != 100 {
		t.Errorf("MaxLoad 100: %v, capped %v, answer %v", err, r.Capped, r.Answer)
	}
}

func unwrapText(s string) string { return strings.Join(strings.Fields(s), " ") }

// A long list of a capacity setting is bisected over its values, not
// tried one by one, and gives the answer of the range.
func TestPlanLongListIsBisected(t *testing.T) {
	x := load(t, "small.toml", planSmall)
	goal, _ := ParseGoal("goodput>36.5")
	var vals []string
	for v := 200; v >= 1; v-- { // out of order, as a person may write them
		vals = append(vals, fmt.Sprint(v))
	}
	list, err := ParseVary("tier.fe.calls.maxconnection=" + strings.Join(vals, ","))
	if err != nil {
		t.Fatal(err)
	}
	rng, _ := ParseVary("tier.fe.calls.maxconnection=1..200")
	for _, a := range []*Axis{list, rng} {
		ex := &curve{f: connLimit}
		r, err := Plan(context.Background(), x, PlanOptions{Path: "small.toml", Goal: goal, Vary: []*Axis{a}, Executor: ex})
		if err != nil {
			t.Fatal(err)
		}
		// 36 × (1 + at most 1.2%) misses 36.5; 37 meets it. About
		// log2(200) + 2 points: the top, the bottom, then halves.
		if r.Method != MethodBisect || !r.Found || r.Answer != 37 || len(r.Points) > 10 {
			t.Errorf("ints %v: method %s, answer %v, %d points", a.Ints, r.Method, r.Answer, len(r.Points))
		}
	}
}

// A grid of more than MaxQuietGrid points is warned about before the first
// simulation; a search interrupted keeps the points that finished.
func TestPlanBigGridWarnsAndInterruptKeepsPoints(t *testing.T) {
	x := load(t, "small.toml", planSmall)
	goal, _ := ParseGoal("goodput>1")
	var vals []string
	for v := 1; v <= 300; v++ {
		vals = append(vals, fmt.Sprintf("%dms", v))
	}
	a, err := ParseVary("tier.be.step.2.wait=" + strings.Join(vals, ","))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ex := &curve{f: func(*model.Topology) float64 { return 2 }}
	var warned []string
	var seen []*Point
	r, err := Plan(ctx, x, PlanOptions{Path: "small.toml", Goal: goal, Vary: []*Axis{a}, Executor: ex, Workers: 1,
		Warn: func(s string) {
			warned = append(warned, s)
			if len(ex.users) > 0 {
				t.Errorf("warned after %d simulations", len(ex.users))
			}
		},
		OnPoint: func(pt *Point) {
			seen = append(seen, pt)
			if len(seen) == 3 {
				cancel()
			}
		}})
	if len(warned) != 1 || !strings.Contains(warned[0], "the grid has 300 points, each simulated 3 times") {
		t.Errorf("warnings %q", warned)
	}
	if !errors.Is(err, ErrInterrupted) || r == nil || !r.Interrupted {
		t.Fatalf("interrupted: err %v, result %v", err, r)
	}
	if len(r.Points) < 3 || len(r.Points) != len(seen) || len(r.Points) >= 300 {
		t.Fatalf("%d points kept, %d seen", len(r.Points), len(seen))
	}
	for _, pt := range r.Points {
		if !slices.Contains(seen, pt) || pt.Mean == nil || !pt.OK {
			t.Errorf("point %+v kept but not finished", pt)
		}
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), fmt.Sprintf("no answer: interrupted after %d finished points", len(r.Points))) {
		t.Errorf("text:\n%s", b.String())
	}
}

// Maximising goodput over a curve that rises and falls (the Universal
// Scalability Law with σ = 0.05, κ = 0.002: N* = √(0.95/0.002) ≈ 21.8)
// finds its peak, not the smallest value that meets the goal.
func TestPlanMaximizeFindsThePeak(t *testing.T) {
	x := load(t, "small.toml", planSmall)
	usl := func(top *model.Topology) float64 {
		n := connLimit(top)
		return 10 * n / (1 + 0.05*(n-1) + 0.002*n*(n-1))
	}
	a, _ := ParseVary("tier.fe.calls.maxconnection=1..128")
	ex := &curve{f: usl}
	r, err := Plan(context.Background(), x, PlanOptions{Path: "small.toml", Vary: []*Axis{a}, Maximize: "goodput", Executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != MethodMax || !r.Found || (r.Answer != 21 && r.Answer != 22) {
		t.Fatalf("method %s, answer %v; want the peak at 21 or 22", r.Method, r.Answer)
	}
	if len(r.Points) > 8+2*5+1 {
		t.Errorf("%d points: the grid of 8 and a bisection of the slope over 16..32", len(r.Points))
	}
	// The law fitted to the points tried gives the curve's own peak back.
	if u := r.USL; u == nil || math.Abs(u.NStar-math.Sqrt(0.95/0.002)) > 1 || u.R2 < 0.99 {
		t.Errorf("USL of the points: %+v", r.USL)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if s := unwrapText(b.String()); !strings.Contains(s, "answer: tier.fe.calls.maxconnection = "+fmt.Sprint(r.Answer)+" gives the most goodput") ||
		!strings.Contains(s, "goodput mean ± 95%") {
		t.Errorf("text:\n%s", b.String())
	}
	// With a goal that only the values near the peak meet (the peak is
	// 74/s), the grid's best meets it and the answer is the same; with
	// one that none meets, there is none.
	goal, _ := ParseGoal("goodput>70")
	r, err = Plan(context.Background(), x, PlanOptions{Path: "small.toml", Vary: []*Axis{a}, Goal: goal, Maximize: "goodput", Executor: &curve{f: usl}})
	if err != nil || !r.Found || !r.Best.OK || (r.Answer != 21 && r.Answer != 22) {
		t.Fatalf("with a goal: %v, answer %v", err, r.Answer)
	}
	goal, _ = ParseGoal("goodput>80")
	r, err = Plan(context.Background(), x, PlanOptions{Path: "small.toml", Vary: []*Axis{a}, Goal: goal, Maximize: "goodput", Executor: &curve{f: usl}})
	if err != nil || r.Found {
		t.Fatalf("a goal above the peak: %v, found %v", err, r.Found)
	}
	if _, err := Plan(context.Background(), x, PlanOptions{Vary: []*Axis{a}, Maximize: "latency"}); err == nil {
		t.Errorf("Maximize latency: no error")
	}
}
