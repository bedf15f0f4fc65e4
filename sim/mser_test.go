package sim

import (
	"math"
	"testing"
)

func TestMSER5SmallCases(t *testing.T) {
	if d := MSER5(nil); d != 0 {
		t.Errorf("MSER5(nil) = %d", d)
	}
	if d := MSER5(make([]float64, 14)); d != 0 {
		t.Errorf("two batches: MSER5 = %d, want 0", d)
	}
	// Batch means 100, 1, 1, 1, 1, 1 (then 2 left over): deleting the first
	// batch leaves zero spread, MSER(1) = 0.
	xs := []float64{100, 100, 100, 100, 100}
	for range 27 {
		xs = append(xs, 1)
	}
	if d := MSER5(xs); d != 5 {
		t.Errorf("one outlying batch: MSER5 = %d, want 5", d)
	}
}

// A transient x_t = 1 + A·e^{−t/τ} + σ·ε_t on top of stationary noise.
//
// Where MSER puts the cut: with k−d batch means of variance σ_z² = σ²/5 left,
// MSER(d) ≈ Σ(z−z̄)²/(k−d)², and deleting one more batch of bias b lowers the
// sum by about b² + σ_z² while the divisor shrinks by 2/(k−d) relative, i.e.
// by about 2σ_z² in the sum's units. So deletion pays while b² > σ_z²: the
// cut falls where the bias has decayed to one batch-mean standard deviation,
// t* = τ·ln(A/σ_z) = 50·ln(9·√5/0.5) ≈ 184.8 observations.
func TestMSER5DeletesTransient(t *testing.T) {
	const (
		n          = 5000
		a, tau, sd = 9.0, 50.0, 0.5
		runs       = 200
	)
	sdZ := sd / math.Sqrt(mserBatch)
	tStar := tau * math.Log(a/sdZ)
	// Each run's cut must leave a residual bias within a factor 8 of σ_z:
	// t in [τ·ln(A/(8σ_z)), τ·ln(8A/σ_z)] ≈ [81, 289].
	lo, hi := tau*math.Log(a/(8*sdZ)), tau*math.Log(8*a/sdZ)
	var cuts Tally
	xs := make([]float64, n)
	for seed := range uint64(runs) {
		st := NewStreams(seed).Stream("mser")
		for i := range xs {
			xs[i] = 1 + a*math.Exp(-float64(i)/tau) + sd*st.NormFloat64()
		}
		d := MSER5(xs)
		if d%mserBatch != 0 || float64(d) < lo || float64(d) > hi {
			t.Errorf("seed %d: MSER5 deleted %d, want a multiple of 5 in [%.0f, %.0f]", seed, d, lo, hi)
		}
		cuts.Add(float64(d))
	}
	// The mean cut over the runs matches t* within 3 standard errors
	// (s/√runs), plus 5 for the cut being rounded to a whole batch.
	tol := 3*cuts.StdDev()/math.Sqrt(runs) + mserBatch
	t.Logf("mean cut %.1f ± %.1f (sd %.1f), predicted %.1f", cuts.Mean(), tol, cuts.StdDev(), tStar)
	if math.Abs(cuts.Mean()-tStar) > tol {
		t.Errorf("mean cut %.1f, want %.1f ± %.1f", cuts.Mean(), tStar, tol)
	}
}

// On a stationary series there is nothing to delete. Deleting the first j
// iid batches pays only if their squared deviations exceed about 2j·σ_z²
// (the argument above with b = 0), a χ²_j > 2j event: P(χ²_50 > 100) =
// 3.5e-5, so no run of 200 should cut 50 batches (5% of the series) but with
// probability < 0.01; and E[cut] ≈ Σ_j P(χ²_j > 2j) ≈ 0.94 batches, so the
// mean cut stays far below 1% of the series and most runs cut nothing.
func TestMSER5StationaryDeletesAlmostNothing(t *testing.T) {
	const (
		n    = 5000
		runs = 200
	)
	var cuts Tally
	zero := 0
	xs := make([]float64, n)
	for seed := range uint64(runs) {
		st := NewStreams(seed).Stream("stationary")
		for i := range xs {
			xs[i] = 1 + 0.5*st.NormFloat64()
		}
		d := MSER5(xs)
		if d >= n/20 {
			t.Errorf("seed %d: MSER5 deleted %d of a stationary series, want < %d", seed, d, n/20)
		}
		if d == 0 {
			zero++
		}
		cuts.Add(float64(d))
	}
	t.Logf("stationary: mean cut %.1f, max %.0f, none in %d of %d runs", cuts.Mean(), cuts.Max(), zero, runs)
	if cuts.Mean() > n/100 || zero < runs/2 {
		t.Errorf("mean cut %.1f (want <= %d), none in %d of %d runs (want at least half)", cuts.Mean(), n/100, zero, runs)
	}
}
