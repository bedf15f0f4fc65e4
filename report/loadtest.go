package report

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/results"
)

// A scenario compared with a load test's measurement (tsim run
// --measured, package loadtest) has a results.LoadTest: it goes into
// summary.json ("load_test"), loadtest.csv, loadtest.png and a table.

// hasLoadTest reports whether any finished scenario was compared.
func hasLoadTest(r *results.Experiment) bool {
	for _, sc := range r.Done() {
		if sc.LoadTest != nil {
			return true
		}
	}
	return false
}

// LoadTestCSV renders loadtest.csv: per compared scenario, a row per
// window and one for the whole span ("all"), measured and simulated side
// by side; latencies in seconds, empty where no request succeeded.
func LoadTestCSV(r *results.Experiment) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("variant,window,from_s,to_s,measured_requests,measured_error_rate,measured_mean_s,measured_p50_s,measured_p90_s,measured_p99_s," +
		"simulated_requests,simulated_error_rate,simulated_mean_s,simulated_p50_s,simulated_p90_s,simulated_p99_s\n")
	num := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return csvFloat(x)
	}
	stats := func(s results.LatencyStats) string {
		return fmt.Sprintf("%d,%s,%s,%s,%s,%s", s.Requests, num(s.ErrorRate), num(s.MeanS), num(s.P50S), num(s.P90S), num(s.P99S))
	}
	for _, sc := range r.Done() {
		lt := sc.LoadTest
		if lt == nil {
			continue
		}
		row := func(name string, w results.LatencyWindow) {
			line := csvField(nil, sc.Variant)
			fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s\n", line, name, num(w.FromS), num(w.ToS), stats(w.Measured), stats(w.Simulated))
		}
		for i, w := range lt.Windows {
			row(fmt.Sprint(i+1), w)
		}
		row("all", lt.Overall)
	}
	return b.Bytes(), nil
}

// loadTestPicture draws loadtest.png: a row per compared scenario, the
// median, the 90th and the 99th percentile of the latency over time,
// measured and simulated, window by window.
func loadTestPicture(r *results.Experiment) picture {
	var rows [][]plots.CalibrationPanel
	warm := 0.0
	var file string
	for _, sc := range r.Done() {
		lt := sc.LoadTest
		if lt == nil {
			continue
		}
		file, warm = lt.File, lt.Overall.FromS
		var row []plots.CalibrationPanel
		for _, q := range []struct {
			name string
			get  func(results.LatencyStats) float64
		}{
			{"p50", func(s results.LatencyStats) float64 { return s.P50S }},
			{"p90", func(s results.LatencyStats) float64 { return s.P90S }},
			{"p99", func(s results.LatencyStats) float64 { return s.P99S }},
		} {
			var m, s []plots.TimeValue
			for _, w := range lt.Windows {
				mid := (w.FromS + w.ToS) / 2
				if v := q.get(w.Measured); !math.IsNaN(v) {
					m = append(m, plots.TimeValue{T: mid, V: v})
				}
				if v := q.get(w.Simulated); !math.IsNaN(v) {
					s = append(s, plots.TimeValue{T: mid, V: v})
				}
			}
			row = append(row, plots.CalibrationPanel{
				Title:     sc.Variant + ": latency " + q.name,
				Unit:      "s",
				Measured:  m,
				Simulated: s,
				Legend:    [2]string{"measured (" + lt.Tool + "), " + fmtStat(q.get(lt.Overall.Measured)), "simulated, " + fmtStat(q.get(lt.Overall.Simulated))},
			})
		}
		rows = append(rows, row)
	}
	f, err := plots.Calibration(r.Name+": client latency, measured by the load test and simulated", "by window of the run; "+file, rows, warm)
	return picture{"loadtest.png", f, err}
}

func fmtStat(x float64) string {
	if math.IsNaN(x) {
		return "–"
	}
	return results.FmtLatency(x) + " over the run"
}

// PrintLoadTest prints, per compared scenario, the latency measured by the
// load test against the simulated one, window by window.
func PrintLoadTest(w io.Writer, r *results.Experiment) error {
	for _, sc := range r.Done() {
		lt := sc.LoadTest
		if lt == nil {
			continue
		}
		fmt.Fprintf(w, "variant %s against %s (%s, %d requests): latency of the requests that ended in each window, measured / simulated\n", sc.Variant, lt.File, lt.Tool, lt.Requests)
		t := NewTable(w, 1, "window", "requests", "errors", "p50", "p90", "p99")
		lat := func(x float64) string {
			if math.IsNaN(x) {
				return "–"
			}
			return results.FmtLatency(x)
		}
		pct := func(x float64) string {
			if math.IsNaN(x) {
				return "–"
			}
			return results.FmtPercent(x)
		}
		pair := func(a, b string) string { return a + " / " + b }
		add := func(name string, x results.LatencyWindow) error {
			m, s := x.Measured, x.Simulated
			return t.Append([]string{name, pair(fmt.Sprint(m.Requests), fmt.Sprint(s.Requests)), pair(pct(m.ErrorRate), pct(s.ErrorRate)),
				pair(lat(m.P50S), lat(s.P50S)), pair(lat(m.P90S), lat(s.P90S)), pair(lat(m.P99S), lat(s.P99S))})
		}
		for _, x := range lt.Windows {
			if err := add(FmtSeconds(x.FromS)+"–"+FmtSeconds(x.ToS), x); err != nil {
				return err
			}
		}
		if err := add("all", lt.Overall); err != nil {
			return err
		}
		if err := t.Render(); err != nil {
			return err
		}
		fmt.Fprintln(w, "  (simulated requests: the run's latency points, a deterministic subsample)")
		fmt.Fprintln(w)
	}
	return nil
}
