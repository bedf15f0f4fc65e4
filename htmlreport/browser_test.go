package htmlreport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim"
	"github.com/tsim-dev/tsim/htmlreport"
)

// The browser tests open the pages in headless Chromium (Debian's
// chromium; .ci/run installs it), offline, and read what the page's script
// wrote into #tsim-status once it had drawn every chart: each chart with
// its series, rows and inked pixels, and every error the page met
// (uncaught exceptions and console.error, caught by a script at the top of
// the page). --dump-dom prints the DOM after the load event, which comes
// after the script and the drawing it queued. They save a screenshot of
// the top of each page; with -screenshots DIR they also copy it there
// (go test ./htmlreport -run Browser -args -screenshots ../docs/img).

var screenshots = flag.String("screenshots", "", "copy the browser tests' screenshots into this folder")

// chromiumTimeout is how long one Chromium run may take before the test
// gives up judging: a busy machine, not a failing page.
const chromiumTimeout = 4 * time.Minute

func chromiumPath(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the browser test runs Chromium: not in -short mode")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium; .ci/run installs it)")
	return ""
}

// chromium runs Chromium headless, offline, with a fresh profile, on the
// page at path, with extra flags, and returns its standard output.
func chromium(t *testing.T, bin, path string, extra ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-breakpad",
		"--disable-extensions", "--mute-audio", "--hide-scrollbars",
		// No network: every host name fails to resolve, and a request
		// that got past that would go to a closed port.
		"--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
		"--user-data-dir=" + t.TempDir()}
	args = append(args, extra...)
	args = append(args, "file://"+filepath.ToSlash(abs))
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Skipf("chromium did not finish within %v: the machine is too busy to judge", chromiumTimeout)
	}
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(stderr.String(), 2000))
	}
	return out.Bytes()
}

// domText escapes text as a DOM's serialisation does.
func domText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;").Replace(s)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// pageStatus is what the page's script wrote into #tsim-status.
type pageStatus struct {
	Charts []struct {
		ID     string   `json:"id"`
		Series []string `json:"series"`
		Rows   int      `json:"rows"`
		Ink    int      `json:"ink"`
	} `json:"charts"`
	Pending []string `json:"pending"`
	Errors  []string `json:"errors"`
}

var statusRe = regexp.MustCompile(`(?s)<pre id="tsim-status"[^>]*>(.*?)</pre>`)

// openPage loads the page, checks that its script drew every chart without
// an error, and returns the DOM and the status.
func openPage(t *testing.T, bin, path string) (string, *pageStatus) {
	t.Helper()
	dom := string(chromium(t, bin, path, "--window-size=1400,1000", "--dump-dom"))
	m := statusRe.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("%s: no #tsim-status in the DOM Chromium dumped (%d bytes)", path, len(dom))
	}
	if strings.TrimSpace(m[1]) == "" {
		t.Fatalf("%s: the page's script wrote no status: it did not run to its end", path)
	}
	var st pageStatus
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &st); err != nil {
		t.Fatalf("%s: #tsim-status: %v", path, err)
	}
	for _, e := range st.Errors {
		t.Errorf("%s: error in the page: %s", path, e)
	}
	if len(st.Pending) > 0 {
		t.Errorf("%s: charts not drawn: %v", path, st.Pending)
	}
	for _, c := range st.Charts {
		if len(c.Series) > 0 && (c.Rows == 0 || c.Ink <= 0) {
			t.Errorf("%s: chart %s drew nothing (%d rows, %d pixels inked)", path, c.ID, c.Rows, c.Ink)
		}
	}
	return dom, &st
}

