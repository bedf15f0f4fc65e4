package loadtest

import (
	"math"
	"sort"

	"github.com/tsim-dev/tsim/results"
)

// Compare puts the measured latency distribution over time next to a
// simulated run's: over the span both cover after warm-up seconds, cut
// into windows of equal length (about twelve, none shorter than ten
// seconds), the requests that ended in each — the measured ones all, the
// simulated ones the run's latency points, a deterministic subsample.
// Offset 0 of the measurement is the run's t = 0 (a replayed trace starts
// there).
func (r *Result) Compare(run *results.Run, warmup float64) *results.LoadTest {
	to := math.Min(run.Duration, r.Span().Seconds())
	from := math.Min(math.Max(warmup, 0), to)
	out := &results.LoadTest{File: r.File, Tool: r.Tool, Requests: int64(len(r.Requests))}
	n := int(math.Max(1, math.Min(12, math.Floor((to-from)/10))))
	w := (to - from) / float64(n)
	type acc struct {
		lat   []float64
		n, ko int64
	}
	meas := make([]acc, n+1) // [n] is the whole
	sims := make([]acc, n+1)
	index := func(t float64) int {
		if t <= from || t > to || w <= 0 {
			return -1
		}
		return min(int((t-from)/w), n-1)
	}
	for _, q := range r.Requests {
		t := q.End().Seconds()
		i := index(t)
		if i < 0 {
			continue
		}
		for _, a := range []*acc{&meas[i], &meas[n]} {
			a.n++
			if q.OK {
				a.lat = append(a.lat, q.Elapsed.Seconds())
			} else {
				a.ko++
			}
		}
	}
	for _, p := range run.Points {
		i := index(p.T)
		if i < 0 {
			continue
		}
		for _, a := range []*acc{&sims[i], &sims[n]} {
			a.n++
			if p.Outcome == results.Completed {
				a.lat = append(a.lat, p.Latency)
			} else {
				a.ko++
			}
		}
	}
	stats := func(a acc) results.LatencyStats {
		s := results.LatencyStats{Requests: a.n, ErrorRate: math.NaN(), MeanS: math.NaN(), P50S: math.NaN(), P90S: math.NaN(), P99S: math.NaN()}
		if a.n > 0 {
			s.ErrorRate = float64(a.ko) / float64(a.n)
		}
		if len(a.lat) == 0 {
			return s
		}
		sort.Float64s(a.lat)
		var sum float64
		for _, x := range a.lat {
			sum += x
		}
		s.MeanS = sum / float64(len(a.lat))
		s.P50S, s.P90S, s.P99S = quantile(a.lat, 0.5), quantile(a.lat, 0.9), quantile(a.lat, 0.99)
		return s
	}
	for i := 0; i < n; i++ {
		out.Windows = append(out.Windows, results.LatencyWindow{FromS: from + float64(i)*w, ToS: from + float64(i+1)*w, Measured: stats(meas[i]), Simulated: stats(sims[i])})
	}
	out.Overall = results.LatencyWindow{FromS: from, ToS: to, Measured: stats(meas[n]), Simulated: stats(sims[n])}
	return out
}

// quantile of sorted xs, by linear interpolation between order statistics.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 1 {
		return xs[0]
	}
	h := q * float64(len(xs)-1)
	i := int(math.Floor(h))
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (h-float64(i))*(xs[i+1]-xs[i])
}

// Attach compares every finished scenario of x that kept its first
// replication (an experiment without a sweep) with the measurement,
// after that run's warm-up, and returns how many it compared.
func (r *Result) Attach(x *results.Experiment) int {
	n := 0
	for _, sc := range x.Done() {
		if sc.First == nil {
			continue
		}
		sc.LoadTest = r.Compare(sc.First, sc.First.Warmup)
		n++
	}
	return n
}
