package loadtest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/loadtest"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/realmode"
	"github.com/tsim-dev/tsim/simmode"
)

// shop is the made-up test's shop: one ASP.NET tier of 4 cores answering
// in about 80 ms; the load comes from a trace.
const shop = `
name = "shop"
duration = "60s"
warmup = "0s"
seed = 1
[load]
trace = "%s"
%s
[[tier]]
name = "web"
preset = "iis7-net4"
cores = 4
[[tier.step]]
cpu = "exp(20ms)"
[[tier.step]]
wait = "exp(60ms)"
`

func load(t *testing.T, file, extra string) (*format.Experiment, model.Topology) {
	t.Helper()
	src := strings.Replace(strings.Replace(shop, "%s", file, 1), "%s", extra, 1)
	x, err := format.LoadExperiment("shop.toml", []byte(src), func(name string) ([]byte, error) {
		return os.ReadFile(filepath.Join("testdata", name))
	})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := x.Scenario(0)
	if err != nil {
		t.Fatal(err)
	}
	return x, sc.Topology
}

// TestTraceArrivals: a trace replayed as arrivals sends, in both
// executors, exactly the requests of the file, at their instants; and the
// run compares with the file window by window.
func TestTraceArrivals(t *testing.T) {
	data, _ := os.ReadFile("testdata/jmeter.jtl")
	want, err := loadtest.Parse(data, "jmeter.jtl")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"jmeter.jtl", "k6.json", "simulation.log"} {
		_, top := load(t, f, "")
		if top.Load.Kind != model.LoadOpen || len(top.Load.Arrivals) != len(want.Requests) || top.Load.Rate.Max() <= 0 {
			t.Fatalf("%s: kind %v, %d arrivals, peak rate %g; want open, %d, > 0", f, top.Load.Kind, len(top.Load.Arrivals), top.Load.Rate.Max(), len(want.Requests))
		}
	}
	_, top := load(t, "jmeter.jtl", "")
	run, err := simmode.Run(&top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := run.Requests.Generated; got != int64(len(want.Requests)) {
		t.Errorf("simulated: %d requests generated, the trace has %d", got, len(want.Requests))
	}
	c := want.Compare(run, 0)
	if c.Overall.Measured.Requests == 0 || c.Overall.Simulated.Requests == 0 {
		t.Fatalf("nothing compared: %+v", c.Overall)
	}
	// The shop answers in about 80 ms, as the made-up test measured.
	if m, s := c.Overall.Measured.P50S, c.Overall.Simulated.P50S; s < m/2 || s > 2*m {
		t.Errorf("median latency simulated %.3f s, measured %.3f s", s, m)
	}
	if testing.Short() {
		return
	}
	rrun, err := realmode.Run(context.Background(), &top, realmode.Options{Seed: 1, TimeScale: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if got := rrun.Requests.Generated; got != int64(len(want.Requests)) {
		t.Errorf("real mode: %d requests generated, the trace has %d", got, len(want.Requests))
	}
}

// TestTraceUsers: a trace replayed as users runs the tool's ramp, each
// user thinking the think time measured.
func TestTraceUsers(t *testing.T) {
	_, top := load(t, "jmeter.jtl", `replay = "users"`)
	if top.Load.Kind != model.LoadClosed || top.Load.Users.Max() != 5 {
		t.Fatalf("kind %v, %g users at most; want closed, 5", top.Load.Kind, top.Load.Users.Max())
	}
	if at := top.Load.Users.At(3 * time.Second); at != 1 {
		t.Errorf("%g users at 3 s, want 1 (the ramp's first)", at)
	}
	if m := top.Load.Think.Mean(); m < 800*time.Millisecond || m > 1200*time.Millisecond {
		t.Errorf("think %v, want about 1 s", m)
	}
	_, top = load(t, "simulation.log", "replay = \"users\"\nthink = \"const(2s)\"")
	if top.Load.Think.Mean() != 2*time.Second {
		t.Errorf("load.think given: think %v, want 2 s", top.Load.Think.Mean())
	}
	for _, tc := range []struct{ extra, want string }{
		{`rate = 5`, "applies to open loads"},
		{`kind = "open"`, "applies to trace loads"},
		{`think = "1s"`, `applies to a trace replayed as users`},
	} {
		src := strings.Replace(strings.Replace(shop, "%s", "jmeter.jtl", 1), "%s", tc.extra, 1)
		_, err := format.LoadExperiment("shop.toml", []byte(src), func(name string) ([]byte, error) { return os.ReadFile(filepath.Join("testdata", name)) })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.extra, err, tc.want)
		}
	}
	src := strings.Replace(strings.Replace(shop, "%s", "nosuch.jtl", 1), "%s", "", 1)
	if _, err := format.LoadExperiment("shop.toml", []byte(src), func(name string) ([]byte, error) { return os.ReadFile(filepath.Join("testdata", name)) }); err == nil || !strings.Contains(err.Error(), "load.trace") {
		t.Errorf("a missing trace: %v", err)
	}
}
