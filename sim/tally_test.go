package sim

import (
	"math"
	"testing"
)

func TestTallyKnownValues(t *testing.T) {
	var ta Tally
	if !math.IsNaN(ta.Mean()) || !math.IsNaN(ta.Variance()) || !math.IsNaN(ta.Min()) || ta.Count() != 0 || ta.Sum() != 0 {
		t.Fatalf("empty tally: count %d mean %v var %v min %v sum %v", ta.Count(), ta.Mean(), ta.Variance(), ta.Min(), ta.Sum())
	}
	for _, x := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		ta.Add(x)
	}
	// Σx = 40, mean 5, Σ(x−5)² = 32, sample variance 32/7: all exact in
	// binary except 32/7, whose rounding is one ulp.
	if ta.Count() != 8 || ta.Mean() != 5 || ta.Sum() != 40 || ta.Min() != 2 || ta.Max() != 9 {
		t.Fatalf("got n=%d mean=%v sum=%v min=%v max=%v", ta.Count(), ta.Mean(), ta.Sum(), ta.Min(), ta.Max())
	}
	if got, want := ta.Variance(), 32.0/7; math.Abs(got-want) > 4*statULP(want) {
		t.Fatalf("variance %v, want %v", got, want)
	}
	if got, want := ta.StdDev(), math.Sqrt(32.0/7); math.Abs(got-want) > 4*statULP(want) {
		t.Fatalf("stddev %v, want %v", got, want)
	}
	ta.Reset()
	if ta.Count() != 0 || !math.IsNaN(ta.Mean()) {
		t.Fatalf("after Reset: n=%d mean=%v", ta.Count(), ta.Mean())
	}
}

// A large offset ruins the textbook Σx² − (Σx)²/n formula; Welford keeps the
// spread. Data 1e9+{4,7,13,16}: mean 1e9+10, Σ(x−x̄)² = 36+9+9+36 = 90,
// sample variance 30.
func TestTallyLargeOffset(t *testing.T) {
	var ta Tally
	for _, x := range []float64{4, 7, 13, 16} {
		ta.Add(1e9 + x)
	}
	// Each update loses at most an ulp of 1e9 (≈1.2e-7) in the mean, which
	// perturbs the squared deviations by about 2·|x−x̄|·1.2e-7 ≈ 4e-6.
	if got := ta.Variance(); math.Abs(got-30) > 1e-5 {
		t.Fatalf("variance %v, want 30", got)
	}
}

// statULP returns the spacing of float64 values at x.
func statULP(x float64) float64 { return math.Nextafter(x, math.Inf(1)) - x }

// statTwoPass is the reference: mean, then Σ(x−mean)²/(n−1).
func statTwoPass(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

func TestTallyMatchesTwoPassAndMerges(t *testing.T) {
	st := NewStreams(1).Stream("tally")
	xs := make([]float64, 10007)
	for i := range xs {
		xs[i] = 3 + 2*st.NormFloat64() + float64(i%7)
	}
	wantMean, wantVar := statTwoPass(xs)

	var whole, a, b Tally
	for i, x := range xs {
		whole.Add(x)
		if i < 3001 {
			a.Add(x)
		} else {
			b.Add(x)
		}
	}
	var empty Tally
	a.Merge(&b)
	a.Merge(&empty) // no-op
	empty.Merge(&a) // copy
	// Both algorithms are backward stable: the relative error of a sum of
	// n terms is O(n·ε) in the worst case (Higham, Accuracy and Stability,
	// §4.2), here 1e4·2.2e-16 ≈ 2e-12.
	tol := func(want float64) float64 { return float64(len(xs)) * 2.3e-16 * math.Abs(want) }
	for _, c := range []struct {
		name string
		ta   *Tally
	}{{"single pass", &whole}, {"merged", &a}, {"merged into empty", &empty}} {
		if c.ta.Count() != int64(len(xs)) {
			t.Errorf("%s: count %d", c.name, c.ta.Count())
		}
		if math.Abs(c.ta.Mean()-wantMean) > tol(wantMean) {
			t.Errorf("%s: mean %v, want %v", c.name, c.ta.Mean(), wantMean)
		}
		if math.Abs(c.ta.Variance()-wantVar) > tol(wantVar) {
			t.Errorf("%s: variance %v, want %v", c.name, c.ta.Variance(), wantVar)
		}
		if c.ta.Min() != whole.Min() || c.ta.Max() != whole.Max() {
			t.Errorf("%s: min/max %v/%v, want %v/%v", c.name, c.ta.Min(), c.ta.Max(), whole.Min(), whole.Max())
		}
	}
}

func TestTallyAddAllocatesNothing(t *testing.T) {
	var ta Tally
	if n := testing.AllocsPerRun(1000, func() { ta.Add(1.5) }); n != 0 {
		t.Fatalf("Tally.Add allocates %v times", n)
	}
}

func BenchmarkTallyAdd(b *testing.B) {
	b.ReportAllocs()
	var ta Tally
	x := 0.0
	for b.Loop() {
		ta.Add(x)
		x += 0.5
	}
}
