package simmode

import (
	"math"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
)

func TestPipelineTheory(t *testing.T) {
	res, err := Run(modeltest.Pipeline(20*time.Second, time.Hour), model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("requests %+v throughput %.3f/s goodput %.3f/s mean %.3fs p99 %.3fs events %d",
		res.Requests, res.ThroughputPerS, res.GoodputPerS, res.Latency.Mean, res.Latency.P99, res.Events)
	// Bottleneck: 2 connections each held ~150 ms → X = 2/0.15 = 13.33/s;
	// response-time law R = N/X − Z = 100/13.33 − 1 = 6.5 s.
	if math.Abs(res.GoodputPerS-13.33) > 0.4 {
		t.Errorf("throughput %.3f, want ≈13.33", res.GoodputPerS)
	}
	if math.Abs(res.Latency.Mean-6.5) > 0.4 {
		t.Errorf("mean response %.3f, want ≈6.5", res.Latency.Mean)
	}
}

func TestPipelineShortTimeoutOrphans(t *testing.T) {
	res, err := Run(modeltest.Pipeline(6*time.Second, 20*time.Minute), model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("requests %+v throughput %.3f/s goodput %.3f/s wasted %.1f", res.Requests, res.ThroughputPerS, res.GoodputPerS, res.Tiers[1].WastedCPUSeconds)
	if f := float64(res.Requests.TimedOut) / float64(res.Requests.Generated); f < 0.9 {
		t.Errorf("timed out fraction %.3f, want > 0.9", f)
	}
	if res.ThroughputPerS < 12 {
		t.Errorf("back end completions %.2f/s, want it still busy at ≈13/s", res.ThroughputPerS)
	}
}

// TestAutomaticWarmup: an open load that overloads the pipeline for its
// first minute (20/s against 13.3/s) and then runs at 5/s leaves a backlog
// that takes minutes to clear; MSER-5 on the per-interval mean latency cuts
// that transient and no more than a fraction of the steady part.
func TestAutomaticWarmup(t *testing.T) {
	top := modeltest.Pipeline(0, 30*time.Minute)
	top.Load = model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: 20}, {At: time.Minute, Value: 20}, {At: time.Minute, Value: 5}}, Call: model.Call{Target: 0}}
	top.Warmup = -1
	top.SampleEvery = 5 * time.Second
	res, err := Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Backlog after 60 s: (20 − 13.33)·60 ≈ 400 requests, drained at
	// 13.33 − 5 = 8.3/s: gone by ≈ 108 s.
	if res.Warmup < 60 || res.Warmup > 600 {
		t.Errorf("automatic warm-up = %.0f s, want the transient (≈ 100 s) cut, within [60, 600]", res.Warmup)
	}
	if res.Latency.Mean > 1 {
		t.Errorf("mean latency after warm-up %.2f s: the transient leaked into the statistics", res.Latency.Mean)
	}
	t.Logf("warm-up %.0f s, mean after it %.3f s", res.Warmup, res.Latency.Mean)
}

// TestStopOnPrecision: with precision = 2% the pipeline stops long before
// its 10 simulated hours, and its mean lies within the stated precision of
// the theoretical 6.5 s (allowing the theory's own approximation).
func TestStopOnPrecision(t *testing.T) {
	top := modeltest.Pipeline(0, 10*time.Hour)
	top.Warmup = time.Minute
	top.Precision = 0.02
	res, err := Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Duration >= 10*3600 {
		t.Fatalf("ran the full %v s: precision never reached", res.Duration)
	}
	if math.Abs(res.Latency.Mean-6.5)/6.5 > 0.04 {
		t.Errorf("mean %.3f s after stopping at %.0f s, want 6.5 s ± 4%%", res.Latency.Mean, res.Duration)
	}
	t.Logf("stopped at %.0f s with mean %.3f s", res.Duration, res.Latency.Mean)
}

// TestBreakdownAddsUp: on the pipeline every second of a completed request
// is on one path (the calls are synchronous), so the breakdown's parts add
// up to the mean latency, and connection waiting dominates.
func TestBreakdownAddsUp(t *testing.T) {
	res, err := Run(modeltest.Pipeline(0, 20*time.Minute), model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Breakdown
	sum := b.ConnWait + b.AdmissionWait + b.ThreadWait + b.ThrottleWait + b.LockWait + b.CPUWait + b.CPU + b.ExternalWait + b.Network + b.Other
	if math.Abs(sum-res.Latency.Mean) > 1e-6*res.Latency.Mean+1e-9 {
		t.Errorf("breakdown sums to %.6f s, mean latency %.6f s: %+v", sum, res.Latency.Mean, b)
	}
	if b.ConnWait < 0.9*res.Latency.Mean || math.Abs(b.CPU-0.05) > 0.005 || math.Abs(b.ExternalWait-0.1) > 0.01 {
		t.Errorf("breakdown %+v: want connection wait ≈ all of %.2f s, CPU ≈ 50 ms, external ≈ 100 ms", b, res.Latency.Mean)
	}
}
