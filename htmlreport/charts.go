package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// openTiers is how many tiers' counters a page shows open; the charts of
// the others are drawn when their tier is opened, so that a page of
// hundreds of tiers opens quickly and holds a canvas only for what is seen.
const openTiers = 12

// howTo is the line under every interactive section's heading.
const howTo = "Drag across a chart to zoom (the time axes of the page zoom together), double-click to zoom out; hover for the values; click a legend entry to hide or show its series."

// countersSection draws every tier's counters over time, a chart per kind
// of unit and a column per variant, from each variant's first replication;
// nil when no variant kept its time series.
func countersSection(r *results.Experiment, done []*results.Scenario) *Section {
	s := &Section{ID: "counters", Title: "Counters over time"}
	var lanes []lane
	var labels []string
	for _, sc := range done {
		if sc.First == nil || len(sc.First.Series) == 0 {
			continue
		}
		lanes = append(lanes, lane{run: sc.First, names: laneNames(sc.First, r.PerReplica)})
		labels = append(labels, sc.Variant)
	}
	if len(lanes) == 0 {
		return nil // no time series kept
	}
	intro := howTo
	if r.Replications > 1 {
		intro = fmt.Sprintf("The first replication (seed %d) of each variant. ", r.Seed) + intro
	}
	s.Text("%s", intro)
	s.Add(tierBlocks(lanes, labels, "counters", "counters")...)
	return s
}

// tierBlocks are a subsection per tier (in the order of the first lane
// that has it) with its panels: one chart per lane side by side when
// labels names each lane ("counters/<label>/<tier>/<panel>"), or every
// lane in one chart when labels is nil (a diff's overlay:
// "<prefix>/<tier>/<panel>").
func tierBlocks(lanes []lane, labels []string, prefix, sync string) []Block {
	var names []string
	for _, ln := range lanes {
		for _, n := range ln.names {
			if !contains(names, n) {
				names = append(names, n)
			}
		}
	}
	var out []Block
	for ti, name := range names {
		idx := make([]int, len(lanes))
		desc := ""
		for li, ln := range lanes {
			idx[li] = -1
			for i, n := range ln.names {
				if n == name {
					idx[li] = i
					break
				}
			}
			if idx[li] >= 0 && desc == "" {
				desc = ln.run.TierInfo(idx[li], name).Title(true)
			}
		}
		drawn, top := tierPanels(lanes, idx, name)
		title := "tier " + name
		if desc != "" {
			title += " (" + desc + ")"
		}
		sub := &Section{ID: prefix + "-tier-" + anchor(name), Title: title, Collapsed: ti >= openTiers}
		g := &Grid{Columns: 1}
		if labels != nil {
			g.Columns = min(len(lanes), 3)
		}
		for pi := range panels {
			p := &panels[pi]
			if !slices.Contains(drawn[pi], true) {
				continue
			}
			if labels == nil {
				id := prefix + "/" + name + "/" + p.key
				if c := counterChart(id, p.title, p, drawn[pi], top[pi], lanes, idx, sync); c != nil {
					g.Charts = append(g.Charts, c)
				}
				continue
			}
			for li := range lanes {
				id := prefix + "/" + labels[li] + "/" + name + "/" + p.key
				title := p.title
				if len(lanes) > 1 {
					title = labels[li] + ": " + p.title
				}
				c := counterChart(id, title, p, drawn[pi], top[pi], lanes[li:li+1], idx[li:li+1], sync)
				if c == nil {
					c = &Chart{ID: id, Title: title + ": no such tier in this run", X: Axis{Label: "time (s)"}, Y: Axis{Label: p.unit}}
				}
				g.Charts = append(g.Charts, c)
			}
		}
		sub.Add(Block{Charts: g})
		out = append(out, Block{Sub: sub})
	}
	return out
}

// Latency scatters keep every point up to scatterAll points, and beyond
// that one point for each cell of a scatterCols × scatterRows grid over
// time and the logarithm of latency (thinScatter).
const (
	scatterAll  = 5000
	scatterCols = 480
	scatterRows = 160
)

