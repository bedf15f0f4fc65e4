package fit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/runner"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

func loadTwoTier(t *testing.T) (*format.Experiment, []byte) {
	t.Helper()
	data, err := os.ReadFile("testdata/twotier.toml")
	if err != nil {
		t.Fatal(err)
	}
	x, err := format.LoadExperiment("twotier.toml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return x, data
}

// measure runs the experiment as it is at seeds the fit does not use,
// and returns each metric's mean and 95% half-width over the
// replications: the "measurements" of the round trip.
func measure(t *testing.T, x *format.Experiment, metrics []string, reps int) (mean, half []float64) {
	t.Helper()
	sc, err := x.Scenario(0)
	if err != nil {
		t.Fatal(err)
	}
	vals := make([][]float64, len(metrics))
	for k := range reps {
		r, err := simmode.Run(&sc.Topology, model.Options{Seed: runner.ReplicationSeed(1001, k), NoSeries: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range metrics {
			fn, msg := parseMetric(m)
			if msg != "" {
				t.Fatal(msg)
			}
			vals[i] = append(vals[i], fn.of(r, nil))
		}
	}
	for i := range metrics {
		m, h := sim.MeanCI(vals[i], 0.95)
		mean, half = append(mean, m), append(half, h)
	}
	return mean, half
}

// TestRoundTrip: simulate with known inputs, fit three of them back from
// four of the outputs, and predict three outputs the fit did not see.
// Every input must come back within its interval, every held-out figure
// inside its prediction's interval.
func TestRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("a fit: about a hundred short runs")
	}
	x, text := loadTwoTier(t)
	fitMetrics := []string{"goodput_per_s", "tier.svc.cpu_utilisation", "tier.web.cpu_utilisation", "latency.mean"}
	heldOut := []string{"latency.p90", "tier.svc.requests_executing_mean", "call.web.svc.connections_in_use_mean"}
	mean, half := measure(t, x, append(fitMetrics, heldOut...), 6)
	var spec strings.Builder
	spec.WriteString(`experiment = "twotier.toml"
replications = 2
max_evaluations = 90

[[free]]
key = "tier.svc.step.1.cpu"
value = "exp({}ms)"
min = 5
max = 200
scale = "log"

[[free]]
key = "tier.svc.step.2.wait"
value = "exp({}ms)"
min = 5
max = 300
scale = "log"

[[free]]
key = "load.think"
value = "exp({}ms)"
min = 100
max = 5000
scale = "log"
`)
	for i, m := range append(fitMetrics, heldOut...) {
		// The first held-out figure is held out by Options.HoldOut (as
		// --hold-out does), the others by use = "predict".
		use := "fit"
		if i > len(fitMetrics) {
			use = "predict"
		}
		// The measurement's precision: its replications' half-width, and
		// at least 2% of it.
		tol := math.Max(half[i], 0.02*math.Abs(mean[i]))
		fmt.Fprintf(&spec, "\n[[target]]\nname = %q\nmetric = %q\nvalue = %g\ntolerance = %g\nuse = %q\n", m, m, mean[i], tol, use)
	}
	s, err := ParseSpec("twotier.fit", []byte(spec.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(x); err != nil {
		t.Fatal(err)
	}
	res, err := Fit(context.Background(), x, text, s, Options{HoldOut: []string{heldOut[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if n := res.count(false); n != len(heldOut) {
		t.Errorf("%d targets predicted, want the %d held out", n, len(heldOut))
	}
	var out strings.Builder
	res.WriteText(&out)
	t.Log("\n" + out.String())
	truth := []float64{40, 60, 800}
	for j, in := range res.Inputs {
		if !in.Pinned || truth[j] < in.Lo || truth[j] > in.Hi {
			t.Errorf("%s: fitted %s, interval %.4g – %.4g (pinned %v); the truth %v is not in it", in.Free.Key, in.Text, in.Lo, in.Hi, in.Pinned, truth[j])
		}
	}
	for _, tr := range res.Targets {
		if tr.Fitted {
			continue
		}
		if tr.Target.Value < tr.Lo || tr.Target.Value > tr.Hi {
			t.Errorf("%s: predicted %.4g, interval %.4g – %.4g; the measurement %.4g is not in it", tr.Target.Name, tr.Model, tr.Lo, tr.Hi, tr.Target.Value)
		}
	}
	if res.Experiment == nil {
		t.Fatalf("no fitted experiment: %v", res.Notes)
	}
	if !strings.Contains(string(res.Experiment), "# fitted (was ") {
		t.Errorf("the fitted experiment does not mark its values:\n%s", res.Experiment)
	}
}

// TestCancel: a cancelled fit stops and says why.
func TestCancel(t *testing.T) {
	x, text := loadTwoTier(t)
	s, err := ParseSpec("s.fit", []byte(goodSpec))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(x); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(ctx, x, text, s, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled fit: got %v, want context.Canceled", err)
	}
	if _, err := Fit(context.Background(), x, text, s, Options{HoldOut: []string{"nothing"}}); err == nil || !strings.Contains(err.Error(), `--hold-out "nothing": no such target (targets: svc CPU)`) {
		t.Errorf("an unknown hold-out: got %v", err)
	}
	if _, err := Fit(context.Background(), x, text, s, Options{HoldOut: []string{"svc CPU"}}); err == nil || !strings.Contains(err.Error(), "none is left to fit") {
		t.Errorf("every target held out: got %v", err)
	}
}

// TestFitVariantInput: an input of one variant (a rerun's peak of users)
// is set in that variant's scenarios only, found back from a figure of the
// rerun simulated with a known peak, and written into the variant's set;
// the other variant's figure is untouched by it.
func TestFitVariantInput(t *testing.T) {
	if testing.Short() {
		t.Skip("a fit: a few dozen short runs")
	}
	data, err := os.ReadFile("testdata/rerun.toml")
	if err != nil {
		t.Fatal(err)
	}
	x, err := format.LoadExperiment("rerun.toml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	const spec = `experiment = "rerun.toml"
variant = "before"
replications = 2
max_evaluations = 24
restarts = 0

[[free]]
key = "load.users_schedule"
variant = "rerun"
value = "[ {at = \"0s\", value = 40}, {at = \"1m\", value = 40}, {at = \"2m\", value = {}} ]"
min = 60
max = 400
integer = true

[[target]]
name = "rerun: calls"
metric = "requests.completed"
variant = "rerun"
value = %v
tolerance = "2%%"

[[target]]
name = "before: calls"
metric = "requests.completed"
value = 1
tolerance = 1e9
use = "predict"
`
	// The truth: the rerun with a peak of 175 users.
	truth, err := x.ScenarioWith("rerun", []format.Param{{Key: "load.users_schedule", Value: `[ {at = "0s", value = 40}, {at = "1m", value = 40}, {at = "2m", value = 175} ]`}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls []float64
	for k := range 4 {
		r, err := simmode.Run(&truth.Topology, model.Options{Seed: runner.ReplicationSeed(77, k), NoSeries: true})
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, float64(r.Requests.Completed))
	}
	m, _ := sim.MeanCI(calls, 0.95)
	s, err := ParseSpec("rerun.fit", fmt.Appendf(nil, spec, math.Round(m)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Check(x); err != nil {
		t.Fatal(err)
	}
	res, err := Fit(context.Background(), x, data, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := res.Inputs[0]
	if !in.Pinned || in.Lo > 175 || in.Hi < 175 {
		t.Errorf("the rerun's peak: fitted %v, interval %.4g – %.4g (pinned %v); the truth 175 is not in it", in.Value, in.Lo, in.Hi, in.Pinned)
	}
	// The other variant does not see the input: its figure is the same at
	// any value of it.
	for _, tr := range res.Targets {
		if tr.Target.Name == "before: calls" && tr.Elasticity[0] != 0 {
			t.Errorf("the before variant's calls change with the rerun's input (elasticity %v)", tr.Elasticity[0])
		}
	}
	if !strings.Contains(string(res.Experiment), fmt.Sprintf("{at = \"2m\", value = %v} ] }", in.Value)) {
		t.Errorf("the fitted experiment lacks the rerun's fitted schedule:\n%s", res.Experiment)
	}
}

// TestDeterministic: the same specification and seed give the same
// report and the same fitted experiment, byte for byte (gonum's
// Nelder–Mead asks for one point at a time; runs go in parallel but each
// replication has its own seed and engine).
func TestDeterministic(t *testing.T) {
	x, text := loadTwoTier(t)
	data, err := os.ReadFile("testdata/small.fit")
	if err != nil {
		t.Fatal(err)
	}
	var outs [2]string
	var exps [2][]byte
	for i := range outs {
		s, err := ParseSpec("small.fit", data)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Check(x); err != nil {
			t.Fatal(err)
		}
		res, err := Fit(context.Background(), x, text, s, Options{MaxEvaluations: 12, Workers: 1 + i})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := res.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		outs[i], exps[i] = b.String(), res.Experiment
	}
	if outs[0] != outs[1] {
		t.Errorf("two fits of one specification differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	if string(exps[0]) != string(exps[1]) {
		t.Error("two fits of one specification wrote different experiments")
	}
}
