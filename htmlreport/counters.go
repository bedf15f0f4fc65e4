package htmlreport

import (
	"math"

	"github.com/tsim-dev/tsim/results"
)

// The counter charts read like a PerfMon capture, as counters.png does:
// every series is a counter of docs/counters.md under its PerfMon name,
// and a tier has a chart for each kind of unit with the counters it has
// (no WCF counters on a tier that is not a WCF service, no connections on
// one that calls nobody). Colours mean the same in every chart: blue the
// requests (ASP.NET's counters), orange their waiting, green WCF's calls.

// The palette of plots (Okabe and Ito's colours, distinct for colour-blind
// readers), so that a counter has the colour it has in counters.png.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999", "#000000", "#F0E442"}

// counter is one time series of a tier.
type counter struct {
	name   string // PerfMon's
	object string // its PerfMon object, for the chart's note
	color  string
	width  float64
	dash   []int
	has    results.Presence
	get    func(*results.TierSample) float64
	// gap, where set, tells of a zero whether it is no value (the mean
	// duration of an interval in which nothing ended): the line breaks.
	gap func(*results.TierSample) bool
}

// panel is one chart of a tier: the counters of one unit.
type panel struct {
	key, title, unit string
	hover            string // the unit on hover
	height           int
	counters         []counter
}

const (
	objASPNet = "ASP.NET"
	objApps   = "ASP.NET Apps"
	objWCF    = "ServiceModelService"
	objPool   = "tsim Thread Pool"
	objConns  = "tsim Connections"
	objCPU    = "Processor"
	objTsim   = "tsim"
)

func nothingEnded(*results.TierSample) bool     { return true }
func nothingStarted(s *results.TierSample) bool { return s.Queued > 0 }

// panels are a tier's charts, top to bottom, as counters.png has them.
var panels = []panel{
	{"counts", "counts", "count", "", 200, []counter{
		{"Requests Executing", objApps, palette[0], 2.4, nil, results.Always, func(s *results.TierSample) float64 { return s.Executing }, nil},
		{"Requests Queued", objASPNet, palette[1], 2, nil, results.Always, func(s *results.TierSample) float64 { return s.Queued }, nil},
		{"Pipeline Instance Count", objApps, palette[6], 1.8, nil, results.ASPNetApp, func(s *results.TierSample) float64 { return s.Pipelines }, nil},
		{"Calls Outstanding", objWCF, palette[2], 1.6, nil, results.WCFOnly, func(s *results.TierSample) float64 { return s.Outstanding }, nil},
		{"Instances", objWCF, palette[3], 1.4, []int{7, 3}, results.WCFOnly, func(s *results.TierSample) float64 { return s.Instances }, nil},
		{"Worker Threads Busy", objPool, palette[7], 1.2, nil, results.ByData, func(s *results.TierSample) float64 { return s.WorkerBusy }, nil},
		{"I/O Threads Busy", objPool, palette[5], 1.2, []int{5, 3}, results.ByData, func(s *results.TierSample) float64 { return s.IOBusy }, nil},
		{"Work Items Queued", objPool, palette[4], 1.2, []int{2, 2}, results.ByData, func(s *results.TierSample) float64 { return s.ThreadQueue }, nil},
	}},
	{"rates", "rates", "per second", "/s", 160, []counter{
		{"Requests/Sec", objApps, palette[0], 2, nil, results.HTTPTier, func(s *results.TierSample) float64 { return s.RequestsPerS }, nil},
		{"Calls Per Second", objWCF, palette[2], 1.4, nil, results.WCFOnly, func(s *results.TierSample) float64 { return s.CallsPerS }, nil},
	}},
	{"durations", "durations", "seconds", "s", 160, []counter{
		{"Request Execution Time", objASPNet, palette[0], 2, nil, results.HTTPTier, func(s *results.TierSample) float64 { return s.ExecTimeMS / 1000 }, nothingEnded},
		{"Request Wait Time", objASPNet, palette[1], 1.6, nil, results.HTTPTier, func(s *results.TierSample) float64 { return s.WaitTimeMS / 1000 }, nothingStarted},
		{"Calls Duration", objWCF, palette[2], 1.2, nil, results.WCFOnly, func(s *results.TierSample) float64 { return s.CallDuration }, nothingEnded},
	}},
	{"connections", "outbound connections", "connections", "", 160, []counter{
		{"Connections In Use", objConns, palette[4], 2, nil, results.CallsOut, func(s *results.TierSample) float64 { return s.ConnsInUse }, nil},
		{"Requests Waiting For A Connection", objConns, palette[5], 1.4, nil, results.CallsOut, func(s *results.TierSample) float64 { return s.ConnsWaiting }, nil},
	}},
	{"memory", "memory", "MB", "MB", 130, []counter{
		{"memory held by requests", objTsim, palette[7], 1.4, nil, results.ByData, func(s *results.TierSample) float64 { return s.MemoryMB }, nil},
	}},
	{"cpu", "CPU", "%", "%", 160, []counter{
		{"% Processor Time", objCPU, palette[7], 1.4, nil, results.Always, func(s *results.TierSample) float64 { return s.CPU }, nil},
	}},
}

