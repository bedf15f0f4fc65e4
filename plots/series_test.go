package plots

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tsim-dev/tsim/results"
)

// TestDecimateKeepsEveryColumnsExtremes checks decimate against the raw
// data: for every column, the same lowest and highest value, the same first
// and last point, at most four points, in the raw order.
func TestDecimateKeepsEveryColumnsExtremes(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 16))
	const n, cols = 100_000, 517
	xy := make(plotter.XYs, n)
	y := 0.0
	for i := range xy {
		y += rng.NormFloat64()
		if rng.IntN(5000) == 0 {
			y += 50 * rng.NormFloat64() // a jump now and then
		}
		xy[i] = plotter.XY{X: float64(i) / (n - 1) * 300, Y: y}
	}
	xy[54_321].Y += 1000 // a spike of one sample
	column := func(x float64) int { return int(math.Floor(x / 300 * (cols - 0.001))) }
	got := decimate(xy, column)

	type stats struct {
		n                  int
		lo, hi             float64
		first, last        plotter.XY
		firstIdx, lastIdx  int
		seenFirst, seenAny bool
	}
	summarise := func(xy plotter.XYs) map[int]*stats {
		m := map[int]*stats{}
		for i, v := range xy {
			c := column(v.X)
			s := m[c]
			if s == nil {
				s = &stats{lo: v.Y, hi: v.Y, first: v, firstIdx: i}
				m[c] = s
			}
			s.n++
			s.lo, s.hi = min(s.lo, v.Y), max(s.hi, v.Y)
			s.last, s.lastIdx = v, i
		}
		return m
	}
	raw, dec := summarise(xy), summarise(got)
	if len(raw) != cols || len(dec) != cols {
		t.Fatalf("%d raw columns, %d decimated, want %d", len(raw), len(dec), cols)
	}
	for c := range cols {
		r, d := raw[c], dec[c]
		if d.lo != r.lo || d.hi != r.hi || d.first != r.first || d.last != r.last || d.n > 4 {
			t.Errorf("column %d: decimated %d points, min %v max %v first %v last %v; raw %d points, min %v max %v first %v last %v",
				c, d.n, d.lo, d.hi, d.first, d.last, r.n, r.lo, r.hi, r.first, r.last)
		}
	}
	// In order: the decimated points are a subsequence of the raw ones.
	k := 0
	for _, v := range xy {
		if k < len(got) && v == got[k] {
			k++
		}
	}
	if k != len(got) {
		t.Errorf("decimated points are not in the raw order (%d of %d matched)", k, len(got))
	}
	if m := maxY(got); m != xy[54_321].Y {
		t.Errorf("the spike of one sample is lost: max %v, want %v", m, xy[54_321].Y)
	}
	// Few points per column are kept as they are.
	few := xy[:300]
	if got := decimate(few, func(x float64) int { return int(x * 1e6) }); len(got) != len(few) {
		t.Errorf("one point per column: %d kept of %d", len(got), len(few))
	}
}

func maxY(xy plotter.XYs) float64 {
	m := math.Inf(-1)
	for _, v := range xy {
		m = max(m, v.Y)
	}
	return m
}

// spikeRun is one tier whose Requests Executing is flat at 30 for 100,000
// samples but for one sample at 60, and at 60 over the last tenth of the
// run (the plateau shows where 60 is drawn).
func spikeRun(spikeAt int) Run {
	const n = 100_000
	r := &results.Run{Duration: n - 1, FirstTimeout: -1, TierNames: []string{"fe"}}
	r.Series = make([]results.Sample, n)
	tiers := make([]results.TierSample, n)
	for i := range r.Series {
		e := 30.0
		if i == spikeAt || i >= n*9/10 {
			e = 60
		}
		tiers[i] = results.TierSample{Executing: e, CPU: 10}
		r.Series[i] = results.Sample{T: float64(i), Tiers: tiers[i : i+1]}
	}
	return Run{Run: r}
}

