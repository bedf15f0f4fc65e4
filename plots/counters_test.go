package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tsim-dev/tsim/results"
)

// drawnNames are the counters plan cp draws of tier i in run r.
func drawnNames(cp *counterPlan, r, i int) []string {
	var out []string
	for k, c := range allCounters {
		if cp.drawn[r][i*len(allCounters)+k] {
			out = append(out, c.name)
		}
	}
	return out
}

// panelGroups are the panels tier i has.
func panelGroups(cp *counterPlan, i int) []string {
	var out []string
	for pi, p := range counterPanels {
		if cp.rowPanels[i][pi] {
			out = append(out, p.group)
		}
	}
	return out
}

// TestCountersFollowTheTiers: a tier has the counters of its host, as
// perfmon.csv writes them: an ASP.NET front end no WCF counters, a
// self-hosted WCF service no ASP.NET ones, a tier that calls nobody no
// connections; without Tiers, the counters that are not zero throughout.
func TestCountersFollowTheTiers(t *testing.T) {
	cp, err := planCounters([]Run{story("broken", true), story("fixed", false)})
	if err != nil {
		t.Fatal(err)
	}
	fe := []string{"Requests Executing", "Requests Queued", "Pipeline Instance Count", "Worker Threads Busy",
		"Requests/Sec", "Request Execution Time (s)", "Request Wait Time (s)",
		"Connections In Use", "Requests Waiting For A Connection", "% Processor Time"}
	be := []string{"Requests Executing", "Requests Queued", "Calls Outstanding", "Instances", "I/O Threads Busy",
		"Calls Per Second", "Calls Duration (s)", "% Processor Time"}
	for r := range 2 {
		if got := drawnNames(cp, r, 0); !slices.Equal(got, fe) {
			t.Errorf("run %d, ASP.NET front end: %q, want %q", r, got, fe)
		}
		if got := drawnNames(cp, r, 1); !slices.Equal(got, be) {
			t.Errorf("run %d, WCF back end: %q, want %q", r, got, be)
		}
	}
	if got, want := panelGroups(cp, 0), []string{"counts", "rates", "durations", "connections", "CPU"}; !slices.Equal(got, want) {
		t.Errorf("front end's panels %q, want %q", got, want)
	}
	if got, want := panelGroups(cp, 1), []string{"counts", "rates", "durations", "CPU"}; !slices.Equal(got, want) {
		t.Errorf("back end's panels %q, want %q", got, want)
	}

	// Without Tiers: by the data. The story's front end has Calls
	// Outstanding and Calls Per Second values, so they are drawn.
	bare := story("bare", true)
	bare.Run.Tiers, bare.Run.Calls = nil, nil
	cp, err = planCounters([]Run{bare})
	if err != nil {
		t.Fatal(err)
	}
	got := drawnNames(cp, 0, 0)
	for _, want := range []string{"Calls Outstanding", "Calls Per Second", "Pipeline Instance Count", "Connections In Use"} {
		if !slices.Contains(got, want) {
			t.Errorf("without Tiers, the front end draws %q: no %q", got, want)
		}
	}
	for _, not := range []string{"Instances", "Calls Duration (s)", "I/O Threads Busy", "memory held by requests (MB)"} {
		if slices.Contains(got, not) {
			t.Errorf("without Tiers, the front end draws %q, zero throughout", not)
		}
	}
}

