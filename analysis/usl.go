package analysis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// The Universal Scalability Law (N. J. Gunther, "Guerrilla Capacity
// Planning", Springer 2007, ch. 4-6):
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1))
//
// σ is contention (the share of the work that queues for something
// shared), κ coherency (the cost of keeping shared state consistent,
// which grows with the pairs of N and makes throughput fall past a peak)
// and λ the throughput at N = 1. The peak is at N* = √((1−σ)/κ).
//
// FitUSL fits it by nonlinear least squares on the throughputs themselves
// (unweighted, as Gunther fits his: each point's mean counts once),
// starting from the linear least-squares fit of N/X = a + bN + cN² — the
// law rearranged, N/X = ((1−σ) + (σ−κ)N + κN²)/λ — and refined by
// Levenberg-Marquardt within 0 ≤ σ ≤ 1, κ ≥ 0, λ > 0. Its intervals are
// asymptotic: the covariance s²(JᵀJ)⁻¹ from the Jacobian J at the fit
// (s² the residual variance on n − 3 degrees of freedom), Student t
// quantiles, and the delta method for N* and X*. A parameter held at its
// bound is not estimated (its interval is none), nor are intervals with
// exactly 3 points (no degree of freedom left). When κ's interval reaches
// 0 the data show no peak: NStar and XStar are 0, and throughput rises
// towards λ/σ as far as the data say.

// ConcurrencyKey reports whether a sweep over key can be fitted with the
// USL: whether it is concurrency-like — the users of a closed load, or a
// capacity setting (Axis.Monotone): a connection limit, a thread pool, a
// WCF throttle, an admission limit, and the processors of Gunther's
// original use, cores and machines.
func ConcurrencyKey(key string) bool {
	a := Axis{Key: key}
	return key == "load.users" || a.Monotone()
}

// ErrUSLPoints is FitUSL's error when the points cannot determine the
// law's three parameters.
var ErrUSLPoints = errors.New("the USL needs throughput at 3 or more different concurrencies")

// FitUSL fits the Universal Scalability Law to throughput Y measured at
// concurrency X (see above). The points' YLo and YHi are kept for the
// picture and do not weigh the fit. It is an error to give fewer than 3
// different concurrencies, a concurrency below 1, or a throughput that is
// not positive and finite.
func FitUSL(pts []results.USLPoint) (*results.USL, error) {
	xs := map[float64]bool{}
	for i, p := range pts {
		switch {
		case !(p.X >= 1) || math.IsInf(p.X, 0):
			return nil, fmt.Errorf("usl: point %d: concurrency %v: want a finite number ≥ 1", i+1, p.X)
		case !(p.Y > 0) || math.IsInf(p.Y, 0):
			return nil, fmt.Errorf("usl: point %d: throughput %v at %v: want a finite number > 0", i+1, p.Y, p.X)
		}
		xs[p.X] = true
	}
	if len(xs) < 3 {
		return nil, fmt.Errorf("%w; got %d", ErrUSLPoints, len(xs))
	}
	n, y := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		n[i], y[i] = p.X, p.Y
	}
	f := &uslFit{n: n, y: y}
	theta := f.start()
	free := [3]bool{true, true, true}
	theta, free = f.levenbergMarquardt(theta, free)

	u := &results.USL{Points: slices.Clone(pts), Sigma: theta[0], Kappa: theta[1], Lambda: theta[2], Level: 0.95}
	ssr := f.ssr(theta)
	mean := 0.0
	for _, v := range y {
		mean += v / float64(len(y))
	}
	sst := 0.0
	for _, v := range y {
		sst += (v - mean) * (v - mean)
	}
	u.R2 = 1
	if sst > 0 {
		u.R2 = 1 - ssr/sst
	}

	// Intervals from the Jacobian of the free parameters.
	var idx []int
	for j := range 3 {
		if free[j] {
			idx = append(idx, j)
		}
	}
	dof := len(n) - len(idx)
	var cov *mat.SymDense // over idx
	t := 0.0
	if dof > 0 && len(idx) > 0 {
		jac := mat.NewDense(len(n), len(idx), nil)
		for i := range n {
			g := f.grad(theta, n[i])
			for k, j := range idx {
				jac.Set(i, k, g[j])
			}
		}
		var jtj mat.SymDense
		jtj.SymOuterK(1, jac.T())
		var inv mat.Dense
		if err := inv.Inverse(&jtj); err == nil {
			s2 := ssr / float64(dof)
			cov = mat.NewSymDense(len(idx), nil)
			for a := range idx {
				for b := a; b < len(idx); b++ {
					cov.SetSym(a, b, s2*inv.At(a, b))
				}
			}
			t = sim.TQuantile(u.Level, dof)
		}
	}
	// variance of a function of θ with gradient g (over all 3).
	variance := func(g [3]float64) float64 {
		v := 0.0
		for a, ja := range idx {
			for b, jb := range idx {
				v += g[ja] * g[jb] * cov.At(a, b)
			}
		}
		return v
	}
	ci := func(x float64, g [3]float64, lo float64) results.Interval {
		if cov == nil {
			return results.Interval{}
		}
		h := t * math.Sqrt(math.Max(variance(g), 0))
		if math.IsNaN(h) || math.IsInf(h, 0) {
			return results.Interval{}
		}
		return results.Interval{Lo: math.Max(x-h, lo), Hi: x + h}
	}
	unit := func(j int) [3]float64 {
		var g [3]float64
		if free[j] {
			g[j] = 1
		}
		return g
	}
	if free[0] {
		u.SigmaCI = ci(u.Sigma, unit(0), 0)
	}
	if free[1] {
		u.KappaCI = ci(u.Kappa, unit(1), 0)
	}
	if free[2] {
		u.LambdaCI = ci(u.Lambda, unit(2), 0)
	}
	// A peak only where κ is estimated and its interval clear of 0.
	peak := u.Kappa > 0 && u.Sigma < 1 && free[1] && (u.KappaCI.None() || u.KappaCI.Lo > 0)
	if peak {
		u.NStar = math.Sqrt((1 - u.Sigma) / u.Kappa)
		u.XStar = f.at(theta, u.NStar)
		// ∂N*/∂σ = −1/(2κN*), ∂N*/∂κ = −N*/(2κ); X* = X(N*) and
		// ∂X/∂N = 0 there, so ∂X*/∂θ = ∂X/∂θ at N*.
		gn := [3]float64{-1 / (2 * u.Kappa * u.NStar), -u.NStar / (2 * u.Kappa), 0}
		for j := range gn {
			if !free[j] {
				gn[j] = 0
			}
		}
		u.NStarCI = ci(u.NStar, gn, 1)
		gx := f.grad(theta, u.NStar)
		for j := range gx {
			if !free[j] {
				gx[j] = 0
			}
		}
		u.XStarCI = ci(u.XStar, gx, 0)
	}
	return u, nil
}

