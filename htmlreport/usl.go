package htmlreport

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tsim-dev/tsim/results"
)

// uslSection shows the Universal Scalability Law fitted to a sweep's
// throughput (results.Experiment.USL), as tsim run prints it and usl.png
// draws it: a table of σ, κ, λ, the peak N* and X* with their intervals
// and R², and per line a chart of the measured means with their
// intervals, the fitted curve, linear scaling λN and the peak. Nil
// without a fit.
func uslSection(r *results.Experiment) *Section {
	if len(r.USL) == 0 {
		return nil
	}
	s := &Section{ID: "usl", Title: "Scalability (USL)"}
	key := ""
	if len(r.Sweep) > 0 {
		key = " over " + r.Sweep[0].Key
	}
	level := "95%"
	if u := r.USL[0]; u.Level > 0 {
		level = results.FmtPercent(u.Level)
	}
	s.Text("The Universal Scalability Law fitted to the throughput%s: X(N) = λN / (1 + σ(N−1) + κN(N−1)); σ is contention, κ coherency, λ the throughput of one. Nonlinear least squares on the mean throughputs; [ ] are %s intervals from the fit's Jacobian, none where a parameter sits at its bound; no peak where κ's interval reaches 0 (throughput then rises towards λ/σ).", key, level)
	s.Add(Block{Table: uslTable(r.USL)})
	g := &Grid{Columns: min(len(r.USL), 2)}
	for i, u := range r.USL {
		if c := uslChart("usl/"+itoa(i+1), u); c != nil {
			g.Charts = append(g.Charts, c)
		}
	}
	if len(g.Charts) > 0 {
		s.Text("%s", howToXY)
		s.Add(Block{Charts: g})
	}
	return s
}

func uslTable(us []*results.USL) *Table {
	t := &Table{Left: 1, Header: []string{"line", "σ contention", "κ coherency", "λ, X at N = 1", "N*, the peak", "X* at N*", "R²"}}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }
	rate := func(x float64) string { return results.FmtRate(x) + "/s" }
	with := func(x float64, iv results.Interval, f func(float64) string) string {
		if iv.None() {
			return f(x)
		}
		return f(x) + " [" + f(iv.Lo) + ", " + f(iv.Hi) + "]"
	}
	for _, u := range us {
		line := u.Line
		if line == "" {
			line = "–"
		}
		peak, at := "none (κ ≈ 0)", "–"
		if u.NStar > 0 {
			peak, at = with(u.NStar, u.NStarCI, g), with(u.XStar, u.XStarCI, rate)
		}
		t.Rows = append(t.Rows, []string{line, with(u.Sigma, u.SigmaCI, g), with(u.Kappa, u.KappaCI, g),
			with(u.Lambda, u.LambdaCI, rate), peak, at, strconv.FormatFloat(u.R2, 'f', 3, 64)})
	}
	return t
}

// uslChart draws one fit as usl.png does: the measured points with their
// intervals, the law from 0 to past the last point and the peak, linear
// scaling, and the peak X* at N* with X*'s interval. Nil when there is
// nothing finite to draw.
func uslChart(id string, u *results.USL) *Chart {
	finite := func(v ...float64) bool {
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return false
			}
		}
		return true
	}
	if len(u.Points) == 0 || !finite(u.Sigma, u.Kappa, u.Lambda) {
		return nil
	}
	xl, yl := u.XLabel, u.YLabel
	if xl == "" {
		xl = "concurrency N"
	}
	if yl == "" {
		yl = "throughput (per second)"
	}
	title := "USL fit"
	if u.Line != "" {
		title += ": " + u.Line
	}
	var xmax, ymax float64
	var pts Frame
	var lo, hi Column
	for _, p := range u.Points {
		if !finite(p.X, p.Y) {
			continue
		}
		if k := len(pts.X); k > 0 && !(p.X > pts.X[k-1]) {
			continue // the points come in increasing concurrency
		}
		pts.X = append(pts.X, p.X)
		if pts.Y == nil {
			pts.Y = []Column{nil}
		}
		pts.Y[0] = append(pts.Y[0], p.Y)
		lo, hi = append(lo, p.YLo), append(hi, p.YHi)
		xmax, ymax = max(xmax, p.X), max(ymax, p.Y, p.YHi)
	}
	if len(pts.X) == 0 {
		return nil
	}
	peak := u.NStar > 0 && finite(u.NStar, u.XStar)
	if peak {
		xmax = max(xmax, u.NStar)
		if !u.NStarCI.None() && finite(u.NStarCI.Hi) {
			xmax = max(xmax, u.NStarCI.Hi)
		}
		ymax = max(ymax, u.XStar)
	}
	xmax *= 1.1
	if xmax <= 0 {
		xmax = 1
	}
	var curve Frame
	curve.Y = []Column{nil}
	const steps = 300
	for i := 0; i <= steps; i++ {
		n := xmax * float64(i) / steps
		y := 0.0
		if n > 0 {
			y = u.At(n)
		}
		if !finite(y) {
			continue
		}
		curve.X = append(curve.X, n)
		curve.Y[0] = append(curve.Y[0], y)
		ymax = max(ymax, y)
	}
	c := &Chart{ID: id, Title: title, Height: 300,
		X: Axis{Label: xl, Min: ptr(0), Max: ptr(xmax)},
		Y: Axis{Label: yl, Unit: "/s", Min: ptr(0), Max: ptr(ymax * 1.1)}}
	c.Series = append(c.Series,
		Series{Label: "measured ± interval", Color: palette[5], Points: true, Size: 8, Lo: lo, Hi: hi},
		Series{Label: "USL fit", Color: palette[0], Width: 2.5},
		Series{Label: "linear scaling λN", Color: palette[6], Width: 1.2, Dash: []int{2, 4}})
	c.Frames = append(c.Frames, pts, curve, Frame{X: Exact{0, xmax}, Y: []Column{{0, u.Lambda * xmax}}})
	if peak {
		l := "peak: N* = " + results.Sig3(u.NStar)
		if !u.NStarCI.None() {
			l += " [" + results.Sig3(u.NStarCI.Lo) + ", " + results.Sig3(u.NStarCI.Hi) + "]"
		}
		l += ", X* = " + results.FmtRate(u.XStar) + "/s"
		s := Series{Label: l, Color: palette[7], Points: true, Size: 11}
		f := Frame{X: Exact{u.NStar}, Y: []Column{{u.XStar}}}
		if iv := u.XStarCI; !iv.None() && finite(iv.Lo, iv.Hi) {
			s.Lo, s.Hi = Column{iv.Lo}, Column{iv.Hi}
		}
		c.Series = append(c.Series, s)
		c.Frames = append(c.Frames, f)
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }
	c.Note = fmt.Sprintf("σ = %s, κ = %s, λ = %s/s, R² = %s", g(u.Sigma), g(u.Kappa), results.FmtRate(u.Lambda), strconv.FormatFloat(u.R2, 'f', 3, 64))
	return c
}
