package sim

import (
	"math"
	"slices"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// histBucketRel is the structural error bound of the histogram: with two
// significant digits, a bucket at or above 128 ns is at most 1/128 of its
// lower edge wide, and Quantile returns the bucket's upper edge.
const histBucketRel = 1.0 / 128

func TestHistogramLognormalQuantiles(t *testing.T) {
	const n = 1_000_000
	st := NewStreams(7).Stream("latency")
	h := NewHistogram()
	xs := make([]time.Duration, n)
	var sum float64
	for i := range xs {
		// Lognormal with median 10 ms and σ = 1.5: spans about 10 µs to
		// 10 s over a million draws.
		d := FromSeconds(0.010 * math.Exp(1.5*st.NormFloat64()))
		xs[i] = d
		sum += float64(d)
		h.Record(d)
	}
	slices.Sort(xs)
	if h.Count() != n || h.Min() != xs[0] || h.Max() != xs[n-1] || h.Clamped() != 0 {
		t.Fatalf("count %d min %v max %v clamped %d; want %d %v %v 0", h.Count(), h.Min(), h.Max(), h.Clamped(), n, xs[0], xs[n-1])
	}
	// The reference float sum has relative error ≤ n·ε (Higham §4.2), and
	// the exact mean is rounded to the nanosecond: allow 1 ns + mean·n·ε.
	if got, want := float64(h.Mean()), sum/n; math.Abs(got-want) > 1+want*n*2.3e-16 {
		t.Fatalf("mean %v, want %v", h.Mean(), time.Duration(want))
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		// The exact quantile is the order statistic of rank round(q·n),
		// the rank HdrHistogram looks up (q·n is an integer here, so this
		// is also the inverse-ECDF definition ⌈q·n⌉).
		rank := int(math.Round(q * n))
		want := xs[rank-1]
		got := h.Quantile(q)
		rel := float64(got-want) / float64(want)
		t.Logf("p%v: histogram %v, exact %v, relative error %+.4f%%", q*100, got, want, 100*rel)
		// 0 ≤ rel ≤ 1/128 < 1%: the upper edge of the sample's bucket.
		if rel < 0 || rel > histBucketRel {
			t.Errorf("p%v = %v, exact %v: relative error %v outside [0, 1/128]", q*100, got, want, rel)
		}
	}
	if h.Quantile(0) != xs[0] || h.Quantile(1) != xs[n-1] || h.Quantile(-1) != xs[0] || h.Quantile(2) != xs[n-1] {
		t.Errorf("extreme quantiles are not the exact min and max")
	}
}

// Every value from 1 ns to HistogramMax, on a log grid, comes back within the
// bucket bound; below 256 ns buckets are 1 ns wide, so values are exact.
func TestHistogramResolutionOverRange(t *testing.T) {
	h := NewHistogram()
	for v := 1.0; v <= float64(HistogramMax); v *= 1.0137 {
		d := time.Duration(v)
		h.Reset()
		h.Record(d)
		h.Record(2 * d) // keeps the [Min, Max] clamp from hiding the bucket
		got := h.Quantile(0.5)
		rel := float64(got-d) / float64(d)
		if rel < 0 || rel > histBucketRel || (d < 256 && got != d) {
			t.Fatalf("value %v reads back as %v (relative error %v)", d, got, rel)
		}
	}
}

func TestHistogramClampNegativeEmpty(t *testing.T) {
	h := NewHistogram()
	if h.Quantile(0.5) != 0 || h.Mean() != 0 || h.Min() != 0 || h.Max() != 0 || h.Quantile(math.NaN()) != 0 {
		t.Fatal("empty histogram is not all zero")
	}
	h.Record(-time.Second)
	h.Record(2 * time.Hour)
	h.Record(time.Duration(math.MaxInt64))
	if h.Count() != 3 || h.Clamped() != 2 || h.Min() != 0 || h.Max() != time.Duration(math.MaxInt64) {
		t.Fatalf("count %d clamped %d min %v max %v", h.Count(), h.Clamped(), h.Min(), h.Max())
	}
	// Exact 128-bit mean: (0 + 7.2e12 + (2^63−1)) / 3, rounded.
	want := (uint64(2*time.Hour) + math.MaxInt64 + 1) / 3
	if h.Mean() != time.Duration(want) {
		t.Fatalf("mean %d, want %d", h.Mean(), want)
	}
	// The clamped values sit in the top bucket: the median saturates there.
	if q := h.Quantile(0.5); q < HistogramMax || float64(q-HistogramMax) > histBucketRel*float64(HistogramMax) {
		t.Fatalf("median of clamped values %v, want about %v", q, HistogramMax)
	}
}

func TestHistogramMergeEqualsOneHistogram(t *testing.T) {
	st := NewStreams(3).Stream("merge")
	all, a, b := NewHistogram(), NewHistogram(), NewHistogram()
	for i := range 50000 {
		d := FromSeconds(st.ExpFloat64() * 0.02)
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	empty := NewHistogram()
	a.Merge(b)
	a.Merge(empty)
	empty.Merge(a)
	for _, h := range []*Histogram{a, empty} {
		if h.Count() != all.Count() || h.Mean() != all.Mean() || h.Min() != all.Min() || h.Max() != all.Max() {
			t.Fatalf("merged count/mean/min/max %d %v %v %v, want %d %v %v %v",
				h.Count(), h.Mean(), h.Min(), h.Max(), all.Count(), all.Mean(), all.Min(), all.Max())
		}
		for q := 0.0; q <= 1; q += 0.01 {
			if h.Quantile(q) != all.Quantile(q) {
				t.Fatalf("merged q%v = %v, want %v", q, h.Quantile(q), all.Quantile(q))
			}
		}
	}
}

func TestHistogramRecordAllocatesNothing(t *testing.T) {
	h := NewHistogram()
	d := time.Duration(1)
	if n := testing.AllocsPerRun(1000, func() { h.Record(d); d = d*3 + 7 }); n != 0 {
		t.Fatalf("Histogram.Record allocates %v times", n)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	b.ReportAllocs()
	h := NewHistogram()
	d := time.Duration(12345)
	for b.Loop() {
		h.Record(d)
		d = (d*1103515245 + 12345) & (1<<38 - 1) // spread over 0..275 s
	}
}

func TestQuantilesMatchesQuantile(t *testing.T) {
	h := NewHistogram()
	s := NewStreams(3).Stream("q")
	for i := 0; i < 100000; i++ {
		h.Record(FromSeconds(s.ExpFloat64()))
	}
	qs := []float64{0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1}
	got := h.Quantiles(qs)
	for i, q := range qs {
		if want := h.Quantile(q); got[i] != want {
			t.Errorf("Quantiles(%v) = %v, Quantile = %v", q, got[i], want)
		}
	}
}

// Record counts in HdrHistogram's own layout: recording values of every
// magnitude here and into an hdrhistogram.Histogram of the same parameters
// gives the same counts (its Export), the same quantiles, and so does
// merging histograms.
func TestHistogramCountsAsHdrHistogram(t *testing.T) {
	ref := hdrhistogram.New(1, int64(HistogramMax), histogramDigits)
	if n := len(ref.Export().Counts); n != histCountsLen {
		t.Fatalf("HdrHistogram has %d counts, the layout here %d", n, histCountsLen)
	}
	h, a, b := NewHistogram(), NewHistogram(), NewHistogram()
	st := NewStreams(9).Stream("hdr")
	for i := 0; i < 300_000; i++ {
		var v int64
		switch i % 3 {
		case 0:
			v = int64(st.IntN(1 << 12)) // the exact, 1 ns buckets and their edges
		case 1:
			v = min(int64(math.Ldexp(1+st.Float64(), st.IntN(42))), int64(HistogramMax)) // every power of two up to an hour
		default:
			v = st.Int64N(int64(HistogramMax) + 1)
		}
		if i < 64 {
			v = []int64{0, 1, 127, 128, 255, 256, 257, 511, 512, int64(HistogramMax), int64(HistogramMax) - 1}[i%11]
		}
		if err := ref.RecordValue(v); err != nil {
			t.Fatal(err)
		}
		h.Record(time.Duration(v))
		if i%2 == 0 {
			a.Record(time.Duration(v))
		} else {
			b.Record(time.Duration(v))
		}
	}
	if !slices.Equal(ref.Export().Counts, h.counts) {
		t.Fatal("counts differ from HdrHistogram's")
	}
	a.Merge(b)
	if !slices.Equal(a.counts, h.counts) {
		t.Fatal("merged counts differ")
	}
	m := hdrhistogram.New(1, int64(HistogramMax), histogramDigits)
	m.Merge(ref)
	if !slices.Equal(m.Export().Counts, h.counts) {
		t.Fatal("HdrHistogram's Merge does not add counts bucket by bucket")
	}
	for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999} {
		want := min(max(time.Duration(ref.ValueAtQuantile(q*100)), h.Min()), h.Max())
		if got := h.Quantile(q); got != want {
			t.Fatalf("Quantile(%v) = %v, HdrHistogram %v", q, got, want)
		}
		if got := a.Quantile(q); got != want {
			t.Fatalf("merged Quantile(%v) = %v, HdrHistogram %v", q, got, want)
		}
	}
	// A Record after a query is seen by the next query.
	before := h.Quantile(0.5)
	for i := 0; i < 1_000_000; i++ {
		h.Record(time.Duration(HistogramMax))
	}
	if after := h.Quantile(0.5); after == before {
		t.Fatal("a query after Record answered from stale counts")
	}
}
