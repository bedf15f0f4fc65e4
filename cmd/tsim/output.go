package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/results"
)

// writeAtomic writes data to path whole or not at all: to a temporary file
// in the same directory, then renamed over path.
func writeAtomic(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeFigure renders fig and writes it atomically as dir/name, creating
// dir; explain and plan draw their one picture with it.
func writeFigure(dir, name string, fig *plots.Figure) (string, error) {
	var png bytes.Buffer
	if err := fig.WritePNG(&png); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, writeAtomic(path, png.Bytes())
}

// outputFiles are the files tsim writes into an experiment's directory;
// those a run does not write again are removed so that no stale picture
// outlives the run it came from.
var outputFiles = []string{
	"summary.json", "summary.csv", "timeseries.csv",
	"counters.png", "latency.png", "latency-cdf.png",
	"sweep-throughput.png", "sweep-p99.png", "sweep-timeouts.png",
}

// output is one file to write.
type output struct {
	name string
	data []byte
}

// writeOutputs writes an experiment's results into its directory and
// returns the names written. Pictures that cannot be drawn (no request
// completed, say) are skipped with a note in warnings; anything else that
// fails is an error.
func writeOutputs(r *experimentResult) (written, warnings []string, err error) {
	p := r.plan
	var outs []output
	add := func(name string, data []byte, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		outs = append(outs, output{name, data})
		return nil
	}
	b, err := summaryBytes(r)
	if err := add("summary.json", b, err); err != nil {
		return nil, nil, err
	}
	b, err = summaryCSV(r)
	if err := add("summary.csv", b, err); err != nil {
		return nil, nil, err
	}
	if !p.sweep() {
		b, err = timeseriesCSV(r)
		if err := add("timeseries.csv", b, err); err != nil {
			return nil, nil, err
		}
	}
	for _, pic := range pictures(r) {
		if pic.err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %s not drawn: %v", p.path, pic.name, pic.err))
			continue
		}
		var buf bytes.Buffer
		if err := pic.fig.WritePNG(&buf); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", pic.name, err)
		}
		outs = append(outs, output{pic.name, buf.Bytes()})
	}

	if err := os.MkdirAll(p.out, 0o755); err != nil {
		return nil, nil, err
	}
	for _, o := range outs {
		if err := writeAtomic(filepath.Join(p.out, o.name), o.data); err != nil {
			return written, warnings, err
		}
		written = append(written, o.name)
	}
	for _, name := range outputFiles {
		if !contains(written, name) {
			if err := os.Remove(filepath.Join(p.out, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return written, warnings, err
			}
		}
	}
	return written, warnings, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// picture is one PNG to write, or why it cannot be drawn.
type picture struct {
	name string
	fig  *plots.Figure
	err  error
}

// pictures draws an experiment's figures. Without a sweep: counters,
// latency and latency-cdf, one panel, column or curve per variant, from
// each variant's first replication (latency-cdf from all replications).
// With a sweep: the three sweep curves and, for small sweeps, latency-cdf
// with one curve per scenario.
func pictures(r *experimentResult) []picture {
	p := r.plan
	name := experimentName(p)
	done := r.done()
	var out []picture
	if !p.sweep() {
		var runs []plots.Run
		for _, sc := range done {
			runs = append(runs, plots.Run{Label: sc.variant, Run: sc.first})
		}
		note := ""
		if p.reps > 1 {
			note = fmt.Sprintf(" (first replication, seed %d)", p.seed)
		}
		f, err := plots.Counters(name+": counters over time"+note, runs)
		out = append(out, picture{"counters.png", f, err})
		f, err = plots.Latency(name+": client latency of each request"+note, runs)
		out = append(out, picture{"latency.png", f, err})
	}
	var cdf []plots.Run
	var none []string
	for _, sc := range done {
		if sc.agg.quantiles == nil {
			if !p.sweep() || len(r.scenarios) <= maxCDFCurves {
				none = append(none, label(sc))
			}
			continue
		}
		cdf = append(cdf, plots.Run{Label: label(sc), Run: &results.Run{Quantiles: sc.agg.quantiles}})
	}
	if !p.sweep() || len(r.scenarios) <= maxCDFCurves {
		title := name + ": client latency distribution"
		if len(done) > 0 && done[0].agg.WarmupS > 0 {
			title += " after warm-up"
		}
		if p.reps > 1 {
			title += fmt.Sprintf(" (mean of %d replications)", p.reps)
		}
		if len(none) > 0 {
			title += "; no request completed: " + strings.Join(none, ", ")
		}
		if len(cdf) == 0 {
			out = append(out, picture{"latency-cdf.png", nil, errors.New("no request completed after warm-up")})
		} else {
			f, err := plots.LatencyCDF(title, cdf)
			out = append(out, picture{"latency-cdf.png", f, err})
		}
	}
	if p.sweep() {
		out = append(out, sweepPictures(r)...)
	}
	return out
}

// label names a scenario in a legend: its variant, and its sweep values
// when there is a sweep.
func label(sc *scenarioResult) string {
	parts := []string{sc.variant}
	for _, kv := range sc.params {
		parts = append(parts, shortKey(kv.Key)+"="+kv.Value)
	}
	return strings.Join(parts, ", ")
}

// shortKey is the last part of a key path: "maxconnection" for
// "tier.fe.calls.maxconnection".
func shortKey(k string) string {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		return k[i+1:]
	}
	return k
}