// lane is one run drawn in a chart: a variant of a report, or side A or B
// of a diff (B dashed).
type lane struct {
	label string // "" alone in its chart; "A", "B" in a diff
	run   *results.Run
	names []string // its tiers, farms' machines after them when shown
	dash  []int
}

// sampleTier returns tier i of sample s (a farm's machines follow the
// tiers).
func sampleTier(s *results.Sample, i int) *results.TierSample {
	if i < len(s.Tiers) {
		return &s.Tiers[i]
	}
	if j := i - len(s.Tiers); j < len(s.Replicas) {
		return &s.Replicas[j]
	}
	return nil
}

// laneNames are the tiers a run's charts show.
func laneNames(r *results.Run, perReplica bool) []string {
	names := r.TierNames
	if perReplica && len(r.ReplicaNames) > 0 {
		names = append(append([]string(nil), names...), r.ReplicaNames...)
	}
	return names
}

// tierPanels returns, for the tier called name (index i in each lane, -1
// where a lane lacks it), each panel's counters that some lane draws, and
// the largest value of each panel over the lanes (a shared scale).
func tierPanels(lanes []lane, idx []int, name string) (drawn [][]bool, top []float64) {
	drawn = make([][]bool, len(panels))
	top = make([]float64, len(panels))
	for pi, p := range panels {
		drawn[pi] = make([]bool, len(p.counters))
		for li, ln := range lanes {
			i := idx[li]
			if i < 0 {
				continue
			}
			info := ln.run.TierInfo(i, name)
			for ki := range p.counters {
				k := &p.counters[ki]
				nonzero, hi := false, 0.0
				for si := range ln.run.Series {
					ts := sampleTier(&ln.run.Series[si], i)
					if ts == nil {
						continue
					}
					v := k.get(ts)
					if v != 0 && !math.IsNaN(v) {
						nonzero = true
						hi = max(hi, v)
					}
				}
				if k.has.Shows(info, nonzero) {
					drawn[pi][ki] = true
					top[pi] = max(top[pi], hi)
				}
			}
		}
	}
	return drawn, top
}

// counterChart is one panel of one tier for lanes (their tier indexes in
// idx), with its counters drawn and its y axis up to top.
func counterChart(id, title string, p *panel, drawn []bool, top float64, lanes []lane, idx []int, sync string) *Chart {
	c := &Chart{ID: id, Title: title, Height: p.height, Sync: sync,
		X: Axis{Label: "time (s)", Unit: "s"},
		Y: Axis{Label: p.unit, Unit: p.hover, Min: ptr(0)}}
	if top > 0 {
		c.Y.Max = ptr(top * 1.05)
	}
	if p.key == "durations" {
		c.Y.Unit = "s"
	}
	var objects []string
	for li, ln := range lanes {
		i := idx[li]
		if i < 0 {
			continue
		}
		f := Frame{X: make(Exact, 0, len(ln.run.Series))}
		var ks []*counter
		for ki := range p.counters {
			if drawn[ki] {
				ks = append(ks, &p.counters[ki])
			}
		}
		f.Y = make([]Column, len(ks))
		for n := range f.Y {
			f.Y[n] = make(Column, 0, len(ln.run.Series))
		}
		last := math.Inf(-1)
		for si := range ln.run.Series {
			s := &ln.run.Series[si]
			ts := sampleTier(s, i)
			if ts == nil || !(s.T > last) {
				continue
			}
			last = s.T
			f.X = append(f.X, s.T)
			for n, k := range ks {
				v := k.get(ts)
				if v == 0 && k.gap != nil && k.gap(ts) {
					v = math.NaN()
				}
				f.Y[n] = append(f.Y[n], v)
			}
		}
		for _, k := range ks {
			label := k.name
			if ln.label != "" {
				label = ln.label + ": " + k.name
			}
			dash := k.dash
			if ln.dash != nil {
				dash = ln.dash
			}
			c.Series = append(c.Series, Series{Label: label, Color: k.color, Width: k.width, Dash: dash, Gaps: k.gap != nil})
			if !contains(objects, k.object) {
				objects = append(objects, k.object)
			}
		}
		c.Frames = append(c.Frames, decimate(f, maxRows))
	}
	if len(c.Series) == 0 {
		return nil
	}
	c.Note = "PerfMon objects: " + join(objects, ", ")
	if p.key == "durations" {
		c.Note += "; a break: nothing ended in that interval"
	}
	return c
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
