package plots

import (
	"bytes"
	"image/png"
	"math"
	"testing"
)

func TestFitFigure(t *testing.T) {
	rows := []FitRow{
		{Label: "goodput", Fitted: true, Model: 0.4, Lo: -0.5, Hi: 1.3},
		{Label: "p90", Model: -2, Lo: -3.5, Hi: -0.5},
		{Label: "far", Model: 40, Lo: 30, Hi: math.Inf(1)},
	}
	f, err := Fit("a fit", "3 rows", rows)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.WritePNG(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&b); err != nil {
		t.Fatal(err)
	}
	if _, err := Fit("none", "", nil); err == nil {
		t.Error("no rows: want an error")
	}
	if _, err := Fit("nan", "", []FitRow{{Label: "x", Model: math.NaN()}}); err == nil {
		t.Error("a NaN row: want an error")
	}
}
