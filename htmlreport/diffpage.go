package htmlreport

import (
	"fmt"
	"slices"
	"strings"
)

// DiffFileName is the page tsim diff writes.
const DiffFileName = "diff.html"

// bDash is side B's line in an overlay: dashed over A's solid line.
var bDash = []int{6, 4}

// Page builds diff.html: for each pair, the headline figures side by side
// with their changes (red where worse beyond the intervals, green where
// better, grey within them), the tiers and calls, what binds in each, and
// both runs' charts overlaid (A solid, B dashed), read from each folder's
// report.html.
func (c *Comparison) Page() *Page {
	p := &Page{Title: "tsim diff: " + c.FA.Exp.Name + " vs " + c.FB.Exp.Name}
	p.Lines = []string{"A " + describe(c.A, c.FA), "B " + describe(c.B, c.FB)}
	if c.FA.Exp.Replications < 2 || c.FB.Exp.Replications < 2 {
		p.Lines = append(p.Lines, "A side of one replication has no confidence intervals: run both with --reps 5 or more to judge the changes.")
	}
	var notes []string
	if c.FA.Note != "" {
		notes = append(notes, "A: "+c.FA.Note+": its charts are not overlaid")
	}
	if c.FB.Note != "" {
		notes = append(notes, "B: "+c.FB.Note+": its charts are not overlaid")
	}
	if len(c.OnlyA) > 0 {
		notes = append(notes, "only in A: "+strings.Join(c.OnlyA, "; "))
	}
	if len(c.OnlyB) > 0 {
		notes = append(notes, "only in B: "+strings.Join(c.OnlyB, "; "))
	}
	if len(notes) > 0 {
		p.Add(&Section{ID: "warnings", Title: "Warnings", Blocks: []Block{{Warnings: notes}}})
	}
	sum := p.Add(&Section{ID: "figures", Title: "Figures"})
	sum.Text("B − A for every scenario compared. A change is judged against the 95%% confidence half-width of the difference, √(hA² + hB²) from each side's interval (summary.json's ci): beyond it the change is real (red: worse, green: better), within it the runs do not tell the difference apart (grey). Figures without an interval are not judged.")
	for i, pr := range c.Pairs {
		sub := &Section{ID: fmt.Sprintf("pair-%d", i+1), Title: pr.Label}
		sub.Add(Block{Table: figuresTable("figure", pr.Figures)})
		if len(pr.Tiers) > 0 {
			sub.Add(Block{Table: figuresTable("tier", pr.Tiers)})
		}
		if len(pr.Calls) > 0 {
			sub.Add(Block{Table: figuresTable("call", pr.Calls)})
		}
		binds := []Block{{Text: "What binds in A:"}}
		binds = append(binds, findingsBlock(pr.BindsA))
		binds = append(binds, Block{Text: "What binds in B:"}, findingsBlock(pr.BindsB))
		sub.Add(binds...)
		if res := resolutionChanges(pr); len(res) > 0 {
			sub.Add(Block{Text: "Connection limits that differ:"}, Block{List: res})
		}
		sum.Add(Block{Sub: sub})
	}
	if c.FA.Charts != nil && c.FB.Charts != nil {
		c.addCharts(p)
	}
	return p
}

func findingsBlock(fs []Finding) Block {
	if len(fs) == 0 {
		return Block{Findings: []Finding{{Level: "info", Text: "nothing queued"}}}
	}
	return Block{Findings: fs}
}

// resolutionChanges are the calls whose connection limit was resolved
// differently in A and B.
func resolutionChanges(pr *Pair) []string {
	var out []string
	for _, x := range pr.A.Agg.Calls {
		for _, y := range pr.B.Agg.Calls {
			if x.From == y.From && x.To == y.To && x.Resolution != y.Resolution {
				out = append(out, fmt.Sprintf("%s → %s: A %s; B %s", x.From, x.To, x.Resolution, y.Resolution))
			}
		}
	}
	return out
}

func figuresTable(head string, fs []Figure) *Table {
	t := &Table{Left: 1, Header: []string{head, "A", "B", "B − A", "verdict"},
		Titles: []string{"", "", "", "", "the change against the 95% half-width of the difference"}}
	for _, f := range fs {
		t.Rows = append(t.Rows, []string{f.Name, f.value(f.A, f.HA, f.NoneA), f.value(f.B, f.HB, f.NoneB), f.Change(), f.Judgement()})
		cl := f.Class()
		t.Classes = append(t.Classes, []string{"", "", "", cl, cl})
	}
	return t
}

