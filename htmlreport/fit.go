package htmlreport

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tsim-dev/tsim/results"
)

// FitFileName is the page tsim fit writes beside its fit.png and
// fitted.toml.
const FitFileName = "fit.html"

// Fit is what tsim fit found, as its page shows it: the fitted inputs
// with their intervals, every target at them (fitted and predicted), the
// sensitivities. The command fills it from its own result (package fit),
// which this package does not know.
type Fit struct {
	Name string // the experiment
	// Lines are the facts under the title: the specification, the
	// search, the replications and their seed.
	Lines []string
	// Summary says how well the fit went (χ², the predictions), Notes
	// what tsim fit noted.
	Summary, Notes []string
	Inputs         []FitInput
	Targets        []FitTarget
	// Text is what tsim fit printed.
	Text string
}

// FitInput is one fitted input.
type FitInput struct {
	Key, Value string // the key path, the value as written
	// Lo and Hi bound its 95% interval when Pinned; Min and Max are its
	// range.
	Lo, Hi, Min, Max float64
	Pinned, AtBound  bool
	SetBy            string  // the fitted target that carries most of the information about it
	Share            float64 // that share (0 to 1)
}

// FitTarget is one target at the fitted inputs.
type FitTarget struct {
	Name, Variant string // the variant, with what it sets
	Fitted        bool   // used in the fit (otherwise predicted)
	// Value ± Tolerance is the figure; Model the simulation's mean at the
	// fitted inputs (NaN: no such figure), SimHalf the replications' own
	// 95% half-width, Lo and Hi the 95% interval of the model's value
	// (infinite where an input it depends on is not pinned).
	Value, Tolerance, Model, SimHalf, Lo, Hi float64
	Residual                                 float64 // (Model − Value)/Tolerance
	Verdict                                  string  // a prediction's
	Elasticity                               []float64
}

// FitPage builds fit.html: the fitted inputs, a chart of every target's
// deviation from its figure in tolerances (fitted and predicted, with
// their intervals, within the ±1 band of the tolerance), the targets'
// table and the sensitivities.
func FitPage(f *Fit) *Page {
	p := &Page{Title: "tsim fit: " + f.Name, Lines: f.Lines}
	if len(f.Notes) > 0 {
		p.Add(&Section{ID: "notes", Title: "Notes", Blocks: []Block{{Warnings: f.Notes}}})
	}
	in := p.Add(&Section{ID: "inputs", Title: "Fitted inputs"})
	in.Text("95%% intervals from the fitted targets' tolerances and the simulation's noise.")
	in.Add(Block{Table: fitInputs(f.Inputs)})
	if len(f.Summary) > 0 {
		in.Add(Block{List: f.Summary})
	}
	ts := p.Add(&Section{ID: "targets", Title: "Targets"})
	if c := fitChart(f.Targets); c != nil {
		ts.Text("Each target's model value less its figure, in tolerances of the figure: inside the band the figure is reproduced. Bars: the 95%% interval of the model's value (none where an input it depends on is not pinned). %s", howToXY)
		ts.Add(Block{Charts: &Grid{Columns: 1, Charts: []*Chart{c}}})
	}
	ts.Add(Block{Table: fitTargets(f.Targets)})
	if len(f.Inputs) > 0 && len(f.Targets) > 0 {
		s := p.Add(&Section{ID: "sensitivity", Title: "Sensitivity"})
		s.Text("The %% change of each target for a 1%% change of each input, at the fitted inputs.")
		s.Add(Block{Table: fitSensitivity(f)})
	}
	if f.Text != "" {
		p.Add(&Section{ID: "text", Title: "As tsim fit printed it", Collapsed: true, Blocks: []Block{{Pre: f.Text}}})
	}
	return p
}

func fitInputs(ins []FitInput) *Table {
	t := &Table{Left: 1, Header: []string{"key", "value", "95% interval", "range", "set mostly by"}}
	for _, in := range ins {
		iv := "not pinned by the targets"
		if in.Pinned {
			iv = results.Sig4(in.Lo, "none") + " – " + results.Sig4(in.Hi, "none")
		}
		by := "—"
		if in.SetBy != "" {
			by = fmt.Sprintf("%s (%.0f%%)", in.SetBy, 100*in.Share)
		}
		val, cls := in.Value, ""
		if in.AtBound {
			val += " (at the range's end)"
			cls = "warn"
		}
		t.Rows = append(t.Rows, []string{in.Key, val, iv, results.Sig4(in.Min, "none") + " – " + results.Sig4(in.Max, "none"), by})
		t.Classes = append(t.Classes, []string{"", cls, "", "", ""})
	}
	return t
}

