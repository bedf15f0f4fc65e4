package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// PlanFileName is the page tsim plan writes beside its plan.png.
const PlanFileName = "plan.html"

// Plan is what tsim plan found, as its page shows it: the goal, every
// point it evaluated with each clause's mean and one-sided confidence
// bound and its verdict, the answer, and the search as charts. The command
// fills it from its own result (package analysis), which this package does
// not know.
type Plan struct {
	Name, File string
	// Lines are the facts under the title: the variant, the load and the
	// settings fixed at every point, the replications and their seeds,
	// the simulated span, how the search went.
	Lines []string
	// Goal says the goal and how it is judged, Text what tsim plan
	// printed.
	Goal, Text string
	// Keys name the searched values, a column each (the key paths, or
	// "users" or "rate" for the most load a setting holds); XLabel names
	// the first on the charts' x axes, which is logarithmic when LogX.
	// XLabels, where set, are the first key's values when they are not
	// numbers: a point's X[0] is then its place among them.
	Keys    []string
	XLabel  string
	LogX    bool
	XLabels []string
	Clauses []PlanClause
	// Maximize is the metric maximised ("goodput", "throughput"), or "";
	// MaxClause says how to draw it.
	Maximize  string
	MaxClause PlanClause
	Reps      int
	// Points are every evaluated point, in the order of evaluation.
	Points []PlanPoint
	// Found says whether a point met the goal; Best is then the
	// answer's index in Points (-1 for none), Answer its value of the
	// first key (NaN when it is not one number), AnswerText the answer
	// (or why there is none) in a sentence and AnswerLabel its mark on
	// the charts.
	Found                   bool
	Best                    int
	Answer                  float64
	AnswerText, AnswerLabel string
	Interrupted             bool
}

// PlanClause is one clause of a goal ("p99 < 4s").
type PlanClause struct {
	Text  string
	Label string  // the y axis: "p99 latency (s)"
	Unit  string  // the values' unit: "s", "%", "/s"
	Scale float64 // a value times Scale is in Unit (shares: 100)
	Limit float64 // the threshold, unscaled
	Less  bool    // the value must stay below Limit (otherwise above)
}

// PlanPoint is one evaluated configuration.
type PlanPoint struct {
	Order  int       // 1-based order of evaluation
	Values []string  // the searched values, one per key, as written
	X      []float64 // their numbers (a place for values that are not)
	// Mean and Bound are, per clause, the mean across replications and
	// the one-sided 95% bound judged (unscaled; +Inf: no request
	// completed, so no latency).
	Mean, Bound []float64
	// Obj and ObjHalf are the maximised metric's mean and 95%
	// half-width.
	Obj, ObjHalf float64
	OK           bool
	Missed       []string // the clauses' metrics it misses
}

// Colours of verdicts on a plan's charts.
const (
	colorMet    = "#009E73"
	colorMissed = "#D55E00"
	colorGoal   = "#D55E00"
	colorAnswer = "#000000"
)

// PlanPage builds plan.html: the goal and the answer, a chart per clause
// of the goal (and one of the maximised metric) against the first
// searched value — each line's means and confidence bounds, the
// threshold, the points that meet and miss it, the answer — and every
// evaluated point in a table, with the text tsim plan printed.
func PlanPage(p *Plan) *Page {
	pg := &Page{Title: "tsim plan: " + p.Name}
	pg.Lines = append([]string{"file " + p.File}, p.Lines...)
	if p.Interrupted {
		pg.Add(&Section{ID: "warnings", Title: "Warnings", Blocks: []Block{{Warnings: []string{
			"interrupted: the points that finished are shown, and there is no answer"}}}})
	}
	ans := pg.Add(&Section{ID: "answer", Title: "Answer"})
	ans.Text("%s", p.Goal)
	level := "bad"
	if p.Found {
		level = "info"
	}
	prefix := "no answer: "
	if p.Found {
		prefix = "answer: "
	}
	ans.Add(Block{Findings: []Finding{{Level: level, Text: prefix + p.AnswerText + "."}}})

	if charts := planCharts(p); len(charts) > 0 {
		s := pg.Add(&Section{ID: "search", Title: "Search"})
		intro := "Each evaluated point against " + p.XLabel + ": the mean across replications (solid)"
		if p.Reps > 1 {
			intro += " and the one-sided 95% confidence bound judged against the goal (dashed)"
		}
		intro += "; green dots meet the whole goal, red ones miss a clause; the threshold is the red dashed line"
		if p.Best >= 0 {
			intro += "; the black dot is the answer"
		}
		s.Text("%s. %s", intro, howToXY)
		s.Add(Block{Charts: &Grid{Columns: min(len(charts), 2), Charts: charts}})
	}
	pts := pg.Add(&Section{ID: "points", Title: "Evaluated points"})
	pts.Add(Block{Table: planTable(p)})
	if p.Text != "" {
		pg.Add(&Section{ID: "text", Title: "As tsim plan printed it", Collapsed: true, Blocks: []Block{{Pre: p.Text}}})
	}
	return pg
}

