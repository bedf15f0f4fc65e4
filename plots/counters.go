package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tsim-dev/tsim/results"
)

// counter is one time series of a tier, named as a .NET person knows it.
type counter struct {
	name  string
	color color.Color
	width float64 // pixels: earlier counters are drawn wider so that equal series stay visible side by side
	dash  []vg.Length
	get   func(results.TierSample) float64
}

var counters = []counter{
	{"Requests Executing", palette[0], 4.5, nil, func(s results.TierSample) float64 { return s.Executing }},
	{"Requests Queued", palette[1], 3.5, nil, func(s results.TierSample) float64 { return s.Queued }},
	{"Calls Outstanding", palette[2], 2.6, nil, func(s results.TierSample) float64 { return s.Outstanding }},
	{"threads busy", palette[3], 1.6, nil, func(s results.TierSample) float64 { return s.ThreadsBusy }},
	{"connections in use (outbound)", palette[4], 1.6, []vg.Length{px(6), px(3)}, func(s results.TierSample) float64 { return s.ConnsInUse }},
	{"connections waiting (outbound)", palette[5], 1.6, []vg.Length{px(6), px(3)}, func(s results.TierSample) float64 { return s.ConnsWaiting }},
	{"thread pool queue", palette[6], 1.6, []vg.Length{px(2), px(2)}, func(s results.TierSample) float64 { return s.ThreadQueue }},
}

var memCounter = counter{"memory held (MB)", palette[7], 1.4, []vg.Length{px(6), px(2)}, func(s results.TierSample) float64 { return s.MemoryMB }}

var cpuCounter = counter{"CPU %", palette[7], 1.4, nil, func(s results.TierSample) float64 { return s.CPU }}

// allCounters are every series of a tier: counters, then CPU and memory.
var allCounters = append(counters[:len(counters):len(counters)], cpuCounter, memCounter)

func counterStyle(k counter) draw.LineStyle {
	return draw.LineStyle{Color: k.color, Width: px(k.width), Dashes: k.dash}
}

