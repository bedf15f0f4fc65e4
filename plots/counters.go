package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tsim-dev/tsim/results"
)

// counters.png reads like a PerfMon capture: every series is a counter of
// docs/counters.md under its PerfMon name, and a tier has a panel for each
// kind of unit, with the counters it has (no WCF counters on a tier that is
// not a WCF service, no connections on one that calls nobody).

// counter is one time series of a tier, named as PerfMon names it (with its
// unit in the legend where the name has none).
type counter struct {
	name  string
	color color.Color
	width float64 // pixels: earlier counters are drawn wider so that equal series stay visible side by side
	dash  []vg.Length
	has   results.Presence
	get   func(*results.TierSample) float64
	// gap, where set, tells of a zero whether it is no value (the mean
	// duration of an interval in which nothing ended): the line breaks
	// there.
	gap func(*results.TierSample) bool
}

// ctr is a counter drawn at every value.
func ctr(name string, col color.Color, width float64, dash []vg.Length, has results.Presence, get func(*results.TierSample) float64) counter {
	return counter{name: name, color: col, width: width, dash: dash, has: has, get: get}
}

// gapAtZero returns k drawn with a break where it is zero and gap says
// that the zero is no value.
func gapAtZero(k counter, gap func(*results.TierSample) bool) counter {
	k.gap = gap
	return k
}

// nothingEnded: a mean duration of zero is always an interval in which
// nothing ended (a request's execution or a call takes some time).
func nothingEnded(*results.TierSample) bool { return true }

// nothingStarted: a mean wait of zero is an interval in which no request
// started executing when requests are queued at its end (one that started
// would have waited behind them); otherwise the requests that started
// waited no time.
func nothingStarted(s *results.TierSample) bool { return s.Queued > 0 }

// scaleKind is how a panel's y axis is scaled.
type scaleKind uint8

const (
	linearScale   scaleKind = iota // 0 to the largest value
	countScale                     // linear, or logarithmic when the levels differ widely (panelAxis)
	durationScale                  // linear, or logarithmic when the durations range widely (panelAxis)
	percentScale                   // 0 to 100
)

// counterPanel is one panel of a tier: the counters of one unit.
type counterPanel struct {
	group    string  // the legend's heading of its counters
	yLabel   string  // its unit
	height   float64 // pixels, axes included
	scale    scaleKind
	none     string // the note of a run whose tier has none of its counters
	counters []counter
}

func dashes(on, off float64) []vg.Length { return []vg.Length{px(on), px(off)} }

