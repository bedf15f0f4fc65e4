package format

import (
	"math"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
)

func TestIntegrate(t *testing.T) {
	for _, tc := range []struct {
		s    model.Schedule
		d    time.Duration
		want float64
	}{
		{model.Schedule{{At: 0, Value: 10}}, 100 * time.Second, 1000},
		{model.Schedule{{At: 10 * time.Second, Value: 10}}, 100 * time.Second, 1000}, // held before the first point
		{model.Schedule{{At: 0, Value: 0}, {At: 10 * time.Second, Value: 10}}, 10 * time.Second, 50},
		{model.Schedule{{At: 0, Value: 0}, {At: 10 * time.Second, Value: 10}}, 5 * time.Second, 12.5}, // cut mid-ramp
		{model.Schedule{{At: 0, Value: 60}, {At: 2 * time.Minute, Value: 60}, {At: 2 * time.Minute, Value: 100}}, 5 * time.Minute, 60*120 + 100*180},
		{model.Schedule{{At: 0, Value: 1}, {At: time.Hour, Value: 1}}, time.Minute, 60}, // a point after the end
		{nil, time.Minute, 0},
	} {
		if got := integrate(tc.s, tc.d); math.Abs(got-tc.want) > 1e-9*math.Max(1, tc.want) {
			t.Errorf("integrate(%v, %v) = %v, want %v", tc.s, tc.d, got, tc.want)
		}
	}
}

func TestEstimatedRequests(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		one, all   float64 // one replication of scenario 0; the experiment
	}{
		// Open: 20/s for 100 s.
		{"open", "duration = \"100s\"\nreplications = 3\n[load]\nrate = 20\n" + tierStepFile(`cpu = "10ms"`), 2000, 6000},
		// Closed: 10 users, think 0.9 s, no-queueing response 0.1 s (the
		// CPU; the load call's network latency set to 0): 10 requests/s
		// for 60 s.
		{"closed", "duration = \"60s\"\n[load]\nusers = 10\nthink = \"const(900ms)\"\n[load.call]\nnetwork_latency = \"0s\"\n" + tierStepFile(`cpu = "100ms"`), 600, 600},
		// A load timeout shorter than the response bounds the cycle.
		{"timeout", "duration = \"60s\"\n[load]\nusers = 10\nthink = \"const(900ms)\"\ntimeout = \"100ms\"\n[load.call]\nnetwork_latency = \"0s\"\n" + tierStepFile(`cpu = "10s"`), 600, 600},
		// Variants and sweep points add up.
		{"sweep", "duration = \"100s\"\n[load]\nrate = 10\n" + tierStepFile(`cpu = "1ms"`) + "[sweep]\nkey = \"load.rate\"\nvalues = [10, 20, 30]\n", 1000, 6000},
		{"no think no demand", "[load]\nusers = 1\n" + tierStepFile(`cpu = "0s"`) + "[load.call]\nnetwork_latency = \"0s\"\n", math.Inf(1), math.Inf(1)},
	} {
		x, err := LoadExperiment("e.toml", []byte(tc.file), nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sc, err := x.Scenario(0)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		near := func(got, want float64) bool {
			return got == want || math.Abs(got-want) <= 0.01*want
		}
		if got := sc.EstimatedRequests(); !near(got, tc.one) {
			t.Errorf("%s: scenario 0: %v, want %v", tc.name, got, tc.one)
		}
		if got := x.EstimatedRequests(); !near(got, tc.all) {
			t.Errorf("%s: experiment: %v, want %v", tc.name, got, tc.all)
		}
	}
}

func tierStepFile(step string) string {
	return "[[tier]]\nname = \"a\"\n  [[tier.step]]\n  " + step + "\n"
}
