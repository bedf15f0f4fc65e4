package analysis

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/runner"
)

// peakHeap runs f and returns the most heap it held above what was live
// before, sampled every millisecond (garbage not yet collected included:
// what the process needs).
func peakHeap(f func()) float64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return math.Max(0, float64(peak.Load())-float64(base))
}

// chainOf is an experiment of a chain of tiers whose last is slow.
func chainOf(load string, tiers int, last string, extra string) string {
	src := "duration = \"30s\"\n" + extra + "[load]\n" + load + "\n"
	for i := range tiers {
		src += fmt.Sprintf("[[tier]]\nname = \"t%d\"\ncores = 64\n  [[tier.step]]\n  cpu = \"1ms\"\n", i)
		if i+1 < tiers {
			src += fmt.Sprintf("  [[tier.step]]\n  call = \"t%d\"\n", i+1)
		} else {
			src += "  [[tier.step]]\n  " + last + "\n"
		}
	}
	return src
}

// The memory estimate of one replication covers the peak heap the
// simulator takes, and is not far above it, on runs that each stress one
// term: an open load above capacity (its backlog, through one and three
// tiers, and as orphans behind a timeout), many users, many machines,
// large connection limits, a long time series. (The figures are logged:
// go test -run TestCheckMemoryEstimate -v.)
func TestCheckMemoryEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates runs of up to a few hundred MB; not with -short")
	}
	cases := []struct{ name, src string }{
		{"open backlog, 1 tier", chainOf("rate = 1000", 1, `cpu = "639ms"`, "")},
		{"open backlog, 3 tiers", chainOf("rate = 1000", 3, `cpu = "639ms"`, "")},
		{"orphans behind a timeout", chainOf("rate = 1000\ntimeout = \"1s\"", 3, `cpu = "639ms"`, "")},
		{"100,000 users", chainOf("users = 100000\nthink = \"exp(100s)\"", 1, `wait = "1ms"`, "")},
		{"256 × 2 machines", `duration = "20s"
[load]
users = 10
think = "1s"
[[tier]]
name = "a"
replicas = 256
  [[tier.step]]
  cpu = "1ms"
  [[tier.step]]
  call = "b"
[[tier]]
name = "b"
replicas = 256
  [[tier.step]]
  cpu = "1ms"
`},
		{"10^6 connections × 4 callers", `duration = "10s"
[load]
users = 10
think = "1s"
[[tier]]
name = "a"
replicas = 4
calls.client = "dotnet"
calls.maxconnection = 1000000
  [[tier.step]]
  call = "b"
[[tier]]
name = "b"
  [[tier.step]]
  cpu = "1ms"
`},
		{"10 h of 8 tiers' series", strings.Replace(chainOf("users = 1\nthink = \"10s\"", 8, `wait = "1ms"`, ""), `"30s"`, `"10h"`, 1)},
	}
	for _, c := range cases {
		x := load(t, "mem.toml", c.src)
		sc, err := x.Scenario(0)
		if err != nil {
			t.Fatal(err)
		}
		top := &sc.Topology
		a := model.Analyse(top)
		ov, _ := overload(top, a)
		est := runMemory(top, a, ov.Backlog).total()
		got := peakHeap(func() {
			if _, err := (runner.Sim{}).Run(context.Background(), top, 1, model.Options{}); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%-30s estimated %9s, measured peak heap %9s (backlog %.0f)", c.name, fmtBytes(est), fmtBytes(got), ov.Backlog)
		if got > est || est > 4*got+16<<20 {
			t.Errorf("%s: estimated %s, measured %s: want the estimate above, and within 4 × + 16 MB", c.name, fmtBytes(est), fmtBytes(got))
		}
	}
}

func TestExcess(t *testing.T) {
	for _, tc := range []struct {
		name          string
		s             model.Schedule
		c             float64
		d             time.Duration
		area, seconds float64
	}{
		{"constant above", model.Schedule{{At: 0, Value: 200}}, 100, 100 * time.Second, 10000, 100},
		{"constant below", model.Schedule{{At: 0, Value: 50}}, 100, 100 * time.Second, 0, 0},
		// 0 → 200 over 100 s crosses 100 at 50 s: a triangle of 50 s × 100/2.
		{"ramp", model.Schedule{{At: 0, Value: 0}, {At: 100 * time.Second, Value: 200}}, 100, 100 * time.Second, 2500, 50},
		// Down from 200 to 0: the same triangle, first.
		{"ramp down", model.Schedule{{At: 0, Value: 200}, {At: 100 * time.Second, Value: 0}}, 100, 100 * time.Second, 2500, 50},
		// A step to 300 for 10 s: 200 too many for 10 s.
		{"spike", model.Schedule{{At: 0, Value: 50}, {At: 10 * time.Second, Value: 50}, {At: 10 * time.Second, Value: 300},
			{At: 20 * time.Second, Value: 300}, {At: 20 * time.Second, Value: 50}}, 100, time.Minute, 2000, 10},
		// Cut at the duration: the last value holds to 30 s only.
		{"cut", model.Schedule{{At: 0, Value: 200}, {At: time.Hour, Value: 200}}, 100, 30 * time.Second, 3000, 30},
	} {
		area, sec := excess(tc.s, tc.c, tc.d)
		if math.Abs(area-tc.area) > 1e-9 || math.Abs(sec-tc.seconds) > 1e-9 {
			t.Errorf("%s: %v requests over %v s, want %v over %v", tc.name, area, sec, tc.area, tc.seconds)
		}
	}
}

// check's warnings: an open load above its binding throttle's bound, kept
// or refused by a bounded queue; users who give up and come back faster
// than they are served; a run whose memory exceeds half the machine's.
func TestCheckOverloadsAndMemory(t *testing.T) {
	// 1 core, 10 ms a request: 100/s. 200/s for 100 s: 10,000 too many.
	over := `name = "over"
duration = "100s"
[load]
rate = RATE
  [load.call]
  binding = "none"
[[tier]]
name = "svc"
cores = 1
PRESET
  [[tier.step]]
  cpu = "10ms"
`
	src := func(rate, preset string) string {
		return strings.NewReplacer("RATE", rate, "PRESET", preset).Replace(over)
	}
	r := Check(load(t, "over.toml", src("200", "")), CheckOptions{Workers: 2, Memory: 1 << 40})
	if len(r.Overloads) != 1 || len(r.Warnings) != 1 {
		t.Fatalf("overloads %+v, warnings %q", r.Overloads, r.Warnings)
	}
	o := r.Overloads[0]
	if o.Tier != "svc" || o.Throttle != "CPU svc" || o.Rho != 2 || o.Backlog != 10000 || o.Seconds != 100 || o.Queue != 0 {
		t.Errorf("overload %+v", o)
	}
	for _, want := range []string{"variant base", "200.0 requests/s", "the 100.0/s CPU svc (tier svc)", "ρ = 2; 100.0 requests/s too many",
		"for 100 s the queue grows, by about 10000 requests in all, every one kept in memory"} {
		if !strings.Contains(r.Warnings[0], want) {
			t.Errorf("warning %q lacks %q", r.Warnings[0], want)
		}
	}
	// Behind ASP.NET's request queue (5,000 by default) the excess is refused.
	r = Check(load(t, "over.toml", src("200", `preset = "aspnet-classic-net35"`)), CheckOptions{})
	if len(r.Overloads) != 1 || r.Overloads[0].Queue <= 5000 || !strings.Contains(r.Warnings[0], "the rest are refused (503): about 50% of the arrivals") {
		t.Errorf("behind a request queue: %+v %q", r.Overloads, r.Warnings)
	}
	// Below capacity, nothing to say.
	if r := Check(load(t, "over.toml", src("90", "")), CheckOptions{Memory: 1 << 40}); len(r.Overloads)+len(r.Warnings) != 0 {
		t.Errorf("90/s against 100/s: %+v %q", r.Overloads, r.Warnings)
	}
	// 100,000/s against 100/s for 100 s would keep about 10^7 requests,
	// some GB, but the run stops unstable once twice its stability bound
	// are under way (model.StabilityBound: 16 × 100,000/s × the 10.2 ms of one request): some
	// 100 MB, no memory warning.
	big := load(t, "over.toml", src("100000", ""))
	r = Check(big, CheckOptions{Workers: 1, Memory: 4 << 30})
	if r.PeakBytes > 1e9 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "9.99 million requests in all, every one kept in memory, until 32642 are under way and the run stops unstable") {
		t.Errorf("peak %s, warnings %q", fmtBytes(r.PeakBytes), r.Warnings)
	}
	if r := Check(big, CheckOptions{Workers: 1}); len(r.Warnings) != 1 {
		t.Errorf("memory unknown: warnings %q", r.Warnings)
	}

	// 100 users thinking 1 s who give up after 1 s bring 50/s against 25/s.
	closed := load(t, "closed.toml", `name = "closed"
duration = "60s"
[load]
users = 100
think = "1s"
timeout = "1s"
  [load.call]
  binding = "none"
[[tier]]
name = "svc"
cores = 1
  [[tier.step]]
  cpu = "40ms"
`)
	r = Check(closed, CheckOptions{})
	if len(r.Overloads) != 1 || !r.Overloads[0].Closed || math.Abs(r.Overloads[0].Rho-2) > 0.01 || !strings.Contains(r.Warnings[0], "users who give up after their timeout and come back") {
		t.Errorf("closed with a timeout: %+v %q", r.Overloads, r.Warnings)
	}
}
