package sim

import "math"

// Tally accumulates the count, mean, variance, minimum, maximum and sum of a
// stream of observations in constant memory, using Welford's online update
// (Welford 1962), which stays accurate when the values are large compared
// with their spread. The zero value is an empty tally ready to use.
type Tally struct {
	n        int64
	mean     float64
	m2       float64 // sum of squared deviations from the running mean
	sum      float64
	min, max float64
}

// Add records one observation.
func (t *Tally) Add(x float64) {
	t.n++
	if t.n == 1 {
		t.mean, t.m2, t.sum, t.min, t.max = x, 0, x, x, x
		return
	}
	d := x - t.mean
	t.mean += d / float64(t.n)
	t.m2 += d * (x - t.mean)
	t.sum += x
	if x < t.min {
		t.min = x
	}
	if x > t.max {
		t.max = x
	}
}

// Count returns the number of observations.
func (t *Tally) Count() int64 { return t.n }

// Mean returns the sample mean, or NaN if the tally is empty.
func (t *Tally) Mean() float64 {
	if t.n == 0 {
		return math.NaN()
	}
	return t.mean
}

// Variance returns the sample variance (divisor n-1), or NaN with fewer than
// two observations.
func (t *Tally) Variance() float64 {
	if t.n < 2 {
		return math.NaN()
	}
	return t.m2 / float64(t.n-1)
}

// StdDev returns the sample standard deviation, the square root of Variance.
func (t *Tally) StdDev() float64 { return math.Sqrt(t.Variance()) }

// Min returns the smallest observation, or NaN if the tally is empty.
func (t *Tally) Min() float64 {
	if t.n == 0 {
		return math.NaN()
	}
	return t.min
}

// Max returns the largest observation, or NaN if the tally is empty.
func (t *Tally) Max() float64 {
	if t.n == 0 {
		return math.NaN()
	}
	return t.max
}

// Sum returns the sum of the observations (0 if empty).
func (t *Tally) Sum() float64 { return t.sum }

// Merge adds o's observations to t, as if t had seen both streams, with the
// pairwise combination of Chan, Golub and LeVeque (1979):
//
//	n = na + nb, δ = mean_b − mean_a,
//	mean = mean_a + δ·nb/n, M2 = M2_a + M2_b + δ²·na·nb/n.
//
// o is not modified.
func (t *Tally) Merge(o *Tally) {
	switch {
	case o.n == 0:
		return
	case t.n == 0:
		*t = *o
		return
	}
	na, nb := float64(t.n), float64(o.n)
	n := na + nb
	d := o.mean - t.mean
	t.mean += d * nb / n
	t.m2 += o.m2 + d*d*na*nb/n
	t.n += o.n
	t.sum += o.sum
	t.min = math.Min(t.min, o.min)
	t.max = math.Max(t.max, o.max)
}

// Reset empties the tally.
func (t *Tally) Reset() { *t = Tally{} }
