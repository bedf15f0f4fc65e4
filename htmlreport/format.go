package htmlreport

import (
	"math"
	"strconv"
)

// The numbers of the page's tables are written as tsim run's tables write
// them (package report): latencies in a unit that suits them, rates with
// two decimals below 100, levels with one below 100, shares as percents.

// fmtLatency writes seconds: "850 µs", "45.3 ms", "6.50 s".
func fmtLatency(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0"
	case a < 1e-3:
		return sig3(s*1e6) + " µs"
	case a < 1:
		return sig3(s*1e3) + " ms"
	default:
		return sig3(s) + " s"
	}
}

// sig3 writes x with three significant digits and no exponent.
func sig3(x float64) string {
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

// fmtRate writes a per-second rate: "13.3", "1520".
func fmtRate(x float64) string {
	switch a := math.Abs(x); {
	case a >= 1000:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// fmtPercent writes a fraction as a percentage: "0%", "0.04%", "4.1%", "37%".
func fmtPercent(f float64) string {
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

// fmtLevel writes a counter level: one decimal below 100, none above.
func fmtLevel(x float64) string {
	if math.Abs(x) >= 100 || x == math.Trunc(x) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

func meanMax(mean, max float64) string { return fmtLevel(mean) + " / " + fmtLevel(max) }

func fmtFixed(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

// fmtSeconds writes a simulated span: "300 s", "1.5 s".
func fmtSeconds(s float64) string {
	if s == math.Trunc(s) {
		return strconv.FormatFloat(s, 'f', 0, 64) + " s"
	}
	return strconv.FormatFloat(s, 'g', 4, 64) + " s"
}

// pm formats a confidence half-width as " ±x", or "" without one.
func pm(h *float64, f func(float64) string) string {
	if h == nil || *h == 0 {
		return ""
	}
	return " ±" + f(*h)
}