// outcomeColors are the dots' colours of each results.Outcome, as
// latency.png draws them.
var outcomeColors = [...]string{palette[0], palette[5], palette[1], palette[3]}

var outcomeLabels = [...]string{"completed", "timed out", "rejected", "failed"}

// latencySection draws each request's client latency against the time it
// ended, a chart per variant; nil when no variant kept its points.
func latencySection(r *results.Experiment, done []*results.Scenario) *Section {
	s := &Section{ID: "latency", Title: "Latency of each request"}
	g := &Grid{Columns: min(len(done), 2)}
	for _, sc := range done {
		if sc.First == nil || len(sc.First.Points) == 0 {
			continue
		}
		title := "client latency of each request"
		if len(done) > 1 {
			title = sc.Variant + ": " + title
		}
		c := latencyChart("latency/"+sc.Variant, title, []lane{{run: sc.First}})
		g.Charts = append(g.Charts, c)
	}
	if len(g.Charts) == 0 {
		return nil
	}
	s.Text("Each dot is one request, at the time it ended (timed out, rejected and failed requests at the time their client gave up or was refused); a run keeps a regular subsample of up to 20,000 of them. Where more than %d are kept, one dot per %d × %d cell of the picture is drawn, so that every isolated dot stays.", scatterAll, scatterCols, scatterRows)
	s.Add(Block{Charts: g})
	return s
}

// latencyChart is a scatter of the lanes' latency points, a series per
// lane and outcome.
func latencyChart(id, title string, lanes []lane) *Chart {
	c := &Chart{ID: id, Title: title, Height: 260, Sync: "counters",
		X: Axis{Label: "time (s)", Unit: "s"}, Y: Axis{Label: "latency (s)", Unit: "s"}}
	positive := true
	for _, ln := range lanes {
		for _, p := range ln.run.Points {
			positive = positive && p.Latency > 0
		}
	}
	if positive {
		c.Y.Scale = "log"
	}
	for li, ln := range lanes {
		n := len(ln.run.Points)
		for o := range outcomeLabels {
			var xs, ys []float64
			for _, p := range ln.run.Points {
				if int(p.Outcome) == o {
					// To the microsecond: the page writes times exactly.
					xs, ys = append(xs, math.Round(p.T*1e6)/1e6), append(ys, p.Latency)
				}
			}
			if len(xs) == 0 {
				continue
			}
			sx, sy := sortedXY(xs, ys)
			cols, rows := math.MaxInt32, 1 // only merges equal times
			if n > scatterAll {
				cols, rows = scatterCols, scatterRows
			}
			fx, fy := thinScatter(sx, sy, cols, rows)
			label := outcomeLabels[o]
			color := outcomeColors[o]
			if ln.label != "" {
				label = ln.label + ": " + label
				if li > 0 {
					color = laneColors[o]
				}
			}
			c.Series = append(c.Series, Series{Label: label, Color: color, Points: true})
			c.Frames = append(c.Frames, Frame{X: fx, Y: []Column{fy}})
		}
	}
	return c
}

// laneColors are side B's outcome colours in a diff's scatter.
var laneColors = [...]string{palette[2], palette[3], palette[8], palette[7]}

// cdfCurve is one latency distribution: the latency at q = 0.001 ...
// 0.999 of the completed requests, and their share of the requests ended.
type cdfCurve struct {
	label, key, color string
	dash              []int
	quantiles         []float64
	share             float64
}

// scenarioCurve is a scenario's latency distribution, nil without one.
func scenarioCurve(sc *results.Scenario, label string) *cdfCurve {
	a := sc.Agg
	if a.Quantiles == nil {
		return nil
	}
	share := 1.0
	if c := a.Requests; c.Completed+c.TimedOut+c.Rejected+c.Failed > 0 {
		share = float64(c.Completed) / float64(c.Completed+c.TimedOut+c.Rejected+c.Failed)
	}
	return &cdfCurve{label: label, key: sc.Label(), quantiles: a.Quantiles, share: share}
}

