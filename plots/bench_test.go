package plots

import (
	"bytes"
	"fmt"
	"image"
	"io"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tsim-dev/tsim/results"
)

// noisyRun is a run whose tiers' counters wander the way a loaded chain's
// do: random walks of whole requests, a noisy CPU, noisy rates and
// durations (now and then an interval in which nothing ended), at one
// sample per interval over samples samples. It is the worst case for a
// line drawer: every column of pixels holds many ups and downs. The first
// tier is an ASP.NET application, the others self-hosted WCF services,
// each calling the next.
func noisyRun(label string, tiers, samples int, seed uint64) Run {
	rng := rand.New(rand.NewPCG(seed, 7))
	more := rand.New(rand.NewPCG(seed, 8)) // the newer counters, so that the older keep their values
	r := &results.Run{Duration: float64(samples - 1), FirstTimeout: -1}
	for i := range tiers {
		name := fmt.Sprintf("t%d", i)
		r.TierNames = append(r.TierNames, name)
		t := results.Tier{Name: name, Host: "self", DotNet: "4.0", WCF: true}
		if i == 0 {
			t = results.Tier{Name: name, Host: "aspnet-classic", DotNet: "3.5"}
		}
		r.Tiers = append(r.Tiers, t)
		if i+1 < tiers {
			r.Calls = append(r.Calls, results.Call{From: name, To: fmt.Sprintf("t%d", i+1)})
		}
	}
	walk := make([]float64, tiers)
	for k := range samples {
		s := results.Sample{T: float64(k), Tiers: make([]results.TierSample, tiers)}
		for i := range tiers {
			walk[i] = math.Max(0, math.Min(80, walk[i]+float64(rng.IntN(7)-3)))
			e := walk[i]
			s.Tiers[i] = results.TierSample{
				Executing: e, Queued: math.Max(0, e-40), Outstanding: math.Max(0, e-2),
				ThreadsBusy: e, ConnsInUse: math.Min(e, 2), ConnsWaiting: math.Max(0, e-2),
				ThreadQueue: float64(rng.IntN(3)), CPU: 20 + 60*rng.Float64(),
			}
			ts := &s.Tiers[i]
			ts.Pipelines, ts.Instances = e+5, e
			if i == 0 {
				ts.WorkerBusy = e
			} else {
				ts.IOBusy = e
			}
			ts.RequestsPerS, ts.CallsPerS = 5+10*more.Float64(), 5+10*more.Float64()
			if more.IntN(20) != 0 {
				ts.ExecTimeMS = 50 + 5000*more.ExpFloat64()
				ts.CallDuration = ts.ExecTimeMS / 1000
			}
			ts.WaitTimeMS = math.Max(0, 100*more.NormFloat64())
		}
		r.Series = append(r.Series, s)
	}
	for k := range samples * 4 {
		lat := 0.1 + rng.ExpFloat64()*0.2
		o := results.Completed
		if rng.IntN(50) == 0 {
			lat, o = 20, results.TimedOut
		}
		r.Points = append(r.Points, results.Point{T: float64(k) / 4, Latency: lat, Outcome: o})
	}
	return Run{Label: label, Run: r}
}

// BenchmarkCounters draws counters.png of two variants of a two-tier chain
// at 600 to 36,000 samples per series. ns/op should grow far slower than
// the samples (ns/sample should never grow): once a column of pixels holds
// a few samples, more add only the cost of decimating them.
func BenchmarkCounters(b *testing.B) {
	for _, n := range []int{600, 1200, 2400, 3600, 36_000} {
		runs := []Run{noisyRun("a", 2, n, 1), noisyRun("b", 2, n, 2)}
		b.Run(fmt.Sprintf("samples=%d", n), func(b *testing.B) { benchCounters(b, runs, n) })
	}
}

// BenchmarkCounters50Tiers draws one variant of a 50-tier chain over an
// hour sampled every second: 17 pages.
func BenchmarkCounters50Tiers(b *testing.B) {
	runs := []Run{noisyRun("chain", 50, 3600, 3)}
	benchCounters(b, runs, 3600)
}

func benchCounters(b *testing.B, runs []Run, samples int) {
	for b.Loop() {
		pages, err := Counters("bench", runs)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range pages {
			if err := f.WritePNG(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*samples), "ns/sample")
}

// BenchmarkLatency draws latency.png of two variants with four request
// outcomes per counter sample.
func BenchmarkLatency(b *testing.B) {
	for _, n := range []int{600, 3600} {
		runs := []Run{noisyRun("a", 2, n, 1), noisyRun("b", 2, n, 2)}
		b.Run(fmt.Sprintf("points=%d", 4*n), func(b *testing.B) {
			for b.Loop() {
				f, err := Latency("bench", runs)
				if err != nil {
					b.Fatal(err)
				}
				if err := f.WritePNG(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSeriesLine draws one counter's line of n samples (a random
// walk, the worst case: every column of pixels holds ups and downs) on a
// panel 1,100 pixels wide, with the plot's axes, and no PNG encoding: the
// cost of a series in counters.png. ns/sample should never grow with n:
// once a column holds a few samples, more add only the cost of reducing
// them (decimate), so the time per series grows less than linearly.
func BenchmarkSeriesLine(b *testing.B) {
	for _, n := range []int{600, 1200, 2400, 3600, 36_000} {
		xy := randomWalk(n)
		b.Run(fmt.Sprintf("samples=%d", n), func(b *testing.B) {
			img := image.NewRGBA(image.Rect(0, 0, 1200, 240))
			for b.Loop() {
				p := newPlot("", "time (s)", "count")
				p.Add(newSeriesLine(xy, draw.LineStyle{Color: palette[0], Width: px(3)}))
				p.Draw(draw.New(newRGBACanvas(img)))
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/sample")
		})
	}
}

// BenchmarkEncodePNG encodes a drawn counters.png of two variants of a
// three-tier chain: the PNG writer alone.
func BenchmarkEncodePNG(b *testing.B) {
	pages, err := Counters("bench", []Run{noisyRun("a", 3, 600, 1), noisyRun("b", 3, 600, 2)})
	if err != nil {
		b.Fatal(err)
	}
	f := pages[0]
	w, h := f.Pixels()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	f.draw(drawHeader(pad(draw.New(newRGBACanvas(img)), 8), f.heading(), f.subtitle))
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := encodePNG(&buf, img); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*w*h), "ns/pixel")
}

// randomWalk is a counter's n samples over an hour: a random walk between
// 0 and 80, the worst case for a line drawer (every column of pixels holds
// ups and downs).
func randomWalk(n int) plotter.XYs {
	rng := rand.New(rand.NewPCG(uint64(n), 9))
	xy := make(plotter.XYs, n)
	y := 40.0
	for i := range xy {
		y = math.Max(0, math.Min(80, y+float64(rng.IntN(7)-3)))
		xy[i] = plotter.XY{X: float64(i) * 3600 / float64(n), Y: y}
	}
	return xy
}
