package plots

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TimeValue is one sample of a counter: seconds since the start, value.
type TimeValue struct{ T, V float64 }

// CalibrationPanel is one counter of one tier, as a capture measured it
// and as the calibrated model simulated it.
type CalibrationPanel struct {
	Title               string // "web (FESERVER1): % Processor Time"
	Unit                string // the y axis label
	Measured, Simulated []TimeValue
	// Legend labels the two series: measured first. The error of the
	// means belongs in the simulated one.
	Legend [2]string
}

var (
	measuredStyle  = draw.LineStyle{Color: color.RGBA{0x30, 0x30, 0x30, 0xff}, Width: px(2.6)}
	simulatedStyle = draw.LineStyle{Color: palette[0], Width: px(1.6)}
	warmupShade    = color.RGBA{0xF0, 0xF0, 0xF0, 0xff}
)

// Calibration draws measured against simulated counters on shared axes:
// one row per tier, one panel per counter, both series on one time axis
// and one value axis, the part before warmup (seconds) shaded. Every row
// has at most four panels.
func Calibration(title, subtitle string, rows [][]CalibrationPanel, warmup float64) (*Figure, error) {
	if len(rows) == 0 {
		return nil, errNoData
	}
	if err := checkFinite("calibration: warm-up", warmup); err != nil {
		return nil, err
	}
	cols := 0
	var tmax float64
	for _, row := range rows {
		if len(row) == 0 || len(row) > 4 {
			return nil, fmt.Errorf("plots: calibration: a row of %d panels; 1 to 4", len(row))
		}
		cols = max(cols, len(row))
		for _, p := range row {
			if len(p.Measured) == 0 {
				return nil, fmt.Errorf("plots: calibration: %s: no measured samples", p.Title)
			}
			for _, s := range [][]TimeValue{p.Measured, p.Simulated} {
				for _, tv := range s {
					if !finite(tv.T) || !finite(tv.V) {
						return nil, checkFinite(fmt.Sprintf("calibration: %s: sample at %gs", p.Title, tv.T), tv.T, tv.V)
					}
					tmax = max(tmax, tv.T)
				}
			}
		}
	}
	if tmax <= 0 {
		tmax = 1
	}
	panels := make([][]*plot.Plot, len(rows))
	weights := make([]float64, len(rows))
	for j, row := range rows {
		panels[j] = make([]*plot.Plot, cols)
		weights[j] = 1
		for i, cp := range row {
			var ymax float64
			for _, s := range [][]TimeValue{cp.Measured, cp.Simulated} {
				for _, tv := range s {
					ymax = max(ymax, tv.V)
				}
			}
			p := newPlot(cp.Title, "time (s)", cp.Unit)
			p.X.Min, p.X.Max = 0, tmax
			p.Y.Min, p.Y.Max = 0, niceMax(ymax)*1.25 // room for the legend
			if warmup > 0 {
				p.Add(shade{0, min(warmup, tmax)})
			}
			m := newSeriesLine(xys(cp.Measured), measuredStyle)
			s := newSeriesLine(xys(cp.Simulated), simulatedStyle)
			p.Add(m, s)
			p.Legend.Add(cp.Legend[0], &plotter.Line{LineStyle: measuredStyle})
			p.Legend.Add(cp.Legend[1], &plotter.Line{LineStyle: simulatedStyle})
			p.Legend.TextStyle.Font.Size = 9
			p.Legend.Top, p.Legend.Left = true, true
			p.Legend.XOffs, p.Legend.YOffs = px(8), -px(6)
			p.Add(legendBackdrop{cp.Legend[:]})
			panels[j][i] = p
		}
	}
	w := max(900, 430*float64(cols))
	h := 130 + 300*float64(len(rows))
	f := &Figure{Width: px(w), Height: px(h), title: title, subtitle: subtitle}
	f.draw = func(c draw.Canvas) {
		drawGrid(c, panels, weights, px(28), px(14))
	}
	return f, nil
}

func xys(s []TimeValue) plotter.XYs {
	out := make(plotter.XYs, len(s))
	for i, tv := range s {
		out[i] = plotter.XY{X: tv.T, Y: tv.V}
	}
	return out
}

// shade fills the span [from, to] of the x axis, under the data.
type shade struct{ from, to float64 }

func (s shade) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	x0, x1 := trX(s.from), trX(s.to)
	c.FillPolygon(warmupShade, []vg.Point{{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y}})
}