// cdfChart draws the latency distributions of the scenarios (of a sweep,
// when it has at most results.MaxCDFCurves), or of curves when given.
func cdfChart(r *results.Experiment, done []*results.Scenario, curves []*cdfCurve) *Chart {
	if curves == nil {
		if r.IsSweep() && len(r.Scenarios) > results.MaxCDFCurves {
			return nil
		}
		for i, sc := range done {
			if cv := scenarioCurve(sc, sc.Label()); cv != nil {
				cv.color = palette[i%len(palette)]
				curves = append(curves, cv)
			}
		}
	}
	if len(curves) == 0 {
		return nil
	}
	c := &Chart{ID: "cdf", Title: "client latency distribution of completed requests", Height: 300,
		X: Axis{Label: "latency (s)", Scale: "log", Unit: "s"}, Y: Axis{Label: "requests ended with at most this latency (%)", Unit: "%", Min: ptr(0), Max: ptr(100)},
		Note: "A curve tops out at the share of the requests that completed: timed-out, rejected and failed requests never do."}
	if len(done) > 0 && done[0].Agg.WarmupS > 0 {
		c.Title += " after warm-up"
	}
	if r != nil && r.Replications > 1 {
		c.Title += fmt.Sprintf(" (mean of %d replications)", r.Replications)
	}
	for _, cv := range curves {
		f := Frame{}
		n := len(cv.quantiles)
		for i, x := range cv.quantiles {
			if !(x > 0) || math.IsInf(x, 0) {
				continue
			}
			y := 100 * cv.share * float64(i+1) / float64(n+1)
			if k := len(f.X); k > 0 && !(x > f.X[k-1]) {
				f.Y[0][k-1] = y // equal latencies: keep the highest share
				continue
			}
			if len(f.Y) == 0 {
				f.Y = []Column{nil}
			}
			f.X = append(f.X, x)
			f.Y[0] = append(f.Y[0], y)
		}
		if len(f.X) == 0 {
			continue
		}
		label := cv.label + " (" + strconv.FormatFloat(100*cv.share, 'f', 1, 64) + "% completed)"
		c.Series = append(c.Series, Series{Label: label, Key: cv.key, Color: cv.color, Dash: cv.dash, Width: 2})
		c.Frames = append(c.Frames, f)
	}
	if len(c.Series) == 0 {
		return nil
	}
	return c
}

// sweepX places the first axis's values: at their numbers when all are
// numbers (on a logarithmic axis when they are positive and span more
// than a factor of 20), at 0, 1, 2, ... under their names otherwise.
func sweepX(values []string) (xs []float64, ax Axis) {
	numeric, positive := true, true
	for _, v := range values {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			numeric = false
			break
		}
		positive = positive && f > 0
		xs = append(xs, f)
	}
	if !numeric {
		xs = xs[:0]
		for i := range values {
			xs = append(xs, float64(i))
		}
		return xs, Axis{Labels: values}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	if positive && hi/lo > 20 {
		ax.Scale = "log"
	}
	return xs, ax
}

// sweepMetric is one figure drawn against the first sweep axis.
type sweepMetric struct {
	id, title, unit, label string
	get                    func(a results.Aggregate) float64
	half                   func(c *results.Intervals) *float64
	scale                  float64
	ok                     func(a results.Aggregate) bool
}

var sweepMetrics = []sweepMetric{
	{"goodput", "goodput (solid) and entry-tier throughput (dashed)", "/s", "requests per second",
		func(a results.Aggregate) float64 { return a.GoodputPerS }, func(c *results.Intervals) *float64 { return c.GoodputPerS }, 1, nil},
	{"p99", "99th percentile client latency of completed requests", "s", "p99 latency (s)",
		func(a results.Aggregate) float64 { return a.Latency.P99 }, func(c *results.Intervals) *float64 { return c.LatencyP99S }, 1,
		func(a results.Aggregate) bool { return a.GoodputPerS > 0 }},
	{"timeouts", "requests that timed out, % of the requests ended after warm-up", "%", "timed out (%)",
		func(a results.Aggregate) float64 { return a.TimeoutRate }, func(c *results.Intervals) *float64 { return c.TimeoutRate }, 100, nil},
}