// addCharts overlays the charts of both folders' report.html, pair by
// pair: each tier's counters, the latency of each request, the latency
// distributions; the sweep curves for sweeps.
func (c *Comparison) addCharts(p *Page) {
	ca, cb := c.FA.Charts, c.FB.Charts
	if c.FA.Exp.IsSweep() || c.FB.Exp.IsSweep() {
		s := p.Add(&Section{ID: "sweep", Title: "Sweep curves, A solid, B dashed"})
		s.Text("%s", howTo)
		g := &Grid{Columns: 1}
		for _, m := range sweepMetrics {
			id := "sweep/" + m.id
			if o := overlay("diff/"+id, m.title, ca[id], cb[id], nil, nil); o != nil {
				g.Charts = append(g.Charts, o)
			}
		}
		s.Add(Block{Charts: g})
	}
	var curves []*Chart
	for i, pr := range c.Pairs {
		va, vb := pr.A.Variant, pr.B.Variant
		s := &Section{ID: fmt.Sprintf("charts-%d", i+1), Title: "Charts of " + pr.Label + ", A solid, B dashed"}
		s.Text("%s", howTo)
		var tiers []string
		for _, t := range pr.A.Agg.Tiers {
			tiers = append(tiers, t.Name)
		}
		for ti, tier := range tiers {
			g := &Grid{Columns: 2}
			for _, pn := range panels {
				ida := "counters/" + va + "/" + tier + "/" + pn.key
				idb := "counters/" + vb + "/" + tier + "/" + pn.key
				id := fmt.Sprintf("diff/%d/%s/%s", i+1, tier, pn.key)
				if o := overlay(id, pn.title, ca[ida], cb[idb], nil, nil); o != nil {
					o.Sync = "counters"
					g.Charts = append(g.Charts, o)
				}
			}
			if len(g.Charts) > 0 {
				s.Add(Block{Sub: &Section{ID: fmt.Sprintf("charts-%d-tier-%s", i+1, anchor(tier)), Title: "tier " + tier, Collapsed: ti >= openTiers,
					Blocks: []Block{{Charts: g}}}})
			}
		}
		if o := overlay(fmt.Sprintf("diff/%d/latency", i+1), "client latency of each request", ca["latency/"+va], cb["latency/"+vb], nil, nil); o != nil {
			s.Add(Block{Sub: &Section{ID: fmt.Sprintf("charts-%d-latency", i+1), Title: "latency of each request", Blocks: []Block{{Charts: &Grid{Columns: 1, Charts: []*Chart{o}}}}}})
		}
		if len(s.Blocks) > 1 {
			p.Add(s)
		}
		// The distributions of every pair go in one chart.
		ka, kb := pr.A.Label(), pr.B.Label()
		if o := overlay("", "", ca["cdf"], cb["cdf"], func(x Series) bool { return x.Key == ka }, func(x Series) bool { return x.Key == kb }); o != nil {
			curves = append(curves, o)
		}
	}
	if len(curves) > 0 {
		cdf := curves[0]
		cdf.ID, cdf.Title = "diff/cdf", "client latency distribution of completed requests"
		for _, o := range curves[1:] {
			cdf.Series = append(cdf.Series, o.Series...)
			cdf.Frames = append(cdf.Frames, o.Frames...)
		}
		s := p.Add(&Section{ID: "latency-cdf", Title: "Latency distribution, A solid, B dashed"})
		s.Add(Block{Charts: &Grid{Columns: 1, Charts: []*Chart{cdf}}})
	}
}

// overlay makes one chart of a and b (either may be nil): a's series as
// they are, labelled "A: ", b's labelled "B: ", dashed (recoloured where
// they are dots), each keeping its own frames; keepA and keepB, where
// given, choose the series taken. Both y axes' fixed ranges are widened
// to hold both. Nil when neither has a series.
func overlay(id, title string, a, b *Chart, keepA, keepB func(Series) bool) *Chart {
	if a == nil && b == nil {
		return nil
	}
	base := a
	if base == nil {
		base = b
	}
	o := &Chart{ID: id, Title: title, Note: base.Note, X: base.X, Y: base.Y, Height: base.Height, Sync: base.Sync}
	if o.Title == "" {
		o.Title = base.Title
	}
	add := func(c *Chart, side string, keep func(Series) bool, restyle func(s *Series, k int)) {
		if c == nil {
			return
		}
		// Series take the frames' columns in order: walk both at once.
		k := 0
		for _, f := range c.Frames {
			nf := Frame{X: f.X}
			var take []Series
			for _, col := range f.Y {
				s := c.Series[k]
				k++
				if keep != nil && !keep(s) {
					continue
				}
				s.Label = side + ": " + s.Label
				restyle(&s, len(o.Series)+len(take))
				take = append(take, s)
				nf.Y = append(nf.Y, col)
			}
			if len(nf.Y) > 0 {
				o.Series = append(o.Series, take...)
				o.Frames = append(o.Frames, nf)
			}
		}
		if c.Y.Max != nil && (o.Y.Max == nil || *c.Y.Max > *o.Y.Max) {
			o.Y.Max = c.Y.Max
		}
	}
	add(a, "A", keepA, func(*Series, int) {})
	nA := len(o.Series)
	add(b, "B", keepB, func(s *Series, k int) {
		if s.Points {
			s.Color = laneColors[(k-nA)%len(laneColors)]
			return
		}
		if s.Dash != nil {
			s.Dash = []int{2, 3}
		} else {
			s.Dash = bDash
		}
	})
	if a != nil && b != nil && a.Y.Max != nil && b.Y.Max != nil {
		o.Y.Max = ptr(max(*a.Y.Max, *b.Y.Max))
	} else if a == nil || b == nil {
		o.Y.Max = nil
	}
	if len(o.Series) == 0 {
		return nil
	}
	if slices.ContainsFunc(o.Series, func(s Series) bool { return s.Err != nil }) {
		o.Note = "Bars: 95% confidence intervals."
	}
	return o
}
