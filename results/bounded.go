package results

// Both executors keep their latency points and time series bounded, the
// same way, with these two helpers.

// PointSampler keeps a bounded, deterministic subsample of request
// outcomes: every stride-th; when Max are kept, every other one is dropped
// and the stride doubles. The zero value with Max set is ready to use.
type PointSampler struct {
	Max    int
	points []Point
	stride int64
	seen   int64
}

// Add offers one point.
func (s *PointSampler) Add(p Point) {
	if s.stride == 0 {
		s.stride = 1
	}
	s.seen++
	if s.seen%s.stride != 0 {
		return
	}
	if len(s.points) >= s.Max {
		k := 0
		for i := 1; i < len(s.points); i += 2 {
			s.points[k] = s.points[i]
			k++
		}
		s.points = s.points[:k]
		s.stride *= 2
		if s.seen%s.stride != 0 {
			return
		}
	}
	if len(s.points) == cap(s.points) {
		s.grow()
	}
	s.points = append(s.points, p)
}

// grow makes room for points four times at a time, and for all of Max
// once that is near: append's own growth (a quarter at a time for large
// slices) would allocate about five times the final size on the way to
// it, and this runs in every run.
func (s *PointSampler) grow() {
	n := max(4*cap(s.points), 256)
	if 4*n >= s.Max {
		n = s.Max
	}
	if n <= cap(s.points) {
		return // Max is reached: append grows as it likes (Max changed)
	}
	p := make([]Point, len(s.points), n)
	copy(p, s.points)
	s.points = p
}

// Points returns the points kept, in the order they were added.
func (s *PointSampler) Points() []Point { return s.points }

// CompactSeries halves a time series that has filled up: it keeps the first
// sample (t = 0) and merges the rest in pairs — the later sample's levels
// and totals, the pair's mean CPU and rates (averages over equal
// intervals), its durations' mean weighted by how many ended in each
// interval and their maximum — leaving an unpaired last sample as it is.
// The caller doubles its sampling interval.
func CompactSeries(series []Sample) []Sample {
	if len(series) < 3 {
		return series
	}
	k := 1
	for i := 1; i+1 < len(series); i += 2 {
		a, b := series[i], series[i+1]
		for ti := range b.Tiers {
			mergeInterval(&b.Tiers[ti], &a.Tiers[ti])
		}
		series[k] = b
		k++
	}
	if len(series)%2 == 0 {
		series[k] = series[len(series)-1]
		k++
	}
	return series[:k]
}

// mergeInterval makes b's interval counters cover a's interval too (a, of
// the same length, comes just before), as SampleColumns's Intervals rules
// say.
func mergeInterval(b, a *TierSample) { combineIntervals(SampleColumns, b, a, sampleWeight) }
