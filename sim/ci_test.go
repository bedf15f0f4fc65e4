package sim

import (
	"math"
	"testing"
)

func TestTQuantileTable(t *testing.T) {
	// Two-sided critical values from standard t tables (e.g. NIST/SEMATECH
	// e-Handbook 1.3.6.7.2), given to 6 significant digits: allow 5e-6
	// relative.
	for _, c := range []struct {
		level float64
		df    int
		want  float64
	}{
		{0.95, 1, 12.7062},
		{0.95, 9, 2.26216},
		{0.95, 30, 2.04227},
		{0.99, 30, 2.75000},
		{0.90, 5, 2.01505},
		{0.95, 1 << 30, 1.95996}, // → the normal z_{0.975}
	} {
		if got := TQuantile(c.level, c.df); !statClose(got, c.want, 5e-6) {
			t.Errorf("TQuantile(%v, %d) = %v, want %v", c.level, c.df, got, c.want)
		}
	}
	for _, bad := range []struct {
		level float64
		df    int
	}{{0, 5}, {1, 5}, {math.NaN(), 5}, {0.95, 0}} {
		if !math.IsNaN(TQuantile(bad.level, bad.df)) {
			t.Errorf("TQuantile(%v, %d) is not NaN", bad.level, bad.df)
		}
	}
}

func TestMeanCI(t *testing.T) {
	// xs = 2,4,4,4,5,5,7,9: mean 5, s² = 32/7, n = 8, so
	// half = t_{0.975,7}·√(32/7/8) = 2.364624·0.7559289 = 1.787488.
	mean, half := MeanCI([]float64{2, 4, 4, 4, 5, 5, 7, 9}, 0.95)
	if mean != 5 || !statClose(half, 1.787488, 5e-7) {
		t.Fatalf("MeanCI = %v ± %v, want 5 ± 1.787488", mean, half)
	}
	if m, h := MeanCI([]float64{3}, 0.95); m != 3 || !math.IsInf(h, 1) {
		t.Fatalf("one observation: %v ± %v, want 3 ± +Inf", m, h)
	}
	if m, h := MeanCI(nil, 0.95); !math.IsNaN(m) || !math.IsInf(h, 1) {
		t.Fatalf("no observations: %v ± %v, want NaN ± +Inf", m, h)
	}
}

// The batches are exact: after n observations of 0,1,2,..., each full batch
// of size b starting at observation j·b has mean j·b + (b−1)/2.
func TestBatchMeansMergesPairs(t *testing.T) {
	bm := NewBatchMeans(8)
	for i := range 100 {
		bm.Add(float64(i))
	}
	// Sizes: 1 until 8 obs → 4 batches of 2; at 16 obs → 4 of 4; at 32 →
	// 4 of 8; at 64 → 4 of 16; 100 obs = 6 full batches of 16 + 4 left over.
	if bm.Count() != 100 || bm.BatchSize() != 16 {
		t.Fatalf("count %d batch size %d, want 100 and 16", bm.Count(), bm.BatchSize())
	}
	mean, half, k := bm.CI(0.95)
	// Full batches cover observations 0..95, whose mean is 47.5; the batch
	// means 7.5, 23.5, ..., 87.5 step by 16: s² = 16²·Var(0..5) = 256·3.5.
	wantHalf := TQuantile(0.95, 5) * math.Sqrt(256*3.5/6)
	if k != 6 || mean != 47.5 || !statClose(half, wantHalf, 1e-14) {
		t.Fatalf("CI = %v ± %v over %d batches, want 47.5 ± %v over 6", mean, half, k, wantHalf)
	}
	if m, h, k := NewBatchMeans(4).CI(0.95); !math.IsNaN(m) || !math.IsInf(h, 1) || k != 0 {
		t.Fatalf("empty: %v ± %v over %d", m, h, k)
	}
}

func TestBatchMeansRejectsOddSize(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("NewBatchMeans(7) did not panic")
		}
	}()
	NewBatchMeans(7)
}

// statAR1 generates X_t = μ + φ(X_{t−1} − μ) + ε_t, ε_t ~ N(0,1), started
// in its stationary law N(μ, 1/(1−φ²)) so there is no warm-up bias.
type statAR1 struct {
	st      *Stream
	mu, phi float64
	x       float64
}

func newStatAR1(st *Stream, mu, phi float64) *statAR1 {
	return &statAR1{st: st, mu: mu, phi: phi, x: mu + st.NormFloat64()/math.Sqrt(1-phi*phi)}
}

func (a *statAR1) next() float64 {
	a.x = a.mu + a.phi*(a.x-a.mu) + a.st.NormFloat64()
	return a.x
}

// Batch means on a strongly autocorrelated AR(1) series covers the true mean
// at about the nominal rate, where the naive iid interval does not.
func TestBatchMeansCoverageAR1(t *testing.T) {
	const (
		mu, phi = 5.0, 0.9
		n       = 1 << 16 // observations per run
		runs    = 200
		level   = 0.95
	)
	coveredBM, coveredIID := 0, 0
	for seed := range uint64(runs) {
		a := newStatAR1(NewStreams(seed).Stream("ar1"), mu, phi)
		bm := NewBatchMeans(64)
		var iid Tally
		for range n {
			x := a.next()
			bm.Add(x)
			iid.Add(x)
		}
		m, h, k := bm.CI(level)
		if k != 32 {
			t.Fatalf("seed %d: %d batches, want 32 (2^16 obs = 32 batches of 2048)", seed, k)
		}
		if math.Abs(m-mu) <= h {
			coveredBM++
		}
		if h := halfWidth(iid.Count(), iid.Variance(), level); math.Abs(iid.Mean()-mu) <= h {
			coveredIID++
		}
	}
	// Coverage over independent runs is Binomial(runs, p)/runs; a 99% band
	// around p is p ± z_{0.995}·√(p(1−p)/runs), z_{0.995} = 2.5758.
	band := func(p float64) (lo, hi float64) {
		w := 2.5758 * math.Sqrt(p*(1-p)/runs)
		return p - w, p + w
	}
	bmCov, iidCov := float64(coveredBM)/runs, float64(coveredIID)/runs
	t.Logf("coverage over %d runs: batch means %.3f, naive iid %.3f", runs, bmCov, iidCov)
	// Batches of 2048 dwarf the correlation time, so batch means are close
	// to iid normal and the t interval should cover at rate 0.95.
	if lo, hi := band(level); bmCov < lo || bmCov > hi {
		t.Errorf("batch-means coverage %.3f outside the 99%% band [%.3f, %.3f] of %v", bmCov, lo, hi, level)
	}
	// The naive interval uses Var(X)/n, but Var(X̄) ≈ Var(X)/n · (1+φ)/(1−φ)
	// (the integrated autocorrelation time of an AR(1), 19 here), so it is
	// √19 times too narrow and covers with probability
	// 2Φ(1.96/√19) − 1 ≈ 0.347.
	pIID := 2*statNormCDF(1.95996/math.Sqrt((1+phi)/(1-phi))) - 1
	if lo, hi := band(pIID); iidCov < lo || iidCov > hi {
		t.Errorf("naive iid coverage %.3f outside the 99%% band [%.3f, %.3f] of %.3f", iidCov, lo, hi, pIID)
	}
}

func statNormCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func BenchmarkBatchMeansAdd(b *testing.B) {
	b.ReportAllocs()
	bm := NewBatchMeans(64)
	x := 0.0
	for b.Loop() {
		bm.Add(x)
		x += 0.25
	}
}