// counterPanels are a tier's panels, top to bottom. Colours mean the same
// in every panel: blue the requests (ASP.NET's counters), orange their
// waiting, green WCF's calls.
var counterPanels = []counterPanel{
	{"counts", "count", 230, countScale, "", []counter{
		ctr("Requests Executing", palette[0], 5, nil, results.Always, func(s *results.TierSample) float64 { return s.Executing }),
		ctr("Requests Queued", palette[1], 4, nil, results.Always, func(s *results.TierSample) float64 { return s.Queued }),
		ctr("Pipeline Instance Count", palette[6], 3.2, nil, results.ASPNetApp, func(s *results.TierSample) float64 { return s.Pipelines }),
		ctr("Calls Outstanding", palette[2], 2.6, nil, results.WCFOnly, func(s *results.TierSample) float64 { return s.Outstanding }),
		ctr("Instances", palette[3], 2, dashes(7, 3), results.WCFOnly, func(s *results.TierSample) float64 { return s.Instances }),
		ctr("Worker Threads Busy", palette[7], 1.4, nil, results.ByData, func(s *results.TierSample) float64 { return s.WorkerBusy }),
		ctr("I/O Threads Busy", palette[5], 1.4, dashes(5, 3), results.ByData, func(s *results.TierSample) float64 { return s.IOBusy }),
		ctr("Work Items Queued", palette[4], 1.4, dashes(2, 2), results.ByData, func(s *results.TierSample) float64 { return s.ThreadQueue }),
	}},
	{"rates", "per second", 95, linearScale, "no requests", []counter{
		ctr("Requests/Sec", palette[0], 3, nil, results.HTTPTier, func(s *results.TierSample) float64 { return s.RequestsPerS }),
		ctr("Calls Per Second", palette[2], 1.6, nil, results.WCFOnly, func(s *results.TierSample) float64 { return s.CallsPerS }),
	}},
	{"durations", "seconds", 130, durationScale, "no requests ended", []counter{
		gapAtZero(ctr("Request Execution Time (s)", palette[0], 3, nil, results.HTTPTier, func(s *results.TierSample) float64 { return s.ExecTimeMS / 1000 }), nothingEnded),
		gapAtZero(ctr("Request Wait Time (s)", palette[1], 2.2, nil, results.HTTPTier, func(s *results.TierSample) float64 { return s.WaitTimeMS / 1000 }), nothingStarted),
		gapAtZero(ctr("Calls Duration (s)", palette[2], 1.4, nil, results.WCFOnly, func(s *results.TierSample) float64 { return s.CallDuration }), nothingEnded),
	}},
	{"connections", "connections", 95, linearScale, "no outbound calls", []counter{
		ctr("Connections In Use", palette[4], 2.6, nil, results.CallsOut, func(s *results.TierSample) float64 { return s.ConnsInUse }),
		ctr("Requests Waiting For A Connection", palette[5], 1.6, nil, results.CallsOut, func(s *results.TierSample) float64 { return s.ConnsWaiting }),
	}},
	{"memory", "MB", 85, linearScale, "no memory held", []counter{
		ctr("memory held by requests (MB)", palette[7], 1.4, nil, results.ByData, func(s *results.TierSample) float64 { return s.MemoryMB }),
	}},
	{"CPU", "%", 100, percentScale, "", []counter{
		ctr("% Processor Time", palette[7], 1.4, nil, results.Always, func(s *results.TierSample) float64 { return s.CPU }),
	}},
}

// panelFirst is the index in allCounters of each panel's first counter.
var panelFirst []int

// allCounters are every panel's counters, panel by panel.
var allCounters []counter

func init() {
	for _, p := range counterPanels {
		panelFirst = append(panelFirst, len(allCounters))
		allCounters = append(allCounters, p.counters...)
	}
}

func counterStyle(k counter) draw.LineStyle {
	return draw.LineStyle{Color: k.color, Width: px(k.width), Dashes: k.dash}
}

// counterStats is one counter of one tier of one run over its samples.
type counterStats struct {
	max, sum, posSum float64
	n, posN          int
}

func (s counterStats) mean() float64 {
	if s.n == 0 {
		return 0
	}
	return s.sum / float64(s.n)
}

// posMean is the mean of the positive values (0 without any).
func (s counterStats) posMean() float64 {
	if s.posN == 0 {
		return 0
	}
	return s.posSum / float64(s.posN)
}

// counterPlan is what Counters draws: the tiers, the time axis, what each
// run says of each tier, which counters each run draws of each tier
// (drawn[r][i*len(allCounters)+k]) and what its legend says of one that
// another hides (notes, likewise), the panels of each tier and each
// tier's panels' y axes.
type counterPlan struct {
	names     []string
	tmax      float64
	infos     [][]results.TierInfo
	drawn     [][]bool
	notes     [][]string
	rowPanels [][]bool
	axes      [][]yAxis
}