// TestCountersPanelMissingInOneRun: a tier that calls out in one variant
// only has a connections panel, empty with a note in the other.
func TestCountersPanelMissingInOneRun(t *testing.T) {
	a, b := story("calls", true), story("calls nobody", false)
	b.Run.Calls = b.Run.Calls[:1] // load → fe only
	for i := range b.Run.Series {
		b.Run.Series[i].Tiers[0].ConnsInUse, b.Run.Series[i].Tiers[0].ConnsWaiting = 0, 0
	}
	cp, err := planCounters([]Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(panelGroups(cp, 0), "connections") {
		t.Fatal("no connections panel for the front end")
	}
	if got := drawnNames(cp, 1, 0); slices.Contains(got, "Connections In Use") {
		t.Errorf("a front end that calls nobody draws %q", got)
	}
	f, err := Counters("x", []Run{a, b})
	if err != nil {
		t.Fatal(err)
	}
	decodePNG(t, f)
}

func TestCountersAxes(t *testing.T) {
	level := func(mean, top float64) counterStats {
		return counterStats{max: top, sum: mean * 100, n: 100, posSum: mean * 100, posN: 100}
	}
	for _, tc := range []struct {
		name string
		kind scaleKind
		sts  []counterStats
		log  bool
		exp  int
	}{
		{"48 executing, 5000 queued", countScale, []counterStats{level(46, 48), level(4900, 5020)}, true, -1},
		{"60 executing, a few queued now and then", countScale, []counterStats{level(30, 65), level(0.3, 10)}, false, 0},
		{"all zero", countScale, []counterStats{{n: 10}}, false, 0},
		{"execution 0.4 s, up to 1.5 s", durationScale, []counterStats{level(0.4, 1.5)}, false, 0},
		{"execution 5 s, wait 20 ms", durationScale, []counterStats{level(5, 14), level(0.02, 1)}, true, -3},
		{"wait in microseconds does not count", durationScale, []counterStats{level(0.45, 3), level(5e-6, 1e-4)}, false, 0},
	} {
		ax := panelAxis(tc.kind, tc.sts)
		if ax.log != tc.log || tc.log && ax.exp != tc.exp {
			t.Errorf("%s: log %v exp %d, want log %v exp %d", tc.name, ax.log, ax.exp, tc.log, tc.exp)
		}
		var top float64
		for _, s := range tc.sts {
			top = max(top, s.max)
		}
		if ax.max < top {
			t.Errorf("%s: axis up to %v, below the largest value %v", tc.name, ax.max, top)
		}
	}
	if ax := panelAxis(percentScale, []counterStats{level(3, 7)}); ax.max != 100 || ax.log {
		t.Errorf("%% Processor Time: %+v, want 0–100", ax)
	}
}

func TestLog1pTicks(t *testing.T) {
	labels := func(exp int, top float64) []string {
		var out []string
		ts := log1pTicks{exp}.Ticks(0, log1p(top, exp))
		for i, tk := range ts {
			if i > 0 && tk.Value < ts[i-1].Value && tk.Label != "" {
				t.Errorf("exp %d: ticks not in order at %v", exp, tk)
			}
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got, want := labels(-1, 6000), []string{"0", "1", "10", "100", "1000"}; !slices.Equal(got, want) {
		t.Errorf("counts: %q, want %q", got, want)
	}
	if got, want := labels(-4, 300), []string{"0", "0.001", "0.01", "0.1", "1", "10", "100"}; !slices.Equal(got, want) {
		t.Errorf("durations: %q, want %q", got, want)
	}
	if got, want := labels(-6, 2e3), []string{"0", "0.00001", "0.001", "0.1", "10", "1000"}; !slices.Equal(got, want) {
		t.Errorf("many decades: %q, want every other one %q", got, want)
	}
	// Zero at the bottom, each decade a step up.
	if log1p(0, -1) != 0 || !(log1p(1, -1) < log1p(10, -1) && log1p(10, -1) < log1p(100, -1)) {
		t.Error("log1p is not increasing from 0")
	}
}

// TestCounterLegendFits lays the legend of every counter out at the
// picture's widths: no row is wider than the picture, a heading never ends
// a row, and every entry is there once.
func TestCounterLegendFits(t *testing.T) {
	var groups []legendGroup
	n := 0
	for _, p := range counterPanels {
		g := legendGroup{heading: p.group}
		for _, c := range p.counters {
			g.entries = append(g.entries, legendEntry{c.name, &plotter.Line{LineStyle: counterStyle(c)}})
			n++
		}
		groups = append(groups, g)
	}
	for _, w := range []float64{600, 1200, 1800, 2400} {
		rows := layoutLegend(px(w-16), groups)
		seen := 0
		for r, row := range rows {
			var width vg.Length
			for i, it := range row {
				width += it.w
				if i > 0 {
					width += legendSpace(it)
				}
				if !it.heading {
					seen++
				}
			}
			if width > px(w-16) {
				t.Errorf("%v px: row %d is %.0f px wide", w, r, float64(width/px(1)))
			}
			if row[len(row)-1].heading {
				t.Errorf("%v px: row %d ends in the heading %q", w, r, row[len(row)-1].label)
			}
		}
		if seen != n {
			t.Errorf("%v px: %d entries laid out, want %d", w, seen, n)
		}
		if w == 1200 && len(rows) > 4 {
			t.Errorf("1200 px: %d rows", len(rows))
		}
	}
}

// TestDurationGaps draws a duration with no value in the middle third of
// the run but one: no pixel of its colour there but the one value's dash.
func TestDurationGaps(t *testing.T) {
	var xy plotter.XYs
	for i := range 900 {
		y := 1 + 0.5*math.Sin(float64(i)/20)
		if i >= 300 && i < 600 && i != 450 {
			y = math.NaN()
		}
		xy = append(xy, plotter.XY{X: float64(i), Y: y})
	}
	p := newPlot("", "", "")
	col := color.RGBA{0x00, 0x72, 0xB2, 0xff}
	p.Add(newGappedLine(xy, draw.LineStyle{Color: col, Width: px(3)}))
	p.X.Min, p.X.Max = 0, 899
	p.Y.Min, p.Y.Max = 0, 2
	f := &Figure{Width: px(1000), Height: px(300), title: "t"}
	f.draw = func(c draw.Canvas) { drawGrid(c, [][]*plot.Plot{{p}}, []float64{1}, 0, 0) }
	im := decodePNG(t, f)
	tops := topOf(im, col, 40)
	var cols []int
	for x, y := range tops {
		if y >= 0 {
			cols = append(cols, x)
		}
	}
	if len(cols) == 0 {
		t.Fatal("nothing drawn")
	}
	first, last := cols[0], cols[len(cols)-1]
	span := float64(last - first)
	var inGap []int
	for _, x := range cols {
		if rel := float64(x-first) / span; rel > 0.34 && rel < 0.66 {
			inGap = append(inGap, x)
		}
	}
	if len(inGap) == 0 || inGap[len(inGap)-1]-inGap[0] > 6 {
		t.Errorf("columns %v drawn in the gap; want only the dash of the one value there", inGap)
	}
	if mid := float64(first) + span/2; len(inGap) > 0 && math.Abs(float64(inGap[0])-mid) > 5 {
		t.Errorf("the lone value's dash is at column %d, want about %.0f", inGap[0], mid)
	}
}

// TestCounterTitlesSayWhatATierIs: a tier's title names its host, and the
// figure draws for runs with and without Tiers.
func TestCounterTitlesSayWhatATierIs(t *testing.T) {
	r := story("v", true)
	for i, want := range []string{"ASP.NET classic pipeline, .NET 3.5", "WCF self-hosted, .NET 3.5"} {
		if got := tierInfoOf(r.Run, i, r.Run.TierNames[i]).desc; got != want {
			t.Errorf("tier %d: %q, want %q", i, got, want)
		}
	}
	if got := tierHead("svc", "sync", true, tierInfo{desc: "WCF in IIS integrated pipeline, .NET 3.5"}); !strings.HasPrefix(got, "svc — sync (WCF in IIS") {
		t.Errorf("head %q", got)
	}
	farm := &results.Run{TierNames: []string{"web"}, Tiers: []results.Tier{{Name: "web", Host: "iis-integrated", DotNet: "4.0", Replicas: 3}}}
	if got, want := tierInfoOf(farm, 0, "web").desc, "IIS integrated pipeline, .NET 4.0, farm of 3 machines: totals"; got != want {
		t.Errorf("farm: %q, want %q", got, want)
	}
	// A farm's machines after its tiers (the reports' PerReplica).
	farm.TierNames = append(farm.TierNames, "web#1", "web#2", "web#3")
	for k := 1; k <= 3; k++ {
		farm.Replicas = append(farm.Replicas, results.Tier{Name: fmt.Sprintf("web#%d", k), Host: "iis-integrated", DotNet: "4.0"})
	}
	farm.ReplicaCalls = []results.Call{{From: "web#2", To: "db"}}
	if info := tierInfoOf(farm, 2, "web#2"); !info.known || !info.aspnet || !info.calls || info.desc != "IIS integrated pipeline, .NET 4.0" {
		t.Errorf("machine web#2: %+v", info)
	}
	if info := tierInfoOf(farm, 3, "web#3"); !info.known || info.calls {
		t.Errorf("machine web#3: %+v", info)
	}
	if info := tierInfoOf(&results.Run{}, 0, "fe"); info.known {
		t.Error("a run without Tiers says something of its tiers")
	}
}

func TestDropFlat(t *testing.T) {
	nan := math.NaN()
	ys := []float64{2, 2, 2, 3, 3, 3, 3, 2, nan, nan, 2, 2, 2}
	var xy plotter.XYs
	for i, y := range ys {
		xy = append(xy, plotter.XY{X: float64(i), Y: y})
	}
	var got []float64
	for _, v := range dropFlat(xy) {
		got = append(got, v.X)
	}
	if want := []float64{0, 2, 3, 6, 7, 8, 9, 10, 12}; !slices.Equal(got, want) {
		t.Errorf("kept the points at %v, want %v", got, want)
	}
}
