package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/results"
)

// ---------------------------------------------------------------------------
// summary.json

// params is a scenario's sweep values, written as a JSON object in sweep
// axis order.
type params []results.Param

func (p params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.Key)
		v, _ := json.Marshal(kv.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// scenarioJSON is one scenario in summary.json.
type scenarioJSON struct {
	Variant string `json:"variant"`
	Params  params `json:"params"`
	results.Aggregate
}

// summaryJSON is summary.json. Its top-level results are those of the
// first scenario (the first variant at the first sweep point); variants
// lists every variant when the experiment has no sweep, points every
// (variant, sweep point) when it has one.
type summaryJSON struct {
	Experiment       string   `json:"experiment"`
	Description      string   `json:"description"`
	File             string   `json:"file"`
	Seed             uint64   `json:"seed"`
	Replications     int      `json:"replications"`
	ReplicationSeeds []uint64 `json:"replication_seeds"`
	Mode             string   `json:"mode"`
	// Counting says which requests the counts, rates and latencies cover.
	Counting string `json:"counting"`
	// Complete is false when the run was interrupted; the missing
	// scenarios are then absent from variants and points.
	Complete  bool            `json:"complete"`
	Scenarios int             `json:"scenarios"`
	Sweep     []sweepAxisJSON `json:"sweep"`
	scenarioJSON
	Variants []scenarioJSON `json:"variants"`
	Points   []scenarioJSON `json:"points"`
}

type sweepAxisJSON struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// countingNote is summary.json's "counting": the period every count, rate
// and latency covers (results.Counts).
const countingNote = "requests, rates, latencies and the tiers' and calls' counters cover the measured period, after warmup_s: " +
	"requests.generated were generated in it, requests.in_flight_at_warmup were under way when it began, " +
	"completed, timed_out, rejected and failed ended in it, in_flight were under way at its end " +
	"(generated + in_flight_at_warmup = completed + timed_out + rejected + failed + in_flight); " +
	"first_timeout_s and the time series cover the whole run"

// SummaryJSON renders summary.json. Only the finished scenarios are
// written; there is at least one.
func SummaryJSON(r *results.Experiment) ([]byte, error) {
	done := r.Done()
	s := summaryJSON{
		Experiment:       r.Name,
		Description:      r.Description,
		File:             filepath.ToSlash(r.File),
		Seed:             r.Seed,
		Replications:     r.Replications,
		ReplicationSeeds: r.ReplicationSeeds,
		Mode:             r.Mode,
		Counting:         countingNote,
		Complete:         r.Complete(),
		Scenarios:        len(r.Scenarios),
		Sweep:            []sweepAxisJSON{},
		Variants:         []scenarioJSON{},
		Points:           []scenarioJSON{},
	}
	for _, ax := range r.Sweep {
		s.Sweep = append(s.Sweep, sweepAxisJSON{ax.Key, ax.Values})
	}
	for i, sc := range done {
		j := scenarioJSON{Variant: sc.Variant, Params: params(sc.Params), Aggregate: sc.Agg}
		if !r.PerReplica { // every machine of a farm only on request
			j.Aggregate.Replicas, j.Aggregate.ReplicaCalls = nil, nil
		}
		if j.Params == nil {
			j.Params = params{}
		}
		if i == 0 {
			s.scenarioJSON = j
		}
		if r.IsSweep() {
			s.Points = append(s.Points, j)
		} else {
			s.Variants = append(s.Variants, j)
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ---------------------------------------------------------------------------
// CSV

// csvFloat formats a float for the CSV files: six significant digits, the
// same bytes on every run.
func csvFloat(x float64) string { return string(appendCSVFloat(nil, x)) }

// appendCSVFloat appends x as csvFloat formats it. Most counter values are
// small whole numbers, which six significant digits print as integers:
// those take the fast way.
func appendCSVFloat(b []byte, x float64) []byte {
	if x == math.Trunc(x) && math.Abs(x) < 1e6 && (x != 0 || !math.Signbit(x)) {
		return strconv.AppendInt(b, int64(x), 10)
	}
	return strconv.AppendFloat(b, x, 'g', 6, 64)
}

func csvInt(x int64) string { return strconv.FormatInt(x, 10) }

func csvOpt(x *float64) string {
	if x == nil {
		return ""
	}
	return csvFloat(*x)
}

// SummaryCSV renders summary.csv: one row per finished scenario. Latency
// cells are empty where no request completed; the last column, complete,
// is false on every row of an interrupted run, whose missing scenarios
// have no row.
func SummaryCSV(r *results.Experiment) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	keys := r.SweepKeys()
	head := append([]string{"variant"}, keys...)
	head = append(head, "throughput_per_s", "goodput_per_s",
		"latency_mean_s", "latency_p50_s", "latency_p90_s", "latency_p99_s", "latency_max_s",
		"timeout_rate", "reject_rate",
		"generated", "completed", "timed_out", "rejected", "failed", "in_flight",
		"ci_throughput_per_s", "ci_goodput_per_s", "ci_latency_mean_s", "ci_latency_p99_s", "ci_timeout_rate",
		"complete")
	if err := w.Write(head); err != nil {
		return nil, err
	}
	for _, sc := range r.Done() {
		a := sc.Agg
		row := []string{sc.Variant}
		for _, k := range keys {
			v := ""
			for _, kv := range sc.Params {
				if kv.Key == k {
					v = kv.Value
				}
			}
			row = append(row, v)
		}
		c := a.Requests
		lat := func(x float64) string {
			if a.Latency.None {
				return "" // no request completed: no latency, not zero
			}
			return csvFloat(x)
		}
		row = append(row, csvFloat(a.ThroughputPerS), csvFloat(a.GoodputPerS),
			lat(a.Latency.Mean), lat(a.Latency.P50), lat(a.Latency.P90), lat(a.Latency.P99), lat(a.Latency.Max),
			csvFloat(a.TimeoutRate), csvFloat(a.RejectRate),
			csvInt(c.Generated), csvInt(c.Completed), csvInt(c.TimedOut), csvInt(c.Rejected), csvInt(c.Failed), csvInt(c.InFlight))
		ci := a.CI
		if ci == nil {
			ci = &results.Intervals{}
		}
		row = append(row, csvOpt(ci.ThroughputPerS), csvOpt(ci.GoodputPerS), csvOpt(ci.LatencyMeanS), csvOpt(ci.LatencyP99S), csvOpt(ci.TimeoutRate),
			strconv.FormatBool(r.Complete()))
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// timeseriesColumns are timeseries.csv's counter columns, in order, and how
// each is read from a sample; perfmon.csv's counters name theirs
// (PerfmonColumn.Column). docs/counters.md defines them.
var timeseriesColumns = []struct {
	name string
	get  func(*results.TierSample) float64
}{
	{"requests_executing", func(s *results.TierSample) float64 { return s.Executing }},
	{"requests_queued", func(s *results.TierSample) float64 { return s.Queued }},
	{"calls_outstanding", func(s *results.TierSample) float64 { return s.Outstanding }},
	{"threads_busy", func(s *results.TierSample) float64 { return s.ThreadsBusy }},
	{"threads", func(s *results.TierSample) float64 { return s.Threads }},
	{"thread_queue", func(s *results.TierSample) float64 { return s.ThreadQueue }},
	{"connections_in_use", func(s *results.TierSample) float64 { return s.ConnsInUse }},
	{"connections_waiting", func(s *results.TierSample) float64 { return s.ConnsWaiting }},
	{"cpu_percent", func(s *results.TierSample) float64 { return s.CPU }},
	{"memory_mb", func(s *results.TierSample) float64 { return s.MemoryMB }},
	{"requests_current", func(s *results.TierSample) float64 { return s.Current }},
	{"requests_in_application_queue", func(s *results.TierSample) float64 { return s.AppQueued }},
	{"pipeline_instance_count", func(s *results.TierSample) float64 { return s.Pipelines }},
	{"instances", func(s *results.TierSample) float64 { return s.Instances }},
	{"worker_threads_busy", func(s *results.TierSample) float64 { return s.WorkerBusy }},
	{"worker_threads", func(s *results.TierSample) float64 { return s.Workers }},
	{"io_threads_busy", func(s *results.TierSample) float64 { return s.IOBusy }},
	{"io_threads", func(s *results.TierSample) float64 { return s.IOThreads }},
	{"requests_per_s", func(s *results.TierSample) float64 { return s.RequestsPerS }},
	{"calls_per_s", func(s *results.TierSample) float64 { return s.CallsPerS }},
	{"request_execution_time_ms", func(s *results.TierSample) float64 { return s.ExecTimeMS }},
	{"request_execution_time_max_ms", func(s *results.TierSample) float64 { return s.ExecTimeMaxMS }},
	{"request_wait_time_ms", func(s *results.TierSample) float64 { return s.WaitTimeMS }},
	{"request_wait_time_max_ms", func(s *results.TierSample) float64 { return s.WaitTimeMaxMS }},
	{"calls_duration_s", func(s *results.TierSample) float64 { return s.CallDuration }},
	{"calls_duration_max_s", func(s *results.TierSample) float64 { return s.CallDurationMax }},
	{"calls", func(s *results.TierSample) float64 { return s.Calls }},
	{"requests_rejected", func(s *results.TierSample) float64 { return s.RequestsRejected }},
}

// TimeseriesCSV renders timeseries.csv: each variant's counters per tier
// at every sampling instant of its first replication. Sweeps have none.
// It writes the bytes encoding/csv would (csvField quotes a name as it
// does; a number never needs quotes), appending each value in place: a
// long run has a row per tier and sample, and the file is a large part of
// a run's output.
func TimeseriesCSV(r *results.Experiment) ([]byte, error) {
	var b []byte
	b = append(b, "variant,t_s,tier"...)
	for _, c := range timeseriesColumns {
		b = append(b, ',')
		b = csvField(b, c.name)
	}
	b = append(b, '\n')
	for _, sc := range r.Done() {
		if sc.First == nil {
			continue
		}
		names := sc.First.TierNames
		if r.PerReplica {
			// The farms' machines after the tiers and farms.
			names = append(append([]string(nil), names...), sc.First.ReplicaNames...)
		}
		variant := csvField(nil, sc.Variant)
		quoted := make([][]byte, len(names))
		for i, n := range names {
			quoted[i] = csvField(nil, n)
		}
		for _, s := range sc.First.Series {
			tiers := s.Tiers
			if r.PerReplica && len(s.Replicas) > 0 {
				tiers = append(append([]results.TierSample(nil), tiers...), s.Replicas...)
			}
			for i := range tiers {
				b = append(b, variant...)
				b = append(b, ',')
				b = appendCSVFloat(b, s.T)
				b = append(b, ',')
				if i < len(quoted) {
					b = append(b, quoted[i]...)
				}
				for _, c := range timeseriesColumns {
					b = append(b, ',')
					b = appendCSVFloat(b, c.get(&tiers[i]))
				}
				b = append(b, '\n')
			}
		}
	}
	return b, nil
}

// csvField appends s as encoding/csv writes a field (with its default
// comma and line ending).
func csvField(b []byte, s string) []byte {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{s}) // a bytes.Buffer does not fail
	w.Flush()
	out := buf.Bytes()
	return append(b, out[:len(out)-1]...) // without the line ending
}

// WriteFigure renders fig and writes it atomically as dir/name, creating
// dir; explain and plan draw their one picture with it.
func WriteFigure(dir, name string, fig *plots.Figure) (string, error) {
	var png bytes.Buffer
	if err := fig.WritePNG(&png); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, atomicio.WriteFile(path, png.Bytes())
}

// OutputFiles are the files tsim writes into an experiment's directory;
// those a run does not write again are removed so that no stale picture
// outlives the run it came from.
var OutputFiles = []string{
	"summary.json", "summary.csv", "timeseries.csv", "perfmon.csv",
	"counters.png", "latency.png", "latency-cdf.png",
	"sweep-throughput.png", "sweep-p99.png", "sweep-timeouts.png",
	htmlreport.FileName,
}

// output is one file to write.
type output struct {
	name string
	data []byte
}

// Outputs chooses the kinds of file WriteOutputs writes; the zero value
// writes none, All every kind.
type Outputs struct {
	JSON bool // summary.json
	CSV  bool // summary.csv, timeseries.csv, perfmon.csv
	PNG  bool // the pictures
	HTML bool // report.html
}

// All is every kind of output file.
var All = Outputs{JSON: true, CSV: true, PNG: true, HTML: true}

// ParseOutputs reads a comma-separated list of json, csv, png and html.
func ParseOutputs(s string) (Outputs, error) {
	var o Outputs
	for _, k := range strings.Split(s, ",") {
		switch strings.TrimSpace(k) {
		case "json":
			o.JSON = true
		case "csv":
			o.CSV = true
		case "png":
			o.PNG = true
		case "html":
			o.HTML = true
		case "":
		default:
			return o, fmt.Errorf("unknown output kind %q (allowed: json, csv, png, html)", strings.TrimSpace(k))
		}
	}
	if o == (Outputs{}) {
		return o, errors.New("no output kind given (allowed: json, csv, png, html)")
	}
	return o, nil
}

// Render produces the bytes of an experiment's files of the kinds in
// kinds, in the order of OutputFiles. Pictures are drawn in parallel, each
// on its own goroutine; a picture's bytes do not depend on the others, so
// the files are the same as drawn one by one. Pictures that cannot be
// drawn (no request completed, say) are skipped with a note in warnings.
func render(r *results.Experiment, kinds Outputs) (outs []output, warnings []string, err error) {
	// The pictures are drawn while the JSON and CSV files are written: a
	// run's output takes the time of its longest picture, not the sum.
	var pics []picture
	if kinds.PNG {
		pics = pictures(r)
	}
	pngs := make([][]byte, len(pics))
	errs := make([]error, len(pics))
	var wg sync.WaitGroup
	for i, pic := range pics {
		if pic.err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					errs[i] = fmt.Errorf("internal error drawing it: %v (a bug in tsim)", v)
				}
			}()
			var buf bytes.Buffer
			errs[i] = pic.fig.WritePNG(&buf)
			pngs[i] = buf.Bytes()
		}()
	}
	defer wg.Wait() // on an error too: no goroutine outlives the call

	add := func(name string, data []byte, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		outs = append(outs, output{name, data})
		return nil
	}
	if kinds.JSON {
		b, err := SummaryJSON(r)
		if err := add("summary.json", b, err); err != nil {
			return nil, nil, err
		}
	}
	if kinds.CSV {
		b, err := SummaryCSV(r)
		if err := add("summary.csv", b, err); err != nil {
			return nil, nil, err
		}
		if !r.IsSweep() {
			b, err = TimeseriesCSV(r)
			if err := add("timeseries.csv", b, err); err != nil {
				return nil, nil, err
			}
			b, err = PerfmonCSV(r)
			if err := add("perfmon.csv", b, err); err != nil {
				return nil, nil, err
			}
		}
	}
	wg.Wait()
	for i, pic := range pics {
		if pic.err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %s not drawn: %v", r.File, pic.name, pic.err))
			continue
		}
		if errs[i] != nil {
			return nil, nil, fmt.Errorf("%s: %w", pic.name, errs[i])
		}
		outs = append(outs, output{pic.name, pngs[i]})
	}
	if kinds.HTML {
		b, err := htmlreport.Report(r, htmlreport.Options{Warnings: warnings})
		if err := add(htmlreport.FileName, b, err); err != nil {
			return nil, nil, err
		}
	}
	return outs, warnings, nil
}