// planCounters checks runs and plans counters.png.
func planCounters(runs []Run) (*counterPlan, error) {
	if len(runs) == 0 {
		return nil, errNoData
	}
	names := runs[0].Run.TierNames
	if len(names) == 0 {
		return nil, fmt.Errorf("plots: counters: run %q has no tiers", runs[0].Label)
	}
	nk := len(allCounters)
	// stats[r][i*nk+k]: counter k of tier i of run r; same[r][i*nk+k]:
	// the counters before k in its panel (bit j: the panel's jth) that k
	// has equalled at every sample so far.
	stats := make([][]counterStats, len(runs))
	same := make([][]uint16, len(runs))
	vals := make([]float64, nk)
	var tmax float64
	for ri, r := range runs {
		if r.Run == nil || len(r.Run.Series) == 0 {
			return nil, fmt.Errorf("plots: counters: run %q has no time series", r.Label)
		}
		if len(r.Run.TierNames) != len(names) {
			return nil, fmt.Errorf("plots: counters: run %q has %d tiers, run %q has %d", r.Label, len(r.Run.TierNames), runs[0].Label, len(names))
		}
		st := make([]counterStats, len(names)*nk)
		stats[ri] = st
		eq := make([]uint16, len(names)*nk)
		same[ri] = eq
		for i := range names {
			for pi, pk := range counterPanels {
				for j := range pk.counters {
					eq[i*nk+panelFirst[pi]+j] = 1<<j - 1
				}
			}
		}
		for _, s := range r.Run.Series {
			if len(s.Tiers) != len(names) {
				return nil, fmt.Errorf("plots: counters: run %q: sample at %gs has %d tiers, want %d", r.Label, s.T, len(s.Tiers), len(names))
			}
			if !finite(s.T) {
				return nil, checkFinite(fmt.Sprintf("counters: run %q: sample time", r.Label), s.T)
			}
			for i := range s.Tiers {
				ts := &s.Tiers[i]
				row := st[i*nk : (i+1)*nk]
				for k := range allCounters {
					c := &allCounters[k]
					v := c.get(ts)
					if !finite(v) {
						return nil, checkFinite(fmt.Sprintf("counters: run %q: tier %s: %s at %gs", r.Label, names[i], c.name, s.T), v)
					}
					a := &row[k]
					a.max = max(a.max, v)
					a.sum += v
					a.n++
					if v > 0 {
						a.posSum += v
						a.posN++
					}
					vals[k] = v
				}
				for pi, pk := range counterPanels {
					first := panelFirst[pi]
					for j := 1; j < len(pk.counters); j++ {
						m := &eq[i*nk+first+j]
						for b := 0; b < j; b++ {
							if *m&(1<<b) != 0 && vals[first+b] != vals[first+j] {
								*m &^= 1 << b
							}
						}
					}
				}
			}
			tmax = max(tmax, s.T)
		}
	}
	if tmax <= 0 {
		tmax = 1
	}

	// Which counters each run draws of each tier, and which panels each
	// tier has (those of which some run draws a counter).
	infos := make([][]results.TierInfo, len(runs))
	drawn := make([][]bool, len(runs)) // [r][i*nk+k]
	rowPanels := make([][]bool, len(names))
	for i := range rowPanels {
		rowPanels[i] = make([]bool, len(counterPanels))
	}
	notes := make([][]string, len(runs))
	for ri, r := range runs {
		infos[ri] = make([]results.TierInfo, len(names))
		drawn[ri] = make([]bool, len(names)*nk)
		notes[ri] = make([]string, len(names)*nk)
		for i, name := range names {
			info := r.Run.TierInfo(i, name)
			infos[ri][i] = info
			for k, c := range allCounters {
				if c.has.Shows(info, stats[ri][i*nk+k].posN > 0 || stats[ri][i*nk+k].max != 0) {
					drawn[ri][i*nk+k] = true
				}
			}
			for pi, pk := range counterPanels {
				first := panelFirst[pi]
				for j := range pk.counters {
					k := i*nk + first + j
					if !drawn[ri][k] {
						continue
					}
					rowPanels[i][pi] = true
					notes[ri][k] = hiddenNote(stats[ri][k], same[ri][k], drawn[ri][i*nk+first:i*nk+first+len(pk.counters)], pk.counters)
				}
			}
		}
	}

	// One y axis per tier and panel, shared across the runs.
	axes := make([][]yAxis, len(names))
	for i := range names {
		axes[i] = make([]yAxis, len(counterPanels))
		for pi, pk := range counterPanels {
			if !rowPanels[i][pi] {
				continue
			}
			var sts []counterStats
			for ri := range runs {
				for j := range pk.counters {
					k := panelFirst[pi] + j
					if drawn[ri][i*nk+k] {
						sts = append(sts, stats[ri][i*nk+k])
					}
				}
			}
			axes[i][pi] = panelAxis(pk.scale, sts)
		}
	}
	return &counterPlan{names, tmax, infos, drawn, notes, rowPanels, axes}, nil
}

