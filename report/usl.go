package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/tsim-dev/tsim/results"
)

// PrintUSL prints the Universal Scalability Law fitted to a sweep's
// throughput (results.Experiment.USL): per line, σ, κ and λ, the peak N*
// and the throughput there X*, each with its interval, and R².
func PrintUSL(w io.Writer, r *results.Experiment) error {
	if len(r.USL) == 0 {
		return nil
	}
	key := r.Sweep[0].Key
	fmt.Fprintf(w, "Universal Scalability Law fitted to throughput over %s: X(N) = λN / (1 + σ(N−1) + κN(N−1))\n", key)
	t := NewTable(w, 1, "line", "σ contention", "κ coherency", "λ, X at N = 1", "N*, the peak", "X* at N*", "R²")
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }
	with := func(x float64, iv results.Interval, f func(float64) string) string {
		if iv.None() {
			return f(x)
		}
		return f(x) + " [" + f(iv.Lo) + ", " + f(iv.Hi) + "]"
	}
	for _, u := range r.USL {
		line := u.Line
		if line == "" {
			line = "–"
		}
		peak, at := "none (κ ≈ 0)", "–"
		if u.NStar > 0 {
			peak, at = with(u.NStar, u.NStarCI, g), with(u.XStar, u.XStarCI, results.FmtRate)+"/s"
		}
		if err := t.Append([]string{line, with(u.Sigma, u.SigmaCI, g), with(u.Kappa, u.KappaCI, g), with(u.Lambda, u.LambdaCI, results.FmtRate) + "/s",
			peak, at, strconv.FormatFloat(u.R2, 'f', 3, 64)}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	level := "95%"
	if u := r.USL[0]; u.Level > 0 {
		level = results.FmtPercent(u.Level)
	}
	fmt.Fprintf(w, "  (nonlinear least squares on the mean throughputs; [ ] are %s intervals from the fit's Jacobian, none where a\n"+
		"   parameter sits at its bound; no peak where κ's interval reaches 0: throughput then rises towards λ/σ)\n", level)
	return nil
}
