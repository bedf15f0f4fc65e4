package plots

import (
	"math"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// uslFit is a fit in the shape the analysis makes of a closed workload
// that peaks near 48 users.
func uslFit() *results.USL {
	u := &results.USL{XLabel: "concurrent users", YLabel: "goodput (requests/s)",
		Sigma: 0.03, Kappa: 4e-4, Lambda: 9.8, Level: 0.95, R2: 0.993,
		SigmaCI: results.Interval{Lo: 0.02, Hi: 0.041}, KappaCI: results.Interval{Lo: 3.1e-4, Hi: 5.2e-4},
		LambdaCI: results.Interval{Lo: 9.5, Hi: 10.1}}
	u.NStar = u.Peak()
	u.XStar = u.At(u.NStar)
	u.NStarCI = results.Interval{Lo: 42, Hi: 55}
	u.XStarCI = results.Interval{Lo: u.XStar * 0.96, Hi: u.XStar * 1.04}
	for _, n := range []float64{1, 2, 4, 8, 16, 32, 48, 64, 96, 128} {
		y := u.At(n) * (1 + 0.02*math.Sin(n))
		u.Points = append(u.Points, results.USLPoint{X: n, Y: y, YLo: y * 0.95, YHi: y * 1.05})
	}
	return u
}

// usl.png draws the points, the fit and the peak; bad input is an error
// naming what is wrong.
func TestUSLPicture(t *testing.T) {
	f, err := USL("crack: scalability", uslFit())
	if err != nil {
		t.Fatal(err)
	}
	im := decodePNG(t, f)
	for name, col := range map[string]any{"the fit": palette[0], "the points": palette[5]} {
		n := 0
		for x := range im.Rect.Dx() {
			for y := range im.Rect.Dy() {
				if im.At(x, y) == col {
					n++
				}
			}
		}
		if n < 200 {
			t.Errorf("%s: %d pixels in its colour", name, n)
		}
	}
	if !strings.Contains(f.subtitle, "σ = 0.03 [0.02, 0.041]") || !strings.Contains(f.subtitle, "R² = 0.993") {
		t.Errorf("subtitle %q", f.subtitle)
	}
	noPeak := uslFit()
	noPeak.Kappa, noPeak.NStar, noPeak.XStar, noPeak.NStarCI, noPeak.XStarCI = 0, 0, 0, results.Interval{}, results.Interval{}
	if _, err := USL("no peak", noPeak); err != nil {
		t.Errorf("κ = 0: %v", err)
	}
	bad := uslFit()
	bad.Points[2].YHi = bad.Points[2].Y / 2
	nan := uslFit()
	nan.Sigma = math.NaN()
	for _, tc := range []struct {
		u    *results.USL
		want string
	}{
		{nil, "no data"},
		{&results.USL{}, "no data"},
		{bad, "point 3: throughput"},
		{nan, "a parameter is NaN"},
	} {
		if _, err := USL("x", tc.u); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one containing %q", err, tc.want)
		}
	}
}
