package sim

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// TQuantile returns the two-sided Student t critical value for a confidence
// level with df degrees of freedom: the (1+level)/2 quantile of t(df), e.g.
// TQuantile(0.95, 9) ≈ 2.262. It returns NaN unless 0 < level < 1 and
// df >= 1.
func TQuantile(level float64, df int) float64 {
	if !(level > 0 && level < 1) || df < 1 {
		return math.NaN()
	}
	t := distuv.StudentsT{
		Mu: 0, Sigma: 1, Nu: float64(df),
		// Quantile is deterministic and never draws; the source is set
		// only so that no path could fall back to the global one.
		Src: rand.NewPCG(0, 0),
	}
	return t.Quantile((1 + level) / 2)
}

// halfWidth is the Student t confidence half-width t_{(1+level)/2, n−1}·s/√n
// for n observations of sample variance v; +Inf when n < 2.
func halfWidth(n int64, v, level float64) float64 {
	if n < 2 {
		return math.Inf(1)
	}
	return TQuantile(level, int(n-1)) * math.Sqrt(v/float64(n))
}

// MeanCI returns the sample mean of xs and the half-width of its confidence
// interval at level (e.g. 0.95), mean ± t_{(1+level)/2, n−1}·s/√n, which
// assumes independent, roughly normal observations — such as the means of
// independent replications. With fewer than two observations half is +Inf
// (and the mean of no observations is NaN).
func MeanCI(xs []float64, level float64) (mean, half float64) {
	var t Tally
	for _, x := range xs {
		t.Add(x)
	}
	return t.Mean(), halfWidth(t.n, t.Variance(), level)
}

// BatchMeans estimates a confidence interval for the steady-state mean of one
// long, autocorrelated run in bounded memory, by nonoverlapping batch means
// (Law & Kelton, Simulation Modeling and Analysis, ch. 9) with a fixed
// number of batches whose size doubles as the run grows — the scheme of
// Fishman & Yarberry's LBATCH rule (1997), without its independence test.
//
// Consecutive observations fill batches of size b, initially 1. When
// maxBatches batches are full, adjacent pairs are merged, which halves their
// number and doubles b. So after the first merge there are always between
// maxBatches/2 and maxBatches−1 full batches, each about n/maxBatches to
// 2n/maxBatches observations long; as the run lengthens the batches outgrow
// the correlation time of the series, their means become nearly independent
// and normal, and the Student t interval on them becomes valid. Early in a
// run (small b) the interval is no better than the naive iid one.
//
// Feed it only post-warm-up observations (see MSER5). Add allocates nothing.
type BatchMeans struct {
	sums []float64 // sums of the full batches, len = maxBatches
	full int       // number of full batches
	size int64     // observations per batch
	cur  float64   // sum of the filling batch
	curN int64     // observations in the filling batch
	n    int64
}

// NewBatchMeans returns an empty batcher keeping at most maxBatches full
// batches. maxBatches must be even and at least 4 (64 is a good choice);
// otherwise it panics.
func NewBatchMeans(maxBatches int) *BatchMeans {
	if maxBatches < 4 || maxBatches%2 != 0 {
		panic(fmt.Sprintf("sim: NewBatchMeans(%d): maxBatches must be even and >= 4", maxBatches))
	}
	return &BatchMeans{sums: make([]float64, maxBatches), size: 1}
}

// Add records the next observation of the run.
func (b *BatchMeans) Add(x float64) {
	b.n++
	b.cur += x
	b.curN++
	if b.curN < b.size {
		return
	}
	b.sums[b.full] = b.cur
	b.full++
	b.cur, b.curN = 0, 0
	if b.full == len(b.sums) {
		half := b.full / 2
		for i := range half {
			b.sums[i] = b.sums[2*i] + b.sums[2*i+1]
		}
		b.full = half
		b.size *= 2
	}
}

// Count returns the number of observations added, including those of the
// batch still filling.
func (b *BatchMeans) Count() int64 { return b.n }

// BatchSize returns the current number of observations per batch.
func (b *BatchMeans) BatchSize() int64 { return b.size }

// CI returns the grand mean of the full batches and the half-width of its
// confidence interval at level (e.g. 0.95), t_{(1+level)/2, k−1}·s_k/√k over
// the k full batch means, and k. Observations in the batch still filling are
// left out. With k < 2 half is +Inf (and with k = 0 mean is NaN).
func (b *BatchMeans) CI(level float64) (mean, half float64, batches int) {
	var t Tally
	bs := float64(b.size)
	for _, s := range b.sums[:b.full] {
		t.Add(s / bs)
	}
	return t.Mean(), halfWidth(t.n, t.Variance(), level), b.full
}
