package plots

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func calibrationPanel(n int, f func(t float64) float64) CalibrationPanel {
	p := CalibrationPanel{Title: "web (FESERVER1): % Processor Time", Unit: "%", Legend: [2]string{"measured, mean 1", "simulated, mean 1.1 (+10.0%)"}}
	for i := range n {
		t := float64(i)
		p.Measured = append(p.Measured, TimeValue{T: t, V: f(t)})
		p.Simulated = append(p.Simulated, TimeValue{T: t, V: 1.1 * f(t)})
	}
	return p
}

func TestCalibration(t *testing.T) {
	row := []CalibrationPanel{calibrationPanel(600, func(t float64) float64 { return 1 + math.Sin(t/30) }), calibrationPanel(600, func(float64) float64 { return 4 })}
	render := func() []byte {
		fig, err := Calibration("crack-field, calibrated", "measured and simulated", [][]CalibrationPanel{row, row[:1]}, 120)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := fig.WritePNG(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a := render()
	if !bytes.Equal(a, render()) {
		t.Error("two renderings differ")
	}
	if !bytes.HasPrefix(a, []byte("\x89PNG")) {
		t.Error("not a PNG")
	}
	for _, tc := range []struct {
		name string
		rows [][]CalibrationPanel
		want string
	}{
		{"no rows", nil, "no data"},
		{"an empty row", [][]CalibrationPanel{{}}, "a row of 0 panels"},
		{"five panels", [][]CalibrationPanel{{row[0], row[0], row[0], row[0], row[0]}}, "a row of 5 panels"},
		{"no measured samples", [][]CalibrationPanel{{{Title: "x"}}}, "x: no measured samples"},
		{"NaN", [][]CalibrationPanel{{calibrationPanel(10, func(float64) float64 { return math.NaN() })}}, "is NaN"},
	} {
		if _, err := Calibration("t", "", tc.rows, 0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