// uslFit is the data of a fit: concurrencies n and throughputs y.
type uslFit struct{ n, y []float64 }

// at is the law at concurrency n for θ = (σ, κ, λ).
func (f *uslFit) at(th [3]float64, n float64) float64 {
	return th[2] * n / (1 + th[0]*(n-1) + th[1]*n*(n-1))
}

// grad is ∂X(n)/∂(σ, κ, λ).
func (f *uslFit) grad(th [3]float64, n float64) [3]float64 {
	d := 1 + th[0]*(n-1) + th[1]*n*(n-1)
	x := th[2] * n / d
	return [3]float64{-x * (n - 1) / d, -x * n * (n - 1) / d, n / d}
}

func (f *uslFit) ssr(th [3]float64) float64 {
	s := 0.0
	for i, n := range f.n {
		r := f.y[i] - f.at(th, n)
		s += r * r
	}
	return s
}

// start is the linear least-squares fit of N/X = a + bN + cN² (σ = 1 −
// aλ, κ = cλ, λ = 1/(a+b+c)), projected into the bounds.
func (f *uslFit) start() [3]float64 {
	m := len(f.n)
	A := mat.NewDense(m, 3, nil)
	b := mat.NewVecDense(m, nil)
	for i, n := range f.n {
		A.Set(i, 0, 1)
		A.Set(i, 1, n)
		A.Set(i, 2, n*n)
		b.SetVec(i, n/f.y[i])
	}
	var c mat.VecDense
	th := [3]float64{0, 0, f.y[0] / f.n[0]} // linear scaling through the first point
	if err := c.SolveVec(A, b); err == nil {
		a0, a1, a2 := c.AtVec(0), c.AtVec(1), c.AtVec(2)
		if s := a0 + a1 + a2; s > 0 {
			lam := 1 / s
			th = [3]float64{1 - a0*lam, a2 * lam, lam}
		}
	}
	return f.project(th)
}

// project puts θ within 0 ≤ σ ≤ 1, κ ≥ 0, λ > 0.
func (f *uslFit) project(th [3]float64) [3]float64 {
	th[0] = math.Min(math.Max(th[0], 0), 1)
	th[1] = math.Max(th[1], 0)
	if !(th[2] > 0) || math.IsInf(th[2], 0) {
		th[2] = slices.Max(f.y) / slices.Max(f.n)
	}
	return th
}

