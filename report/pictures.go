package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/results"
)

// picture is one PNG to write, or why it cannot be drawn.
type picture struct {
	name string
	fig  *plots.Figure
	err  error
}

// pictures draws an experiment's figures. Without a sweep: counters,
// latency and latency-cdf, one panel, column or curve per variant, from
// each variant's first replication (latency-cdf from all replications).
// With a sweep: the three sweep curves and, for small sweeps, latency-cdf
// with one curve per scenario.
func pictures(r *results.Experiment) []picture {
	name := r.Name
	done := r.Done()
	var out []picture
	if !r.IsSweep() {
		var runs []plots.Run
		for _, sc := range done {
			runs = append(runs, plots.Run{Label: sc.Variant, Run: withMachines(r, sc.First)})
		}
		note := ""
		if r.Replications > 1 {
			note = fmt.Sprintf(" (first replication, seed %d)", r.Seed)
		}
		pages, err := plots.Counters(name+": counters over time"+note, runs)
		if err != nil {
			out = append(out, picture{"counters.png", nil, err})
		}
		for i, f := range pages { // counters.png, counters-2.png, ...
			out = append(out, picture{plots.FileName(plots.PageStem("counters", i), plots.PNG), f, nil})
		}
		f, err := plots.Latency(name+": client latency of each request"+note, runs)
		out = append(out, picture{"latency.png", f, err})
	}
	var cdf []plots.Run
	var none []string
	for _, sc := range done {
		if sc.Agg.Quantiles == nil {
			if !r.IsSweep() || len(r.Scenarios) <= results.MaxCDFCurves {
				none = append(none, sc.Label())
			}
			continue
		}
		a := sc.Agg
		run := plots.Run{Label: sc.Label(), Run: &results.Run{Quantiles: a.Quantiles, TimeoutRate: a.TimeoutRate, RejectRate: a.RejectRate}}
		// Timed-out, rejected and failed requests never complete: the
		// curve tops out at the share that did.
		if c := a.Requests; c.Completed+c.TimedOut+c.Rejected+c.Failed > 0 {
			run.CompletedShare = float64(c.Completed) / float64(c.Completed+c.TimedOut+c.Rejected+c.Failed)
		}
		cdf = append(cdf, run)
	}
	if !r.IsSweep() || len(r.Scenarios) <= results.MaxCDFCurves {
		title := name + ": client latency distribution"
		if len(done) > 0 && done[0].Agg.WarmupS > 0 {
			title += " after warm-up"
		}
		if r.Replications > 1 {
			title += fmt.Sprintf(" (mean of %d replications)", r.Replications)
		}
		if len(none) > 0 {
			title += "; no request completed: " + strings.Join(none, ", ")
		}
		if len(cdf) == 0 {
			out = append(out, picture{"latency-cdf.png", nil, errors.New("no request completed after warm-up")})
		} else {
			f, err := plots.LatencyCDF(title, cdf)
			out = append(out, picture{"latency-cdf.png", f, err})
		}
	}
	if r.IsSweep() {
		out = append(out, sweepPictures(r)...)
	}
	for i, u := range r.USL { // usl.png, usl-2.png, ...
		title := name + ": Universal Scalability Law fitted to throughput"
		if u.Line != "" && len(r.USL) > 1 {
			title += ", " + u.Line
		}
		f, err := plots.USL(title, u)
		out = append(out, picture{plots.FileName(plots.PageStem("usl", i), plots.PNG), f, err})
	}
	if hasLoadTest(r) {
		out = append(out, loadTestPicture(r))
	}
	for _, pic := range out {
		if pic.fig != nil {
			pic.fig.Partial = !r.Complete()
		}
	}
	return out
}

// sweepPictures draws each metric against the first sweep axis: one line
// per variant and combination of the other axes' values.
func sweepPictures(r *results.Experiment) []picture {
	name := r.Name
	axis := r.Sweep[0].Key
	lines := results.SweepLines(r.Done())
	ci := r.Replications > 1
	// build makes one line per variant of a metric; points where ok is
	// false (no latency without completions) are left out.
	build := func(get func(a results.Aggregate) float64, half func(c *results.Intervals) *float64, scale float64, suffix string, ok func(a results.Aggregate) bool) []plots.SweepLine {
		var out []plots.SweepLine
		for _, ln := range lines {
			sl := plots.SweepLine{Label: ln.Label + suffix}
			for _, sc := range ln.Scenarios {
				if ok != nil && !ok(sc.Agg) {
					continue
				}
				sl.X = append(sl.X, sc.Params[0].Value)
				sl.Y = append(sl.Y, get(sc.Agg)*scale)
				if ci {
					h := 0.0
					if sc.Agg.CI != nil {
						if v := half(sc.Agg.CI); v != nil {
							h = *v * scale
						}
					}
					sl.Err = append(sl.Err, h)
				}
			}
			if len(sl.X) > 0 {
				out = append(out, sl)
			}
		}
		return out
	}
	note := ""
	if ci {
		note = fmt.Sprintf(" (mean of %d replications, 95%% CI)", r.Replications)
	}
	var out []picture

	good := build(func(a results.Aggregate) float64 { return a.GoodputPerS }, func(c *results.Intervals) *float64 { return c.GoodputPerS }, 1, " goodput", nil)
	thr := build(func(a results.Aggregate) float64 { return a.ThroughputPerS }, func(c *results.Intervals) *float64 { return c.ThroughputPerS }, 1, " throughput", nil)
	for i := range thr {
		thr[i].Dashed = true
	}
	var both []plots.SweepLine
	for i := range good {
		both = append(both, good[i], thr[i])
	}
	f, err := plots.Sweep(name+": goodput (solid) and entry-tier throughput (dashed)"+note, axis, "requests per second", both)
	out = append(out, picture{"sweep-throughput.png", f, err})

	p99 := build(func(a results.Aggregate) float64 { return a.Latency.P99 }, func(c *results.Intervals) *float64 { return c.LatencyP99S }, 1, "", func(a results.Aggregate) bool { return a.GoodputPerS > 0 })
	f, err = plots.Sweep(name+": 99th percentile client latency"+note, axis, "p99 latency of completed requests (s)", p99)
	out = append(out, picture{"sweep-p99.png", f, err})

	to := build(func(a results.Aggregate) float64 { return a.TimeoutRate }, func(c *results.Intervals) *float64 { return c.TimeoutRate }, 100, "", nil)
	for i := range to {
		to[i].Max = 100 // a share's error bar stops at 100%
	}
	f, err = plots.Sweep(name+": requests that timed out"+note, axis, "timed out (% of requests ended after warm-up)", to)
	out = append(out, picture{"sweep-timeouts.png", f, err})
	return out
}

// withMachines is run with the farms' machines after its tiers, in its
// names and series, when the reports show every machine (PerReplica).
func withMachines(r *results.Experiment, run *results.Run) *results.Run {
	if !r.PerReplica || run == nil || len(run.ReplicaNames) == 0 {
		return run
	}
	c := *run
	c.TierNames = append(append([]string(nil), run.TierNames...), run.ReplicaNames...)
	c.Series = make([]results.Sample, len(run.Series))
	for i, s := range run.Series {
		s.Tiers = append(append([]results.TierSample(nil), s.Tiers...), s.Replicas...)
		c.Series[i] = s
	}
	return &c
}
