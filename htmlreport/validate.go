package htmlreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// ValidateFileName is the page tsim validate writes beside its
// validate-counters.png.
const ValidateFileName = "validate.html"

// howToXY is the line under a section of charts whose x axes are not
// shared.
const howToXY = "Drag across a chart to zoom, double-click to zoom out; hover for the values; click a legend entry to hide or show its series."

// Validation is what tsim validate found for one experiment: each variant
// simulated and run for real with the same seed, compared.
type Validation struct {
	Name, File string
	Lines      []string // the facts under the title
	Variants   []ValidatedVariant
}

// ValidatedVariant is one variant run both ways.
type ValidatedVariant struct {
	Name string
	// NotRun says why the variant was not run for real ("" when it was);
	// Sim is then the simulated run alone.
	NotRun    string
	Sim, Real *results.Run
	Agrees    bool
	// Lines say how the real run went: its time scale, how long it took,
	// the notes of the real executor.
	Lines  []string
	Checks []Check
}

// Check is one figure, simulated against real, judged against its
// tolerance.
type Check struct {
	Metric    string
	Sim, Real float64
	// Diff and Limit are in percentage points when PP, otherwise
	// relative ((real − sim)/sim, a fraction).
	Diff, Limit float64
	PP          bool
	OK          bool
	Rule        string // how Diff and Limit are read
}

// ValidatePage builds validate.html: the verdict of every variant, then
// for each its figures side by side with their differences and
// tolerances, and its simulated and real runs overlaid — every tier's
// counters (simulated solid, real dashed), each request's latency and the
// latency distributions.
func ValidatePage(v *Validation) *Page {
	p := &Page{Title: "tsim validate: " + v.Name}
	p.Lines = append([]string{"file " + v.File}, v.Lines...)
	verdict := p.Add(&Section{ID: "verdict", Title: "Verdict"})
	var fs []Finding
	for _, vv := range v.Variants {
		switch {
		case vv.NotRun != "":
			fs = append(fs, Finding{Level: "warn", Text: "variant " + vv.Name + ": not run for real: " + vv.NotRun})
		case vv.Agrees:
			fs = append(fs, Finding{Level: "info", Text: fmt.Sprintf("variant %s: simulated and real agree on all %d figures", vv.Name, len(vv.Checks))})
		default:
			var bad []string
			for _, c := range vv.Checks {
				if !c.OK {
					bad = append(bad, c.Metric)
				}
			}
			fs = append(fs, Finding{Level: "bad", Text: fmt.Sprintf("variant %s: DISAGREE on %d of %d figures: %s", vv.Name, len(bad), len(vv.Checks), strings.Join(bad, "; "))})
		}
	}
	verdict.Add(Block{Findings: fs})
	for _, vv := range v.Variants {
		p.Add(validatedSection(vv))
	}
	return p
}

func validatedSection(vv ValidatedVariant) *Section {
	id := "variant-" + anchor(vv.Name)
	s := &Section{ID: id, Title: "Variant " + vv.Name}
	if vv.NotRun != "" {
		s.Add(Block{Warnings: []string{"not run for real: " + vv.NotRun}})
		return s
	}
	if len(vv.Lines) > 0 {
		s.Add(Block{List: vv.Lines})
	}
	s.Add(Block{Table: checksTable(vv.Checks)})
	if vv.Sim == nil || vv.Real == nil {
		return s
	}
	lanes := []lane{
		{label: "sim", run: vv.Sim, names: laneNames(vv.Sim, false)},
		{label: "real", run: vv.Real, names: laneNames(vv.Real, false), dash: bDash},
	}
	prefix := "validate-" + anchor(vv.Name)
	if len(vv.Sim.Series) > 0 || len(vv.Real.Series) > 0 {
		s.Add(Block{Text: "Counters over time, simulated (solid) and real (dashed), under their PerfMon names. " + howTo})
		s.Add(tierBlocks(lanes, nil, prefix, prefix)...)
	}
	var charts []*Chart
	if len(vv.Sim.Points) > 0 || len(vv.Real.Points) > 0 {
		c := latencyChart(prefix+"/latency", "client latency of each request, simulated and real", lanes)
		c.Sync = prefix
		charts = append(charts, c)
	}
	var curves []*cdfCurve
	for i, ln := range lanes {
		if cv := runCurve(ln.label, ln.run); cv != nil {
			cv.color, cv.dash = palette[0], ln.dash
			if i > 0 {
				cv.color = palette[1]
			}
			curves = append(curves, cv)
		}
	}
	if len(curves) > 0 { // cdfChart draws an experiment's scenarios without curves
		if c := cdfChart(nil, nil, curves); c != nil {
			c.ID = prefix + "/cdf"
			charts = append(charts, c)
		}
	}
	if len(charts) > 0 {
		s.Add(Block{Sub: &Section{ID: prefix + "-latency", Title: "latency", Blocks: []Block{{Charts: &Grid{Columns: len(charts), Charts: charts}}}}})
	}
	return s
}

// runCurve is a run's latency distribution, nil without one.
func runCurve(label string, r *results.Run) *cdfCurve {
	if r == nil || r.Quantiles == nil {
		return nil
	}
	share := 1.0
	if c := r.Requests; c.Completed+c.TimedOut+c.Rejected+c.Failed > 0 {
		share = float64(c.Completed) / float64(c.Completed+c.TimedOut+c.Rejected+c.Failed)
	}
	return &cdfCurve{label: label, key: label, quantiles: r.Quantiles, share: share}
}

func checksTable(cs []Check) *Table {
	t := &Table{Left: 2, Caption: "Simulated against real",
		Header: []string{"figure", "difference read as", "simulated", "real", "difference", "tolerance", "verdict"},
		Titles: []string{"", "", "", "", "(real − simulated)/simulated, or in percentage points for shares", "", ""}}
	for _, c := range cs {
		diff, limit := "–", results.FmtFixed(100*c.Limit, 0)+"%"
		switch {
		case math.IsNaN(c.Diff):
		case math.IsInf(c.Diff, 0):
			diff = "∞"
		case c.PP:
			diff = strconv.FormatFloat(c.Diff, 'f', 2, 64) + " pp"
			if c.Diff > 0 {
				diff = "+" + diff
			}
		default:
			diff = strconv.FormatFloat(100*c.Diff, 'f', 1, 64) + "%"
			if c.Diff > 0 {
				diff = "+" + diff
			}
		}
		if c.PP {
			limit = results.FmtFixed(c.Limit, 1) + " pp"
		}
		verdict, cl := "agrees", "better"
		if !c.OK {
			verdict, cl = "DIFFERS", "worse"
		}
		t.Rows = append(t.Rows, []string{c.Metric, c.Rule, results.Sig4(c.Sim, "–"), results.Sig4(c.Real, "–"), diff, limit, verdict})
		t.Classes = append(t.Classes, []string{"", "", "", "", cl, "", cl})
	}
	return t
}
