package fit

import (
	"fmt"
	"math"

	"github.com/tsim-dev/tsim/plots"
)

// Figure draws the targets against the fitted and predicted values, each
// in tolerances of its figure (plots.Fit).
func (r *Result) Figure() (*plots.Figure, error) {
	var rows []plots.FitRow
	for _, t := range r.Targets {
		tol := t.Target.Tolerance
		dev := func(v float64) float64 {
			if math.IsNaN(v) {
				return math.Inf(1)
			}
			return (v - t.Target.Value) / tol
		}
		m := t.Model
		if math.IsNaN(m) {
			continue // no such figure in the runs: the text says so
		}
		label := t.Target.Name
		if t.Target.Variant != r.Spec.Variant {
			label += " [" + t.Target.Variant + "]"
		}
		rows = append(rows, plots.FitRow{Label: label, Fitted: t.Fitted, Model: dev(m), Lo: dev(t.Lo), Hi: dev(t.Hi)})
	}
	n, k := r.verdicts()
	sub := fmt.Sprintf("%d inputs fitted to %d figures; %d of %d predicted figures within their tolerance", len(r.Inputs), r.count(true), n, k)
	return plots.Fit("tsim fit: "+r.Name, sub, rows)
}
