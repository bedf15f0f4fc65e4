package htmlreport_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim"
	"github.com/tsim-dev/tsim/htmlreport"
)

// The pages of tsim plan, calibrate, fit and validate, written as the
// commands write them (the library's WriteFiles), and report.html's USL
// fit and load-test comparison.

// writeInto writes a command's files into root/name and returns the
// folder.
func writeInto(t *testing.T, root, name string, write func(*tsim.Output) ([]string, []string, error)) string {
	t.Helper()
	out, err := tsim.OpenOutput(root, name)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, _, err := write(out); err != nil {
		t.Fatal(err)
	}
	return out.Path()
}

// planPage runs tsim plan on crack-throttling (the smallest maxconnection
// with p99 under 4 s, bisected over 1..16, two replications of 20 s) and
// writes its files under root.
func planPage(t *testing.T, root string) string {
	t.Helper()
	e, err := tsim.Load("../experiments/crack-throttling.toml")
	if err != nil {
		t.Fatal(err)
	}
	goal, err := tsim.ParseGoal("p99<4s")
	if err != nil {
		t.Fatal(err)
	}
	vary, err := tsim.ParseVaries([]string{"tier.web.calls.maxconnection=1..16"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := tsim.Plan(context.Background(), e, tsim.PlanOptions{Goal: goal, Vary: vary, Duration: "60s", Reps: 2})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(writeInto(t, root, "plan", r.WriteFiles), htmlreport.PlanFileName)
}

// calibrationPage calibrates calibrate's crack story against its capture.
func calibrationPage(t *testing.T, root string) string {
	t.Helper()
	m, err := tsim.ParseMachineMap("FESERVER1=web,BESERVER002=co1wacwb201")
	if err != nil {
		t.Fatal(err)
	}
	c, err := tsim.Calibrate(context.Background(), "../calibrate/testdata/crack/capture.csv", "../calibrate/testdata/crack/field.toml",
		tsim.CalibrateOptions{Machines: m, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(writeInto(t, root, "calibrate", c.WriteFiles), htmlreport.CalibrateFileName)
}

// fitPage fits fit's small specification with six evaluations.
func fitPage(t *testing.T, root string) string {
	t.Helper()
	s, e, err := tsim.LoadFit("../fit/testdata/small.fit", "")
	if err != nil {
		t.Fatal(err)
	}
	r, err := tsim.Fit(context.Background(), e, s, tsim.FitOptions{MaxEvaluations: 6})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(writeInto(t, root, "fit", r.WriteFiles), htmlreport.FitFileName)
}

// TestPagesSameSeedSameBytes: plan.html, calibration.html and fit.html
// come out byte for byte the same from the same files and seed, and hold
// their charts.
func TestPagesSameSeedSameBytes(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(*testing.T, string) string
		chart string
	}{
		{"plan", planPage, `"id":"plan/1-p99"`},
		{"calibrate", calibrationPage, `"id":"calibration/1-web---Processor-Time"`},
		{"fit", fitPage, `"id":"fit/targets"`},
	} {
		a, err := os.ReadFile(c.write(t, t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(c.write(t, t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two pages of the same seed differ (%d and %d bytes)", c.name, len(a), len(b))
		}
		if !bytes.Contains(a, []byte(c.chart)) {
			t.Errorf("%s: no chart %s in the page", c.name, c.chart)
		}
		if m := remoteRe.Find(a); m != nil {
			t.Errorf("%s: the page loads %s: it must open with no network", c.name, m)
		}
		t.Logf("%s: %d bytes", c.name, len(a))
	}
}

// remoteRe finds what would make a page fetch from the network: an
// element's source or link, a style's url() or import.
var remoteRe = regexp.MustCompile(`(?i)((src|href)\s*=\s*["']?|url\(\s*["']?|@import\s+["']?)(https?:)?//`)

// chartsOf returns the series of each chart the page drew.
func chartsOf(st *pageStatus) map[string][]string {
	got := map[string][]string{}
	for _, c := range st.Charts {
		got[c.ID] = c.Series
	}
	return got
}

// TestPlanPageInBrowser: plan.html draws the clause's chart with the
// means, bounds, verdicts, goal and answer, and lists every point.
func TestPlanPageInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	page := planPage(t, t.TempDir())
	dom, st := openPage(t, bin, page)
	got := chartsOf(st)
	for _, want := range []string{"mean", "95% bound", "meets the goal", "misses it", "goal: p99 < 4s"} {
		if !slices.Contains(got["plan/1-p99"], want) {
			t.Errorf("plan/1-p99: series %v, want %q among them", got["plan/1-p99"], want)
		}
	}
	if !slices.ContainsFunc(got["plan/1-p99"], func(s string) bool { return strings.HasPrefix(s, "answer") }) {
		t.Errorf("plan/1-p99: no answer among %v", got["plan/1-p99"])
	}
	for _, want := range []string{"Evaluated points", "answer: tier.web.calls.maxconnection = ", "meets goal", "(the answer)"} {
		if !strings.Contains(dom, domText(want)) {
			t.Errorf("plan.html lacks %q", want)
		}
	}
}

// TestCalibrationPageInBrowser: calibration.html draws every compared
// counter, measured and simulated, and has the tables of what was
// written and estimated; its screenshot is the one in docs/img.
func TestCalibrationPageInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	page := calibrationPage(t, t.TempDir())
	dom, st := openPage(t, bin, page)
	n := 0
	for id, series := range chartsOf(st) {
		if !strings.HasPrefix(id, "calibration/") {
			continue
		}
		n++
		if len(series) != 2 || !strings.HasPrefix(series[0], "measured") || !strings.HasPrefix(series[1], "simulated") {
			t.Errorf("%s: series %v, want measured and simulated", id, series)
		}
	}
	// Two tiers, four counters each (CPU, the rate, the level, the duration).
	if n != 8 {
		t.Errorf("%d counters' charts, want 8: %v", n, chartsOf(st))
	}
	for _, want := range []string{"What calibrate wrote", "tier.web.step.1.cpu", "Estimates", "Measured against simulated", "Request Execution Time"} {
		if !strings.Contains(dom, domText(want)) {
			t.Errorf("calibration.html lacks %q", want)
		}
	}
	screenshot(t, bin, page, "calibration-page.png", 2100)
}

// TestFitPageInBrowser: fit.html draws every target in tolerances,
// fitted and predicted, and has the inputs' and targets' tables.
func TestFitPageInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	page := fitPage(t, t.TempDir())
	dom, st := openPage(t, bin, page)
	got := chartsOf(st)
	for _, want := range []string{"fitted", "predicted", "+1 tolerance", "−1 tolerance"} {
		if !slices.Contains(got["fit/targets"], want) {
			t.Errorf("fit/targets: series %v, want %q among them", got["fit/targets"], want)
		}
	}
	for _, want := range []string{"Fitted inputs", "tier.svc.step.1.cpu", "95% interval", "Sensitivity", "χ² = "} {
		if !strings.Contains(dom, domText(want)) {
			t.Errorf("fit.html lacks %q", want)
		}
	}
}

// TestValidatePageInBrowser: validate.html, after a short real run of
// validation/mmc, draws the tier's counters and the latency of both runs
// overlaid and has the figures' table. The real run is not the same twice,
// so its bytes are not compared.
func TestValidatePageInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	e, err := tsim.Load("../experiments/validation/mmc.toml")
	if err != nil {
		t.Fatal(err)
	}
	v, err := tsim.Validate(context.Background(), e, tsim.ValidateOptions{Duration: 10 * time.Second, TimeScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(writeInto(t, t.TempDir(), "mmc", v.WriteFiles), htmlreport.ValidateFileName)
	dom, st := openPage(t, bin, page)
	got := chartsOf(st)
	for id, want := range map[string][]string{
		"validate-base/svc/counts": {"sim: Requests Executing", "real: Requests Executing"},
		"validate-base/latency":    {"sim: completed", "real: completed"},
	} {
		for _, w := range want {
			if !slices.Contains(got[id], w) {
				t.Errorf("%s: series %v, want %q among them", id, got[id], w)
			}
		}
	}
	if _, ok := got["validate-base/cdf"]; !ok {
		t.Errorf("no latency distribution: %v", got)
	}
	for _, want := range []string{"Verdict", "Simulated against real", "goodput", "tolerance"} {
		if !strings.Contains(dom, domText(want)) {
			t.Errorf("validate.html lacks %q", want)
		}
	}
}

// runAll runs e as tsim run does (RunAll: the USL fit and the load
// test's comparison attached) and writes its files.
func runAll(t *testing.T, e *tsim.Experiment, opt tsim.Options) *tsim.Result {
	t.Helper()
	var res *tsim.Result
	err := tsim.RunAll(context.Background(), []*tsim.Experiment{e}, opt, func(f *tsim.Finished) {
		if f.WriteErr != nil {
			t.Errorf("%s: %v", f.Dir, f.WriteErr)
		}
		res = f.Result
	})
	if err != nil || res == nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

// TestReportUSLAndLoadTestInBrowser: report.html of a sweep over a
// connection limit draws the USL fit beside its table, and that of a run
// compared with a load test (--measured) draws the measured latency
// against the simulated, window by window.
func TestReportUSLAndLoadTestInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	root := t.TempDir()
	e, err := tsim.Load("../experiments/crack-throttling-sweep.toml")
	if err != nil {
		t.Fatal(err)
	}
	runAll(t, e, tsim.Options{OutputDir: root})
	dom, st := openPage(t, bin, filepath.Join(root, "crack-throttling-sweep", "report.html"))
	got := chartsOf(st)
	for _, want := range []string{"measured ± interval", "USL fit", "linear scaling λN"} {
		if !slices.Contains(got["usl/1"], want) {
			t.Errorf("usl/1: series %v, want %q among them", got["usl/1"], want)
		}
	}
	for _, want := range []string{"Scalability (USL)", "σ contention", "N*, the peak"} {
		if !strings.Contains(dom, domText(want)) {
			t.Errorf("the sweep's report.html lacks %q", want)
		}
	}

	e, err = tsim.Load("../loadtest/testdata/shop.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := tsim.ReadMeasured("../loadtest/testdata/jmeter.jtl")
	if err != nil {
		t.Fatal(err)
	}
	res := runAll(t, e, tsim.Options{OutputDir: root, Measured: m})
	dom, st = openPage(t, bin, filepath.Join(root, "shop", "report.html"))
	got = chartsOf(st)
	for _, sc := range res.Done() {
		id := "loadtest/" + sc.Variant
		for _, want := range []string{"measured p50", "simulated p50", "measured p99", "simulated p99"} {
			if !slices.Contains(got[id], want) {
				t.Errorf("%s: series %v, want %q among them", id, got[id], want)
			}
		}
		if len(got[id+"/failed"]) != 2 {
			t.Errorf("%s/failed: series %v", id, got[id+"/failed"])
		}
	}
	if !strings.Contains(dom, "Load test against simulated") {
		t.Errorf("the load test's report.html has no comparison")
	}
}