// hiddenNote is what a counter's legend entry says of a line that another
// hides or that lies on the axis: "0 throughout", or "= Requests
// Executing" when it equals at every sample the first counter drawn
// before it in its panel (same: its bits, drawn: the panel's counters
// drawn), which is drawn wider under it; "" otherwise.
func hiddenNote(st counterStats, same uint16, drawn []bool, ks []counter) string {
	if st.max == 0 && st.posN == 0 {
		return "0 throughout"
	}
	for b := range ks {
		if same&(1<<b) != 0 && drawn[b] {
			return "= " + ks[b].name
		}
	}
	return ""
}

// Counters draws each run's counters over time like a PerfMon capture, in
// pages of at most unitsPerPage tiers and maxCounterColumns runs side by
// side (more runs: further blocks of rows, each tier once in each), so
// that a page stays a few thousand pixels tall and wide however many
// tiers and runs there are: the first page is counters.png, the others
// counters-2.png, ... (PageStem). On a page, each tier has a group of
// panels and each run a column. A tier's panels are, top to bottom:
// counts (Requests Executing, Requests Queued, Pipeline Instance Count on
// an ASP.NET host, Calls Outstanding and Instances on a WCF service,
// Worker and I/O Threads Busy, Work Items Queued), rates (Requests/Sec,
// Calls Per Second), durations in seconds (Request Execution Time and
// Request Wait Time, Calls Duration), outbound connections (Connections
// In Use, Requests Waiting For A Connection) on a tier that calls others,
// the memory its requests hold where it holds any, and % Processor Time.
// Each row of panels has its own legend at its right, in colours distinct
// within the row; a counter that another hides (equal at every sample: the
// earlier is drawn wider under it) or that lies on the axis (zero
// throughout) says so there. A tier has the counters docs/counters.md
// gives it (what Run.Tiers says of its host); a run without Tiers has
// those that are not zero throughout. The panels of one tier share their
// scale across the columns so that runs compare at a glance; counts and
// durations that differ by more than a factor of 30 are drawn on a
// logarithmic scale (of 1 + y/unit, so that zero stays at the bottom).
//
// A page's panels are made when it is drawn: drawing the pages one after
// the other holds one page's lines at a time.
func Counters(title string, runs []Run) ([]*Figure, error) {
	cp, err := planCounters(runs)
	if err != nil {
		return nil, err
	}
	// A tier of a block of runs at a time, a page of unitsPerPage at most:
	// the tiers of the first block, then of the next.
	cols, blocks := counterColumns(len(runs))
	var units []counterUnit
	for b := range blocks {
		for i := range cp.names {
			units = append(units, counterUnit{i, b * cols, min(len(runs), (b+1)*cols)})
		}
	}
	var pages []*Figure
	for u := 0; u < len(units); u += unitsPerPage {
		pages = append(pages, cp.page(title, runs, units[u:min(len(units), u+unitsPerPage)], cols))
	}
	if len(pages) > 1 {
		for i, f := range pages {
			f.subtitle = fmt.Sprintf("page %d of %d: ", i+1, len(pages)) + f.subtitle
		}
	}
	return pages, nil
}

// unitsPerPage is the most tiers a page of counters draws (a tier with
// more than maxCounterColumns runs counts once for each block of them):
// three tiers of every panel are about 2,400 pixels tall.
const unitsPerPage = 3

// counterUnit is a tier's panels for runs r0 to r1.
type counterUnit struct{ tier, r0, r1 int }

// counterRow is a row of panels of a page: a tier's panel pi for runs r0
// to r1 (a gap between two tiers when tier is -1), its height in pixels
// and its legend.
type counterRow struct {
	tier, panel int
	r0, r1      int
	height      float64
	legend      []legendLine
}

// legendLine is a counter in a row's legend, with what it says of a line
// another hides ("" for nothing).
type legendLine struct {
	c    counter
	note string
}

