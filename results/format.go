package results

import (
	"math"
	"strconv"
)

// How tsim writes its figures, the same in the tables (package report),
// the pictures (plots) and the pages (htmlreport): latencies in a unit
// that suits them, rates with two decimals below 100, levels with one
// below 100, shares as percents.

// FmtLatency writes seconds in a unit that suits them: "850 µs", "45.3 ms",
// "6.50 s".
func FmtLatency(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0"
	case a < 1e-3:
		return Sig3(s*1e6) + " µs"
	case a < 1:
		return Sig3(s*1e3) + " ms"
	default:
		return Sig3(s) + " s"
	}
}

// Sig3 writes x with three significant digits, without exponent for the
// magnitudes latencies have: 45.3, 453, 6.50, 1234.
func Sig3(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
}

// FmtRate writes a per-second rate: "13.3", "1520".
func FmtRate(x float64) string {
	if math.Abs(x) >= 1000 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	if math.Abs(x) >= 100 {
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// FmtPercent writes a fraction as a percentage: "0%", "0.04%", "4.1%", "37%".
func FmtPercent(f float64) string {
	p := 100 * f
	switch a := math.Abs(p); {
	case a == 0:
		return "0%"
	case a < 0.1:
		return strconv.FormatFloat(p, 'f', 2, 64) + "%"
	case a < 10:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	default:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	}
}

// FmtFixed writes x with prec decimals.
func FmtFixed(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// FmtLevel writes a counter level: one decimal below 100, none above.
func FmtLevel(x float64) string {
	if math.Abs(x) >= 100 || x == math.Trunc(x) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// MeanMax writes a counter's mean and maximum as levels: "12.5 / 40".
func MeanMax(mean, max float64) string { return FmtLevel(mean) + " / " + FmtLevel(max) }

// FmtPM formats a confidence half-width as " ±x", or "" without one.
func FmtPM(h *float64, f func(float64) string) string {
	if h == nil || *h == 0 {
		return ""
	}
	return " ±" + f(*h)
}

// Sig4 writes x with up to four significant digits (strconv's 'g', so an
// exponent for the very large or small), ∞ and −∞ as such, and NaN as
// nan: how tsim fit and the pages write a fitted input or a figure of
// any magnitude.
func Sig4(x float64, nan string) string {
	switch {
	case math.IsNaN(x):
		return nan
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "−∞"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}