// onePage is the one page of pages.
func onePage(t *testing.T, pages []*Figure) *Figure {
	t.Helper()
	if len(pages) != 1 {
		t.Fatalf("%d pages, want 1", len(pages))
	}
	return pages[0]
}

// withoutLegend is tops (topOf's) without the columns of a legend's
// thumbnail right of the panels: the last columns in the colour, at most
// 30 wide, after at least 10 without it.
func withoutLegend(tops []int) []int {
	out := slices.Clone(tops)
	x := len(out) - 1
	for x >= 0 && out[x] < 0 {
		x--
	}
	end := x
	for x >= 0 && out[x] >= 0 {
		x--
	}
	if end-x > 30 {
		return out
	}
	gap := x
	for gap >= 0 && out[gap] < 0 {
		gap--
	}
	if x-gap < 10 || gap < 0 {
		return out
	}
	for i := x + 1; i <= end; i++ {
		out[i] = -1
	}
	return out
}

func decodePNG(t *testing.T, f *Figure) *image.RGBA {
	t.Helper()
	var b bytes.Buffer
	if err := f.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	rgba := image.NewRGBA(im.Bounds())
	for y := im.Bounds().Min.Y; y < im.Bounds().Max.Y; y++ {
		for x := im.Bounds().Min.X; x < im.Bounds().Max.X; x++ {
			rgba.Set(x, y, im.At(x, y))
		}
	}
	return rgba
}

// topOf returns, for each column of pixels, the first row from the top
// (below row skip) in colour col, or -1.
func topOf(im *image.RGBA, col color.Color, skip int) []int {
	want := color.RGBAModel.Convert(col).(color.RGBA)
	b := im.Bounds()
	tops := make([]int, b.Dx())
	for x := range tops {
		tops[x] = -1
		for y := skip; y < b.Dy(); y++ {
			if im.RGBAAt(x, y) == want {
				tops[x] = y
				break
			}
		}
	}
	return tops
}

// TestSpikeOfOneSampleShows draws a counter of 100,000 samples, flat but
// for one sample, and looks for the spike in the pixels: a narrow column of
// the line's colour that reaches as high as the plateau at the same value.
func TestSpikeOfOneSampleShows(t *testing.T) {
	const spikeAt = 54_321
	f, err := Counters("spike", []Run{spikeRun(spikeAt)})
	if err != nil {
		t.Fatal(err)
	}
	im := decodePNG(t, onePage(t, f))
	tops := withoutLegend(topOf(im, palette[0], 100)) // below the title
	first, last := -1, -1
	for x, y := range tops {
		if y >= 0 {
			if first < 0 {
				first = x
			}
			last = x
		}
	}
	if first < 0 {
		t.Fatal("no pixel in the colour of Requests Executing")
	}
	plateau, flat := tops[last-5], tops[first+(last-first)/4]
	if flat-plateau < 100 {
		t.Fatalf("plateau at row %d, flat line at row %d: want them far apart", plateau, flat)
	}
	var spike []int
	for x := first; x < first+(last-first)*8/10; x++ {
		if tops[x] >= 0 && tops[x] <= plateau+2 {
			spike = append(spike, x)
		}
	}
	if len(spike) == 0 {
		t.Fatalf("no column of the line's colour reaches the plateau's height (row %d) before the plateau", plateau)
	}
	if w := spike[len(spike)-1] - spike[0] + 1; w > 8 {
		t.Errorf("the spike is %d pixels wide (columns %d to %d), want a narrow one", w, spike[0], spike[len(spike)-1])
	}
	wantX := float64(first) + float64(last-first)*spikeAt/99_999
	if math.Abs(float64(spike[0])-wantX) > 4 {
		t.Errorf("the spike is at column %d, want about %.0f", spike[0], wantX)
	}
}

