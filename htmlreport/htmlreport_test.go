package htmlreport

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// TestVendoredUPlot: the embedded library is the one VERSION names.
func TestVendoredUPlot(t *testing.T) {
	v, err := os.ReadFile("vendor/uplot/VERSION")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"uPlot.iife.min.js", "uPlot.min.css", "LICENSE"} {
		b, err := os.ReadFile("vendor/uplot/" + name)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if !strings.Contains(string(v), name+"  sha256 "+hex.EncodeToString(sum[:])) &&
			!regexp.MustCompile(regexp.QuoteMeta(name)+` +sha256 `+hex.EncodeToString(sum[:])).Match(v) {
			t.Errorf("vendor/uplot/%s: sha256 %x is not the one vendor/uplot/VERSION gives", name, sum)
		}
	}
	if !strings.Contains(uplotJS, "(v1.6.32)") || !strings.Contains(string(v), "uplot 1.6.32") {
		t.Errorf("the embedded uPlot is not the version VERSION names")
	}
}

// synthetic is an experiment of two variants and tiers tiers, with n
// samples and points each, for tests that need no simulation.
func synthetic(tiers, n int) *results.Experiment {
	r := &results.Experiment{Name: "synthetic", File: "synthetic.toml", Seed: 7, Replications: 1, Mode: "sim"}
	for v, name := range []string{"a", "b"} {
		run := &results.Run{Duration: float64(n)}
		for i := range tiers {
			tn := "t" + itoa(i)
			run.TierNames = append(run.TierNames, tn)
			run.Tiers = append(run.Tiers, results.Tier{Name: tn, Cores: 4, Host: "aspnet-classic", DotNet: "4.0", WCF: i > 0})
			if i > 0 {
				run.Calls = append(run.Calls, results.Call{From: "t" + itoa(i-1), To: tn, Limit: 2, Resolution: "2: the default", WaitingMean: 3, InUseMean: 2})
			}
		}
		for k := range n {
			s := results.Sample{T: float64(k)}
			for i := range tiers {
				x := float64((k*7+i*3+v)%11) + 0.5
				s.Tiers = append(s.Tiers, results.TierSample{Executing: x, Queued: x / 2, CPU: 10 + x, RequestsPerS: x, ExecTimeMS: 100 * x, ConnsInUse: 2, ConnsWaiting: x / 3})
			}
			run.Series = append(run.Series, s)
			run.Points = append(run.Points, results.Point{T: float64(k) + 0.25, Latency: 0.1 + float64(k%13)/10, Outcome: results.Outcome(k % 29 / 28)})
		}
		agg := results.Aggregate{DurationS: float64(n), ThroughputPerS: 10 + float64(v), GoodputPerS: 9 + float64(v), Tiers: run.Tiers, Calls: run.Calls,
			Requests: results.Counts{Generated: 100, Completed: 99, TimedOut: 1}, Latency: results.Latency{Mean: 0.5, P50: 0.4, P90: 0.9, P99: 1.2, Max: 1.3}, FirstTimeoutS: -1}
		for q := 1; q <= 999; q++ {
			agg.Quantiles = append(agg.Quantiles, 0.1+float64(q)/1000)
		}
		r.Scenarios = append(r.Scenarios, &results.Scenario{Index: v, Variant: name, Agg: agg, First: run})
	}
	r.Finished = len(r.Scenarios)
	return r
}

// pageData returns the charts a page holds.
func pageData(t *testing.T, page []byte) []Chart {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="tsim-data">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("no tsim-data in the page")
	}
	var d struct{ Charts []Chart }
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("tsim-data: %v", err)
	}
	return d.Charts
}

func TestReportHoldsTablesAndCharts(t *testing.T) {
	r := synthetic(3, 50)
	b, err := Report(r, Options{Warnings: []string{"latency.png not drawn: <test>"}})
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<title>tsim: synthetic</title>", "latency.png not drawn: &lt;test&gt;", "t0 → t1: 2: the default",
		`id="counters"`, "Requests Executing", "What binds", "the connection limit of 2 binds"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	charts := pageData(t, b)
	ids := map[string]bool{}
	for _, c := range charts {
		ids[c.ID] = true
	}
	for _, v := range []string{"a", "b"} {
		for _, tier := range []string{"t0", "t1", "t2"} {
			for _, p := range []string{"counts", "rates", "durations", "cpu"} {
				if id := "counters/" + v + "/" + tier + "/" + p; !ids[id] {
					t.Errorf("no chart %s", id)
				}
			}
		}
		if !ids["latency/"+v] {
			t.Errorf("no chart latency/%s", v)
		}
	}
	if !ids["cdf"] || !ids["counters/a/t0/connections"] || ids["counters/a/t2/connections"] {
		t.Errorf("cdf, or connections of the calling tier only: %v", ids)
	}
	// No code or data from the network: no external script, style, image
	// or request in the page (the vendored library's banner names its
	// home page in a comment).
	for _, re := range []string{`(?i)<script[^>]+src=`, `(?i)<link[^>]+href=`, `(?i)<img`, `(?i)@import`, `\bfetch\(`, `XMLHttpRequest`, `(?i)url\(\s*['"]?https?:`} {
		if loc := regexp.MustCompile(re).FindStringIndex(page); loc != nil {
			t.Errorf("the page has %q: %q", re, page[max(0, loc[0]-40):min(len(page), loc[1]+40)])
		}
	}
}