// screenshot saves the top of the page as name in a temporary folder and,
// with -screenshots, in that folder, and checks that it is a picture of
// something.
func screenshot(t *testing.T, bin, path, name string, height int) {
	t.Helper()
	shot := filepath.Join(t.TempDir(), name)
	chromium(t, bin, path, "--window-size=1400,"+strconv.Itoa(height), "--screenshot="+shot)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if w := img.Bounds().Dx(); w != 1400 {
		t.Errorf("screenshot %d pixels wide, want 1400", w)
	}
	colours := map[uint32]bool{}
	for y := 0; y < img.Bounds().Dy(); y += 7 {
		for x := 0; x < img.Bounds().Dx(); x += 7 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>12<<8|g>>12<<4|b>>12] = true
		}
	}
	if len(colours) < 8 {
		t.Errorf("screenshot of %d colours: blank?", len(colours))
	}
	t.Logf("screenshot %s (%d bytes)", shot, len(b))
	if *screenshots != "" {
		if err := os.WriteFile(filepath.Join(*screenshots, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runCrack runs experiments/crack-throttling.toml with opt into a
// temporary folder and returns the result and its folder.
func runCrack(t *testing.T, opt tsim.Options) (*tsim.Result, string) {
	t.Helper()
	e, err := tsim.Load("../experiments/crack-throttling.toml")
	if err != nil {
		t.Fatal(err)
	}
	opt.OutputDir = t.TempDir()
	res, err := tsim.Run(context.Background(), e, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res, filepath.Join(opt.OutputDir, "crack-throttling")
}

// TestReportInBrowser: tsim run experiments/crack-throttling.toml writes a
// report.html in which Chromium, offline, finds every tier's charts with
// their counters, each variant's latency, the distribution, the tables
// and the connection-limit resolutions, with no error.
func TestReportInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	res, dir := runCrack(t, tsim.Options{})
	page := filepath.Join(dir, "report.html")
	dom, st := openPage(t, bin, page)

	got := map[string][]string{}
	for _, c := range st.Charts {
		got[c.ID] = c.Series
	}
	var variants []string
	for _, sc := range res.Done() {
		variants = append(variants, sc.Variant)
		for _, tier := range sc.First.TierNames {
			for _, want := range [][2]string{{"counts", "Requests Executing"}, {"rates", ""}, {"durations", ""}, {"cpu", "% Processor Time"}} {
				id := "counters/" + sc.Variant + "/" + tier + "/" + want[0]
				series, ok := got[id]
				switch {
				case !ok:
					t.Errorf("no chart %s drawn", id)
				case want[1] != "" && !slices.Contains(series, want[1]):
					t.Errorf("chart %s: series %v, want %q among them", id, series, want[1])
				}
			}
			if tier != "backend" {
				id := "counters/" + sc.Variant + "/" + tier + "/connections"
				if !slices.Contains(got[id], "Requests Waiting For A Connection") {
					t.Errorf("chart %s: series %v", id, got[id])
				}
			}
		}
		if !slices.Contains(got["latency/"+sc.Variant], "completed") {
			t.Errorf("latency/%s: series %v", sc.Variant, got["latency/"+sc.Variant])
		}
		// The tables: each tier's rows, and every resolution text.
		for _, tier := range sc.Agg.Tiers {
			if !strings.Contains(dom, "<td class=\"\">"+tier.Name+"</td>") {
				t.Errorf("no table row of tier %s", tier.Name)
			}
		}
		for _, c := range sc.Agg.Calls {
			if want := domText(c.From + " → " + c.To + ": " + c.Resolution); !strings.Contains(dom, want) {
				t.Errorf("the resolution %q is not in the page", want)
			}
		}
	}
	if !slices.Contains(got["latency/misconfigured"], "timed out") {
		t.Errorf("latency/misconfigured: series %v, want timed out among them", got["latency/misconfigured"])
	}
	if len(got["cdf"]) != len(variants) {
		t.Errorf("cdf: series %v, want one per variant %v", got["cdf"], variants)
	}
	for _, want := range []string{"Summary", "What binds", "the connection limit of 2 binds", "Levels (mean / max over the measured period)"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	t.Logf("%d charts drawn", len(st.Charts))
	screenshot(t, bin, page, "report-crack-throttling.png", 2000)
}

// TestReportSameSeedSameBytes: two runs of one file and seed write the same
// report.html, whatever the number of workers.
func TestReportSameSeedSameBytes(t *testing.T) {
	_, a := runCrack(t, tsim.Options{Workers: 1, Replications: 2})
	_, b := runCrack(t, tsim.Options{Workers: 2, Replications: 2})
	pa, err := os.ReadFile(filepath.Join(a, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := os.ReadFile(filepath.Join(b, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pa, pb) {
		t.Errorf("two runs of the same seed wrote different report.html (%d and %d bytes)", len(pa), len(pb))
	}
	if len(pa) > 2<<20 {
		t.Errorf("report.html of crack-throttling is %d bytes", len(pa))
	}
}

// TestDiffInBrowser: tsim diff of the two variants of crack-throttling
// (three replications) says which figures changed beyond their
// intervals, and Chromium finds both runs' charts overlaid in diff.html.
func TestDiffInBrowser(t *testing.T) {
	bin := chromiumPath(t)
	_, dir := runCrack(t, tsim.Options{Replications: 3})
	cmp, err := htmlreport.Diff(htmlreport.Side{Dir: dir, Variant: "misconfigured"}, htmlreport.Side{Dir: dir, Variant: "fixed"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Pairs) != 1 {
		t.Fatalf("%d pairs", len(cmp.Pairs))
	}
	verdicts := map[string]htmlreport.Verdict{}
	for _, f := range cmp.Pairs[0].Figures {
		verdicts[f.Name] = f.Verdict()
	}
	for _, name := range []string{"goodput/s", "throughput/s", "latency mean", "latency p99"} {
		if verdicts[name] != htmlreport.BeyondCI {
			t.Errorf("%s: verdict %d, want beyond the intervals", name, verdicts[name])
		}
	}
	var text bytes.Buffer
	if err := cmp.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"misconfigured → fixed", "beyond ±", "A: web → service: the connection limit of 2 binds", "B: nothing queued"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, text.String())
		}
	}
	b, err := cmp.Page().HTML()
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "diff.html")
	if err := os.WriteFile(page, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, st := openPage(t, bin, page)
	got := map[string][]string{}
	for _, c := range st.Charts {
		got[c.ID] = c.Series
	}
	for _, tier := range []string{"web", "service", "backend"} {
		s := got["diff/1/"+tier+"/counts"]
		if !slices.Contains(s, "A: Requests Executing") || !slices.Contains(s, "B: Requests Executing") {
			t.Errorf("diff/1/%s/counts: series %v, want both runs' Requests Executing", tier, s)
		}
	}
	if s := got["diff/1/latency"]; !slices.Contains(s, "A: timed out") || !slices.Contains(s, "B: completed") {
		t.Errorf("diff/1/latency: series %v", s)
	}
	if s := got["diff/cdf"]; len(s) != 2 {
		t.Errorf("diff/cdf: series %v, want A's and B's", s)
	}
	screenshot(t, bin, page, "diff-crack-throttling.png", 1400)
}