// page is the figure of units, in cols columns.
func (cp *counterPlan) page(title string, runs []Run, units []counterUnit, cols int) *Figure {
	const padY = 6 // pixels between two panels
	rows := cp.pageRows(units)
	var legendW vg.Length
	for _, r := range rows {
		legendW = max(legendW, legendWidth(r.legend))
	}
	var grid float64
	for _, r := range rows {
		grid += r.height
	}
	grid += padY * float64(len(rows)-1)
	legendW += px(legendGapPx)
	w := max(1200, 600*float64(cols)+float64(legendW/px(1)))
	// The outer padding, the title and the space below it. At least as
	// tall as the other pictures: few panels are stretched.
	h := max(800, 16+36+10+grid)
	var names []string
	for _, u := range units {
		if !slices.Contains(names, cp.names[u.tier]) {
			names = append(names, cp.names[u.tier])
		}
	}
	sub := "tiers " + strings.Join(names, ", ")
	if len(names) == 1 {
		sub = "tier " + names[0]
	}
	f := &Figure{Width: px(w), Height: px(h), title: title, subtitle: sub}
	f.draw = func(c draw.Canvas) {
		c.Max.Y -= px(10)
		grid := c
		grid.Max.X -= legendW
		panels, weights := cp.panels(runs, rows, len(runs) > 1, cols)
		tops := drawGrid(grid, panels, weights, px(28), px(padY))
		for j, r := range rows {
			if r.tier >= 0 {
				drawLegendLines(c, grid.Max.X+px(legendGapPx), tops[j], r.legend)
			}
		}
	}
	return f
}

// pageRows are the rows of panels of units.
func (cp *counterPlan) pageRows(units []counterUnit) []counterRow {
	nk := len(allCounters)
	const tierGapPx = 10  // pixels added between two tiers
	const blockGapPx = 40 // between two blocks of runs
	var rows []counterRow
	for n, u := range units {
		if n > 0 {
			gap := float64(tierGapPx)
			if u.r0 != units[n-1].r0 {
				gap = blockGapPx
			}
			rows = append(rows, counterRow{tier: -1, height: gap})
		}
		i := u.tier
		for pi, pk := range counterPanels {
			if !cp.rowPanels[i][pi] {
				continue
			}
			row := counterRow{tier: i, panel: pi, r0: u.r0, r1: u.r1, height: pk.height}
			for j, c := range pk.counters {
				k := i*nk + panelFirst[pi] + j
				// The counter, noted as in every run that draws it.
				in, note := false, ""
				for ri := u.r0; ri < u.r1; ri++ {
					if !cp.drawn[ri][k] {
						continue
					}
					if !in {
						in, note = true, cp.notes[ri][k]
					} else if cp.notes[ri][k] != note {
						note = ""
					}
				}
				if in {
					row.legend = append(row.legend, legendLine{c, note})
				}
			}
			row.height = max(row.height, legendHeight(row.legend)+legendRoomPx)
			rows = append(rows, row)
		}
	}
	return rows
}

// panels makes the panels of rows: one column for each run of a row's,
// cols columns in all.
func (cp *counterPlan) panels(runs []Run, rows []counterRow, several bool, cols int) ([][]*plot.Plot, []float64) {
	nk := len(allCounters)
	var panels [][]*plot.Plot
	var weights []float64
	for n, r := range rows {
		panels = append(panels, make([]*plot.Plot, cols))
		weights = append(weights, r.height)
		if r.tier < 0 {
			continue
		}
		i, pi, pk := r.tier, r.panel, counterPanels[r.panel]
		first := n == 0 || rows[n-1].tier != i
		last := n == len(rows)-1 || rows[n+1].tier != i
		for j, run := range runs[r.r0:r.r1] {
			ri := r.r0 + j
			head := ""
			if first {
				head = tierHead(cp.names[i], run.Label, several, cp.infos[ri][i])
			}
			xLabel := ""
			if last {
				xLabel = "time (s)"
			}
			ax := cp.axes[i][pi]
			yLabel := pk.yLabel
			if ax.log {
				yLabel += " (log)"
			}
			p := newPlot(head, xLabel, yLabel)
			if !last {
				p.X.Tick.Marker = unlabelled{niceTicks{}}
			}
			p.X.Min, p.X.Max = 0, cp.tmax
			ax.apply(&p.Y)
			var ks []counter
			for jj, c := range pk.counters {
				if cp.drawn[ri][i*nk+panelFirst[pi]+jj] {
					ks = append(ks, c)
				}
			}
			if len(ks) == 0 {
				p.Add(panelNote{pk.none})
			}
			for n, xy := range tierXYs(run.Run.Series, i, ks, ax) {
				if ks[n].gap != nil {
					p.Add(newGappedLine(xy, counterStyle(ks[n])))
				} else {
					p.Add(newSeriesLine(xy, counterStyle(ks[n])))
				}
			}
			panels[n][j] = p
		}
	}
	return panels, weights
}