func TestReportIsDeterministic(t *testing.T) {
	a, err := Report(synthetic(4, 300), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Report(synthetic(4, 300), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the same results gave two different pages")
	}
}

// TestPageIsBounded: a run of many tiers and long series stays within the
// budget, each series keeping its extremes.
func TestPageIsBounded(t *testing.T) {
	r := synthetic(60, 4096)
	// A spike of one sample on the last tier.
	r.Scenarios[0].First.Series[1234].Tiers[59].Executing = 1000
	b, err := Report(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	var spike bool
	for _, c := range pageData(t, b) {
		total += c.points()
		if c.ID == "counters/a/t59/counts" {
			for _, v := range c.Frames[0].Y[0] {
				spike = spike || v == 1000
			}
			if n := len(c.Frames[0].X); n >= 4096 || n < minRows {
				t.Errorf("%s: %d rows", c.ID, n)
			}
		}
	}
	if total > DefaultBudget+DefaultBudget/10 {
		t.Errorf("%d chart values, budget %d", total, DefaultBudget)
	}
	if !spike {
		t.Error("the spike of one sample was thinned away")
	}
	if len(b) > 8<<20 {
		t.Errorf("page of %d bytes", len(b))
	}
	t.Logf("60 tiers × 4096 samples × 2 variants: %d chart values, %d bytes", total, len(b))
}

func TestDecimateKeepsExtremesInOrder(t *testing.T) {
	f := Frame{}
	for i := range 1000 {
		f.X = append(f.X, float64(i))
	}
	y := make(Column, 1000)
	for i := range y {
		y[i] = float64(i % 10)
	}
	y[500], y[501] = -5, math.NaN()
	f.Y = []Column{y}
	d := decimate(f, 100)
	if len(d.X) != 100 || len(d.Y[0]) != 100 {
		t.Fatalf("%d rows", len(d.X))
	}
	for i := 1; i < len(d.X); i++ {
		if !(d.X[i] > d.X[i-1]) {
			t.Fatalf("x not ascending at %d", i)
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range d.Y[0] {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo != -5 || hi != 9 {
		t.Errorf("range %g..%g, want -5..9", lo, hi)
	}
	if g := decimate(f, 2000); len(g.X) != 1000 {
		t.Errorf("a frame that fits was changed")
	}
}

func TestThinScatterKeepsOutliers(t *testing.T) {
	var xs, ys []float64
	for i := range 20000 {
		xs = append(xs, float64(i)/100)
		ys = append(ys, 0.1+float64(i%7)/100)
	}
	ys[12345] = 20 // a timeout among completions
	fx, fy := thinScatter(xs, ys, 480, 160)
	if len(fx) >= 20000/4 {
		t.Errorf("kept %d of 20000", len(fx))
	}
	found := false
	for i := range fx {
		found = found || (fy[i] == 20 && fx[i] == xs[12345])
	}
	if !found {
		t.Error("the outlier was dropped")
	}
	for i := 1; i < len(fx); i++ {
		if !(fx[i] > fx[i-1]) {
			t.Fatalf("x not strictly ascending at %d", i)
		}
	}
}

func TestColumnJSON(t *testing.T) {
	b, err := json.Marshal(Column{0, math.Copysign(0, -1), 1, -2.5, 1.0 / 3, 1e7, 123456789.5, math.NaN(), math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "[0,0,1,-2.5,0.333333,1e+07,1.23457e+08,null,null]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestBadChartIsAnError(t *testing.T) {
	p := &Page{Title: "x"}
	s := p.Add(&Section{ID: "s", Title: "s"})
	s.Add(Block{Charts: &Grid{Charts: []*Chart{{ID: "c", Series: []Series{{Label: "y"}}, Frames: []Frame{{X: Exact{1, 1}, Y: []Column{{1, 2}}}}}}}})
	if _, err := p.HTML(); err == nil || !strings.Contains(err.Error(), "not ascending") {
		t.Errorf("got %v", err)
	}
}

// A sweep's page draws the three curves against the first axis, with
// confidence bars when there are replications.
func TestSweepPage(t *testing.T) {
	r := &results.Experiment{Name: "sw", File: "sw.toml", Seed: 1, Replications: 3, Mode: "sim",
		Sweep: []results.Axis{{Key: "tier.web.calls.maxconnection", Values: []string{"2", "8", "64"}}}}
	for i, v := range []string{"2", "8", "64"} {
		h := 0.1 * float64(i+1)
		a := results.Aggregate{GoodputPerS: float64(i + 1), ThroughputPerS: float64(i + 1), TimeoutRate: 0.5 / float64(i+1),
			Latency: results.Latency{P99: 1}, Requests: results.Counts{Completed: 10}, FirstTimeoutS: -1,
			CI: &results.Intervals{GoodputPerS: &h, ThroughputPerS: &h, TimeoutRate: &h, LatencyP99S: &h}}
		r.Scenarios = append(r.Scenarios, &results.Scenario{Index: i, Variant: "base", Params: []results.Param{{Key: r.Sweep[0].Key, Value: v}}, Agg: a})
	}
	r.Finished = 3
	b, err := Report(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Chart{}
	for _, c := range pageData(t, b) {
		got[c.ID] = c
	}
	g := got["sweep/goodput"]
	if len(g.Series) != 2 || g.X.Scale != "log" || len(g.Series[0].Err) != 3 || g.Series[0].Err[2] != 0.3 {
		t.Errorf("sweep/goodput: %+v", g)
	}
	if to := got["sweep/timeouts"]; len(to.Series) != 1 || to.Frames[0].Y[0][0] != 50 || *to.Series[0].ErrMax != 100 {
		t.Errorf("sweep/timeouts: %+v", to)
	}
	if _, ok := got["sweep/p99"]; !ok {
		t.Error("no sweep/p99")
	}
	if !strings.Contains(string(b), "<td class=\"\">64</td>") {
		t.Error("the summary lacks the sweep's values")
	}
}
