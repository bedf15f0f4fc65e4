package sim

import (
	"math"
	"math/bits"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HistogramMax is the largest duration a Histogram resolves. Larger values
// are counted (see Clamped) and kept exactly in Mean and Max, but fall in the
// top bucket, so quantiles above it saturate at about HistogramMax.
const HistogramMax = time.Hour

// histogramDigits is the HdrHistogram precision. Two significant digits give
// 256 sub-buckets per power of two, so every bucket at or above 128 ns is at
// most 1/128 (0.78%) of its lower edge wide, and values below 256 ns are
// exact: every quantile from 0 to HistogramMax is within 0.78% relative,
// inside the 1% target, for 4608 counters (about 37 KB). Three digits would
// give 0.1% for about 270 KB per histogram.
const histogramDigits = 2

// Histogram records durations in bounded memory and answers quantile queries
// with a relative error of at most 1/128 (see histogramDigits). It is a
// log-linear HdrHistogram (Tene) over nanoseconds, plus an exact count, sum,
// minimum and maximum. Recording never allocates.
//
// Record counts into the HdrHistogram's bucket layout directly (a few
// instructions, where HdrHistogram's RecordValue takes about a hundred);
// the first query after a Record imports the counts into an
// hdrhistogram.Histogram, which answers it.
//
// Like an Engine, a Histogram belongs to one goroutine at a time: even a
// query updates it. Use NewHistogram; the zero value is not usable.
type Histogram struct {
	counts   []int64                 // HdrHistogram's counts, in its layout
	h        *hdrhistogram.Histogram // counts imported
	fresh    bool                    // h answers for the counts as they are
	n        int64
	sumHi    uint64 // 128-bit exact sum of recorded nanoseconds
	sumLo    uint64
	min, max time.Duration
	clamped  int64
}

// The HdrHistogram layout of (1 ns, HistogramMax, histogramDigits), as
// hdrhistogram.New computes it (a test compares): 2 digits need unit
// resolution up to 2·10², so 2⁸ sub-buckets, of which the upper half are
// new in each bucket after the first; the unit is 1 ns (magnitude 0).
const (
	histSubHalfMag   = 7
	histSubHalfCount = 1 << histSubHalfMag
	histSubMask      = 1<<(histSubHalfMag+1) - 1
	histCountsLen    = 4608
)

// histIndex is HdrHistogram's countsIndexFor(v) for that layout.
func histIndex(v int64) int {
	b := 64 - bits.LeadingZeros64(uint64(v)|histSubMask) - (histSubHalfMag + 1)
	return (b+1)<<histSubHalfMag + int(v>>uint(b)) - histSubHalfCount
}

// NewHistogram returns an empty histogram resolving 0 to HistogramMax.
func NewHistogram() *Histogram {
	return &Histogram{counts: make([]int64, histCountsLen)}
}

// hdr returns the counts as an hdrhistogram.Histogram.
func (h *Histogram) hdr() *hdrhistogram.Histogram {
	if !h.fresh {
		// Import adopts the counts slice; it sums the total count.
		h.h = hdrhistogram.Import(&hdrhistogram.Snapshot{
			LowestTrackableValue:  1,
			HighestTrackableValue: int64(HistogramMax),
			SignificantFigures:    histogramDigits,
			Counts:                h.counts,
		})
		h.fresh = true
	}
	return h.h
}

// Record adds one duration. Negative durations count as zero; durations above
// HistogramMax are counted by Clamped and bucketed at HistogramMax.
func (h *Histogram) Record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	v := int64(d)
	if d > HistogramMax {
		v = int64(HistogramMax)
		h.clamped++
	}
	h.counts[histIndex(v)]++
	h.fresh = false
	var c uint64
	h.sumLo, c = bits.Add64(h.sumLo, uint64(d), 0)
	h.sumHi += c
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
}

// Count returns the number of recorded durations.
func (h *Histogram) Count() int64 { return h.n }

// Clamped returns how many recorded durations exceeded HistogramMax.
func (h *Histogram) Clamped() int64 { return h.clamped }

// Quantile returns the q-quantile (q in [0,1]; clamped into it) of the
// recorded durations: the upper edge of the bucket that holds the sample of
// rank round(q·n), so it overstates that sample by at most 1/128 of it.
// Quantile(0) is the exact Min and Quantile(1) the exact Max; every result
// lies within [Min, Max]. An empty histogram, or a NaN q, gives 0.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 || math.IsNaN(q) {
		return 0
	}
	if q <= 0 {
		return h.min
	}
	if q >= 1 {
		return h.max
	}
	v := time.Duration(h.hdr().ValueAtQuantile(q * 100))
	return min(max(v, h.min), h.max)
}

// Mean returns the exact mean of the recorded durations, rounded to the
// nanosecond (0 if empty). The sum is kept in 128 bits, so it cannot
// overflow.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	n := uint64(h.n)
	// Every value is below 2^63, so sum < n·2^63 and sumHi < n: the
	// quotient fits in 63 bits and Div64 cannot panic.
	q, r := bits.Div64(h.sumHi, h.sumLo, n)
	if r >= n-r { // round half up
		q++
	}
	return time.Duration(q)
}

// Min returns the exact smallest recorded duration (0 if empty).
func (h *Histogram) Min() time.Duration { return h.min }

// Max returns the exact largest recorded duration (0 if empty).
func (h *Histogram) Max() time.Duration { return h.max }

// Merge adds o's durations to h, as if h had recorded them too. o is not
// modified.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	// HdrHistogram's Merge of an equal layout adds the counts bucket by
	// bucket (a test compares).
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.fresh = false
	var c uint64
	h.sumLo, c = bits.Add64(h.sumLo, o.sumLo, 0)
	h.sumHi += o.sumHi + c
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.clamped += o.clamped
}

// Reset empties the histogram, keeping its memory.
func (h *Histogram) Reset() {
	clear(h.counts)
	h.fresh = false
	h.n, h.sumHi, h.sumLo, h.min, h.max, h.clamped = 0, 0, 0, 0, 0, 0
}

// Quantiles returns Quantile(q) for each of qs (ascending or not) in one
// pass over the buckets, for the many points of a distribution plot.
func (h *Histogram) Quantiles(qs []float64) []time.Duration {
	out := make([]time.Duration, len(qs))
	if h.n == 0 {
		return out
	}
	ps := make([]float64, 0, len(qs))
	for _, q := range qs {
		if q > 0 && q < 1 && !math.IsNaN(q) {
			ps = append(ps, q*100)
		}
	}
	vals := h.hdr().ValueAtPercentiles(ps)
	for i, q := range qs {
		switch {
		case math.IsNaN(q):
		case q <= 0:
			out[i] = h.min
		case q >= 1:
			out[i] = h.max
		default:
			v := time.Duration(vals[q*100])
			out[i] = min(max(v, h.min), h.max)
		}
	}
	return out
}
