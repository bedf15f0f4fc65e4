package htmlreport

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// Comparison is two result folders compared (tsim diff): the scenarios
// paired, every headline figure of each pair side by side with its change
// and whether the change is larger than the confidence intervals, and the
// limits that bind in each.
type Comparison struct {
	A, B   Side
	FA, FB *Folder
	Pairs  []*Pair
	// OnlyA and OnlyB are the scenarios one side has and the other lacks.
	OnlyA, OnlyB []string
}

// Pair is a scenario of A and the scenario of B it is compared with.
type Pair struct {
	Label   string // "misconfigured", or "misconfigured → fixed" when the names differ
	A, B    *results.Scenario
	Figures []Figure
	// BindsA and BindsB are what binds in each (the findings of report.html).
	BindsA, BindsB []Finding
	Tiers, Calls   []Figure // per tier and per call
}

// Figure is one figure of both sides and its change.
type Figure struct {
	Name   string
	A, B   float64
	HA, HB *float64 // 95% confidence half-widths, where the run has them
	// Better is the direction in which the figure improves: +1 higher, -1
	// lower, 0 neither (a count of requests generated).
	Better int
	Format func(float64) string
	// None marks a value that does not exist on a side (no latency
	// without completions).
	NoneA, NoneB bool
}

// Verdict is what the change amounts to.
type Verdict int

const (
	NoChange     Verdict = iota // equal values
	NoInterval                  // changed; no interval to judge it by
	WithinCI                    // changed by less than the interval of the difference
	BeyondCI                    // changed by more
	NotAvailable                // a side has no value
)

// Delta is B − A.
func (f Figure) Delta() float64 { return f.B - f.A }

// HalfWidth is the 95% half-width of the difference B − A: the square
// root of the sum of the squares of each side's half-width, which is the
// Student t half-width of the difference of two independent means when
// the sides have as many replications. Variants of one run share their
// random numbers and are positively correlated, so for them it is
// conservative: a change called beyond it is real. Nil unless both sides
// have an interval.
func (f Figure) HalfWidth() *float64 {
	if f.HA == nil || f.HB == nil {
		return nil
	}
	h := math.Hypot(*f.HA, *f.HB)
	return &h
}

// Verdict judges the change.
func (f Figure) Verdict() Verdict {
	switch {
	case f.NoneA || f.NoneB:
		return NotAvailable
	case f.A == f.B:
		return NoChange
	}
	h := f.HalfWidth()
	switch {
	case h == nil:
		return NoInterval
	case math.Abs(f.Delta()) > *h:
		return BeyondCI
	}
	return WithinCI
}

// Class is the table cell's class for the change: "worse" or "better"
// (beyond the intervals), "changed" (beyond them, neither better nor
// worse), "same" (within them, or equal), "unjudged" (no interval) or ""
// (a side has no value).
func (f Figure) Class() string {
	v := f.Verdict()
	switch v {
	case NoChange, WithinCI:
		return "same"
	case NotAvailable:
		return ""
	}
	switch {
	case v == NoInterval:
		return "unjudged" // without an interval, no colour: it may be noise
	case f.Better == 0:
		return "changed"
	case (f.Delta() > 0) == (f.Better > 0):
		return "better"
	}
	return "worse"
}

func (f Figure) value(v float64, h *float64, none bool) string {
	if none {
		return "–"
	}
	return f.Format(v) + results.FmtPM(h, f.Format)
}

// Change writes B − A and, where A is not zero, the relative change.
func (f Figure) Change() string {
	if f.NoneA || f.NoneB {
		return "–"
	}
	d := f.Delta()
	if d == 0 {
		return "0"
	}
	s := f.Format(d)
	if d > 0 {
		s = "+" + s
	}
	if f.A != 0 {
		s += fmt.Sprintf(" (%+.0f%%)", 100*d/math.Abs(f.A))
	}
	return s
}

// Judgement writes the verdict in words.
func (f Figure) Judgement() string {
	switch f.Verdict() {
	case NoChange:
		return "same"
	case NotAvailable:
		return "–"
	case NoInterval:
		return "no interval"
	case WithinCI:
		return "within ±" + f.Format(*f.HalfWidth())
	}
	return "beyond ±" + f.Format(*f.HalfWidth())
}

