package calibrate

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/loadtest"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

// TestCalibrateWithLoadTest: a capture and a load test of one run — ten
// users thinking an exponential second, with a ramp — calibrate the
// experiment's load from the test (its users and think time, written
// into the calibrated file) and compare the simulated latency over time
// with the test's.
func TestCalibrateWithLoadTest(t *testing.T) {
	truth := strings.Replace(roundTripFile("kind = \"closed\"\nusers_schedule = [{at = \"0s\", value = 4}, {at = \"60s\", value = 4}, {at = \"60s\", value = 10}]\nthink = \"exp(1s)\"", 2),
		`duration = "20m"`, `duration = "5m"`, 1)
	l, err := input.LoadData("truth.toml", []byte(truth), nil)
	if err != nil {
		t.Fatal(err)
	}
	seed := uint64(3)
	p, err := runner.NewPlan(l, runner.Options{Seed: &seed, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Execute(context.Background(), p, runner.Sim{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := report.PerfmonCSV(res)
	if err != nil {
		t.Fatal(err)
	}
	// The load test: JMeter's CSV of the same run's requests, its
	// allThreads the users of the schedule.
	var pts []results.Point
	pts = append(pts, res.Scenarios[0].First.Points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].T-pts[i].Latency < pts[j].T-pts[j].Latency })
	var jtl strings.Builder
	jtl.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n")
	epoch := report.PerfmonEpoch.UnixMilli()
	for _, q := range pts {
		start := q.T - q.Latency
		users := 4
		if start >= 60 {
			users = 10
		}
		fmt.Fprintf(&jtl, "%d,%d,page,200,OK,,text,true,,100,100,%d,%d,http://front/,1,0,0\n", epoch+int64(math.Round(start*1000)), int64(math.Round(q.Latency*1000)), users, users)
	}
	lt, err := loadtest.Parse([]byte(jtl.String()), "test.jtl")
	if err != nil {
		t.Fatal(err)
	}
	// The experiment to calibrate guesses the load wrong: 50 users, no
	// think time.
	guess := strings.Replace(roundTripFile("kind = \"closed\"\nusers = 50\nthink = \"exp(100ms)\"", 2), `duration = "20m"`, `duration = "5m"`, 1)
	gx, err := format.LoadExperiment("guess.toml", []byte(guess), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCapture(pm, "capture.csv")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Calibrate(context.Background(), c, gx, []byte(guess), nil, Options{Warmup: 0, NoFigure: true, Measured: lt})
	if err != nil {
		t.Fatal(err)
	}
	cal := string(r.Calibrated)
	for _, want := range []string{`kind = "closed"`, `think = "exp(`, `value = 10.0`} {
		if !strings.Contains(cal, want) {
			t.Errorf("the calibrated experiment has no %q:\n%s", want, cal[strings.Index(cal, "[load]"):][:400])
		}
	}
	if strings.Contains(cal, "users = 50") {
		t.Error("the guessed users are still in the calibrated experiment")
	}
	top := &r.calibrated.Topology
	if m := top.Load.Think.Mean().Seconds(); math.Abs(m-1) > 0.2 {
		t.Errorf("think %.3f s, want about 1 s (the response time law on the test)", m)
	}
	if top.Load.Users.At(30e9) != 4 || top.Load.Users.At(120e9) != 10 {
		t.Errorf("users %g at 30 s and %g at 2 min, want 4 and 10", top.Load.Users.At(30e9), top.Load.Users.At(120e9))
	}
	lc := r.LoadTest
	if lc == nil || lc.Overall.Measured.Requests == 0 || lc.Overall.Simulated.Requests == 0 {
		t.Fatalf("no comparison: %+v", lc)
	}
	if m, s := lc.Overall.Measured.P50S, lc.Overall.Simulated.P50S; math.Abs(s-m) > 0.3*m {
		t.Errorf("median latency simulated %.3f s, measured %.3f s", s, m)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"client latency, measured by the load test (test.jtl, JMeter) / simulated", "aligned by wall clock", "load: from the load test"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text does not say %q", want)
		}
	}
	t.Log(b.String())
}
