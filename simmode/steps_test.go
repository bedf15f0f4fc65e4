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
// worked out by hand. The tables both executors run are in
// model/modeltest (steps.go, run by steptables_test.go); the tests here
// and in the other *_steps_test.go files check what only the simulator
// can, to the instant. n users all send their one request at t0 (their
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
