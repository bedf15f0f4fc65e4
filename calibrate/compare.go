package calibrate

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// compared is one counter calibrate draws: its column in the capture and
// the same counter of a simulated sample.
type compared struct {
	name, unit string
	col        int
	sim        func(results.TierSample) float64
}

// counters are a tier's main counters: CPU, the request rate, the
// operation's level and its duration, from the objects its machine has.
func (e *TierEstimate) counters() []compared {
	m := e.From
	out := []compared{{cProcessor, "%", m.cpu, func(s results.TierSample) float64 { return s.CPU }}}
	if m.wcf {
		out = append(out, compared{cCallsPerSec, "per s", m.rate, func(s results.TierSample) float64 { return s.CallsPerS }})
		if m.level >= 0 {
			out = append(out, compared{cOutstanding, "calls", m.level, func(s results.TierSample) float64 { return s.Outstanding }})
		}
		out = append(out, compared{cCallsDur, "s", m.dur, func(s results.TierSample) float64 { return s.CallDuration }})
		return out
	}
	out = append(out, compared{cReqPerSec, "per s", m.rate, func(s results.TierSample) float64 { return s.RequestsPerS }})
	if m.level >= 0 {
		out = append(out, compared{cExecuting, "requests", m.level, func(s results.TierSample) float64 { return s.Executing }})
	}
	out = append(out, compared{cExecTime, "ms", m.dur, func(s results.TierSample) float64 { return s.ExecTimeMS }})
	return out
}

// compare puts each tier's main counters, measured and simulated, side
// by side: their series (of the first replication) and their means over
// the window, each sample weighted by the interval it covers; with
// several replications, the simulated mean is theirs, with its interval.
func (r *Result) compare(c *Capture, w *window, runs []*results.Run) {
	inWindow := func(t float64) bool { return t > w.from+1e-9 && t <= w.to+1e-9 }
	for _, e := range r.Tiers {
		ti := -1
		for i, n := range runs[0].TierNames {
			if n == e.Tier {
				ti = i
			}
		}
		if ti < 0 {
			continue
		}
		for _, k := range e.counters() {
			cmp := Comparison{Tier: e.Tier, Machine: e.Machine, Counter: k.name, Unit: k.unit, SimHalf: math.NaN()}
			for i := range c.T {
				if v := c.value(i, k.col); !math.IsNaN(v) {
					cmp.MeasuredSeries = append(cmp.MeasuredSeries, plots.TimeValue{T: c.T[i], V: v})
				}
			}
			// The mean over the window: the machine's rows, each weighted
			// by the interval it covers (gaps left out).
			var sum, dt float64
			tr := w.tiers[e.Index]
			for j, i := range tr.rows {
				if v := c.value(i, k.col); !math.IsNaN(v) {
					sum += v * tr.dt[j]
					dt += tr.dt[j]
				}
			}
			if dt == 0 {
				continue // a column the capture leaves blank throughout the window
			}
			cmp.Measured = sum / dt
			var means []float64
			for n, run := range runs {
				sum, dt, prev := 0.0, 0.0, math.NaN()
				for _, s := range run.Series {
					if ti >= len(s.Tiers) {
						continue
					}
					v := k.sim(s.Tiers[ti])
					if n == 0 {
						cmp.SimSeries = append(cmp.SimSeries, plots.TimeValue{T: s.T, V: v})
					}
					if !math.IsNaN(prev) && inWindow(s.T) {
						sum += v * (s.T - prev)
						dt += s.T - prev
					}
					prev = s.T
				}
				means = append(means, sum/dt)
			}
			cmp.Simulated = means[0]
			if len(means) > 1 {
				cmp.Simulated, cmp.SimHalf = sim.MeanCI(means, 0.95)
			}
			r.Compare = append(r.Compare, cmp)
		}
	}
}

// figure draws calibration.png: a row per tier, a panel per counter.
func (r *Result) figure() (*plots.Figure, error) {
	var rows [][]plots.CalibrationPanel
	var row []plots.CalibrationPanel
	last := ""
	for _, cmp := range r.Compare {
		if cmp.Tier != last && row != nil {
			rows = append(rows, row)
			row = nil
		}
		last = cmp.Tier
		head := cmp.Tier
		if cmp.Machine != cmp.Tier {
			head += " (" + cmp.Machine + ")"
		}
		row = append(row, plots.CalibrationPanel{
			Title:     head + ": " + cmp.Counter,
			Unit:      cmp.Unit,
			Measured:  cmp.MeasuredSeries,
			Simulated: cmp.SimSeries,
			Legend: [2]string{
				"measured, mean " + fmtValue(cmp.Measured),
				"simulated, mean " + fmtValue(cmp.Simulated) + simHalf(cmp.SimHalf) + " (" + fmtRelError(cmp.RelError()) + ")",
			},
		})
	}
	if row != nil {
		rows = append(rows, row)
	}
	title := fmt.Sprintf("%s, variant %s, calibrated against %s", r.Experiment, r.Variant, r.Capture.File)
	sub := fmt.Sprintf("measured and simulated counters; means and errors over %s – %s (shaded: the warm-up, left out)", fmtSeconds(r.Window.From), fmtSeconds(r.Window.To))
	return plots.Calibration(title, sub, rows, r.Window.From)
}

func fmtValue(x float64) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case math.Abs(x) >= 1000:
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

func fmtRelError(e float64) string {
	if math.IsNaN(e) {
		return "no error: nothing measured"
	}
	return fmt.Sprintf("%+.1f%%", 100*e)
}

func simHalf(h float64) string {
	if math.IsNaN(h) {
		return ""
	}
	return " ± " + fmtHalf(h)
}

// fmtHalf writes a half-width to two significant digits.
func fmtHalf(h float64) string {
	return strconv.FormatFloat(round2(h), 'f', -1, 64)
}
