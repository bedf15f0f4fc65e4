package results

import (
	"encoding/json"
	"math"
)

// LoadTest is a load-test tool's measurement (JMeter, k6, Gatling: package
// loadtest) next to a scenario's simulated run: the latency distribution
// of its requests over time, window by window, measured and simulated.
type LoadTest struct {
	File     string `json:"file"`
	Tool     string `json:"tool"`
	Requests int64  `json:"requests"` // measured requests in the file
	// Overall is the whole compared span after the warm-up, Windows its
	// parts in order; each holds the requests that ended in it.
	Overall LatencyWindow   `json:"overall"`
	Windows []LatencyWindow `json:"windows"`
}

// LatencyWindow is a span of the run, measured against simulated.
type LatencyWindow struct {
	FromS     float64      `json:"from_s"`
	ToS       float64      `json:"to_s"`
	Measured  LatencyStats `json:"measured"`
	Simulated LatencyStats `json:"simulated"`
}

// LatencyStats describe the requests that ended in a window: how many
// (simulated: the run's latency points, a deterministic subsample of its
// requests), the share that failed (measured: the tool's failures;
// simulated: timed out, rejected or failed) and the latency of those that
// succeeded, in seconds (NaN when none did).
type LatencyStats struct {
	Requests  int64   `json:"requests"`
	ErrorRate float64 `json:"error_rate"`
	MeanS     float64 `json:"mean_s"`
	P50S      float64 `json:"p50_s"`
	P90S      float64 `json:"p90_s"`
	P99S      float64 `json:"p99_s"`
}

// MarshalJSON writes null for a latency of no request (NaN).
func (s LatencyStats) MarshalJSON() ([]byte, error) {
	num := func(x float64) any {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return x
	}
	return json.Marshal(struct {
		Requests  int64 `json:"requests"`
		ErrorRate any   `json:"error_rate"`
		MeanS     any   `json:"mean_s"`
		P50S      any   `json:"p50_s"`
		P90S      any   `json:"p90_s"`
		P99S      any   `json:"p99_s"`
	}{s.Requests, num(s.ErrorRate), num(s.MeanS), num(s.P50S), num(s.P90S), num(s.P99S)})
}
