package htmlreport

import (
	"math"

	"github.com/tsim-dev/tsim/results"
)

// CalibrateFileName is the page tsim calibrate writes beside its
// calibrated.toml and calibration.png.
const CalibrateFileName = "calibration.html"

// Calibration is what tsim calibrate found, as its page shows it: the
// demands it estimated from a PerfMon capture and wrote into the
// experiment, and the simulated counters against the measured ones. The
// command fills it from its own result (package calibrate), which this
// package does not know.
type Calibration struct {
	Name string // the experiment
	// Lines are the facts under the title: the capture, the experiment
	// and its variant, the window read, the simulated runs.
	Lines []string
	// Notes say what was not written and why, what does not fit.
	Notes []string
	// Estimates is the table of what the capture says about each tier
	// (by the operational laws), Changes the table of what was written.
	Estimates, Changes *Table
	// Warmup is where the compared window starts (seconds since the
	// capture's first row): the charts' earlier part is the warm-up.
	Warmup   float64
	Counters []CalibratedCounter
	// LoadTest is a load test's client latency against the simulated
	// (tsim calibrate --loadtest), nil without one.
	LoadTest *results.LoadTest
	// Text is what tsim calibrate printed.
	Text string
}

// CalibratedCounter is one counter of one tier, measured against
// simulated: its means over the window and its series.
type CalibratedCounter struct {
	Tier, Machine, Counter, Unit string
	Measured, Simulated          float64
	// SimHalf is the 95% half-width of Simulated over the replications
	// (NaN with one).
	SimHalf       float64
	MeasuredT     []float64
	MeasuredV     []float64
	SimT, SimV    []float64
	RelativeError float64 // (simulated − measured)/measured; NaN when nothing was measured
}

// CalibrationPage builds calibration.html: the notes, what was written,
// the estimates, and each tier's main counters, measured (solid) against
// simulated (dashed) over the capture's span, with the means over the
// window in a table; a load test's latency against the simulated where
// calibrate compared one.
func CalibrationPage(c *Calibration) *Page {
	p := &Page{Title: "tsim calibrate: " + c.Name, Lines: c.Lines}
	if len(c.Notes) > 0 {
		p.Add(&Section{ID: "notes", Title: "Notes", Blocks: []Block{{Warnings: c.Notes}}})
	}
	if c.Changes != nil && len(c.Changes.Rows) > 0 {
		s := p.Add(&Section{ID: "changes", Title: "What calibrate wrote"})
		s.Add(Block{Table: c.Changes})
	}
	if c.Estimates != nil && len(c.Estimates.Rows) > 0 {
		s := p.Add(&Section{ID: "estimates", Title: "Estimates"})
		s.Text("What the capture says about each tier's operation over the window, per request, by the utilisation law (CPU = U·cores/X) and Little's law (residence = level/X); ± are 95%% intervals over batches of the window.")
		s.Add(Block{Table: c.Estimates})
	}
	if len(c.Counters) > 0 {
		s := p.Add(&Section{ID: "counters", Title: "Measured against simulated"})
		s.Text("Each tier's main counters, measured (solid) and simulated (dashed, the first replication), over the capture's span; the means and errors cover the window after %s (the warm-up before it is left out). %s", fmtSeconds(c.Warmup), howTo)
		s.Add(Block{Table: calibratedTable(c.Counters)})
		g := &Grid{Columns: 2}
		for i, k := range c.Counters {
			if ch := calibratedChart(i, k, c.Warmup); ch != nil {
				g.Charts = append(g.Charts, ch)
			}
		}
		if len(g.Charts) > 0 {
			s.Add(Block{Charts: g})
		}
	}
	if c.LoadTest != nil {
		if charts := loadTestCharts("calibrated", c.LoadTest); len(charts) > 0 {
			s := p.Add(&Section{ID: "loadtest", Title: "Load test against simulated"})
			s.Text("Client latency measured by the load test (%s, %s) against the calibrated simulation, window by window: measured solid, simulated dashed. %s", c.LoadTest.Tool, c.LoadTest.File, howTo)
			s.Add(Block{Charts: &Grid{Columns: 1, Charts: charts}})
		}
	}
	if c.Text != "" {
		p.Add(&Section{ID: "text", Title: "As tsim calibrate printed it", Collapsed: true, Blocks: []Block{{Pre: c.Text}}})
	}
	return p
}

func calibratedTable(ks []CalibratedCounter) *Table {
	t := &Table{Left: 2, Header: []string{"tier", "counter", "measured", "simulated", "error"},
		Titles: []string{"", "", "the mean over the window, each sample weighted by the interval it covers", "the mean over the window; ± the 95% interval over the replications", "(simulated − measured)/measured"}}
	for _, k := range ks {
		tier := k.Tier
		if k.Machine != "" && k.Machine != k.Tier {
			tier += " (" + k.Machine + ")"
		}
		sim := results.Sig4(k.Simulated, "–")
		if !math.IsNaN(k.SimHalf) {
			sim += " ± " + results.Sig4(k.SimHalf, "–")
		}
		e := "–"
		if !math.IsNaN(k.RelativeError) && !math.IsInf(k.RelativeError, 0) {
			e = results.FmtFixed(100*k.RelativeError, 1) + "%"
			if k.RelativeError > 0 {
				e = "+" + e
			}
		}
		unit := ""
		if k.Unit != "" {
			unit = " " + k.Unit
		}
		t.Rows = append(t.Rows, []string{tier, k.Counter, results.Sig4(k.Measured, "–") + unit, sim + unit, e})
	}
	return t
}

// calibratedChart is one counter over time, measured and simulated.
func calibratedChart(i int, k CalibratedCounter, warm float64) *Chart {
	frame := func(ts, vs []float64) (Frame, bool) {
		var f Frame
		var col Column
		for j := range ts {
			if j >= len(vs) || math.IsNaN(ts[j]) || math.IsInf(ts[j], 0) {
				continue
			}
			if n := len(f.X); n > 0 && !(ts[j] > f.X[n-1]) {
				continue
			}
			f.X = append(f.X, ts[j])
			col = append(col, vs[j])
		}
		f.Y = []Column{col}
		return f, len(f.X) > 0
	}
	head := k.Tier
	if k.Machine != "" && k.Machine != k.Tier {
		head += " (" + k.Machine + ")"
	}
	c := &Chart{ID: "calibration/" + itoa(i+1) + "-" + anchor(k.Tier+"-"+k.Counter), Title: head + ": " + k.Counter,
		Height: 200, Sync: "calibration", X: Axis{Label: "time since the capture's first row (s)", Unit: "s"},
		Y: Axis{Label: k.Unit, Min: ptr(0)}}
	if f, ok := frame(k.MeasuredT, k.MeasuredV); ok {
		c.Series = append(c.Series, Series{Label: "measured, mean " + results.Sig4(k.Measured, "–"), Color: palette[0], Width: 1.8})
		c.Frames = append(c.Frames, f)
	}
	if f, ok := frame(k.SimT, k.SimV); ok {
		c.Series = append(c.Series, Series{Label: "simulated, mean " + results.Sig4(k.Simulated, "–"), Color: palette[5], Width: 1.5, Dash: []int{6, 4}})
		c.Frames = append(c.Frames, f)
	}
	if len(c.Series) == 0 {
		return nil
	}
	if warm > 0 {
		c.Note = "the means leave out the warm-up, before " + fmtSeconds(warm)
	}
	return c
}
