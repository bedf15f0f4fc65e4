package plots

import (
	"bytes"
	"image/png"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// story is a made-up run in the shape of the crack story: fine for 90 s,
// then latencies of 4–12 s and timeouts at 20 s.
// The front end is an ASP.NET application that calls the back end, a
// self-hosted WCF service.
func story(label string, broken bool) Run {
	r := &results.Run{Duration: 300, Warmup: 30, FirstTimeout: -1, TierNames: []string{"fe", "be"},
		Tiers: []results.Tier{{Name: "fe", Host: "aspnet-classic", DotNet: "3.5"}, {Name: "be", Host: "self", DotNet: "3.5", WCF: true}},
		Calls: []results.Call{{From: "load", To: "fe"}, {From: "fe", To: "be"}}}
	for t := 0.0; t <= 300; t += 5 {
		exec := 10 + t/10
		execMS := 100 + 2*t
		if broken && t > 90 {
			exec = 69
			execMS = 4000 + 8000*math.Abs(math.Sin(t))
		}
		if int(t)%50 == 25 {
			execMS = 0 // nothing ended in the interval
		}
		r.Series = append(r.Series, results.Sample{T: t, Tiers: []results.TierSample{
			{Executing: exec, Queued: 0, Outstanding: exec, ThreadsBusy: exec, ConnsInUse: 2, ConnsWaiting: exec - 2, CPU: 8,
				Pipelines: exec + 5, WorkerBusy: exec, Workers: exec + 2, RequestsPerS: 6, CallsPerS: 6, ExecTimeMS: execMS, WaitTimeMS: 0.5},
			{Executing: 2, Outstanding: 2, ThreadsBusy: 2, CPU: 4, Instances: 2, IOBusy: 2, IOThreads: 4,
				RequestsPerS: 6, CallsPerS: 6, ExecTimeMS: 100, CallDuration: 0.1},
		}})
	}
	for i := 0; i < 600; i++ {
		t := float64(i) / 2
		lat := 0.1 + 0.05*math.Sin(float64(i))
		o := results.Completed
		if broken && t > 90 {
			lat = 4 + 8*math.Abs(math.Sin(float64(i)))
			if i%7 == 0 {
				lat, o = 20, results.TimedOut
				if r.FirstTimeout < 0 {
					r.FirstTimeout = t
				}
			}
		}
		if o == results.Completed {
			r.Requests.Completed++
		} else {
			r.Requests.TimedOut++
		}
		r.Points = append(r.Points, results.Point{T: t, Latency: lat, Outcome: o})
	}
	r.Requests.Generated = r.Requests.Completed + r.Requests.TimedOut
	r.TimeoutRate = float64(r.Requests.TimedOut) / float64(r.Requests.Generated)
	for i := range 999 {
		q := float64(i+1) / 1000
		if broken {
			r.Quantiles = append(r.Quantiles, 0.05+12*q*q)
		} else {
			r.Quantiles = append(r.Quantiles, 0.05+0.2*q)
		}
	}
	return Run{Label: label, Run: r}
}

var sweepLines = []SweepLine{
	{Label: "sync", X: []string{"2", "8", "32", "128"}, Y: []float64{13, 50, 95, 96}, Err: []float64{1, 2, 1, 1}},
	{Label: "async", X: []string{"2", "8", "32", "128"}, Y: []float64{14, 55, 96, 97}, Err: []float64{1, 2, 1, 1}, Dashed: true},
}

func figures(t *testing.T) map[string]*Figure {
	t.Helper()
	runs := []Run{story("broken", true), story("fixed", false)}
	out := map[string]*Figure{}
	var err error
	if out["counters.png"], err = first(Counters("crack: counters", runs)); err != nil {
		t.Fatal(err)
	}
	if out["latency.png"], err = Latency("crack: client latency", runs); err != nil {
		t.Fatal(err)
	}
	if out["latency-cdf.png"], err = LatencyCDF("crack: latency distribution", runs); err != nil {
		t.Fatal(err)
	}
	// Long noisy series go through decimation, pieces and thinning.
	noisy := []Run{noisyRun("a", 2, 3600, 1), noisyRun("b", 2, 3600, 2)}
	if out["counters-noisy.png"], err = first(Counters("noisy counters", noisy)); err != nil {
		t.Fatal(err)
	}
	if out["latency-noisy.png"], err = Latency("noisy latency", noisy); err != nil {
		t.Fatal(err)
	}
	if out["sweep.png"], err = Sweep("throughput", "maxconnection", "requests/s", sweepLines); err != nil {
		t.Fatal(err)
	}
	if out["sweep-categories.png"], err = Sweep("by preset", "wcf.preset", "requests/s",
		[]SweepLine{{Label: "base", X: []string{"wcf35", "wcf4"}, Y: []float64{10, 20}}}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestFiguresArePNGs(t *testing.T) {
	dir := t.TempDir()
	for name, f := range figures(t) {
		var b bytes.Buffer
		if err := f.WritePNG(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s does not decode as PNG: %v", name, err)
		}
		w, h := f.Pixels()
		if cfg.Width != w || cfg.Height != h || w < 1000 || h < 700 {
			t.Errorf("%s is %d×%d (Pixels says %d×%d); want about 1200×800", name, cfg.Width, cfg.Height, w, h)
		}
		if b.Len() < 10_000 {
			t.Errorf("%s is only %d bytes: nothing drawn?", name, b.Len())
		}
	}
}

// Two renderings of the same data are the same bytes, the second on the
// kept pixels of other pictures (drawn in the other order).
func TestFiguresAreDeterministic(t *testing.T) {
	a, b := figures(t), figures(t)
	names := slices.Sorted(maps.Keys(a))
	first := map[string][]byte{}
	for _, name := range names {
		var x bytes.Buffer
		if err := a[name].WritePNG(&x); err != nil {
			t.Fatal(err)
		}
		first[name] = x.Bytes()
	}
	for _, name := range slices.Backward(names) {
		var y bytes.Buffer
		if err := b[name].WritePNG(&y); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first[name], y.Bytes()) {
			t.Errorf("%s: two renderings of the same data differ", name)
		}
	}
}

func TestBadDataIsAnError(t *testing.T) {
	nan := math.NaN()
	good := func() Run { return story("v", true) }
	withSeriesNaN := good()
	withSeriesNaN.Run.Series[3].Tiers[1].CPU = nan
	withPointInf := good()
	withPointInf.Run.Points[5].Latency = math.Inf(1)
	noPoints := good()
	noPoints.Run.Points = nil
	noSeries := good()
	noSeries.Run.Series = nil
	qNaN := good()
	qNaN.Run.Quantiles[10] = nan
	noQ := good()
	noQ.Run.Quantiles = nil
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"counters, no runs", second(first(Counters("x", nil))), "no data"},
		{"counters, NaN", second(first(Counters("x", []Run{withSeriesNaN}))), "% Processor Time at 15s is NaN"},
		{"counters, no series", second(first(Counters("x", []Run{noSeries}))), "no time series"},
		{"latency, no runs", second(Latency("x", nil)), "no data"},
		{"latency, Inf", second(Latency("x", []Run{withPointInf})), "is +Inf"},
		{"latency, no points", second(Latency("x", []Run{noPoints})), "no request outcomes"},
		{"cdf, NaN", second(LatencyCDF("x", []Run{qNaN})), "is NaN"},
		{"cdf, empty", second(LatencyCDF("x", []Run{noQ})), "no latency quantiles"},
		{"sweep, no lines", second(Sweep("x", "k", "m", nil)), "no data"},
		{"sweep, NaN", second(Sweep("x", "k", "m", []SweepLine{{Label: "a", X: []string{"1"}, Y: []float64{nan}}})), "is NaN"},
		{"sweep, lengths", second(Sweep("x", "k", "m", []SweepLine{{Label: "a", X: []string{"1", "2"}, Y: []float64{1}}})), "2 values, 1 metrics"},
		{"sweep, empty line", second(Sweep("x", "k", "m", []SweepLine{{Label: "a"}})), "no points"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
}

func second(_ *Figure, err error) error { return err }

// first is the first of pages.
func first(pages []*Figure, err error) (*Figure, error) {
	if err != nil {
		return nil, err
	}
	return pages[0], nil
}

func TestSweepAxis(t *testing.T) {
	pos, label, _, logX := sweepAxis("timeout", []string{"500ms", "2s", "20s"})
	if pos["500ms"] != 0.5 || pos["20s"] != 20 || label != "timeout (s, log scale)" || !logX {
		t.Errorf("durations: %v %q %v", pos, label, logX)
	}
	pos, label, ticks, logX := sweepAxis("preset", []string{"wcf4", "wcf35", "wcf4"})
	if pos["wcf4"] != 0 || pos["wcf35"] != 1 || label != "preset" || logX || ticks == nil {
		t.Errorf("categories: %v %q %v", pos, label, logX)
	}
	_, _, _, logX = sweepAxis("users", []string{"60", "80", "100"})
	if logX {
		t.Errorf("a narrow numeric range got a log axis")
	}
}