// Counters draws each run's counters over time like a PerfMon capture: one
// row per tier, one column per run. A tier's upper panel shows Requests
// Executing, Requests Queued, Calls Outstanding, threads busy, and its
// outbound connections in use and waiting and its thread-pool queue; the
// lower panel its CPU %, and a third one the memory its requests hold when a
// tier declares memory per request. The panels of one tier share their scale
// across the columns so that runs compare at a glance.
func Counters(title string, runs []Run) (*Figure, error) {
	if len(runs) == 0 {
		return nil, errNoData
	}
	names := runs[0].Run.TierNames
	if len(names) == 0 {
		return nil, fmt.Errorf("plots: counters: run %q has no tiers", runs[0].Label)
	}
	var tmax float64
	for _, r := range runs {
		if r.Run == nil || len(r.Run.Series) == 0 {
			return nil, fmt.Errorf("plots: counters: run %q has no time series", r.Label)
		}
		if len(r.Run.TierNames) != len(names) {
			return nil, fmt.Errorf("plots: counters: run %q has %d tiers, run %q has %d", r.Label, len(r.Run.TierNames), runs[0].Label, len(names))
		}
		for _, s := range r.Run.Series {
			if len(s.Tiers) != len(names) {
				return nil, fmt.Errorf("plots: counters: run %q: sample at %gs has %d tiers, want %d", r.Label, s.T, len(s.Tiers), len(names))
			}
			if !finite(s.T) {
				return nil, checkFinite(fmt.Sprintf("counters: run %q: sample time", r.Label), s.T)
			}
			for i, ts := range s.Tiers {
				for _, k := range allCounters {
					if v := k.get(ts); !finite(v) {
						return nil, checkFinite(fmt.Sprintf("counters: run %q: tier %s: %s at %gs", r.Label, names[i], k.name, s.T), v)
					}
				}
			}
			tmax = max(tmax, s.T)
		}
	}
	if tmax <= 0 {
		tmax = 1
	}

	// One shared y scale per tier; a memory panel for tiers that hold memory.
	ymax := make([]float64, len(names))
	memMax := make([]float64, len(names))
	for _, r := range runs {
		for _, s := range r.Run.Series {
			for i, ts := range s.Tiers {
				for _, k := range counters {
					ymax[i] = max(ymax[i], k.get(ts))
				}
				memMax[i] = max(memMax[i], ts.MemoryMB)
			}
		}
	}

	anyMem := false
	for _, m := range memMax {
		anyMem = anyMem || m > 0
	}
	cols, blocks := counterColumns(len(runs))
	var panels [][]*plot.Plot
	var weights []float64
	for b := range blocks {
		if b > 0 {
			panels = append(panels, make([]*plot.Plot, cols))
			weights = append(weights, blockGap)
		}
		block := runs[b*cols : min(len(runs), (b+1)*cols)]
		for i, name := range names {
			top := make([]*plot.Plot, cols)
			cpu := make([]*plot.Plot, cols)
			var mem []*plot.Plot
			if memMax[i] > 0 {
				mem = make([]*plot.Plot, cols)
			}
			for j, r := range block {
				xys := tierXYs(r.Run.Series, i)
				head := name
				if len(runs) > 1 || r.Label != "" {
					head = fmt.Sprintf("%s — %s", name, r.Label)
				}
				p := newPlot(head, "", "count")
				for n, k := range counters {
					p.Add(newSeriesLine(xys[n], counterStyle(k)))
				}
				p.X.Min, p.X.Max = 0, tmax
				p.Y.Min, p.Y.Max = 0, niceMax(ymax[i])
				top[j] = p

				q := newPlot("", "time (s)", "CPU %")
				q.Add(newSeriesLine(xys[len(counters)], counterStyle(cpuCounter)))
				q.X.Min, q.X.Max = 0, tmax
				q.Y.Min, q.Y.Max = 0, 100
				q.Y.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 25}, {Value: 50, Label: "50"}, {Value: 75}, {Value: 100, Label: "100"}}
				cpu[j] = q
				if mem != nil {
					m := newPlot("", "time (s)", "memory MB")
					m.Add(newSeriesLine(xys[len(counters)+1], counterStyle(memCounter)))
					m.X.Min, m.X.Max = 0, tmax
					m.Y.Min, m.Y.Max = 0, niceMax(memMax[i])
					mem[j] = m
				}
			}
			panels = append(panels, top, cpu)
			weights = append(weights, 2.6, 1)
			if mem != nil {
				panels = append(panels, mem)
				weights = append(weights, 1)
			}
		}
	}

	w := max(1200, 600*float64(cols))
	perBlock := 380 * float64(len(names))
	if anyMem {
		perBlock += 120 * float64(len(names))
	}
	h := max(800, 120+float64(blocks)*perBlock+float64(blocks-1)*blockGapPx)
	f := &Figure{Width: px(w), Height: px(h), title: title}
	f.draw = func(c draw.Canvas) {
		var entries []legendEntry
		legend := append(counters[:len(counters):len(counters)], cpuCounter)
		if anyMem {
			legend = append(legend, memCounter)
		}
		for _, k := range legend {
			entries = append(entries, legendEntry{k.name, &plotter.Line{LineStyle: counterStyle(k)}})
		}
		c.Max.Y -= drawLegendRows(c, c.Max.Y-px(10), entries) + px(10)
		drawGrid(c, panels, weights, px(28), px(10))
	}
	return f, nil
}

// maxCounterColumns is the most runs drawn side by side, 600 pixels each;
// more wrap into further blocks of rows, so that counters.png stays at
// most 2,400 pixels wide.
const maxCounterColumns = 4

// blockGap and blockGapPx are the relative height of the empty row between
// two blocks of runs and the pixels it adds to the picture.
const (
	blockGap   = 0.35
	blockGapPx = 40
)

// counterColumns spreads n runs over as few blocks of at most
// maxCounterColumns columns as it can, as evenly as it can: 7 runs are two
// blocks of 4 and 3, 5 runs two of 3 and 2.
func counterColumns(n int) (cols, blocks int) {
	blocks = (n + maxCounterColumns - 1) / maxCounterColumns
	return (n + blocks - 1) / blocks, blocks
}

// tierXYs are every counter of one tier over time, in the order of
// allCounters, read in one pass over the samples.
func tierXYs(series []results.Sample, tier int) []plotter.XYs {
	out := make([]plotter.XYs, len(allCounters))
	for k := range out {
		out[k] = make(plotter.XYs, len(series))
	}
	for i, s := range series {
		ts := s.Tiers[tier]
		for k, c := range allCounters {
			out[k][i] = plotter.XY{X: s.T, Y: c.get(ts)}
		}
	}
	return out
}

// niceMax leaves headroom above the largest value and keeps an all-zero
// panel from having an empty range.
func niceMax(m float64) float64 {
	if m <= 0 {
		return 1
	}
	return m * 1.08
}
