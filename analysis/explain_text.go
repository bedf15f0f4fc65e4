package analysis

import (
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/dotnetconfig"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
)

// WriteText writes the explanation as 'tsim explain' prints it: the
// heading, then 1. every variant's bounds, 2. the simulated breakdown of
// the response time, 3. every variant's diagnosis, and a blank line.
func (ex *Explanation) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%s (%s)\n", ex.Name, ex.Path)
	if ex.Description != "" {
		fmt.Fprintf(w, "  %s\n", strings.Join(strings.Fields(ex.Description), " "))
	}
	if len(ex.Sweep) > 0 {
		fmt.Fprintf(w, "  (the sweep over %s is left out: each variant is explained at its base values)\n", strings.Join(ex.Sweep, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "1. Before simulating: the capacity of every throttle, by the operational laws")
	for _, v := range ex.Variants {
		if err := v.WriteBounds(w); err != nil {
			return err
		}
	}

	first := ex.Variants[0].Run
	fmt.Fprintf(w, "\n2. Simulated: where the response time of a completed request went\n   (seed %d, one run of each variant, %s simulated", ex.Seed, report.FmtSeconds(first.Duration))
	if first.Warmup > 0 {
		fmt.Fprintf(w, ", warm-up %s", report.FmtSeconds(math.Round(first.Warmup*10)/10))
	}
	fmt.Fprintln(w, ")")
	fmt.Fprintln(w)
	if err := ex.WriteBreakdown(w); err != nil {
		return err
	}

	fmt.Fprintln(w, "\n3. Diagnosis")
	for _, v := range ex.Variants {
		fmt.Fprintf(w, "\n%s", v.Diagnosis)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// ---------------------------------------------------------------------------
// 1. bounds

// describeLoad says what the load is, for the head of a variant's bounds.
func describeLoad(top *model.Topology, a model.Analysis) string {
	l := top.Load
	if l.Kind == model.LoadClosed {
		users := fmtCount(a.Users) + " users"
		if len(l.Users) > 1 {
			var vals []string
			for _, p := range l.Users {
				if len(vals) == 0 || vals[len(vals)-1] != fmtCount(p.Value) {
					vals = append(vals, fmtCount(p.Value))
				}
			}
			users = strings.Join(vals, " → ") + " users (peak " + fmtCount(a.Users) + ")"
		}
		return fmt.Sprintf("closed, %s, think time Z = %s; D = %s, the response time with no queueing",
			users, results.FmtLatency(a.Z.Seconds()), results.FmtLatency(a.D.Seconds()))
	}
	return fmt.Sprintf("open, %s requests/s at peak; D = %s, the response time with no queueing", results.FmtRate(a.Rate), results.FmtLatency(a.D.Seconds()))
}

// WriteBounds writes the first part of the text for v: the load, the
// table of every throttle's bound, the load's asymptotic bounds, the limit
// that binds first and how each connection limit was decided.
func (v *Variant) WriteBounds(w io.Writer) error {
	a := v.Bounds
	top := &v.Scenario.Topology
	closed := top.Load.Kind == model.LoadClosed
	fmt.Fprintf(w, "\nvariant %s", v.Name)
	if v.Description != "" {
		fmt.Fprintf(w, ": %s", v.Description)
	}
	fmt.Fprintln(w)
	para(w, "load: %s", describeLoad(top, a))
	fmt.Fprintln(w)

	header := []string{"throttle", "limit", "hold/request", "bound/s"}
	if closed {
		header = append(header, "saturates (users)")
	}
	header = append(header, "busy at peak")
	t := report.NewTable(w, 1, header...)
	x := math.Min(a.Demand, a.MaxPerSec) // the throughput the peak load can get
	for i := range a.Bounds {
		b := &a.Bounds[i]
		name := "  " + b.Throttle
		if a.Binding == b {
			name = "→ " + b.Throttle
		}
		row := []string{name, fmtLimit(b.Limit), results.FmtLatency(b.Hold.Seconds()), fmtBound(b.PerSec)}
		if closed {
			row = append(row, fmtUsers(b.Users))
		}
		busy := "–"
		if !math.IsInf(b.Limit, 1) {
			busy = results.FmtPercent(math.Min(1, x*b.Hold.Seconds()/b.Limit))
		}
		row = append(row, busy)
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	note := "(hold: the mean time one request holds one slot, everything downstream of a synchronous holder included; bound = limit ÷ hold, in requests per second; → marks the limit that binds first"
	for _, b := range a.Bounds {
		if b.Kind == "threads-min" {
			note += "; a thread pool's minimum binds only in bursts: above it the CLR adds a thread every 500 ms or so"
			break
		}
	}
	wrap(w, "  ", "   ", note+")")

	b := a.Binding
	if b == nil {
		fmt.Fprintln(w, "  no throttle limits this system")
		return nil
	}
	dmax := b.Hold.Seconds() / b.Limit
	if closed {
		d, z := a.D.Seconds(), a.Z.Seconds()
		n := a.Users
		para(w, "throughput X ≤ min(N/(D+Z), 1/D_max) = min(%s/%s, 1/%s) = min(%s/s, %s/s) = %s/s at the peak of %s users",
			fmtCount(n), results.FmtLatency(d+z), results.FmtLatency(dmax), results.FmtRate(n/(d+z)), fmtBound(1/dmax), fmtBound(math.Min(n/(d+z), 1/dmax)), fmtCount(n))
		para(w, "response time R ≥ max(D, N·D_max − Z) = max(%s, %s × %s − %s) = %s",
			results.FmtLatency(d), fmtCount(n), results.FmtLatency(dmax), results.FmtLatency(z), results.FmtLatency(math.Max(d, n*dmax-z)))
		state := fmt.Sprintf("%s of the way", results.FmtPercent(n/b.Users))
		if a.Saturated {
			state = "SATURATED"
		}
		para(w, "binds first: %s (%s, each held %s per request), saturating at %s users (%s/s); the load peaks at %s users: %s",
			b.Throttle, fmtSlots(b), results.FmtLatency(b.Hold.Seconds()), fmtUsers(b.Users), fmtBound(b.PerSec), fmtCount(n), state)
	} else {
		para(w, "throughput X ≤ 1/D_max = 1/%s = %s/s", results.FmtLatency(dmax), fmtBound(1/dmax))
		state := fmt.Sprintf("%s of the way", results.FmtPercent(a.Rate/b.PerSec))
		if a.Saturated {
			state = "SATURATED, its queue grows while the peak lasts"
		}
		para(w, "binds first: %s (%s, each held %s per request), saturating at %s requests/s; the load peaks at %s/s: %s",
			b.Throttle, fmtSlots(b), results.FmtLatency(b.Hold.Seconds()), fmtBound(b.PerSec), results.FmtRate(a.Rate), state)
	}
	if b.Kind != "connection" && b.Note != "" {
		para(w, "%s: %s", b.Throttle, b.Note)
	}
	var notes []string
	for _, b := range a.Bounds {
		if b.Kind == "connection" && b.Note != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", strings.TrimPrefix(b.Throttle, "connections "), b.Note))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "  connection limits, and how they were decided:")
		for _, n := range notes {
			wrap(w, "    ", "      ", n)
		}
	}
	return nil
}

// fmtSlots names a bound's limit with its unit: "2 connections".
func fmtSlots(b *model.Bound) string {
	unit := map[string]string{
		"connection": "connections", "threads": "threads", "threads-min": "threads", "admission": "requests",
		"wcf-calls": "calls", "wcf-sessions": "sessions", "wcf-instances": "instances",
		"instance-lock": "instance", "lock": "holder", "cpu": "cores", "balancer": "requests",
	}[b.Kind]
	if math.IsInf(b.Limit, 1) {
		return "no limit"
	}
	if b.Machines > 1 {
		// A per-machine limit multiplies with the machines.
		what := "machines"
		if b.Kind == "connection" {
			what = "pools"
		}
		return fmt.Sprintf("%s %s: %s × %d %s", fmtLimit(b.Limit), unit, fmtLimit(b.PerMachine), b.Machines, what)
	}
	return fmtLimit(b.Limit) + " " + unit
}

func fmtLimit(l float64) string {
	if math.IsInf(l, 1) {
		return "none"
	}
	return fmtCount(l)
}

func fmtBound(x float64) string {
	if math.IsInf(x, 1) {
		return "∞"
	}
	return results.FmtRate(x)
}

func fmtUsers(x float64) string {
	if math.IsInf(x, 1) {
		return "never"
	}
	return results.FmtLevel(x)
}

// fmtCount writes a count: an integer when it is one.
func fmtCount(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return results.FmtLevel(x)
}

func fmtUsersOrRate(b *model.Bound, a model.Analysis) string {
	if a.Users > 0 {
		return fmtUsers(b.Users) + " users"
	}
	return fmtBound(b.PerSec) + " requests/s"
}

func unitOf(b *model.Bound) string {
	s := fmtSlots(b)
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[i+1:]
	}
	s, _, _ = strings.Cut(s, ":") // "cores: 4 × 4 machines" is in cores
	return s
}

func describeBound(b *model.Bound, a *model.Analysis) string {
	s := fmt.Sprintf("%s (%s), %s/s", b.Throttle, fmtSlots(b), fmtBound(b.PerSec))
	if a.Users > 0 {
		s += fmt.Sprintf(", saturating at %s users", fmtUsers(b.Users))
	}
	if b.Note != "" && b.Kind != "connection" && b.Kind != "cpu" {
		s += " — " + b.Note
	}
	return s + "."
}

// ---------------------------------------------------------------------------
// 2. breakdown

// breakdownRows are the rows of the breakdown table, in the picture's
// order.
var breakdownRows = []struct {
	label string
	get   func(b results.Breakdown) float64
}{
	{"waiting for a connection", func(b results.Breakdown) float64 { return b.ConnWait }},
	{"waiting for a thread", func(b results.Breakdown) float64 { return b.ThreadWait }},
	{"waiting for admission", func(b results.Breakdown) float64 { return b.AdmissionWait }},
	{"waiting for a throttle slot", func(b results.Breakdown) float64 { return b.ThrottleWait }},
	{"waiting for a lock", func(b results.Breakdown) float64 { return b.LockWait }},
	{"waiting for a core", func(b results.Breakdown) float64 { return b.CPUWait }},
	{"working (CPU)", func(b results.Breakdown) float64 { return b.CPU }},
	{"external waits", func(b results.Breakdown) float64 { return b.ExternalWait }},
	{"network", func(b results.Breakdown) float64 { return b.Network }},
	{"other", func(b results.Breakdown) float64 { return b.Other }},
}

func breakdownTotal(b results.Breakdown) float64 {
	var s float64
	for _, r := range breakdownRows {
		s += r.get(b)
	}
	return s
}

// WriteBreakdown writes the second part of the text: a table of where the
// response time of each variant's completed requests went.
func (ex *Explanation) WriteBreakdown(w io.Writer) error {
	vs := ex.Variants
	header := []string{"per completed request"}
	for _, v := range vs {
		header = append(header, v.Name)
	}
	t := report.NewTable(w, 1, header...)
	cell := func(x, total float64) string {
		if total <= 0 {
			return "–"
		}
		return fmt.Sprintf("%s %4s", results.FmtLatency(x), results.FmtPercent(x/total))
	}
	for _, r := range breakdownRows {
		row := []string{r.label}
		any := false
		for _, v := range vs {
			x := r.get(v.Run.Breakdown)
			any = any || x != 0
			row = append(row, cell(x, breakdownTotal(v.Run.Breakdown)))
		}
		if r.label == "other" && !any {
			continue
		}
		if err := t.Append(row); err != nil {
			return err
		}
	}
	rows := [][]string{{"total"}, {"client latency mean / p99"}, {"goodput/s, timeouts"}}
	for _, v := range vs {
		r := v.Run
		if r.GoodputPerS == 0 {
			rows[0] = append(rows[0], "–")
			rows[1] = append(rows[1], "–")
		} else {
			rows[0] = append(rows[0], results.FmtLatency(breakdownTotal(r.Breakdown)))
			rows[1] = append(rows[1], results.FmtLatency(r.Latency.Mean)+" / "+results.FmtLatency(r.Latency.P99))
		}
		rows[2] = append(rows[2], results.FmtRate(r.GoodputPerS)+", "+results.FmtPercent(r.TimeoutRate))
	}
	for _, row := range rows {
		if err := t.Append(row); err != nil {
			return err
		}
	}
	return t.Render()
}

// ---------------------------------------------------------------------------
// 3. diagnosis

// waitOf is the breakdown category in which a request waits for a kind of
// throttle, and how a person says it.
func waitOf(kind string) (get func(results.Breakdown) float64, what string) {
	switch kind {
	case "connection":
		return func(b results.Breakdown) float64 { return b.ConnWait }, "waiting for a connection"
	case "threads", "threads-min":
		return func(b results.Breakdown) float64 { return b.ThreadWait }, "waiting for a thread"
	case "admission":
		return func(b results.Breakdown) float64 { return b.AdmissionWait }, "waiting for admission"
	case "wcf-calls", "wcf-sessions", "wcf-instances":
		return func(b results.Breakdown) float64 { return b.ThrottleWait }, "waiting for a throttle slot"
	case "instance-lock", "lock":
		return func(b results.Breakdown) float64 { return b.LockWait }, "waiting for a lock"
	case "cpu":
		return func(b results.Breakdown) float64 { return b.CPUWait }, "waiting for a core"
	}
	return func(results.Breakdown) float64 { return 0 }, "waiting"
}

// largestPart returns the breakdown category with the most time.
func largestPart(b results.Breakdown, waitsOnly bool) (label string, x float64) {
	for i, r := range breakdownRows {
		if waitsOnly && i > 5 {
			break
		}
		if v := r.get(b); v > x {
			label, x = r.label, v
		}
	}
	return label, x
}

// simulatedUse says how busy and queued a throttle was in the simulation.
func simulatedUse(b *model.Bound, r *results.Run) string {
	tier := func(name string) *results.Tier {
		for i := range r.Tiers {
			if r.Tiers[i].Name == name {
				return &r.Tiers[i]
			}
		}
		return nil
	}
	pct := func(x float64) string {
		if math.IsInf(b.Limit, 1) || b.Limit <= 0 {
			return ""
		}
		return " (" + results.FmtPercent(x/b.Limit) + ")"
	}
	switch b.Kind {
	case "connection":
		from, to := connEnds(b)
		for _, c := range r.Calls {
			if c.From == from && c.To == to {
				return fmt.Sprintf("%s of %s connections in use on average%s, %s calls waiting for one (max %s), %s mean wait",
					results.FmtLevel(c.InUseMean), fmtLimit(b.Limit), pct(c.InUseMean), results.FmtLevel(c.WaitingMean), results.FmtLevel(c.WaitingMax), results.FmtLatency(c.WaitMean))
			}
		}
	case "threads", "threads-min":
		if t := tier(b.Tier); t != nil {
			return fmt.Sprintf("%s threads busy on average (max %s) of %s%s, %s work items waiting for a thread",
				results.FmtLevel(t.ThreadsBusyMean), results.FmtLevel(t.ThreadsBusyMax), fmtLimit(b.Limit), pct(t.ThreadsBusyMean), results.FmtLevel(t.ThreadQueueMean))
		}
	case "admission":
		if t := tier(b.Tier); t != nil {
			return fmt.Sprintf("%s requests executing on average (max %s) of %s%s, %s queued (max %s)",
				results.FmtLevel(t.ExecutingMean), results.FmtLevel(t.ExecutingMax), fmtLimit(b.Limit), pct(t.ExecutingMean), results.FmtLevel(t.QueuedMean), results.FmtLevel(t.QueuedMax))
		}
	case "wcf-calls", "wcf-sessions", "wcf-instances":
		if t := tier(b.Tier); t != nil {
			return fmt.Sprintf("%s calls outstanding on average (max %s) against a limit of %s%s",
				results.FmtLevel(t.OutstandingMean), results.FmtLevel(t.OutstandingMax), fmtLimit(b.Limit), pct(t.OutstandingMean))
		}
	case "instance-lock", "lock":
		return fmt.Sprintf("%s per request waiting for a lock", results.FmtLatency(r.Breakdown.LockWait))
	case "cpu":
		if t := tier(b.Tier); t != nil {
			return fmt.Sprintf("CPU %s%% busy on %d cores", results.FmtFixed(100*t.CPUUtil, 1), t.Cores)
		}
	}
	return ""
}

// diagnose writes the diagnosis of v, its Change already proposed.
func diagnose(w io.Writer, v *Variant) {
	a, r, top := v.Bounds, v.Run, &v.Scenario.Topology
	closed := top.Load.Kind == model.LoadClosed
	b := a.Binding
	if b == nil {
		fmt.Fprintf(w, "variant %s: no throttle limits this system.\n", v.Name)
		return
	}
	peak := fmtCount(a.Users) + " users"
	at := fmtUsers(b.Users) + " users"
	if !closed {
		peak = results.FmtRate(a.Rate) + " requests/s"
		at = fmtBound(b.PerSec) + " requests/s"
	}
	total := breakdownTotal(r.Breakdown)
	get, what := waitOf(b.Kind)
	if a.Saturated {
		fmt.Fprintf(w, "variant %s: %s binds (%s).\n", v.Name, b.Throttle, fmtSlots(b))
		para(w, "Predicted: it saturates at %s; the load peaks at %s.", at, peak)
	} else {
		fmt.Fprintf(w, "variant %s: no limit binds at the peak of %s.\n", v.Name, peak)
		para(w, "The first to bind would be %s (%s), at %s: %s the peak load.", b.Throttle, fmtSlots(b), at, fmtTimes(a.SaturatesAt/peakOf(a)))
	}
	if use := simulatedUse(b, r); use != "" {
		para(w, "Simulated: %s.", use)
	}
	if total > 0 {
		if a.Saturated {
			para(w, "%s is %s of the response time (%s of %s).", capitalise(what), results.FmtPercent(get(r.Breakdown)/total), results.FmtLatency(get(r.Breakdown)), results.FmtLatency(total))
		}
		if label, most := largestPart(r.Breakdown, true); most > 0 && label != what && most > get(r.Breakdown) && most/total > 0.1 {
			para(w, "The simulation finds more time %s (%s of the response time) than %s: the queue of a binding limit backs up into the limits in front of it — or that limit binds too (see its bound above).", label, results.FmtPercent(most/total), what)
		}
		if !a.Saturated {
			label, most := largestPart(r.Breakdown, false)
			para(w, "The response time (%s) is mostly %s (%s).", results.FmtLatency(total), label, results.FmtPercent(most/total))
			if wl, wx := largestPart(r.Breakdown, true); wx/total >= 0.05 {
				s := fmt.Sprintf("The largest wait is %s: %s per request (%s)", wl, results.FmtLatency(wx), results.FmtPercent(wx/total))
				if keys := threadMinimums(a); wl == "waiting for a thread" && len(keys) > 0 {
					s += fmt.Sprintf(" — bursts above a thread pool's minimum wait for the CLR to inject threads (the first minimum saturates at %s);"+
						" raising the minimums (%s) shortens that wait", fmtUsersOrRate(threadMinimum(a), a), strings.Join(keys, ", "))
				}
				para(w, "%s.", s)
			}
		}
	} else {
		para(w, "No request completed after warm-up: there is no breakdown of response time.")
	}
	if r.TimeoutRate > 0 {
		first := ""
		if r.FirstTimeout >= 0 {
			first = ", the first at " + report.FmtSeconds(math.Round(r.FirstTimeout*10)/10)
		}
		para(w, "%s of the requests timed out%s.", results.FmtPercent(r.TimeoutRate), first)
	}
	var cpu []string
	busiest := 0.0
	for _, t := range r.Tiers {
		cpu = append(cpu, fmt.Sprintf("%s %s%%", t.Name, results.FmtFixed(100*t.CPUUtil, 1)))
		busiest = math.Max(busiest, t.CPUUtil)
	}
	idle := ""
	if busiest < 0.5 && a.Saturated && b.Kind != "cpu" {
		idle = " — idle: the requests wait, they do not work"
	}
	para(w, "CPU: %s%s.", strings.Join(cpu, ", "), idle)
	dominated := false
	if m, share, ok := Dominant(r); ok {
		// The contention mechanisms (mechanism.go, contention.go); all 0
		// when they are off.
		para(w, "Of what grows with concurrency, %s dominates: %s %s.", m.Name, results.FmtPercent(share), m.Of)
		if dominated = share >= Dominating && m.Remedy != ""; dominated {
			para(w, "Against it: %s.", m.Remedy)
		}
	}

	if ch := v.Change; ch.Text != "" {
		if a.Saturated && dominated {
			// The bounds know demands and limits, not what grows with
			// concurrency: their change may feed the mechanism.
			para(w, "Smallest change by the bounds alone, which do not see it: %s", ch.Text)
		} else if a.Saturated {
			para(w, "Smallest change: %s", ch.Text)
		} else if r.TimeoutRate > 0 || r.RejectRate > 0 {
			// The bounds are means over the run; requests that time out or
			// are refused say something binds for a while (a burst, the
			// CLR's slow start, a deadlock between throttles).
			para(w, "By the bounds nothing binds, yet requests fail: the bounds are means over the run, and the simulation saw a limit bind for a while (the breakdown above says where requests waited). %s", ch.Text)
		} else {
			para(w, "Nothing to change for this load. %s", ch.Text)
		}
		// The same change as a .NET person makes it (dotnetconfig).
		if ch.Set.Key != "" {
			if cfg, ok := dotnetconfig.SettingConfig(&v.Scenario.Topology, ch.Set.Key, ch.Set.Value); ok {
				para(w, "In .NET: %s.", cfg)
			}
		}
	}
	if v.Change.Then != "" {
		para(w, "Then: %s", v.Change.Then)
	}
}

// fmtTimes writes a ratio: "32× ", "1.4×".
func fmtTimes(f float64) string {
	if f >= 10 {
		return strconv.FormatFloat(f, 'f', 0, 64) + "×"
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + "×"
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ---------------------------------------------------------------------------
// text

// textWidth is where explain and plan wrap their sentences.
const textWidth = 100

// para writes a sentence indented by two spaces, wrapped at textWidth with
// continuation lines indented by four.
func para(w io.Writer, format string, args ...any) {
	wrap(w, "  ", "    ", fmt.Sprintf(format, args...))
}

// wrap writes text in lines of at most textWidth columns (longer words
// stay whole): the first line starts with first, the others with rest.
func wrap(w io.Writer, first, rest, text string) {
	// A number and its unit stay on one line.
	text = unitSpace.ReplaceAllString(text, "$1\x00$2")
	line := first
	n := len([]rune(line))
	empty := true
	for _, word := range strings.Fields(text) {
		wn := len([]rune(word))
		if !empty && n+1+wn > textWidth {
			fmt.Fprintln(w, strings.ReplaceAll(line, "\x00", " "))
			line, n, empty = rest, len([]rune(rest)), true
		}
		if !empty {
			line += " "
			n++
		}
		line += word
		n += wn
		empty = false
	}
	fmt.Fprintln(w, strings.ReplaceAll(line, "\x00", " "))
}

var unitSpace = regexp.MustCompile(`([0-9]) (s|ms|µs|users|requests/s)\b`)
