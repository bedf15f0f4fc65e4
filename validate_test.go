package tsim

import (
	"errors"
	"testing"

	"github.com/tsim-dev/tsim/realmode"
)

func TestVerdict(t *testing.T) {
	agree := &realmode.Validation{Report: realmode.Report{Rows: []realmode.Row{{OK: true}}}}
	differ := &realmode.Validation{Report: realmode.Report{Rows: []realmode.Row{{OK: true}, {OK: false}}}}
	a := &Validation{Path: "a", Variants: []*ValidatedVariant{{Name: "x", Validation: agree}, {Name: "y", Validation: agree}}}
	if got := Verdict([]*Validation{a}); got != "verdict: AGREE: 2 of 2 variants agree" {
		t.Errorf("%q", got)
	}
	a.Variants[1].Validation = differ
	b := &Validation{Path: "b", Variants: []*ValidatedVariant{{Name: "z", NotRun: errors.New("no")}}}
	if got := Verdict([]*Validation{a, b}); got != "verdict: DISAGREE: 1 of 3 variants disagree (a: y); 1 not run for real (b: z)" {
		t.Errorf("%q", got)
	}
}