// levenbergMarquardt minimises the sum of squared residuals from th, the
// parameters kept within their bounds: a step that takes one past its
// bound puts it there, and a parameter at its bound whose gradient
// pushes it further out is held there (free false) — an active set.
func (f *uslFit) levenbergMarquardt(th [3]float64, free [3]bool) ([3]float64, [3]bool) {
	mu := 1e-3
	cur := f.ssr(th)
	for iter := 0; iter < 500; iter++ {
		// JᵀJ and Jᵀr over all three; held parameters get identity rows.
		var jtj [3][3]float64
		var jtr [3]float64
		for i, n := range f.n {
			g := f.grad(th, n)
			r := f.y[i] - f.at(th, n)
			for a := range 3 {
				jtr[a] += g[a] * r
				for b := range 3 {
					jtj[a][b] += g[a] * g[b]
				}
			}
		}
		// A parameter at a bound whose descent direction points out of
		// its range is held; one pushed back in is freed.
		atLow := func(j int) bool { return th[j] <= 0 }
		for j := range 2 {
			free[j] = !(atLow(j) && jtr[j] < 0) && !(j == 0 && th[0] >= 1 && jtr[0] > 0)
		}
		A := mat.NewDense(3, 3, nil)
		v := mat.NewVecDense(3, nil)
		for a := range 3 {
			for b := range 3 {
				if free[a] && free[b] {
					A.Set(a, b, jtj[a][b])
				}
			}
			if free[a] {
				A.Set(a, a, jtj[a][a]*(1+mu))
				v.SetVec(a, jtr[a])
			} else {
				A.Set(a, a, 1)
			}
		}
		var d mat.VecDense
		if err := d.SolveVec(A, v); err != nil {
			mu *= 10
			if mu > 1e12 {
				break
			}
			continue
		}
		next := th
		for a := range 3 {
			if free[a] {
				next[a] += d.AtVec(a)
			}
		}
		next = f.project(next)
		if s := f.ssr(next); s < cur {
			step := 0.0
			for a := range 3 {
				step = math.Max(step, math.Abs(next[a]-th[a])/math.Max(math.Abs(th[a]), 1e-12))
			}
			th, cur = next, s
			mu = math.Max(mu/10, 1e-12)
			if step < 1e-10 {
				break
			}
		} else {
			mu *= 10
			if mu > 1e12 {
				break
			}
		}
	}
	// Held at the end: σ or κ at 0 (or σ at 1) where the data push out.
	var jtr [3]float64
	for i, n := range f.n {
		g := f.grad(th, n)
		r := f.y[i] - f.at(th, n)
		for a := range 3 {
			jtr[a] += g[a] * r
		}
	}
	free = [3]bool{true, true, true}
	if th[0] <= 0 && jtr[0] <= 0 || th[0] >= 1 && jtr[0] >= 0 {
		free[0] = false
	}
	if th[1] <= 0 && jtr[1] <= 0 {
		free[1] = false
	}
	return th, free
}

// uslPoint is a sweep point's throughput for a fit: its mean and its
// confidence interval when there is one.
func uslPoint(x float64, a *results.Aggregate) results.USLPoint {
	p := results.USLPoint{X: x, Y: a.ThroughputPerS, YLo: a.ThroughputPerS, YHi: a.ThroughputPerS}
	if a.CI != nil && a.CI.ThroughputPerS != nil {
		h := *a.CI.ThroughputPerS
		p.YLo, p.YHi = math.Max(a.ThroughputPerS-h, 0), a.ThroughputPerS+h
	}
	return p
}

// FitSweep fits the USL to every line of a sweep whose first axis is
// concurrency-like (ConcurrencyKey): the throughput of each variant (and
// combination of the other axes' values) against the first axis's
// values. It returns the fits and their lines' titles ("variant base",
// with the other axes' values), in order, and a message for each line
// that could not be fitted (a line of fewer than 3 concurrencies is left
// out without one); nothing for another sweep.
func FitSweep(x *results.Experiment) (fits []*results.USL, titles []string, problems []string) {
	if !x.IsSweep() || !ConcurrencyKey(x.Sweep[0].Key) {
		return nil, nil, nil
	}
	key := x.Sweep[0].Key
	type line struct {
		title string
		pts   []results.USLPoint
	}
	var lines []*line
	byTitle := map[string]*line{}
	for _, sc := range x.Done() {
		if len(sc.Params) == 0 {
			continue
		}
		title := "variant " + sc.Variant
		for _, kv := range sc.Params[1:] {
			title += ", " + kv.Key + "=" + kv.Value
		}
		l := byTitle[title]
		if l == nil {
			l = &line{title: title}
			byTitle[title] = l
			lines = append(lines, l)
		}
		v, err := strconv.ParseFloat(sc.Params[0].Value, 64)
		if err != nil || !(sc.Agg.ThroughputPerS > 0) {
			continue // not a number, or nothing completed: no point
		}
		l.pts = append(l.pts, uslPoint(v, &sc.Agg))
	}
	for _, l := range lines {
		u, err := FitUSL(l.pts)
		if errors.Is(err, ErrUSLPoints) {
			continue // a short sweep: nothing to fit, nothing to say
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: no USL fit over %s: %v", l.title, key, err))
			continue
		}
		u.XLabel = key
		if key == "load.users" {
			u.XLabel = "users N"
		}
		u.YLabel = "throughput (requests/s)"
		fits, titles = append(fits, u), append(titles, l.title)
	}
	return fits, titles, problems
}

// AttachUSL fits the USL to the throughput of every line of x's sweep
// when its first axis is concurrency-like (FitSweep) and keeps the fits in
// x.USL for the report, usl.png and summary.json. It returns why a line
// could not be fitted, one message each.
func AttachUSL(x *results.Experiment) []string {
	fits, titles, problems := FitSweep(x)
	for i, u := range fits {
		u.Line = titles[i]
	}
	x.USL = fits
	return problems
}
