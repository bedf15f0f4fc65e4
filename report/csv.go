package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"

	"github.com/tsim-dev/tsim/results"
)

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

// timeseriesColumns are timeseries.csv's counter columns, in order: the
// named columns of results.SampleColumns (docs/counters.md defines them);
// perfmon.csv's counters name theirs (PerfmonColumn.Column).
var timeseriesColumns = func() []results.Column[results.TierSample] {
	var out []results.Column[results.TierSample]
	for _, c := range results.SampleColumns {
		if c.Name != "" {
			out = append(out, c)
		}
	}
	return out
}()

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
		b = csvField(b, c.Name)
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
					b = appendCSVFloat(b, *c.F(&tiers[i]))
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