// Diff reads two result folders and compares them. Scenarios are paired
// by variant and sweep values; a side naming a variant (DIR@VARIANT)
// compares that variant alone, so two variants of one run compare as
// out/x@before out/x@after. Two sides of one scenario each are paired
// whatever their names.
func Diff(a, b Side) (*Comparison, error) {
	fa, err := ReadFolder(a.Dir)
	if err != nil {
		return nil, err
	}
	fb, err := ReadFolder(b.Dir)
	if err != nil {
		return nil, err
	}
	sa, err := pick(fa, a)
	if err != nil {
		return nil, err
	}
	sb, err := pick(fb, b)
	if err != nil {
		return nil, err
	}
	c := &Comparison{A: a, B: b, FA: fa, FB: fb}
	if len(sa) == 1 && len(sb) == 1 {
		c.Pairs = append(c.Pairs, newPair(sa[0], sb[0], fa.Exp, fb.Exp))
		return c, nil
	}
	for _, x := range sa {
		k := slices.IndexFunc(sb, func(y *results.Scenario) bool { return y.Label() == x.Label() })
		if k < 0 {
			c.OnlyA = append(c.OnlyA, x.Label())
			continue
		}
		c.Pairs = append(c.Pairs, newPair(x, sb[k], fa.Exp, fb.Exp))
	}
	for _, y := range sb {
		if !slices.ContainsFunc(sa, func(x *results.Scenario) bool { return y.Label() == x.Label() }) {
			c.OnlyB = append(c.OnlyB, y.Label())
		}
	}
	if len(c.Pairs) == 0 {
		return nil, fmt.Errorf("%s and %s have no scenario in common (%s; %s): name a variant of each, as DIR@VARIANT",
			a, b, strings.Join(c.OnlyA, ", "), strings.Join(c.OnlyB, ", "))
	}
	return c, nil
}

