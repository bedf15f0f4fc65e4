package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/tsim-dev/tsim/results"
)

// newTable returns a borderless table whose first `left` columns are left
// aligned (names) and the rest right aligned (numbers).
func newTable(w io.Writer, left int, header ...string) *tablewriter.Table {
	align := make([]tw.Align, len(header))
	for i := range align {
		align[i] = tw.AlignRight
		if i < left {
			align[i] = tw.AlignLeft
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.Border{Left: tw.Off, Right: tw.Off, Top: tw.Off, Bottom: tw.Off},
			Settings: tw.Settings{Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.On}, Lines: tw.Lines{ShowHeaderLine: tw.On}},
			Symbols:  tw.NewSymbols(tw.StyleLight),
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	)
	t.Header(header)
	return t
}

// printReport prints an experiment's results: a header line, one row per
// scenario and, without a sweep, each variant's tiers and calls.
func printReport(w io.Writer, r *experimentResult) error {
	p := r.plan
	done := r.done()
	if len(done) == 0 {
		return nil
	}
	first := done[0].agg
	fmt.Fprintf(w, "%s (%s)\n", experimentName(p), p.path)
	if p.x.Description != "" {
		fmt.Fprintf(w, "  %s\n", strings.Join(strings.Fields(p.x.Description), " "))
	}
	reps := "1 replication"
	if p.reps > 1 {
		reps = fmt.Sprintf("%d replications (± is the 95%% confidence half-width)", p.reps)
	}
	dur := fmtSeconds(first.DurationS) + " simulated"
	if first.WarmupS > 0 {
		dur += ", warm-up " + fmtSeconds(math.Round(first.WarmupS*10)/10)
	}
	fmt.Fprintf(w, "  seed %d, %s, %s, mode %s\n", p.seed, reps, dur, p.mode)
	if !r.complete() {
		fmt.Fprintf(w, "  interrupted: %d of %d scenarios finished\n", r.finished, len(r.scenarios))
	}
	fmt.Fprintln(w)

	keys := paramKeys(p)
	header := []string{"variant"}
	for _, k := range keys {
		header = append(header, shortKey(k))
	}
	header = append(header, "goodput/s", "throughput/s", "mean", "p50", "p99", "timeouts", "rejected")
	t := newTable(w, 1+len(keys), header...)
	for _, sc := range done {
		a := sc.agg
		row := []string{sc.variant}
		for _, k := range keys {
			v := ""
			for _, kv := range sc.params {
				if kv.Key == k {
					v = kv.Value
				}
			}
			row = append(row, v)
		}
		var ci intervals
		if a.CI != nil {
			ci = *a.CI
		}
		lat := func(v float64) string {
			if a.GoodputPerS == 0 { // nothing completed after warm-up
				return "–"
			}
			return fmtLatency(v)
		}
		row = append(row,
			fmtRate(a.GoodputPerS)+pm(ci.GoodputPerS, fmtRate),
			fmtRate(a.ThroughputPerS),
			lat(a.Latency.Mean),
			lat(a.Latency.P50),
			lat(a.Latency.P99)+pm(ci.LatencyP99S, fmtLatency),
			fmtPercent(a.TimeoutRate)+pm(ci.TimeoutRate, fmtPercent),
			fmtPercent(a.RejectRate))
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}

	if p.sweep() {
		fmt.Fprintln(w)
		return nil
	}
	for _, sc := range done {
		if len(done) > 1 {
			fmt.Fprintf(w, "\nvariant %s\n", sc.variant)
		} else {
			fmt.Fprintln(w)
		}
		if err := printTiers(w, sc.agg.Tiers); err != nil {
			return err
		}
		if len(sc.agg.Calls) > 0 {
			fmt.Fprintln(w)
			if err := printCalls(w, sc.agg.Calls); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(w)
	return nil
}

func printTiers(w io.Writer, tiers []results.Tier) error {
	t := newTable(w, 1, "tier", "cores", "CPU %", "executing", "queued", "threads busy", "calls outstanding", "wasted CPU s")
	for _, x := range tiers {
		err := t.Append([]string{
			x.Name,
			strconv.Itoa(x.Cores),
			fmtFixed(100*x.CPUUtil, 1),
			meanMax(x.ExecutingMean, x.ExecutingMax),
			meanMax(x.QueuedMean, x.QueuedMax),
			meanMax(x.ThreadsBusyMean, x.ThreadsBusyMax),
			meanMax(x.OutstandingMean, x.OutstandingMax),
			fmtFixed(x.WastedCPUSeconds, 1),
		})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  (mean / max over the measured period)")
	return nil
}

func printCalls(w io.Writer, calls []results.Call) error {
	t := newTable(w, 1, "call", "conn limit", "conns in use", "waiting for a conn", "conn wait mean / p99", "calls", "timed out")
	var notes []string
	for _, c := range calls {
		name := c.From + " → " + c.To
		limit := "none"
		if c.Limit > 0 {
			limit = strconv.Itoa(c.Limit)
		}
		if c.Resolution != "" {
			notes = append(notes, fmt.Sprintf("  %s: %s", name, c.Resolution))
		}
		wait := "–"
		if c.Calls > 0 {
			wait = fmtLatency(c.WaitMean) + " / " + fmtLatency(c.WaitP99)
		}
		err := t.Append([]string{
			name,
			limit,
			meanMax(c.InUseMean, c.InUseMax),
			meanMax(c.WaitingMean, c.WaitingMax),
			wait,
			strconv.FormatInt(c.Calls, 10),
			strconv.FormatInt(c.TimedOut, 10),
		})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "connection limits:")
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	return nil
}

// pm formats a confidence half-width as " ±x", or "" without one.
func pm(h *float64, f func(float64) string) string {
	if h == nil || *h == 0 {
		return ""
	}
	return " ±" + f(*h)
}

// fmtLatency writes seconds in a unit that suits them: "850 µs", "45.3 ms",
// "6.50 s".
func fmtLatency(s float64) string {
	switch a := math.Abs(s); {
	case a == 0:
		return "0"
	case a < 1e-3:
		return sig3(s*1e6) + " µs"
	case a < 1:
		return sig3(s*1e3) + " ms"
	default:
		return sig3(s) + " s"
	}
}

// sig3 writes x with three significant digits, without exponent for the
// magnitudes latencies have: 45.3, 453, 6.50, 1234.
func sig3(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	default:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
}

// fmtRate writes a per-second rate: "13.3", "1520".
func fmtRate(x float64) string {
	if math.Abs(x) >= 1000 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	if math.Abs(x) >= 100 {
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// fmtPercent writes a fraction as a percentage: "0%", "0.04%", "4.1%", "37%".
func fmtPercent(f float64) string {
	p := 100 * f
	switch a := math.Abs(p); {
	case a == 0:
		return "0%"
	case a < 0.1:
		return strconv.FormatFloat(p, 'f', 2, 64) + "%"
	case a < 10:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	default:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	}
}

func fmtFixed(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

// fmtLevel writes a counter level: one decimal below 100, none above.
func fmtLevel(x float64) string {
	if math.Abs(x) >= 100 || x == math.Trunc(x) {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

func meanMax(mean, max float64) string { return fmtLevel(mean) + " / " + fmtLevel(max) }
