package report

import (
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// The USL table: a row per line, each parameter with its interval, the
// peak or none.
func TestPrintUSL(t *testing.T) {
	r := &results.Experiment{Sweep: []results.Axis{{Key: "load.users"}}, USL: []*results.USL{
		{Line: "variant base", Sigma: 0.05, Kappa: 0.002, Lambda: 10, NStar: 21.8, XStar: 74,
			SigmaCI: results.Interval{Lo: 0.04, Hi: 0.06}, NStarCI: results.Interval{Lo: 21, Hi: 22.5}, Level: 0.95, R2: 0.999},
		{Line: "variant flat", Sigma: 0.1, Lambda: 20, Level: 0.95, R2: 0.98},
	}}
	var b strings.Builder
	if err := PrintUSL(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"fitted to throughput over load.users", "0.05 [0.04, 0.06]", "0.002 ", "21.8 [21, 22.5]", "74.00/s", "0.999",
		"none (κ ≈ 0)", "95% intervals"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	b.Reset()
	if err := PrintUSL(&b, &results.Experiment{}); err != nil || b.Len() != 0 {
		t.Errorf("no fit: %q, %v", b.String(), err)
	}
}