// A row's legend: a line of each counter (and one more for its note)
// from the top of the row's data area, right of its panels.
const (
	legendLinePx    = 16 // a counter's line
	legendNotePx    = 13 // its note's
	legendRoomPx    = 30 // of a row that is not its legend: a title, the x axis
	legendGapPx     = 14 // between the panels and the legend
	legendThumbPx   = 26 // a counter's line's sample
	legendTextGapPx = 6  // between the sample and the name
)

func legendHeight(ls []legendLine) float64 {
	var h float64
	for _, l := range ls {
		h += legendLinePx
		if l.note != "" {
			h += legendNotePx
		}
	}
	return h
}

// legendWidth is the width of the widest line of a legend.
func legendWidth(ls []legendLine) vg.Length {
	sty, note := textStyle(10, draw.XLeft), noteStyle()
	var w vg.Length
	for _, l := range ls {
		w = max(w, sty.Width(l.c.name), note.Width(l.note))
	}
	return w + px(legendThumbPx+legendTextGapPx+10)
}

func noteStyle() text.Style {
	s := textStyle(9, draw.XLeft)
	s.Color = grey
	return s
}

// drawLegendLines draws a row's legend from x, its first line's top at
// top.
func drawLegendLines(c draw.Canvas, x, top vg.Length, ls []legendLine) {
	sty, note := textStyle(10, draw.XLeft), noteStyle()
	y := top - px(legendLinePx)/2
	tx := x + px(legendThumbPx+legendTextGapPx)
	for _, l := range ls {
		c.StrokeLine2(counterStyle(l.c), x, y, x+px(legendThumbPx), y)
		c.FillText(sty, vg.Point{X: tx, Y: y}, l.c.name)
		y -= px(legendLinePx)
		if l.note != "" {
			c.FillText(note, vg.Point{X: tx, Y: y + px(legendLinePx-legendNotePx)/2}, l.note)
			y -= px(legendNotePx)
		}
	}
}

// tierHead is the title of a tier's top panel: the tier, the run's label
// and what the tier is.
func tierHead(name, label string, several bool, info results.TierInfo) string {
	head := name
	if several || label != "" {
		head = fmt.Sprintf("%s — %s", name, label)
	}
	if t := info.Title(false); t != "" {
		head += " (" + t + ")"
	}
	return head
}

// yAxis is a panel's y axis: the largest value it shows, and whether it is
// logarithmic (of 1 + v/10^exp: see y).
type yAxis struct {
	max float64
	log bool
	exp int
	pct bool
}

func (a yAxis) apply(ax *plot.Axis) {
	ax.Min, ax.Max = 0, a.y(a.max)
	switch {
	case a.pct:
		ax.Tick.Marker = plot.ConstantTicks{{Value: 0, Label: "0"}, {Value: 25}, {Value: 50, Label: "50"}, {Value: 75}, {Value: 100, Label: "100"}}
	case a.log:
		ax.Tick.Marker = log1pTicks{a.exp}
	}
}

// y is where value v is drawn: v on a linear axis, log10(1 + v/unit) on a
// logarithmic one (zero at the bottom, nearly linear below unit,
// logarithmic above it). The values are transformed rather than the axis
// (a plot.Normalizer) so that gonum lays the axis out as a linear one.
func (a yAxis) y(v float64) float64 {
	if !a.log {
		return v
	}
	return log1p(v, a.exp)
}