// WriteOutputs writes an experiment's results of the kinds in kinds into
// dir, creating it, and returns the names written. Every file is
// written whole or not at all. The files of a kind not written, and the
// pictures a run could not draw, are removed, so that no stale file
// outlives the run it came from.
func WriteOutputs(dir string, r *results.Experiment, kinds Outputs) (written, warnings []string, err error) {
	outs, warnings, err := render(r, kinds)
	if err != nil {
		return nil, warnings, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, warnings, err
	}
	for _, o := range outs {
		if err := atomicio.WriteFile(filepath.Join(dir, o.name), o.data); err != nil {
			return written, warnings, err
		}
		written = append(written, o.name)
	}
	for _, name := range OutputFiles {
		if !contains(written, name) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
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
func pictures(r *results.Experiment) []picture {
	name := r.Name
	done := r.Done()
	var out []picture
	if !r.IsSweep() {
		var runs []plots.Run
		for _, sc := range done {
			runs = append(runs, plots.Run{Label: sc.Variant, Run: withMachines(r, sc.First)})
		}
		note := ""
		if r.Replications > 1 {
			note = fmt.Sprintf(" (first replication, seed %d)", r.Seed)
		}
		f, err := plots.Counters(name+": counters over time"+note, runs)
		out = append(out, picture{"counters.png", f, err})
		f, err = plots.Latency(name+": client latency of each request"+note, runs)
		out = append(out, picture{"latency.png", f, err})
	}
	var cdf []plots.Run
	var none []string
	for _, sc := range done {
		if sc.Agg.Quantiles == nil {
			if !r.IsSweep() || len(r.Scenarios) <= results.MaxCDFCurves {
				none = append(none, label(sc))
			}
			continue
		}
		a := sc.Agg
		run := plots.Run{Label: label(sc), Run: &results.Run{Quantiles: a.Quantiles, TimeoutRate: a.TimeoutRate, RejectRate: a.RejectRate}}
		// Timed-out, rejected and failed requests never complete: the
		// curve tops out at the share that did.
		if c := a.Requests; c.Completed+c.TimedOut+c.Rejected+c.Failed > 0 {
			run.CompletedShare = float64(c.Completed) / float64(c.Completed+c.TimedOut+c.Rejected+c.Failed)
		}
		cdf = append(cdf, run)
	}
	if !r.IsSweep() || len(r.Scenarios) <= results.MaxCDFCurves {
		title := name + ": client latency distribution"
		if len(done) > 0 && done[0].Agg.WarmupS > 0 {
			title += " after warm-up"
		}
		if r.Replications > 1 {
			title += fmt.Sprintf(" (mean of %d replications)", r.Replications)
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
	if r.IsSweep() {
		out = append(out, sweepPictures(r)...)
	}
	for _, pic := range out {
		if pic.fig != nil {
			pic.fig.Partial = !r.Complete()
		}
	}
	return out
}

// label names a scenario in a legend: its variant, and its sweep values
// when there is a sweep.
func label(sc *results.Scenario) string {
	parts := []string{sc.Variant}
	for _, kv := range sc.Params {
		parts = append(parts, ShortKey(kv.Key)+"="+kv.Value)
	}
	return strings.Join(parts, ", ")
}

// shortKey is the last part of a key path: "maxconnection" for
// "tier.fe.calls.maxconnection".
func ShortKey(k string) string {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		return k[i+1:]
	}
	return k
}

// sweepPictures draws each metric against the first sweep axis: one line
// per variant and combination of the other axes' values.
func sweepPictures(r *results.Experiment) []picture {
	name := r.Name
	axis := r.Sweep[0].Key
	type line struct {
		label string
		scs   []*results.Scenario
	}
	var lines []*line
	for _, sc := range r.Done() {
		parts := []string{sc.Variant}
		for _, kv := range sc.Params[1:] {
			parts = append(parts, ShortKey(kv.Key)+"="+kv.Value)
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
	ci := r.Replications > 1
	// build makes one line per variant of a metric; points where ok is
	// false (no latency without completions) are left out.
	build := func(get func(a results.Aggregate) float64, half func(c *results.Intervals) *float64, scale float64, suffix string, ok func(a results.Aggregate) bool) []plots.SweepLine {
		var out []plots.SweepLine
		for _, ln := range lines {
			sl := plots.SweepLine{Label: ln.label + suffix}
			for _, sc := range ln.scs {
				if ok != nil && !ok(sc.Agg) {
					continue
				}
				sl.X = append(sl.X, sc.Params[0].Value)
				sl.Y = append(sl.Y, get(sc.Agg)*scale)
				if ci {
					h := 0.0
					if sc.Agg.CI != nil {
						if v := half(sc.Agg.CI); v != nil {
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
		note = fmt.Sprintf(" (mean of %d replications, 95%% CI)", r.Replications)
	}
	var out []picture

	good := build(func(a results.Aggregate) float64 { return a.GoodputPerS }, func(c *results.Intervals) *float64 { return c.GoodputPerS }, 1, " goodput", nil)
	thr := build(func(a results.Aggregate) float64 { return a.ThroughputPerS }, func(c *results.Intervals) *float64 { return c.ThroughputPerS }, 1, " throughput", nil)
	for i := range thr {
		thr[i].Dashed = true
	}
	var both []plots.SweepLine
	for i := range good {
		both = append(both, good[i], thr[i])
	}
	f, err := plots.Sweep(name+": goodput (solid) and entry-tier throughput (dashed)"+note, axis, "requests per second", both)
	out = append(out, picture{"sweep-throughput.png", f, err})

	p99 := build(func(a results.Aggregate) float64 { return a.Latency.P99 }, func(c *results.Intervals) *float64 { return c.LatencyP99S }, 1, "", func(a results.Aggregate) bool { return a.GoodputPerS > 0 })
	f, err = plots.Sweep(name+": 99th percentile client latency"+note, axis, "p99 latency of completed requests (s)", p99)
	out = append(out, picture{"sweep-p99.png", f, err})

	to := build(func(a results.Aggregate) float64 { return a.TimeoutRate }, func(c *results.Intervals) *float64 { return c.TimeoutRate }, 100, "", nil)
	for i := range to {
		to[i].Max = 100 // a share's error bar stops at 100%
	}
	f, err = plots.Sweep(name+": requests that timed out"+note, axis, "timed out (% of requests ended after warm-up)", to)
	out = append(out, picture{"sweep-timeouts.png", f, err})
	return out
}

// FmtSeconds writes a simulated span for the header line: "300 s", "1.5 s".
func FmtSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + " s"
	}
	return strconv.FormatFloat(s, 'g', 4, 64) + " s"
}

// NewTable returns a borderless table whose first `left` columns are left
// aligned (names) and the rest right aligned (numbers).
func NewTable(w io.Writer, left int, header ...string) *tablewriter.Table {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
		if i < left {
			align[i] = tw.AlignLeft
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.Border{Left: tw.Off, Right: tw.Off, Top: tw.Off, Bottom: tw.Off},
			Settings: tw.Settings{Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.On}, Lines: tw.Lines{ShowHeaderLine: tw.On}},
			Symbols:  tw.NewSymbols(tw.StyleLight),
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(header)
	return t
}

// PrintReport prints an experiment's results: a header line, one row per
// scenario and, without a sweep, each variant's tiers and calls.
func PrintReport(w io.Writer, r *results.Experiment) error {
	done := r.Done()
	if len(done) == 0 {
		return nil
	}
	first := done[0].Agg
	fmt.Fprintf(w, "%s (%s)\n", r.Name, r.File)
	if r.Description != "" {
		fmt.Fprintf(w, "  %s\n", Abbreviate(strings.Join(strings.Fields(r.Description), " "), maxDescription))
	}
	reps := "1 replication"
	if r.Replications > 1 {
		reps = fmt.Sprintf("%d replications (± is the 95%% confidence half-width)", r.Replications)
	}
	dur := FmtSeconds(first.DurationS) + " simulated"
	if first.WarmupS > 0 {
		dur += ", warm-up " + FmtSeconds(math.Round(first.WarmupS*10)/10)
	}
	fmt.Fprintf(w, "  seed %d, %s, %s, mode %s\n", r.Seed, reps, dur, r.Mode)
	if !r.Complete() {
		fmt.Fprintf(w, "  interrupted: %d of %d scenarios finished\n", r.Finished, len(r.Scenarios))
	}
	fmt.Fprintln(w)

	keys := r.SweepKeys()
	header := []string{"variant"}
	for _, k := range keys {
		header = append(header, ShortKey(k))
	}
	header = append(header, "goodput/s", "throughput/s", "mean", "p50", "p99", "timeouts", "rejected")
	t := NewTable(w, 1+len(keys), header...)
	for _, sc := range done {
		a := sc.Agg
		row := []string{sc.Variant}
		for _, k := range keys {
			v := ""
			for _, kv := range sc.Params {
				if kv.Key == k {
					v = kv.Value
				}
			}
			row = append(row, v)
		}
		var ci results.Intervals
		if a.CI != nil {
			ci = *a.CI
		}
		lat := func(v float64) string {
			if a.GoodputPerS == 0 { // nothing completed after warm-up
				return "–"
			}
			return FmtLatency(v)
		}
		row = append(row,
			FmtRate(a.GoodputPerS)+pm(ci.GoodputPerS, FmtRate),
			FmtRate(a.ThroughputPerS),
			lat(a.Latency.Mean),
			lat(a.Latency.P50),
			lat(a.Latency.P99)+pm(ci.LatencyP99S, FmtLatency),
			FmtPercent(a.TimeoutRate)+pm(ci.TimeoutRate, FmtPercent),
			FmtPercent(a.RejectRate))
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}

	if r.IsSweep() {
		fmt.Fprintln(w)
		return nil
	}
	for _, sc := range done {
		if len(done) > 1 {
			fmt.Fprintf(w, "\nvariant %s\n", sc.Variant)
		} else {
			fmt.Fprintln(w)
		}
		if err := PrintTiers(w, sc.Agg.Tiers); err != nil {
			return err
		}
		if len(sc.Agg.Calls) > 0 {
			fmt.Fprintln(w)
			if err := PrintCalls(w, sc.Agg.Calls); err != nil {
				return err
			}
		}
		if len(sc.Agg.Balancers) > 0 {
			fmt.Fprintln(w)
			if err := PrintBalancers(w, sc.Agg.Balancers); err != nil {
				return err
			}
		}
		if r.PerReplica && len(sc.Agg.Replicas) > 0 {
			fmt.Fprintln(w, "\nevery machine of the farms:")
			if err := PrintTiers(w, sc.Agg.Replicas); err != nil {
				return err
			}
			if len(sc.Agg.ReplicaCalls) > 0 {
				fmt.Fprintln(w)
				if err := PrintCalls(w, sc.Agg.ReplicaCalls); err != nil {
					return err
				}
			}
		}
	}
	fmt.Fprintln(w)
	return nil
}

// PrintTiers prints two tables of a variant's tiers: the levels a PerfMon
// capture shows (mean / max over the measured period), and each tier's
// rates and durations. A dash marks a counter the tier does not have:
// pipelines outside ASP.NET, calls outside WCF (docs/counters.md).
// printSharedMachines says which tiers share one machine's cores
// (results.Tier.Machine): the table's CPU % is each one's share of it.
func printSharedMachines(w io.Writer, tiers []results.Tier) {
	var ids []int
	names := map[int][]string{}
	util := map[int]float64{}
	cores := map[int]int{}
	for _, x := range tiers {
		if x.Machine == 0 {
			continue
		}
		if _, ok := names[x.Machine]; !ok {
			ids = append(ids, x.Machine)
		}
		names[x.Machine] = append(names[x.Machine], TierLabel(x))
		util[x.Machine] += x.CPUUtil
		cores[x.Machine] = x.Cores
	}
	for _, id := range ids {
		fmt.Fprintf(w, "  (%s share one machine of %d cores: each CPU %% is its share; the machine's is %s %%)\n",
			strings.Join(names[id], " and "), cores[id], FmtFixed(100*util[id], 1))
	}
}

func PrintTiers(w io.Writer, tiers []results.Tier) error {
	t := NewTable(w, 1, "tier", "cores", "CPU %", "executing", "queued", "pipelines", "calls outst.",
		"worker busy", "I/O busy", "wasted CPU s")
	for _, x := range tiers {
		pipes, calls := "–", "–"
		if aspnetHost(x.Host) {
			pipes = MeanMax(x.PipelinesMean, x.PipelinesMax)
		}
		if x.WCF {
			calls = MeanMax(x.OutstandingMean, x.OutstandingMax)
		}
		err := t.Append([]string{
			TierLabel(x),
			strconv.Itoa(x.Cores),
			FmtFixed(100*x.CPUUtil, 1),
			MeanMax(x.ExecutingMean, x.ExecutingMax),
			MeanMax(x.QueuedMean, x.QueuedMax),
			pipes,
			calls,
			MeanMax(x.WorkerBusyMean, x.WorkerBusyMax),
			MeanMax(x.IOBusyMean, x.IOBusyMax),
			FmtFixed(x.WastedCPUSeconds, 1),
		})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  (mean / max over the measured period)")
	printSharedMachines(w, tiers)
	fmt.Fprintln(w)
	t = NewTable(w, 1, "tier", "requests/s", "wait time", "execution time", "calls duration",
		"response p50 / p99", "P(wait)")
	pair := func(a, b float64) string { return FmtLatency(a) + " / " + FmtLatency(b) }
	for _, x := range tiers {
		wait, exec, calls, resp, pw := "–", "–", "–", "–", "–"
		if x.Arrived > 0 || x.Completed > 0 {
			wait, exec = pair(x.WaitTimeMean, x.WaitTimeMax), pair(x.ExecTimeMean, x.ExecTimeMax)
		}
		if x.WCF && x.Calls > 0 {
			calls = pair(x.CallDurationMean, x.CallDurationMax)
		}
		if x.Completed > 0 {
			resp, pw = pair(x.ResponseP50, x.ResponseP99), FmtPercent(x.PWait)
		}
		err := t.Append([]string{TierLabel(x), FmtRate(x.RequestsPerS), wait, exec, calls, resp, pw})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  (arrivals per second; Request Wait Time, Request Execution Time and Calls Duration, mean / max;")
	fmt.Fprintln(w, "   the response time at the tier of the requests it completed, and the share of them that queued)")
	return nil
}

func PrintCalls(w io.Writer, calls []results.Call) error {
	t := NewTable(w, 1, "call", "conn limit", "conns in use", "waiting for a conn", "conn wait mean / p99", "calls", "timed out")
	var notes, noted []string // a farm's machines share one note
	for _, c := range calls {
		name := c.From + " → " + c.To
		limit := "none"
		if c.Limit > 0 {
			limit = strconv.Itoa(c.Limit)
		}
		if c.Resolution != "" {
			if k := slices.Index(noted, c.Resolution); k >= 0 && results.FarmOf(c.From) != c.From {
				head, rest, _ := strings.Cut(notes[k], ": ")
				notes[k] = head + ", " + name + ": " + rest
			} else {
				notes = append(notes, fmt.Sprintf("  %s: %s", name, c.Resolution))
				noted = append(noted, c.Resolution)
			}
		}
		wait := "–"
		if c.Calls > 0 {
			wait = FmtLatency(c.WaitMean) + " / " + FmtLatency(c.WaitP99)
		}
		err := t.Append([]string{
			name,
			limit,
			MeanMax(c.InUseMean, c.InUseMax),
			MeanMax(c.WaitingMean, c.WaitingMax),
			wait,
			strconv.FormatInt(c.Calls, 10),
			strconv.FormatInt(c.TimedOut, 10),
		})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "connection limits:")
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	head := false
	for _, c := range calls {
		if c.Proxies == 0 {
			continue
		}
		if !head {
			fmt.Fprintln(w, "new proxies and their ChannelFactories (cache hits, factories built, purged from the cache):")
			head = true
		}
		fmt.Fprintf(w, "  %s → %s: %d proxies, %d hits (%.0f %%), %d built, %d purged\n", c.From, c.To,
			c.Proxies, c.FactoryHits, 100*float64(c.FactoryHits)/float64(c.Proxies), c.FactoriesBuilt, c.FactoriesPurged)
	}
	return nil
}

// pm formats a confidence half-width as " ±x", or "" without one.
func pm(h *float64, f func(float64) string) string {
	if h == nil || *h == 0 {
		return ""
	}
	return " ±" + f(*h)
}

// FmtLatency writes seconds in a unit that suits them: "850 µs", "45.3 ms",
// "6.50 s".
func FmtLatency(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0"
	case a < 1e-3:
		return Sig3(s*1e6) + " µs"
	case a < 1:
		return Sig3(s*1e3) + " ms"
	default:
		return Sig3(s) + " s"
	}
}

// Sig3 writes x with three significant digits, without exponent for the
// magnitudes latencies have: 45.3, 453, 6.50, 1234.
func Sig3(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
}

// FmtRate writes a per-second rate: "13.3", "1520".
func FmtRate(x float64) string {
	if math.Abs(x) >= 1000 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	if math.Abs(x) >= 100 {
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// FmtPercent writes a fraction as a percentage: "0%", "0.04%", "4.1%", "37%".
func FmtPercent(f float64) string {
	p := 100 * f
	switch a := math.Abs(p); {
	case a == 0:
		return "0%"
	case a < 0.1:
		return strconv.FormatFloat(p, 'f', 2, 64) + "%"
	case a < 10:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	default:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	}
}

func FmtFixed(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// FmtLevel writes a counter level: one decimal below 100, none above.
func FmtLevel(x float64) string {
	if math.Abs(x) >= 100 || x == math.Trunc(x) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

func MeanMax(mean, max float64) string { return FmtLevel(mean) + " / " + FmtLevel(max) }

// maxDescription is the most of a description the tables print.
const maxDescription = 400

// Abbreviate shortens s to at most n runes, ending it with "…" when cut.
func Abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// withMachines is run with the farms' machines after its tiers, in its
// names and series, when the reports show every machine (PerReplica).
func withMachines(r *results.Experiment, run *results.Run) *results.Run {
	if !r.PerReplica || run == nil || len(run.ReplicaNames) == 0 {
		return run
	}
	c := *run
	c.TierNames = append(append([]string(nil), run.TierNames...), run.ReplicaNames...)
	c.Series = make([]results.Sample, len(run.Series))
	for i, s := range run.Series {
		s.Tiers = append(append([]results.TierSample(nil), s.Tiers...), s.Replicas...)
		c.Series[i] = s
	}
	return &c
}

// TierLabel names a tier in the tables: a farm's totals as "web ×4".
func TierLabel(x results.Tier) string {
	if x.Replicas > 0 {
		return fmt.Sprintf("%s ×%d", x.Name, x.Replicas)
	}
	return x.Name
}

// PrintBalancers prints each farm's balancer: its policy, its own door,
// and how many requests it sent to each machine (an imbalance shows here).
func PrintBalancers(w io.Writer, bs []results.Balancer) error {
	t := NewTable(w, 1, "balancer", "policy", "limit", "in use", "waiting", "rejected", "refused", "requests sent to each machine")
	for _, b := range bs {
		limit, inUse, waiting := "none", "–", "–"
		if b.Limit > 0 {
			limit = strconv.Itoa(b.Limit)
			inUse, waiting = MeanMax(b.InUseMean, b.InUseMax), MeanMax(b.WaitingMean, b.WaitingMax)
		}
		var total int64
		for _, n := range b.Sent {
			total += n
		}
		sent := make([]string, len(b.Sent))
		for i, n := range b.Sent {
			sent[i] = strconv.FormatInt(n, 10)
			if total > 0 && len(b.Sent) <= 8 {
				sent[i] += " (" + FmtPercent(float64(n)/float64(total)) + ")"
			}
		}
		err := t.Append([]string{b.Farm, b.Policy, limit, inUse, waiting,
			strconv.FormatInt(b.Rejected, 10), strconv.FormatInt(b.Refused, 10), Abbreviate(strings.Join(sent, ", "), 120)})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  (refused: sent off their session's machine without affinity, and failed there)")
	return nil
}