var throughputMetric = sweepMetric{"throughput", "throughput", "/s", "",
	func(a results.Aggregate) float64 { return a.ThroughputPerS }, func(c *results.Intervals) *float64 { return c.ThroughputPerS }, 1, nil}

// sweepSection draws goodput and throughput, p99 latency and timeouts
// against the first sweep axis, a line per variant and combination of the
// other axes, with the 95% confidence bars of the mean when there are
// replications.
func sweepSection(r *results.Experiment, done []*results.Scenario) *Section {
	s := &Section{ID: "sweep", Title: "Sweep"}
	axis := r.Sweep[0]
	ci := r.Replications > 1
	intro := "Against " + axis.Key + "."
	if ci {
		intro += fmt.Sprintf(" Bars: the 95%% confidence interval of the mean of %d replications.", r.Replications)
	}
	s.Text("%s %s", intro, howTo)
	g := &Grid{Columns: 1}
	for _, m := range sweepMetrics {
		lines := []sweepSide{{lines: results.SweepLines(done)}}
		g.Charts = append(g.Charts, sweepChart("sweep/"+m.id, m, axis, lines, ci))
	}
	s.Add(Block{Charts: g})
	return s
}

// sweepSide is the sweep lines of one run (of a diff's A or B).
type sweepSide struct {
	label string
	dash  []int
	lines []*results.SweepLine
}

func sweepChart(id string, m sweepMetric, axis results.Axis, sides []sweepSide, ci bool) *Chart {
	xs, ax := sweepX(axis.Values)
	ax.Label = axis.Key
	c := &Chart{ID: id, Title: m.title, Height: 280, X: ax, Y: Axis{Label: m.label, Unit: m.unit, Min: ptr(0)}}
	xOf := func(v string) (float64, bool) {
		for i, av := range axis.Values {
			if av == v {
				return xs[i], true
			}
		}
		return 0, false
	}
	for _, side := range sides {
		for n, ln := range side.lines {
			metrics := []sweepMetric{m}
			if m.id == "goodput" {
				metrics = append(metrics, throughputMetric)
			}
			for mi, mm := range metrics {
				type pt struct{ x, y, e float64 }
				var pts []pt
				for _, sc := range ln.Scenarios {
					if mm.ok != nil && !mm.ok(sc.Agg) {
						continue
					}
					x, ok := xOf(sc.Params[0].Value)
					if !ok {
						continue
					}
					p := pt{x: x, y: mm.get(sc.Agg) * mm.scale}
					if sc.Agg.CI != nil {
						if h := mm.half(sc.Agg.CI); h != nil {
							p.e = *h * mm.scale
						}
					}
					pts = append(pts, p)
				}
				if len(pts) == 0 {
					continue
				}
				// In axis order (a line's scenarios come in it; a diff's B
				// may not).
				for i := 1; i < len(pts); i++ {
					for j := i; j > 0 && pts[j].x < pts[j-1].x; j-- {
						pts[j], pts[j-1] = pts[j-1], pts[j]
					}
				}
				f := Frame{Y: []Column{nil}}
				var errs Column
				for _, p := range pts {
					if k := len(f.X); k > 0 && p.x == f.X[k-1] {
						continue
					}
					f.X = append(f.X, p.x)
					f.Y[0] = append(f.Y[0], p.y)
					errs = append(errs, p.e)
				}
				label := ln.Label
				if side.label != "" {
					label = side.label + ": " + label
				}
				if mi == 1 {
					label += " throughput"
				} else if m.id == "goodput" {
					label += " goodput"
				}
				sr := Series{Label: label, Color: palette[n%len(palette)], Width: 2, Dash: side.dash}
				if mi == 1 {
					sr.Dash = []int{6, 4}
					sr.Width = 1.4
				}
				if ci {
					sr.Err = errs
					sr.ErrMin = ptr(0)
					if m.id == "timeouts" {
						sr.ErrMax = ptr(100)
					}
				}
				c.Series = append(c.Series, sr)
				c.Frames = append(c.Frames, f)
			}
		}
	}
	return c
}