// planOrder returns the points ordered by their searched values (the
// first key first), then by the order of evaluation.
func planOrder(p *Plan) []int {
	idx := make([]int, len(p.Points))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		xa, xb := p.Points[a].X, p.Points[b].X
		for k := 0; k < len(xa) && k < len(xb); k++ {
			if c := cmpFloat(xa[k], xb[k]); c != 0 {
				return c
			}
		}
		return p.Points[a].Order - p.Points[b].Order
	})
	return idx
}

// fmtClause writes a clause's value in its unit: "1.23 s", "0.1%", "52.3/s".
func fmtClause(c PlanClause, v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return "none"
	case c.Unit == "s":
		return results.FmtLatency(v)
	case c.Unit == "%":
		return results.FmtPercent(v)
	case c.Unit == "/s":
		return results.FmtRate(v) + "/s"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func planTable(p *Plan) *Table {
	t := &Table{Left: 1 + len(p.Keys), Header: []string{"#"}, Titles: []string{"the order in which the point was evaluated"}}
	for _, k := range p.Keys {
		t.Header = append(t.Header, results.ShortKey(k))
		t.Titles = append(t.Titles, k)
	}
	for _, c := range p.Clauses {
		if p.Reps > 1 {
			bound := "upper"
			if !c.Less {
				bound = "lower"
			}
			t.Header = append(t.Header, c.Text+": mean → "+bound+" bound")
			t.Titles = append(t.Titles, "the mean across replications, then the one-sided 95% Student t bound that must meet the threshold")
		} else {
			t.Header = append(t.Header, c.Text)
			t.Titles = append(t.Titles, "one replication, judged without confidence")
		}
	}
	if p.Maximize != "" {
		h := p.Maximize + " mean"
		if p.Reps > 1 {
			h += " ± 95%"
		}
		t.Header = append(t.Header, h)
		t.Titles = append(t.Titles, "the maximised metric")
	}
	t.Header = append(t.Header, "meets goal")
	t.Titles = append(t.Titles, "")
	for _, i := range planOrder(p) {
		pt := p.Points[i]
		row := []string{itoa(pt.Order)}
		row = append(row, pt.Values...)
		for len(row) < 1+len(p.Keys) {
			row = append(row, "")
		}
		cls := make([]string, 0, len(t.Header))
		for range row {
			cls = append(cls, "")
		}
		for g, c := range p.Clauses {
			cell := fmtClause(c, pt.Mean[g])
			if p.Reps > 1 && !math.IsInf(pt.Mean[g], 0) {
				cell += " → " + fmtClause(c, pt.Bound[g])
			}
			row = append(row, cell)
			if slices.Contains(pt.Missed, clauseMetric(c)) {
				cls = append(cls, "worse")
			} else {
				cls = append(cls, "")
			}
		}
		if p.Maximize != "" {
			cell := fmtClause(p.MaxClause, pt.Obj)
			if p.Reps > 1 {
				cell += " ± " + fmtClause(p.MaxClause, pt.ObjHalf)
			}
			row = append(row, cell)
			cls = append(cls, "")
		}
		verdict, vc := "yes", "better"
		if !pt.OK {
			verdict, vc = "no: "+strings.Join(pt.Missed, ", "), "worse"
		}
		if i == p.Best {
			verdict += " (the answer)"
		}
		row = append(row, verdict)
		cls = append(cls, vc)
		t.Rows = append(t.Rows, row)
		t.Classes = append(t.Classes, cls)
	}
	t.Notes = []string{"Ordered by the searched values; # is the order in which the points were evaluated."}
	return t
}

// clauseMetric is the metric a clause names: "p99" of "p99 < 4s".
func clauseMetric(c PlanClause) string {
	m, _, _ := strings.Cut(c.Text, " ")
	return m
}

// planCharts draws the search: the maximised metric first, then a chart
// per clause.
func planCharts(p *Plan) []*Chart {
	var out []*Chart
	if p.Maximize != "" {
		if c := planChart(p, "plan/"+p.Maximize, p.MaxClause, -1); c != nil {
			out = append(out, c)
		}
	}
	for g, c := range p.Clauses {
		if ch := planChart(p, "plan/"+itoa(g+1)+"-"+anchor(clauseMetric(c)), c, g); ch != nil {
			out = append(out, ch)
		}
	}
	return out
}

// planLine is the points of one combination of the keys after the first.
type planLine struct {
	label string
	pts   []int // indexes into Points, ordered by X[0]
}

func planLines(p *Plan) []*planLine {
	var lines []*planLine
	for _, i := range planOrder(p) {
		pt := p.Points[i]
		var parts []string
		for k := 1; k < len(pt.Values) && k < len(p.Keys); k++ {
			parts = append(parts, results.ShortKey(p.Keys[k])+"="+pt.Values[k])
		}
		label := strings.Join(parts, ", ")
		var ln *planLine
		for _, l := range lines {
			if l.label == label {
				ln = l
			}
		}
		if ln == nil {
			ln = &planLine{label: label}
			lines = append(lines, ln)
		}
		ln.pts = append(ln.pts, i)
	}
	return lines
}

// planChart is one clause's chart (g < 0: the maximised metric, its
// half-widths as bars and its peak as the line).
func planChart(p *Plan, id string, c PlanClause, g int) *Chart {
	scale := c.Scale
	if scale == 0 {
		scale = 1
	}
	value := func(pt PlanPoint) (mean, bound float64) {
		if g < 0 {
			return pt.Obj * scale, pt.ObjHalf * scale
		}
		return pt.Mean[g] * scale, pt.Bound[g] * scale
	}
	title := "goal clause " + c.Text
	if g < 0 {
		title = "the most " + p.Maximize
	}
	ch := &Chart{ID: id, Title: title, Height: 280,
		X: Axis{Label: p.XLabel, Labels: p.XLabels},
		Y: Axis{Label: c.Label, Unit: c.Unit}}
	if c.Unit != "s" || g < 0 {
		ch.Y.Min = ptr(0)
	}
	if p.LogX && p.XLabels == nil {
		ch.X.Scale = "log"
	}
	finite := func(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }
	lo, hi := math.Inf(1), math.Inf(-1)
	skipped := 0
	for n, ln := range planLines(p) {
		var f Frame
		var bounds, errs, met, missed Column
		for _, i := range ln.pts {
			pt := p.Points[i]
			if len(pt.X) == 0 || !finite(pt.X[0]) {
				continue
			}
			m, b := value(pt)
			if !finite(m) {
				skipped++
				continue // no request completed: no latency to draw
			}
			x := pt.X[0]
			if k := len(f.X); k > 0 && !(x > f.X[k-1]) {
				continue // a repeat of the same value (a load search may come back)
			}
			lo, hi = min(lo, x), max(hi, x)
			f.X = append(f.X, x)
			if f.Y == nil {
				f.Y = []Column{nil}
			}
			f.Y[0] = append(f.Y[0], m)
			bounds = append(bounds, b)
			errs = append(errs, b)
			if pt.OK {
				met, missed = append(met, m), append(missed, math.NaN())
			} else {
				met, missed = append(met, math.NaN()), append(missed, m)
			}
		}
		if len(f.X) == 0 {
			continue
		}
		color := palette[n%len(palette)]
		name := "mean"
		if ln.label != "" {
			name = ln.label + ": mean"
		}
		s := Series{Label: name, Key: ln.label, Color: color, Width: 2}
		if g < 0 && p.Reps > 1 {
			s.Err, s.ErrMin = errs, ptr(0)
			s.Label += " ± 95%"
		}
		ch.Series = append(ch.Series, s)
		ch.Frames = append(ch.Frames, f)
		if g >= 0 && p.Reps > 1 {
			bl := "95% bound"
			if ln.label != "" {
				bl = ln.label + ": 95% bound"
			}
			ch.Series = append(ch.Series, Series{Label: bl, Key: ln.label, Color: color, Width: 1.2, Dash: []int{5, 4}})
			ch.Frames = append(ch.Frames, Frame{X: f.X, Y: []Column{bounds}})
		}
		// The verdicts as dots on the means: green met, red missed.
		for _, d := range []struct {
			col          Column
			label, color string
		}{{met, "meets the goal", colorMet}, {missed, "misses it", colorMissed}} {
			if !slices.ContainsFunc(d.col, finite) {
				continue
			}
			if ln.label != "" {
				d.label = ln.label + ": " + d.label
			}
			ch.Series = append(ch.Series, Series{Label: d.label, Key: ln.label, Color: d.color, Points: true, Size: 7})
			ch.Frames = append(ch.Frames, Frame{X: f.X, Y: []Column{d.col}})
		}
	}
	if len(ch.Series) == 0 {
		return nil
	}
	// The threshold (the peak for the maximised metric) across the range.
	limit, label := c.Limit*scale, "goal: "+c.Text
	if g < 0 {
		if p.Best < 0 {
			limit = math.NaN()
		} else {
			limit, _ = value(p.Points[p.Best])
			label = "peak: " + fmtClause(c, limit/scale)
		}
	}
	if finite(limit) && hi >= lo {
		f := Frame{X: Exact{lo}, Y: []Column{{limit}}}
		if hi > lo {
			f = Frame{X: Exact{lo, hi}, Y: []Column{{limit, limit}}}
		}
		ch.Series = append(ch.Series, Series{Label: label, Color: colorGoal, Width: 1.5, Dash: []int{8, 4}})
		ch.Frames = append(ch.Frames, f)
	}
	if p.Best >= 0 && p.Best < len(p.Points) {
		pt := p.Points[p.Best]
		if m, _ := value(pt); len(pt.X) > 0 && finite(pt.X[0]) && finite(m) {
			l := "answer"
			if p.AnswerLabel != "" {
				l = p.AnswerLabel
			}
			ch.Series = append(ch.Series, Series{Label: l, Color: colorAnswer, Points: true, Size: 11})
			ch.Frames = append(ch.Frames, Frame{X: Exact{pt.X[0]}, Y: []Column{{m}}})
		}
	}
	if skipped > 0 {
		ch.Note = fmt.Sprintf("%d points where no request completed have no latency and are left out; the table has them.", skipped)
	}
	return ch
}