// TestTimeoutMarksSurviveDenseDots draws 200,000 completed requests in a
// narrow band and three timeouts: every timeout keeps its red cross.
func TestTimeoutMarksSurviveDenseDots(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := &results.Run{Duration: 300, FirstTimeout: 50}
	for i := range 200_000 {
		r.Points = append(r.Points, results.Point{T: float64(i) * 300 / 200_000, Latency: 1 + 0.2*rng.Float64()})
	}
	for _, ts := range []float64{50, 150, 250} {
		r.Points = append(r.Points, results.Point{T: ts, Latency: 20, Outcome: results.TimedOut})
	}
	r.Requests = results.Counts{Generated: 200_003, Completed: 200_000, TimedOut: 3}
	f, err := Latency("dense", []Run{{Label: "v", Run: r}})
	if err != nil {
		t.Fatal(err)
	}
	im := decodePNG(t, f)
	tops := topOf(im, red, 100)
	var clusters []int
	for x, y := range tops {
		if y >= 0 && (x == 0 || tops[x-1] < 0) {
			clusters = append(clusters, x)
		}
	}
	if len(clusters) != 3 {
		t.Errorf("%d groups of red pixels (at columns %v), want the 3 timeouts' crosses", len(clusters), clusters)
	}
}

func TestThinPoints(t *testing.T) {
	var xy plotter.XYs
	for i := range 1000 {
		xy = append(xy, plotter.XY{X: float64(i % 10), Y: float64(i)})
	}
	cell := func(v plotter.XY) [2]int { return [2]int{int(v.X), 0} }
	got := thinPoints(xy, 3, cell)
	if len(got) != 30 {
		t.Fatalf("kept %d points, want 3 in each of 10 cells", len(got))
	}
	for i, v := range got {
		if v != xy[i] { // the first three of each cell come first
			t.Fatalf("point %d is %v, want %v", i, v, xy[i])
		}
	}
}

// TestStrokeLongMatchesOneStroke draws a long dashed noisy line in pieces
// and in one stroke: the pixels must be all but the same.
func TestStrokeLongMatchesOneStroke(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var xy plotter.XYs
	y := 0.0
	for i := range 2000 {
		y += rng.NormFloat64()
		xy = append(xy, plotter.XY{X: float64(i), Y: y})
	}
	render := func(whole bool) *image.RGBA {
		p := newPlot("", "", "")
		sty := counterStyle(counterPanels[0].counters[6]) // I/O Threads Busy: dashed
		if whole {
			l, err := plotter.NewLine(xy)
			if err != nil {
				t.Fatal(err)
			}
			l.LineStyle = sty
			p.Add(l)
		} else {
			p.Add(newSeriesLine(xy, sty))
		}
		// 4,000 px wide: two points per column, so nothing is decimated.
		f := &Figure{Width: px(4000), Height: px(400), title: "t"}
		f.draw = func(c draw.Canvas) { drawGrid(c, [][]*plot.Plot{{p}}, []float64{1}, 0, 0) }
		return decodePNG(t, f)
	}
	a, b := render(true), render(false)
	differ := 0
	for i := 0; i < len(a.Pix); i += 4 {
		d := 0
		for k := range 3 {
			d = max(d, absInt(int(a.Pix[i+k])-int(b.Pix[i+k])))
		}
		if d > 64 {
			differ++
		}
	}
	if frac := float64(differ) / float64(len(a.Pix)/4); frac > 1e-4 {
		t.Errorf("%d pixels (%.4f%%) differ by more than a quarter of their range", differ, 100*frac)
	}
}

