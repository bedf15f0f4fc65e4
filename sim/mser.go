package sim

// mserBatch is the batch size of MSER-5.
const mserBatch = 5

// MSER5 returns how many leading observations of the output series xs to
// delete as warm-up, by the MSER-5 rule (White 1997; Franklin & White 2008).
// The series is cut into k = ⌊len(xs)/5⌋ batch means z_1..z_k (a trailing
// partial batch is ignored), and the rule picks the d that minimises the
// marginal standard error
//
//	MSER(d) = (1/(k−d)²) · Σ_{i>d} (z_i − z̄_d)²,   z̄_d = mean of z_{d+1..k},
//
// over d in [0, k/2] — later truncation points rest on too few batches to be
// trusted, and a minimum at k/2 itself means the run is too short to show a
// steady state. Ties go to the smaller d. It returns 5·d, a multiple of 5;
// with fewer than three batches it returns 0.
func MSER5(xs []float64) int {
	k := len(xs) / mserBatch
	if k < 2 {
		return 0
	}
	z := make([]float64, k)
	for i := range z {
		s := 0.0
		for _, x := range xs[i*mserBatch : (i+1)*mserBatch] {
			s += x
		}
		z[i] = s / mserBatch
	}
	// Sweep d from the end down to 0, keeping a Welford tally of z_{d+1..k}
	// (0-based z[d:]), so each MSER(d) costs O(1) and stays accurate.
	// At least two batches must remain, or MSER(d) is trivially 0.
	dmax := min(k/2, k-2)
	var t Tally
	for d := k - 1; d > dmax; d-- {
		t.Add(z[d])
	}
	best, bestStat := 0, 0.0
	for d := dmax; d >= 0; d-- {
		t.Add(z[d])
		m := float64(t.n)
		stat := t.m2 / (m * m)
		if d == dmax || stat <= bestStat {
			best, bestStat = d, stat
		}
	}
	return mserBatch * best
}