func log1p(v float64, exp int) float64 { return math.Log10(1 + max(v, 0)/math.Pow10(exp)) }

// wideRatio is how much larger than a series' level a panel's largest
// value must be for the panel to be drawn on a log scale: a series
// squeezed into the bottom thirtieth of a panel shows no shape.
const wideRatio = 30

// minDuration is the shortest duration that counts as a level when judging
// whether durations range widely: below a millisecond is noise for a
// diagnosis (ASP.NET's own counters are in whole milliseconds).
const minDuration = 1e-3

// panelAxis chooses a panel's y axis from the statistics of the series it
// draws in every run. Counts: logarithmic when a series whose mean is at
// least two (a level worth reading, not a queue of one now and then) is
// less than the largest value by wideRatio. Durations:
// logarithmic when the mean of a series' positive values (at least
// minDuration) is less than the largest value by wideRatio.
func panelAxis(kind scaleKind, sts []counterStats) yAxis {
	var top float64
	for _, s := range sts {
		top = max(top, s.max)
	}
	switch kind {
	case percentScale:
		return yAxis{max: 100, pct: true}
	case countScale:
		for _, s := range sts {
			if m := s.mean(); m >= 2 && top > wideRatio*m {
				return yAxis{max: top * 1.3, log: true, exp: -1} // 0 and 1 a decade apart
			}
		}
	case durationScale:
		lo := math.Inf(1)
		for _, s := range sts {
			if m := s.posMean(); m >= minDuration {
				lo = min(lo, m)
			}
		}
		if top > wideRatio*lo {
			// 0 and the decade below the smallest level a decade apart.
			return yAxis{max: top * 1.3, log: true, exp: int(math.Floor(math.Log10(lo))) - 1}
		}
	}
	return yAxis{max: niceMax(top)}
}

// log1pTicks labels an axis of values drawn at log10(1 + v/10^exp) at 0
// and at every power of ten from 10^(exp+1) (every other one beyond six),
// with minor ticks at 2 and 5 times each.
type log1pTicks struct{ exp int }

func (t log1pTicks) Ticks(lo, hi float64) []plot.Tick {
	top := math.Pow10(t.exp) * (math.Pow(10, hi) - 1) // the value at hi
	var ts []plot.Tick
	if lo <= 0 {
		ts = append(ts, plot.Tick{Value: 0, Label: "0"})
	}
	decades := 0
	for k := t.exp + 1; math.Pow10(k) <= top; k++ {
		decades++
	}
	every := 1
	if decades > 6 {
		every = 2
	}
	for k := t.exp + 1; math.Pow10(k) <= top; k++ {
		d := math.Pow10(k)
		tk := plot.Tick{Value: log1p(d, t.exp)}
		if (k-t.exp-1)%every == 0 {
			tk.Label = formatPow10(k)
		}
		ts = append(ts, tk)
		for _, m := range []float64{2, 5} {
			if v := m * d; v <= top {
				ts = append(ts, plot.Tick{Value: log1p(v, t.exp)})
			}
		}
	}
	return ts
}

// formatPow10 writes 10^k as a plain number: 0.001, 1, 1000.
func formatPow10(k int) string {
	if k < 0 {
		return "0." + strings.Repeat("0", -k-1) + "1"
	}
	return "1" + strings.Repeat("0", k)
}

// unlabelled is a ticker whose ticks carry no labels: the x axes of a
// tier's panels above its lowest, which has them. gridLines still draws
// the wrapped ticker's major ticks.
type unlabelled struct{ plot.Ticker }

func (u unlabelled) Ticks(lo, hi float64) []plot.Tick {
	ts := u.Ticker.Ticks(lo, hi)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
}

// panelNote writes, in grey in the middle of a panel, why it is empty.
type panelNote struct{ text string }

func (n panelNote) Plot(c draw.Canvas, _ *plot.Plot) {
	sty := textStyle(10, draw.XCenter)
	sty.Color = grey
	c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2}, n.text)
}

// maxCounterColumns is the most runs drawn side by side, 600 pixels each;
// more go on further blocks of rows, so that a page stays at most 2,400
// pixels wide and its legends.
const maxCounterColumns = 4

