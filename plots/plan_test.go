package plots

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

var (
	breakdownBars = []BreakdownBar{
		{"misconfigured", results.Breakdown{ConnWait: 5.9, ThreadWait: 0.07, CPU: 0.062, ExternalWait: 0.4, Network: 0.001}},
		{"fixed", results.Breakdown{ThreadWait: 0.0006, CPU: 0.062, ExternalWait: 0.406, Network: 0.001}},
	}
	planPanels = []PlanPanel{
		{Metric: "p99 latency (s)", Goal: 4, GoalLabel: "goal: p99 < 4s", Series: []PlanSeries{{
			X: []float64{128, 1, 64, 32, 16, 8, 4, 6, 5}, Y: []float64{3, 20.5, 3, 3, 3, 3, 4.35, 3.17, 3.55},
			Bound: []float64{3.3, 21.1, 3.3, 3.3, 3.3, 3.3, 5.07, 3.29, 3.77}, OK: []bool{true, false, true, true, true, true, false, true, true}}}},
		{Metric: "timed out (% of requests)", Goal: 0.1, GoalLabel: "goal: timeouts < 0.1%", Series: []PlanSeries{{
			X: []float64{128, 1, 4, 5}, Y: []float64{0, 21, 0, 0}, Bound: []float64{0, 24, 0, 0}, OK: []bool{true, false, false, true}}}},
	}
)

func planFigures(t *testing.T) map[string]*Figure {
	t.Helper()
	b, err := Breakdown("crack: where the response time went", breakdownBars)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Plan("crack: plan", "maxconnection", true, planPanels, 5, "answer: 5")
	if err != nil {
		t.Fatal(err)
	}
	two, err := Plan("two keys", "maxconnection", false, []PlanPanel{{Metric: "p99 (s)", Goal: 1, GoalLabel: "goal", Series: []PlanSeries{
		{Label: "cores=1", X: []float64{2, 4}, Y: []float64{3, 2}, Bound: []float64{3.2, 2.1}, OK: []bool{false, false}},
		{Label: "cores=4", X: []float64{2, 4}, Y: []float64{1.2, 0.5}, Bound: []float64{1.3, 0.6}, OK: []bool{false, true}},
	}}}, math.NaN(), "")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Figure{"breakdown.png": b, "plan.png": p, "plan-two.png": two}
}

func TestPlanAndBreakdownFigures(t *testing.T) {
	a, b := planFigures(t), planFigures(t)
	for name, f := range a {
		var x, y bytes.Buffer
		if err := f.WritePNG(&x); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := b[name].WritePNG(&y); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x.Bytes(), y.Bytes()) {
			t.Errorf("%s: two renderings of the same data differ", name)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(x.Bytes()))
		if err != nil || cfg.Width != 1200 || cfg.Height != 800 || x.Len() < 10_000 {
			t.Errorf("%s: %v, %d×%d, %d bytes", name, err, cfg.Width, cfg.Height, x.Len())
		}
	}
}

func TestPlanAndBreakdownBadData(t *testing.T) {
	nan := math.NaN()
	one := func(p PlanPanel) []PlanPanel { return []PlanPanel{p} }
	pt := func(x, y, b float64) PlanSeries {
		return PlanSeries{X: []float64{x}, Y: []float64{y}, Bound: []float64{b}, OK: []bool{true}}
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"breakdown, none", second(Breakdown("x", nil)), "no data"},
		{"breakdown, NaN", second(Breakdown("x", []BreakdownBar{{"a", results.Breakdown{CPU: nan}}})), "working (CPU) is NaN"},
		{"breakdown, negative", second(Breakdown("x", []BreakdownBar{{"a", results.Breakdown{CPU: -1}}})), "negative"},
		{"breakdown, empty", second(Breakdown("x", []BreakdownBar{{"a", results.Breakdown{}}})), "every bar is empty"},
		{"plan, none", second(Plan("x", "k", false, nil, nan, "")), "no data"},
		{"plan, no points", second(Plan("x", "k", false, one(PlanPanel{Metric: "m"}), nan, "")), "no points"},
		{"plan, NaN", second(Plan("x", "k", false, one(PlanPanel{Metric: "m", Series: []PlanSeries{pt(1, nan, 1)}}), nan, "")), "is NaN"},
		{"plan, Inf bound", second(Plan("x", "k", false, one(PlanPanel{Metric: "m", Series: []PlanSeries{pt(1, 1, math.Inf(1))}}), nan, "")), "is +Inf"},
		{"plan, log of 0", second(Plan("x", "k", true, one(PlanPanel{Metric: "m", Series: []PlanSeries{pt(0, 1, 1)}}), nan, "")), "logarithmic"},
		{"plan, lengths", second(Plan("x", "k", false, one(PlanPanel{Metric: "m", Series: []PlanSeries{{X: []float64{1, 2}, Y: []float64{1}}}}), nan, "")), "2 values, 1 means"},
		{"plan, goal NaN", second(Plan("x", "k", false, one(PlanPanel{Metric: "m", Goal: nan, Series: []PlanSeries{pt(1, 1, 1)}}), nan, "")), "goal is NaN"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
}