// sweepPictures draws each metric against the first sweep axis: one line
// per variant and combination of the other axes' values.
func sweepPictures(r *experimentResult) []picture {
	p := r.plan
	name := experimentName(p)
	axis := p.x.Sweep[0].Key
	type line struct {
		label string
		scs   []*scenarioResult
	}
	var lines []*line
	for _, sc := range r.done() {
		parts := []string{sc.variant}
		for _, kv := range sc.params[1:] {
			parts = append(parts, shortKey(kv.Key)+"="+kv.Value)
		}
		l := strings.Join(parts, ", ")
		var ln *line
		for _, x := range lines {
			if x.label == l {
				ln = x
			}
		}
		if ln == nil {
			ln = &line{label: l}
			lines = append(lines, ln)
		}
		ln.scs = append(ln.scs, sc)
	}
	ci := p.reps > 1
	// build makes one line per variant of a metric; points where ok is
	// false (no latency without completions) are left out.
	build := func(get func(a aggregate) float64, half func(c *intervals) *float64, scale float64, suffix string, ok func(a aggregate) bool) []plots.SweepLine {
		var out []plots.SweepLine
		for _, ln := range lines {
			sl := plots.SweepLine{Label: ln.label + suffix}
			for _, sc := range ln.scs {
				if ok != nil && !ok(sc.agg) {
					continue
				}
				sl.X = append(sl.X, sc.params[0].Value)
				sl.Y = append(sl.Y, get(sc.agg)*scale)
				if ci {
					h := 0.0
					if sc.agg.CI != nil {
						if v := half(sc.agg.CI); v != nil {
							h = *v * scale
						}
					}
					sl.Err = append(sl.Err, h)
				}
			}
			if len(sl.X) > 0 {
				out = append(out, sl)
			}
		}
		return out
	}
	note := ""
	if ci {
		note = fmt.Sprintf(" (mean of %d replications, 95%% CI)", p.reps)
	}
	var out []picture

	good := build(func(a aggregate) float64 { return a.GoodputPerS }, func(c *intervals) *float64 { return c.GoodputPerS }, 1, " goodput", nil)
	thr := build(func(a aggregate) float64 { return a.ThroughputPerS }, func(c *intervals) *float64 { return c.ThroughputPerS }, 1, " throughput", nil)
	for i := range thr {
		thr[i].Dashed = true
	}
	var both []plots.SweepLine
	for i := range good {
		both = append(both, good[i], thr[i])
	}
	f, err := plots.Sweep(name+": goodput (solid) and entry-tier throughput (dashed)"+note, axis, "requests per second", both)
	out = append(out, picture{"sweep-throughput.png", f, err})

	p99 := build(func(a aggregate) float64 { return a.Latency.P99 }, func(c *intervals) *float64 { return c.LatencyP99S }, 1, "", func(a aggregate) bool { return a.GoodputPerS > 0 })
	f, err = plots.Sweep(name+": 99th percentile client latency"+note, axis, "p99 latency of completed requests (s)", p99)
	out = append(out, picture{"sweep-p99.png", f, err})

	to := build(func(a aggregate) float64 { return a.TimeoutRate }, func(c *intervals) *float64 { return c.TimeoutRate }, 100, "", nil)
	f, err = plots.Sweep(name+": requests that timed out"+note, axis, "timed out (% of requests ended after warm-up)", to)
	out = append(out, picture{"sweep-timeouts.png", f, err})
	return out
}

// fmtSeconds writes a simulated span for the header line: "300 s", "1.5 s".
func fmtSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + " s"
	}
	return strconv.FormatFloat(s, 'g', 4, 64) + " s"
}