func fitTargets(ts []FitTarget) *Table {
	t := &Table{Left: 3, Header: []string{"target", "variant", "use", "figure", "model", "95% interval", "residual", "verdict"},
		Titles: []string{"", "", "fitted: used to set the inputs; predicted: not used", "the figure ± its tolerance",
			"the mean over the replications ± their own 95% half-width", "of the model's value, from the inputs' intervals and the simulation's noise",
			"(model − figure)/tolerance", ""}}
	for _, x := range ts {
		use, verdict, cls := "predicted", x.Verdict, ""
		if x.Fitted {
			use, verdict = "fitted", ""
		}
		switch x.Verdict {
		case "reproduced":
			cls = "better"
		case "missed":
			cls = "worse"
		}
		model := results.Sig4(x.Model, "none")
		if x.SimHalf > 0 {
			model += " ± " + results.Sig4(x.SimHalf, "none")
		}
		iv := "unbounded"
		if finite(x.Lo) && finite(x.Hi) {
			iv = results.Sig4(x.Lo, "none") + " – " + results.Sig4(x.Hi, "none")
		}
		res := "–"
		if finite(x.Residual) {
			res = strconv.FormatFloat(x.Residual, 'f', 2, 64)
			if x.Residual >= 0 {
				res = "+" + res
			}
		}
		t.Rows = append(t.Rows, []string{x.Name, x.Variant, use, results.Sig4(x.Value, "none") + " ± " + results.Sig4(x.Tolerance, "none"), model, iv, res, verdict})
		t.Classes = append(t.Classes, []string{"", "", "", "", "", "", "", cls})
	}
	return t
}

func fitSensitivity(f *Fit) *Table {
	t := &Table{Left: 1, Header: []string{"target"}, Titles: []string{""}}
	for _, in := range f.Inputs {
		t.Header = append(t.Header, results.ShortKey(in.Key))
		t.Titles = append(t.Titles, in.Key)
	}
	for _, x := range f.Targets {
		row := []string{x.Name}
		for i := range f.Inputs {
			cell := "—"
			if i < len(x.Elasticity) && finite(x.Elasticity[i]) {
				cell = strconv.FormatFloat(x.Elasticity[i], 'f', 2, 64)
				if x.Elasticity[i] >= 0 {
					cell = "+" + cell
				}
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// fitChart draws every target's deviation in tolerances: a dot per
// target (fitted and predicted apart) with its interval, and the band of
// ±1 tolerance. Nil without a target the runs have a figure for.
func fitChart(ts []FitTarget) *Chart {
	n := len(ts)
	if n == 0 {
		return nil
	}
	labels := make([]string, n)
	x := make(Exact, n)
	dev := func(t FitTarget, v float64) float64 {
		if !finite(v) || !(t.Tolerance > 0) {
			return math.NaN()
		}
		return (v - t.Value) / t.Tolerance
	}
	c := &Chart{ID: "fit/targets", Title: "targets at the fitted inputs, in tolerances of each figure", Height: 300,
		Y: Axis{Label: "(model − figure) / tolerance"}}
	drawn := false
	type side struct {
		y, lo, hi Column
	}
	var sides [2]side // fitted, predicted
	for i, t := range ts {
		x[i] = float64(i)
		labels[i] = t.Name
		for k := range sides {
			sides[k].y = append(sides[k].y, math.NaN())
			sides[k].lo = append(sides[k].lo, math.NaN())
			sides[k].hi = append(sides[k].hi, math.NaN())
		}
		k := 1
		if t.Fitted {
			k = 0
		}
		if d := dev(t, t.Model); finite(d) {
			drawn = true
			sides[k].y[i] = d
			if lo, hi := dev(t, t.Lo), dev(t, t.Hi); finite(lo) && finite(hi) {
				sides[k].lo[i], sides[k].hi[i] = lo, hi
			}
		}
	}
	if !drawn {
		return nil
	}
	c.X = Axis{Label: "target", Labels: labels}
	for k, name := range []string{"fitted", "predicted"} {
		s := sides[k]
		if !hasValue(s.y) {
			continue
		}
		c.Series = append(c.Series, Series{Label: name, Color: palette[k*5], Points: true, Size: 9, Lo: s.lo, Hi: s.hi})
		c.Frames = append(c.Frames, Frame{X: x, Y: []Column{s.y}})
	}
	band := Frame{X: Exact{0}, Y: []Column{{1}, {-1}}}
	if n > 1 {
		band = Frame{X: Exact{0, float64(n - 1)}, Y: []Column{{1, 1}, {-1, -1}}}
	}
	c.Series = append(c.Series, Series{Label: "+1 tolerance", Color: palette[6], Width: 1.2, Dash: []int{6, 4}},
		Series{Label: "−1 tolerance", Color: palette[6], Width: 1.2, Dash: []int{6, 4}})
	c.Frames = append(c.Frames, band)
	return c
}

// hasValue reports whether a column holds a finite value.
func hasValue(c Column) bool {
	for _, v := range c {
		if finite(v) {
			return true
		}
	}
	return false
}