// counterColumns spreads n runs over as few blocks of at most
// maxCounterColumns columns as it can, as evenly as it can: 7 runs are two
// blocks of 4 and 3, 5 runs two of 3 and 2.
func counterColumns(n int) (cols, blocks int) {
	blocks = (n + maxCounterColumns - 1) / maxCounterColumns
	return (n + blocks - 1) / blocks, blocks
}

// tierXYs are the counters ks of one tier over time, read in one pass over
// the samples, where axis ax draws them.
func tierXYs(series []results.Sample, tier int, ks []counter, ax yAxis) []plotter.XYs {
	out := make([]plotter.XYs, len(ks))
	for k := range out {
		out[k] = make(plotter.XYs, len(series))
	}
	for i, s := range series {
		ts := &s.Tiers[tier]
		for k := range ks {
			c := &ks[k]
			y := c.get(ts)
			if y == 0 && c.gap != nil && c.gap(ts) {
				y = math.NaN()
			} else {
				y = ax.y(y)
			}
			out[k][i] = plotter.XY{X: s.T, Y: y}
		}
	}
	for k := range out {
		out[k] = dropFlat(out[k])
	}
	return out
}

// dropFlat removes, in place, the points inside each run of equal y: a
// line through the run's ends is the same line, and a step counter (a
// connection limit reached, an idle queue) is mostly such runs, so there
// is less to stroke.
func dropFlat(xy plotter.XYs) plotter.XYs {
	if len(xy) < 3 {
		return xy
	}
	out := xy[:1]
	for i := 1; i < len(xy)-1; i++ {
		if y := xy[i].Y; y != xy[i-1].Y || y != xy[i+1].Y {
			out = append(out, xy[i])
		}
	}
	return append(out, xy[len(xy)-1])
}

// niceMax leaves headroom above the largest value and keeps an all-zero
// panel from having an empty range.
func niceMax(m float64) float64 {
	if m <= 0 {
		return 1
	}
	return m * 1.08
}

// gappedLine is a seriesLine that breaks where y is NaN (no value): each
// stretch between two breaks is decimated and stroked as a seriesLine is,
// and a value alone between two breaks is a short dash (one per pixel).
type gappedLine struct {
	xy    plotter.XYs
	style draw.LineStyle
	ext   [4]int
}

func newGappedLine(xy plotter.XYs, style draw.LineStyle) gappedLine {
	return gappedLine{xy, style, extremes(xy)}
}

func (l gappedLine) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	column := func(x float64) int { return pixelOf(trX(x)) }
	half := max(l.style.Width, px(3)) / 2
	last := [2]int{math.MinInt, math.MinInt} // the pixel of the last dash
	for a := 0; a < len(l.xy); {
		if math.IsNaN(l.xy[a].Y) {
			a++
			continue
		}
		b := a + 1
		for b < len(l.xy) && !math.IsNaN(l.xy[b].Y) {
			b++
		}
		var pts []vg.Point
		if b == a+1 {
			pt := vg.Point{X: trX(l.xy[a].X), Y: trY(l.xy[a].Y)}
			if cell := [2]int{pixelOf(pt.X), pixelOf(pt.Y)}; cell != last {
				last = cell
				pts = []vg.Point{{X: pt.X - half, Y: pt.Y}, {X: pt.X + half, Y: pt.Y}}
			}
		} else {
			xy := decimate(l.xy[a:b], column)
			pts = make([]vg.Point, len(xy))
			for i, v := range xy {
				pts[i] = vg.Point{X: trX(v.X), Y: trY(v.Y)}
			}
		}
		a = b
		for _, ln := range c.ClipLinesXY(pts) {
			strokeLong(c, l.style, ln)
		}
	}
}

func (l gappedLine) DataRange() (xmin, xmax, ymin, ymax float64) { return extremeRange(l.xy, l.ext) }

func (l gappedLine) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	r := l.style.Width / 2
	return extremeBoxes(p, l.xy, l.ext, vg.Rectangle{Min: vg.Point{X: -r, Y: -r}, Max: vg.Point{X: r, Y: r}})
}
