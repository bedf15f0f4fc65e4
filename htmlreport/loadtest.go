package htmlreport

import (
	"math"

	"github.com/tsim-dev/tsim/results"
)

// loadTestSection shows a load test's measurement (tsim run --measured)
// against each compared variant's simulated run, as loadtest.png and
// loadtest.csv do: a table of the whole compared span, and per variant the
// latency quantiles window by window, measured (solid) and simulated
// (dashed), and the share of requests that failed. Nil without one.
func loadTestSection(done []*results.Scenario) *Section {
	var s *Section
	g := &Grid{Columns: 1}
	t := &Table{Left: 2, Caption: "The whole compared span, after the warm-up",
		Header: []string{"variant", "", "requests", "failed", "mean", "p50", "p90", "p99"},
		Titles: []string{"", "", "requests that ended in the span (simulated: the run's latency points, a regular subsample)", "measured: the tool's failures; simulated: timed out, rejected or failed", "latency of the requests that succeeded", "", "", ""}}
	for _, sc := range done {
		lt := sc.LoadTest
		if lt == nil {
			continue
		}
		if s == nil {
			s = &Section{ID: "loadtest", Title: "Load test against simulated"}
			s.Text("Client latency measured by the load test (%s, %s, %s requests) against the simulated run of each variant, window by window: the quantiles of the requests that ended in each window, measured solid and simulated dashed, at the window's middle; the share that failed below. %s",
				lt.Tool, lt.File, fmtInt(lt.Requests), howTo)
		}
		for _, side := range []struct {
			name string
			st   results.LatencyStats
		}{{"measured", lt.Overall.Measured}, {"simulated", lt.Overall.Simulated}} {
			lat := func(v float64) string {
				if math.IsNaN(v) {
					return "–"
				}
				return results.FmtLatency(v)
			}
			st := side.st
			t.Rows = append(t.Rows, []string{sc.Variant, side.name, fmtInt(st.Requests), results.FmtPercent(st.ErrorRate),
				lat(st.MeanS), lat(st.P50S), lat(st.P90S), lat(st.P99S)})
		}
		g.Charts = append(g.Charts, loadTestCharts(sc.Variant, lt)...)
	}
	if s == nil {
		return nil
	}
	s.Add(Block{Table: t}, Block{Charts: g})
	return s
}

// loadTestCharts are one variant's latency and failure charts.
func loadTestCharts(variant string, lt *results.LoadTest) []*Chart {
	var x Exact
	for _, w := range lt.Windows {
		mid := (w.FromS + w.ToS) / 2
		if k := len(x); k > 0 && !(mid > x[k-1]) {
			return nil // windows in order, or nothing
		}
		x = append(x, mid)
	}
	if len(x) == 0 {
		return nil
	}
	col := func(get func(results.LatencyStats) float64, measured bool, scale float64) Column {
		c := make(Column, len(lt.Windows))
		for i, w := range lt.Windows {
			st := w.Simulated
			if measured {
				st = w.Measured
			}
			c[i] = get(st) * scale
		}
		return c
	}
	lat := &Chart{ID: "loadtest/" + variant, Title: variant + ": client latency, measured by " + lt.Tool + " and simulated",
		Height: 260, Sync: "counters", X: Axis{Label: "time (s)", Unit: "s"}, Y: Axis{Label: "latency (s)", Unit: "s", Min: ptr(0)}}
	quantiles := []struct {
		name string
		get  func(results.LatencyStats) float64
	}{
		{"p50", func(s results.LatencyStats) float64 { return s.P50S }},
		{"p90", func(s results.LatencyStats) float64 { return s.P90S }},
		{"p99", func(s results.LatencyStats) float64 { return s.P99S }},
	}
	var f Frame
	f.X = x
	for i, q := range quantiles {
		for _, measured := range []bool{true, false} {
			s := Series{Label: "simulated " + q.name, Key: q.name, Color: palette[i], Width: 1.5, Dash: []int{6, 4}}
			if measured {
				s = Series{Label: "measured " + q.name, Key: q.name, Color: palette[i], Width: 2}
			}
			lat.Series = append(lat.Series, s)
			f.Y = append(f.Y, col(q.get, measured, 1))
		}
	}
	lat.Frames = []Frame{f}
	errRate := func(s results.LatencyStats) float64 { return s.ErrorRate }
	fail := &Chart{ID: "loadtest/" + variant + "/failed", Title: variant + ": requests that failed, measured and simulated",
		Height: 160, Sync: "counters", X: Axis{Label: "time (s)", Unit: "s"}, Y: Axis{Label: "failed (%)", Unit: "%", Min: ptr(0)},
		Series: []Series{{Label: "measured", Color: palette[5], Width: 2}, {Label: "simulated", Color: palette[5], Width: 1.5, Dash: []int{6, 4}}},
		Frames: []Frame{{X: x, Y: []Column{col(errRate, true, 100), col(errRate, false, 100)}}}}
	return []*Chart{lat, fail}
}
