package results

import "math"

// USL is the Universal Scalability Law fitted to measured throughput at
// several concurrencies (N. J. Gunther, "Guerrilla Capacity Planning",
// Springer 2007, ch. 4):
//
//	X(N) = λN / (1 + σ(N−1) + κN(N−1))
//
// σ is contention (the serial share), κ coherency (the cost of keeping
// shared data consistent, which makes throughput fall past a peak), λ the
// throughput of one at concurrency 1. Throughput peaks at N* = √((1−σ)/κ)
// when κ > 0. The plots package draws it as usl.png.
type USL struct {
	// Line names what was fitted, when a sweep has several lines: the
	// variant, and the values of the sweep's other axes ("variant base").
	Line string `json:"line,omitempty"`
	// XLabel and YLabel name the axes: "concurrent users", "goodput
	// (requests/s)". Empty: "concurrency N", "throughput (per second)".
	XLabel string `json:"x_label,omitempty"`
	YLabel string `json:"y_label,omitempty"`
	// Points are the measurements the law was fitted to.
	Points []USLPoint `json:"points"`

	Sigma  float64 `json:"sigma"`
	Kappa  float64 `json:"kappa"`
	Lambda float64 `json:"lambda"`
	// NStar is the concurrency of peak throughput and XStar the
	// throughput there; both 0 when κ is 0 (no peak: throughput rises to
	// λ/σ).
	NStar float64 `json:"n_star"`
	XStar float64 `json:"x_star"`
	// The confidence intervals of the parameters and of N* and X*; the
	// zero Interval is none.
	SigmaCI  Interval `json:"sigma_ci"`
	KappaCI  Interval `json:"kappa_ci"`
	LambdaCI Interval `json:"lambda_ci"`
	NStarCI  Interval `json:"n_star_ci"`
	XStarCI  Interval `json:"x_star_ci"`
	// Level is the confidence level of the intervals (0.95); R2 the
	// coefficient of determination of the fit.
	Level float64 `json:"level"`
	R2    float64 `json:"r2"`
}

// USLPoint is throughput Y measured at concurrency X, with its confidence
// interval YLo to YHi (both Y where there is none).
type USLPoint struct {
	X   float64 `json:"x"`
	Y   float64 `json:"y"`
	YLo float64 `json:"y_lo"`
	YHi float64 `json:"y_hi"`
}

// Interval is a confidence interval, Lo to Hi; the zero value is none.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// None reports whether the interval is the zero value.
func (i Interval) None() bool { return i == Interval{} }

// At is the law's throughput at concurrency n.
func (u *USL) At(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// Peak is N* = √((1−σ)/κ), the concurrency of peak throughput; 0 when κ
// is not positive or σ ≥ 1.
func (u *USL) Peak() float64 {
	if !(u.Kappa > 0) || u.Sigma >= 1 {
		return 0
	}
	return math.Sqrt((1 - u.Sigma) / u.Kappa)
}