// pick returns a side's scenarios: all, or those of its variant.
func pick(f *Folder, s Side) ([]*results.Scenario, error) {
	done := f.Exp.Done()
	if s.Variant == "" {
		return done, nil
	}
	var out []*results.Scenario
	for _, sc := range done {
		if sc.Variant == s.Variant {
			out = append(out, sc)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no variant %q (it has %s)", s.Dir, s.Variant, strings.Join(variants(f.Exp), ", "))
	}
	return out, nil
}

func newPair(a, b *results.Scenario, xa, xb *results.Experiment) *Pair {
	p := &Pair{A: a, B: b, Label: a.Label()}
	if lb := b.Label(); lb != p.Label {
		p.Label += " → " + lb
	}
	p.Figures = headlineFigures(a.Agg, b.Agg)
	p.BindsA, p.BindsB = scenarioFindings(a.Agg), scenarioFindings(b.Agg)
	p.Tiers = tierFigures(a.Agg.Tiers, b.Agg.Tiers)
	p.Calls = callFigures(a.Agg.Calls, b.Agg.Calls)
	return p
}

func headlineFigures(a, b results.Aggregate) []Figure {
	var ca, cb results.Intervals
	if a.CI != nil {
		ca = *a.CI
	}
	if b.CI != nil {
		cb = *b.CI
	}
	noLatA, noLatB := a.Latency.None || a.Requests.Completed == 0, b.Latency.None || b.Requests.Completed == 0
	lat := func(name string, va, vb float64, ha, hb *float64) Figure {
		return Figure{Name: name, A: va, B: vb, HA: ha, HB: hb, Better: -1, Format: results.FmtLatency, NoneA: noLatA, NoneB: noLatB}
	}
	count := func(name string, va, vb int64, better int) Figure {
		return Figure{Name: name, A: float64(va), B: float64(vb), Better: better, Format: fmtCount}
	}
	first := Figure{Name: "first timeout", A: a.FirstTimeoutS, B: b.FirstTimeoutS, Better: +1, Format: results.FmtLatency,
		NoneA: a.FirstTimeoutS < 0, NoneB: b.FirstTimeoutS < 0}
	return []Figure{
		{Name: "goodput/s", A: a.GoodputPerS, B: b.GoodputPerS, HA: ca.GoodputPerS, HB: cb.GoodputPerS, Better: +1, Format: results.FmtRate},
		{Name: "throughput/s", A: a.ThroughputPerS, B: b.ThroughputPerS, HA: ca.ThroughputPerS, HB: cb.ThroughputPerS, Better: +1, Format: results.FmtRate},
		lat("latency mean", a.Latency.Mean, b.Latency.Mean, ca.LatencyMeanS, cb.LatencyMeanS),
		lat("latency p50", a.Latency.P50, b.Latency.P50, nil, nil),
		lat("latency p90", a.Latency.P90, b.Latency.P90, nil, nil),
		lat("latency p99", a.Latency.P99, b.Latency.P99, ca.LatencyP99S, cb.LatencyP99S),
		lat("latency p99.9", a.Latency.P999, b.Latency.P999, nil, nil),
		lat("latency max", a.Latency.Max, b.Latency.Max, nil, nil),
		{Name: "timeouts", A: a.TimeoutRate, B: b.TimeoutRate, HA: ca.TimeoutRate, HB: cb.TimeoutRate, Better: -1, Format: fmtShare},
		{Name: "rejected", A: a.RejectRate, B: b.RejectRate, Better: -1, Format: fmtShare},
		count("requests generated", a.Requests.Generated, b.Requests.Generated, 0),
		count("completed", a.Requests.Completed, b.Requests.Completed, +1),
		count("timed out", a.Requests.TimedOut, b.Requests.TimedOut, -1),
		count("rejected (requests)", a.Requests.Rejected, b.Requests.Rejected, -1),
		count("failed", a.Requests.Failed, b.Requests.Failed, -1),
		first,
	}
}

// tierFigures compares the tiers both sides have, by name: CPU, requests
// executing and queued, the wait and the response time at the tier.
func tierFigures(ta, tb []results.Tier) []Figure {
	var out []Figure
	for _, x := range ta {
		k := slices.IndexFunc(tb, func(y results.Tier) bool { return y.Name == x.Name })
		if k < 0 {
			continue
		}
		y := tb[k]
		out = append(out,
			Figure{Name: x.Name + ": CPU %", A: 100 * x.CPUUtil, B: 100 * y.CPUUtil, Format: func(v float64) string { return results.FmtFixed(v, 1) }},
			Figure{Name: x.Name + ": requests executing", A: x.ExecutingMean, B: y.ExecutingMean, Format: results.FmtLevel},
			Figure{Name: x.Name + ": requests queued", A: x.QueuedMean, B: y.QueuedMean, Better: -1, Format: results.FmtLevel},
			Figure{Name: x.Name + ": request wait time", A: x.WaitTimeMean, B: y.WaitTimeMean, Better: -1, Format: results.FmtLatency},
			Figure{Name: x.Name + ": response p99", A: x.ResponseP99, B: y.ResponseP99, Better: -1, Format: results.FmtLatency,
				NoneA: x.Completed == 0, NoneB: y.Completed == 0},
		)
	}
	return out
}

// callFigures compares the calls both sides have: the connection limit,
// connections in use and waiting, the wait for one.
func callFigures(ca, cb []results.Call) []Figure {
	var out []Figure
	limit := func(v float64) string {
		if v == 0 {
			return "none"
		}
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	for _, x := range ca {
		k := slices.IndexFunc(cb, func(y results.Call) bool { return y.From == x.From && y.To == x.To })
		if k < 0 {
			continue
		}
		y := cb[k]
		name := x.From + " → " + x.To
		out = append(out,
			Figure{Name: name + ": connection limit", A: float64(x.Limit), B: float64(y.Limit), Format: limit},
			Figure{Name: name + ": connections in use", A: x.InUseMean, B: y.InUseMean, Format: results.FmtLevel},
			Figure{Name: name + ": waiting for a connection", A: x.WaitingMean, B: y.WaitingMean, Better: -1, Format: results.FmtLevel},
			Figure{Name: name + ": connection wait", A: x.WaitMean, B: y.WaitMean, Better: -1, Format: results.FmtLatency},
			Figure{Name: name + ": calls timed out", A: float64(x.TimedOut), B: float64(y.TimedOut), Better: -1, Format: fmtCount},
		)
	}
	return out
}

func fmtCount(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// fmtShare writes a share as a percentage with a precision that shows a
// change of 0.01%: "0.41%".
func fmtShare(f float64) string {
	if f == 0 {
		return "0%"
	}
	return strconv.FormatFloat(100*f, 'f', 2, 64) + "%"
}

// describe is a side's one-line description.
func describe(s Side, f *Folder) string {
	x := f.Exp
	reps := "1 replication"
	if x.Replications > 1 {
		reps = fmt.Sprintf("%d replications", x.Replications)
	}
	line := fmt.Sprintf("%s: %s (%s), seed %d, %s, mode %s", s, x.Name, x.File, x.Seed, reps, x.Mode)
	if !x.Complete() {
		line += fmt.Sprintf(", interrupted (%d of %d scenarios)", x.Finished, len(x.Scenarios))
	}
	return line
}

// WriteText prints the comparison as tsim diff does: for each pair, the
// headline figures, then the tiers' and calls' that changed, and what
// binds in each.
func (c *Comparison) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "A  %s\nB  %s\n", describe(c.A, c.FA), describe(c.B, c.FB))
	if c.FA.Exp.Replications < 2 || c.FB.Exp.Replications < 2 {
		fmt.Fprintf(w, "   (a side of one replication has no confidence intervals: run both with --reps 5 or more to judge the changes)\n")
	}
	for _, p := range c.Pairs {
		fmt.Fprintf(w, "\n%s\n", p.Label)
		if err := figureTable(w, p.Figures, false); err != nil {
			return err
		}
		var changed []Figure
		for _, f := range append(append([]Figure(nil), p.Tiers...), p.Calls...) {
			if f.Verdict() != NoChange && f.Verdict() != NotAvailable {
				changed = append(changed, f)
			}
		}
		if len(changed) > 0 {
			fmt.Fprintln(w)
			if err := figureTable(w, changed, true); err != nil {
				return err
			}
		}
		binds := func(side string, fs []Finding) {
			if len(fs) == 0 {
				fmt.Fprintf(w, "  %s: nothing queued\n", side)
				return
			}
			for _, f := range fs {
				fmt.Fprintf(w, "  %s: %s\n", side, f.Text)
			}
		}
		fmt.Fprintln(w, "what binds:")
		binds("A", p.BindsA)
		binds("B", p.BindsB)
	}
	if len(c.OnlyA) > 0 {
		fmt.Fprintf(w, "\nonly in A: %s\n", strings.Join(c.OnlyA, "; "))
	}
	if len(c.OnlyB) > 0 {
		fmt.Fprintf(w, "\nonly in B: %s\n", strings.Join(c.OnlyB, "; "))
	}
	return nil
}

// figureTable prints figures in aligned columns.
func figureTable(w io.Writer, fs []Figure, tiersAndCalls bool) error {
	head := "figure"
	if tiersAndCalls {
		head = "tiers and calls (changed)"
	}
	rows := [][]string{{head, "A", "B", "change", "verdict"}}
	for _, f := range fs {
		v := f.Judgement()
		if cl := f.Class(); cl == "worse" || cl == "better" {
			v += " (" + cl + ")"
		}
		rows = append(rows, []string{f.Name, f.value(f.A, f.HA, f.NoneA), f.value(f.B, f.HB, f.NoneB), f.Change(), v})
	}
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			width[i] = max(width[i], len([]rune(cell)))
		}
	}
	var b strings.Builder
	for ri, r := range rows {
		b.WriteString(" ")
		for i, cell := range r {
			pad := strings.Repeat(" ", width[i]-len([]rune(cell)))
			if i == 0 || i == len(r)-1 {
				b.WriteString(cell + pad)
			} else {
				b.WriteString(pad + cell)
			}
			if i < len(r)-1 {
				b.WriteString(" │ ")
			}
		}
		b.WriteString("\n")
		if ri == 0 {
			b.WriteString(" ")
			for i := range r {
				b.WriteString(strings.Repeat("─", width[i]))
				if i < len(r)-1 {
					b.WriteString("─┼─")
				}
			}
			b.WriteString("\n")
		}
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}
