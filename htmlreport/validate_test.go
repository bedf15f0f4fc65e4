package htmlreport

import (
	"bytes"
	"math"
	"testing"
)

// TestValidatePageIsDeterministic: a real run is not the same twice, so
// validate.html cannot be compared across runs; the page of one
// validation is the same bytes every time it is rendered, and holds both
// runs' charts overlaid and the verdict.
func TestValidatePageIsDeterministic(t *testing.T) {
	x := synthetic(3, 200)
	v := func() *Validation {
		return &Validation{Name: "synthetic", File: "synthetic.toml", Lines: []string{"seed 7"}, Variants: []ValidatedVariant{
			{Name: "a", Sim: x.Scenarios[0].First, Real: x.Scenarios[1].First, Checks: []Check{
				{Metric: "goodput /s", Sim: 9, Real: 10, Diff: 1.0 / 9, Limit: 0.05, Rule: "relative"},
				{Metric: "timeout rate", Sim: 0.01, Real: 0.01, Diff: 0, Limit: 2, PP: true, OK: true, Rule: "percentage points"},
				{Metric: "first timeout s", Sim: -1, Real: -1, Diff: math.NaN(), Limit: 0.1, OK: true, Rule: "relative"}}},
			{Name: "b", NotRun: "no real executor for this tier"},
		}}
	}
	a, err := ValidatePage(v()).HTML()
	if err != nil {
		t.Fatal(err)
	}
	b, err := ValidatePage(v()).HTML()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("the same validation rendered %d and %d bytes that differ", len(a), len(b))
	}
	ids := map[string][]string{}
	for _, c := range pageData(t, a) {
		for _, s := range c.Series {
			ids[c.ID] = append(ids[c.ID], s.Label)
		}
	}
	for id, want := range map[string][]string{
		"validate-a/t1/counts": {"sim: Requests Executing", "real: Requests Executing"},
		"validate-a/latency":   {"sim: completed", "real: completed"},
	} {
		for _, w := range want {
			if !contains(ids[id], w) {
				t.Errorf("%s: series %v, want %q", id, ids[id], w)
			}
		}
	}
	for _, want := range []string{"DISAGREE on 1 of 3 figures: goodput /s", "not run for real: no real executor", "11.1%", "DIFFERS"} {
		if !bytes.Contains(a, []byte(want)) {
			t.Errorf("validate.html lacks %q", want)
		}
	}
}

// TestEmptyPagesRender: a command's page of nothing (a plan interrupted
// before its first point, a calibration that compared nothing, a fit
// without targets, a validation whose variants were not run) renders
// without a chart and without a panic.
func TestEmptyPagesRender(t *testing.T) {
	for name, p := range map[string]*Page{
		"plan":        PlanPage(&Plan{Name: "x", Best: -1, Interrupted: true, Answer: math.NaN()}),
		"calibration": CalibrationPage(&Calibration{Name: "x"}),
		"fit":         FitPage(&Fit{Name: "x"}),
		"validate":    ValidatePage(&Validation{Name: "x", Variants: []ValidatedVariant{{Name: "a", NotRun: "no"}, {Name: "b", Agrees: true}}}),
	} {
		b, err := p.HTML()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if n := len(pageData(t, b)); n != 0 {
			t.Errorf("%s: %d charts of nothing", name, n)
		}
	}
}
