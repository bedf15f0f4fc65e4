package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
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
	decodePNG(t, onePage(t, f))
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
// Each row's legend names the counters its panels draw, says which a
// wider line hides and which lie on the axis, and fits in its row.
func TestCounterLegends(t *testing.T) {
	cp, err := planCounters([]Run{story("broken", true), story("fixed", false)})
	if err != nil {
		t.Fatal(err)
	}
	rows := cp.pageRows([]counterUnit{{0, 0, 2}, {1, 0, 2}})
	legend := func(tier int, group string) map[string]string {
		for _, r := range rows {
			if r.tier == tier && counterPanels[r.panel].group == group {
				m := map[string]string{}
				for _, l := range r.legend {
					m[l.c.name] = l.note
				}
				return m
			}
		}
		t.Fatalf("tier %d has no %s row", tier, group)
		return nil
	}
	// The back end: executing, outstanding, instances and I/O threads
	// busy are all 2 throughout; nothing is queued.
	be := legend(1, "counts")
	for name, want := range map[string]string{
		"Requests Executing": "", "Calls Outstanding": "= Requests Executing", "Instances": "= Requests Executing",
		"I/O Threads Busy": "= Requests Executing", "Requests Queued": "0 throughout",
	} {
		if got, ok := be[name]; !ok || got != want {
			t.Errorf("back end's counts legend: %q says %q (listed: %v), want %q", name, got, ok, want)
		}
	}
	if len(be) != 5 {
		t.Errorf("back end's counts legend: %v, want 5 counters", be)
	}
	// The front end: both variants' executing counts differ from the
	// pipelines'.
	if fe := legend(0, "counts"); fe["Pipeline Instance Count"] != "" || fe["Worker Threads Busy"] != "= Requests Executing" {
		t.Errorf("front end's counts legend: %v", fe)
	}
	for _, r := range rows {
		if r.tier < 0 {
			continue
		}
		if h := legendHeight(r.legend) + legendRoomPx; r.height < h {
			t.Errorf("tier %d, %s: row %v px tall, its legend needs %v", r.tier, counterPanels[r.panel].group, r.height, h)
		}
		// Colours distinct within a row.
		seen := map[color.Color]string{}
		for _, l := range r.legend {
			if o, ok := seen[l.c.color]; ok {
				t.Errorf("tier %d, %s: %q and %q share a colour", r.tier, counterPanels[r.panel].group, o, l.c.name)
			}
			seen[l.c.color] = l.c.name
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
		if got := r.Run.TierInfo(i, r.Run.TierNames[i]).Title(false); got != want {
			t.Errorf("tier %d: %q, want %q", i, got, want)
		}
	}
	if got := tierHead("svc", "sync", true, results.TierInfo{Known: true, Kind: "WCF in IIS integrated pipeline, .NET 3.5"}); !strings.HasPrefix(got, "svc — sync (WCF in IIS") {
		t.Errorf("head %q", got)
	}
	farm := &results.Run{TierNames: []string{"web"}, Tiers: []results.Tier{{Name: "web", Host: "iis-integrated", DotNet: "4.0", Replicas: 3}}}
	if got, want := farm.TierInfo(0, "web").Title(false), "IIS integrated pipeline, .NET 4.0, farm of 3 machines: totals"; got != want {
		t.Errorf("farm: %q, want %q", got, want)
	}
	// A farm's machines after its tiers (the reports' PerReplica).
	farm.TierNames = append(farm.TierNames, "web#1", "web#2", "web#3")
	for k := 1; k <= 3; k++ {
		farm.Replicas = append(farm.Replicas, results.Tier{Name: fmt.Sprintf("web#%d", k), Host: "iis-integrated", DotNet: "4.0"})
	}
	farm.ReplicaCalls = []results.Call{{From: "web#2", To: "db"}}
	if info := farm.TierInfo(2, "web#2"); !info.Known || !info.ASPNet || !info.Calls || info.Title(false) != "IIS integrated pipeline, .NET 4.0" {
		t.Errorf("machine web#2: %+v", info)
	}
	if info := farm.TierInfo(3, "web#3"); !info.Known || info.Calls {
		t.Errorf("machine web#3: %+v", info)
	}
	if info := (&results.Run{}).TierInfo(0, "fe"); info.Known {
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

// A 200-tier chain draws in pages of a few tiers, none larger than a few
// thousand pixels, and a page of it takes the memory of a page of a
// three-tier chain: its lines are made when it is drawn, for its tiers
// only (issue 26: counters.png of 200 tiers was 1,200 × 87,217 pixels
// and 887 MB to draw).
func TestCountersBoundedWhateverTheTiers(t *testing.T) {
	if testing.Short() {
		t.Skip("draws pages of a 200-tier chain")
	}
	allocated := func(f func()) uint64 {
		var a, b runtime.MemStats
		runtime.ReadMemStats(&a)
		f()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	draw := func(f *Figure) func() {
		return func() {
			if err := f.WritePNG(io.Discard); err != nil {
				t.Fatal(err)
			}
		}
	}
	small := []Run{noisyRun("chain", 3, 1200, 4)}
	long := []Run{noisyRun("chain", 200, 1200, 4)}
	few, err := Counters("x", small)
	if err != nil {
		t.Fatal(err)
	}
	var pages []*Figure
	plan := allocated(func() { pages, err = Counters("x", long) })
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 67 {
		t.Errorf("%d pages, want 67 of at most %d tiers", len(pages), unitsPerPage)
	}
	for i, f := range pages {
		if w, h := f.Pixels(); w > 2800 || h > 3000 {
			t.Errorf("page %d is %d × %d pixels", i+1, w, h)
		}
	}
	if !strings.HasPrefix(pages[66].subtitle, "page 67 of 67: tier t198, t199") && !strings.HasPrefix(pages[66].subtitle, "page 67 of 67: tiers t198, t199") {
		t.Errorf("last page's subtitle %q", pages[66].subtitle)
	}
	if plan > 8<<20 {
		t.Errorf("planning the pages allocated %d MB, want them made when drawn", plan>>20)
	}
	// Each drawn once first: the glyphs, text boxes and pixels kept for
	// every picture.
	draw(few[0])()
	want := allocated(draw(few[0]))
	for _, i := range []int{0, 66} {
		draw(pages[i])()
		if got := allocated(draw(pages[i])); float64(got) > 1.5*float64(want) {
			t.Errorf("page %d of the 200-tier chain allocated %d MB drawing, a page of three tiers %d MB", i+1, got>>20, want>>20)
		}
	}
}