func absInt(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Runs beyond maxCounterColumns go on further blocks of rows, a page at
// most four columns of 600 pixels and a legend wide.
func TestCountersWidthIsCapped(t *testing.T) {
	for _, tc := range []struct {
		runs, cols, blocks, minW, maxW int
	}{{1, 1, 1, 1200, 1200}, {2, 2, 1, 1300, 1600}, {4, 4, 1, 2500, 2800}, {5, 3, 2, 1900, 2200}, {7, 4, 2, 2500, 2800}, {12, 4, 3, 2500, 2800}} {
		var runs []Run
		for i := range tc.runs {
			runs = append(runs, story(fmt.Sprint("v", i), i%2 == 0))
		}
		pages, err := Counters("x", runs)
		if err != nil {
			t.Fatal(err)
		}
		cols, blocks := counterColumns(tc.runs)
		// Two tiers in each block, three tiers to a page.
		if want := (2*tc.blocks + 2) / 3; cols != tc.cols || blocks != tc.blocks || len(pages) != want {
			t.Errorf("%d runs: %d columns in %d blocks on %d pages; want %d in %d on %d", tc.runs, cols, blocks, len(pages), tc.cols, tc.blocks, want)
		}
		for i, f := range pages {
			if w, _ := f.Pixels(); w < tc.minW || w > tc.maxW {
				t.Errorf("%d runs: page %d is %d px wide, want %d to %d", tc.runs, i+1, w, tc.minW, tc.maxW)
			}
		}
	}
}

func TestPartialFigure(t *testing.T) {
	f, err := Sweep("timeouts", "maxconnection", "%", sweepLines)
	if err != nil {
		t.Fatal(err)
	}
	var whole, part bytes.Buffer
	if err := f.WritePNG(&whole); err != nil {
		t.Fatal(err)
	}
	if h := f.heading(); h != "timeouts" {
		t.Errorf("heading %q", h)
	}
	f.Partial = true
	if err := f.WritePNG(&part); err != nil {
		t.Fatal(err)
	}
	if h := f.heading(); !strings.HasSuffix(h, "(partial: interrupted)") {
		t.Errorf("partial heading %q", h)
	}
	if bytes.Equal(whole.Bytes(), part.Bytes()) {
		t.Error("a partial figure draws the same picture")
	}
}

func TestSweepErrorBarsStayInRange(t *testing.T) {
	l := SweepLine{X: []string{"1", "2", "3", "4"}, Y: []float64{0.5, 50, 99, -2}, Err: []float64{2, 3, 3, 1}, Max: 100}
	for k, want := range [][2]float64{{0.5, 2}, {3, 3}, {3, 1}, {1, 1}} {
		if lo, hi := l.errRange(k); lo != want[0] || hi != want[1] {
			t.Errorf("point %d (%v ± %v): bar -%v +%v, want -%v +%v", k, l.Y[k], l.Err[k], lo, hi, want[0], want[1])
		}
	}
	l.Max = 0
	if _, hi := l.errRange(2); hi != 3 {
		t.Errorf("no upper limit: +%v, want +3", hi)
	}
	if _, err := Sweep("t", "k", "timed out (%)", []SweepLine{l}); err != nil {
		t.Error(err)
	}
}

func TestCDFCompletedShare(t *testing.T) {
	q := []float64{0.1, 0.2, 0.3}
	for _, tc := range []struct {
		run  Run
		want float64
		err  string
	}{
		{Run{Run: &results.Run{Quantiles: q}}, 1, ""},
		{Run{Run: &results.Run{Quantiles: q, TimeoutRate: 0.18}}, 0.82, ""},
		{Run{Run: &results.Run{Quantiles: q, TimeoutRate: 0.1, RejectRate: 0.2}}, 0.7, ""},
		{Run{Run: &results.Run{Quantiles: q, TimeoutRate: 0.18}, CompletedShare: 0.5}, 0.5, ""},
		{Run{Run: &results.Run{Quantiles: q}, CompletedShare: 1.5}, 0, "not in (0, 1]"},
		{Run{Run: &results.Run{Quantiles: q, TimeoutRate: math.NaN()}}, 0, "is NaN"},
	} {
		got, err := tc.run.completed()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%+v: error %v, want %q", tc.run, err, tc.err)
			}
			continue
		}
		if err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%+v: share %v (%v), want %v", tc.run, got, err, tc.want)
		}
		if _, err := LatencyCDF("t", []Run{tc.run}); err != nil {
			t.Error(err)
		}
	}
}

func TestCurveStylesAreDistinct(t *testing.T) {
	seen := map[string]int{}
	for i := range 36 {
		s := curveStyle(i)
		k := fmt.Sprint(s.Color, s.Dashes)
		if j, ok := seen[k]; ok {
			t.Errorf("curves %d and %d look the same: %s", j, i, k)
		}
		seen[k] = i
	}
}
