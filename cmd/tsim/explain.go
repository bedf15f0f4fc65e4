package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

var cmdExplain = &command{
	Name:      "explain",
	UsageLine: "FILE [-o DIR] [--seed N] [--quiet]",
	Short:     "say which limit binds, where response time goes and what to change",
	Long: `Explain answers "why is it slow, and what do I change?" for each variant of
an experiment, in three parts.

1. Before simulating, from the operational laws: every throttle of the
system (connection limits, thread pools, ASP.NET admission, WCF throttles,
locks, CPUs) with its limit L, the mean time H one request holds one of its
slots (a synchronous holder's H includes everything downstream), its
capacity bound L/H in requests per second, the number of users at which it
saturates (closed loads: (D+Z)·L/H) and how busy it is at the peak load.
Then the load's asymptotic bounds — closed: X ≤ min(N/(D+Z), 1/D_max) and
R ≥ max(D, N·D_max − Z); open: X ≤ 1/D_max — where D is the response time
with no queueing, Z the think time and D_max = H/L of the tightest
throttle; which limit binds first, at how many users or what rate; and for
every connection limit how it was decided (the .NET rules: machine.config
entries, autoConfig, System.Net's defaults).

2. From a simulation (each variant once, with the experiment's seed):
where the average completed request's response time went — waiting for a
connection, a thread, admission, a throttle slot, a lock or a core, working
(CPU), external waits and the network — as a table and as breakdown.png.

3. A diagnosis per variant: the binding limit and how busy and queued it
was in the simulation, the idle resources (CPU of each tier), and the
smallest change that moves the bottleneck — the limit that carries the
peak load, N ≥ X·H (Little's law) — with what binds once it is raised
past the next bound.

The sweep of an experiment, if it has one, is left out: each variant is
explained at its base values (use 'tsim plan' to search a key).

The flags are:

	-o DIR
		write breakdown.png under DIR/<file name without extension>/
		(default "out").
	--seed N
		simulate with seed N instead of the file's.
	--quiet
		do not say where the picture was written.
`,
	Run: runExplain,
}

// explained is one variant: its topology, its bounds and its simulation.
type explained struct {
	name, desc string
	sc         format.Scenario
	a          model.Analysis
	run        *results.Run
}

func runExplain(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	outDir := fs.String("o", "out", "")
	seed := fs.Uint64("seed", 0, "")
	quiet := fs.Bool("quiet", false, "")
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	set := setFlags(fs)
	switch {
	case len(files) == 0:
		return c.usageError(e, "no experiment file given")
	case len(files) > 1:
		return c.usageError(e, "one experiment file at a time, got %d", len(files))
	}
	path := files[0]
	x, err := runner.LoadFile(path)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	s := x.Seed
	if set["seed"] {
		s = *seed
	}
	var vs []*explained
	for i, name := range x.Variants {
		sc, err := x.ScenarioWith(name, nil, nil)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		vs = append(vs, &explained{name: name, desc: x.VariantDescription(i), sc: sc, a: model.Analyse(&sc.Topology)})
	}

	// Simulate every variant at once; each run has its own engine.
	var wg sync.WaitGroup
	errs := make([]error, len(vs))
	for i, v := range vs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.run, errs[i] = runner.Sim{}.Run(ctx, &v.sc.Topology, s, model.Options{NoSeries: true})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			c.errorf(e, "%s: variant %s (seed %d): %v", path, vs[i].name, s, err)
			return exitFailure
		}
	}
	if ctx.Err() != nil {
		c.errorf(e, "interrupted")
		return exitFailure
	}

	var out bytes.Buffer
	w := &out
	name := x.Name
	if name == "" {
		name = runner.Stem(path)
	}
	fmt.Fprintf(w, "%s (%s)\n", name, path)
	if x.Description != "" {
		fmt.Fprintf(w, "  %s\n", strings.Join(strings.Fields(x.Description), " "))
	}
	if len(x.Sweep) > 0 {
		var keys []string
		for _, ax := range x.Sweep {
			keys = append(keys, ax.Key)
		}
		fmt.Fprintf(w, "  (the sweep over %s is left out: each variant is explained at its base values)\n", strings.Join(keys, ", "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "1. Before simulating: the capacity of every throttle, by the operational laws")
	for _, v := range vs {
		if err := printBounds(w, v); err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
	}

	first := vs[0].run
	fmt.Fprintf(w, "\n2. Simulated: where the response time of a completed request went\n   (seed %d, one run of each variant, %s simulated", s, report.FmtSeconds(first.Duration))
	if first.Warmup > 0 {
		fmt.Fprintf(w, ", warm-up %s", report.FmtSeconds(math.Round(first.Warmup*10)/10))
	}
	fmt.Fprintln(w, ")")
	fmt.Fprintln(w)
	if err := printBreakdown(w, vs); err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}

	fmt.Fprintln(w, "\n3. Diagnosis")
	for _, v := range vs {
		diagnose(w, x, v)
	}
	fmt.Fprintln(w)

	// The picture.
	var bars []plots.BreakdownBar
	for _, v := range vs {
		bars = append(bars, plots.BreakdownBar{Label: v.name, Breakdown: v.run.Breakdown})
	}
	dir := filepath.Join(*outDir, runner.Stem(path))
	fig, err := plots.Breakdown(name+": where the response time of a completed request went", bars)
	if err != nil {
		fmt.Fprintf(w, "breakdown.png not drawn: %v\n", err)
	} else {
		path, err := report.WriteFigure(dir, "breakdown.png", fig)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		if !*quiet {
			fmt.Fprintf(w, "wrote %s\n", path)
		}
	}
	e.stdout.Write(out.Bytes())
	return exitOK
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
			users, report.FmtLatency(a.Z.Seconds()), report.FmtLatency(a.D.Seconds()))
	}
	return fmt.Sprintf("open, %s requests/s at peak; D = %s, the response time with no queueing", report.FmtRate(a.Rate), report.FmtLatency(a.D.Seconds()))
}

func printBounds(w io.Writer, v *explained) error {
	a := v.a
	top := &v.sc.Topology
	closed := top.Load.Kind == model.LoadClosed
	fmt.Fprintf(w, "\nvariant %s", v.name)
	if v.desc != "" {
		fmt.Fprintf(w, ": %s", v.desc)
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
		row := []string{name, fmtLimit(b.Limit), report.FmtLatency(b.Hold.Seconds()), fmtBound(b.PerSec)}
		if closed {
			row = append(row, fmtUsers(b.Users))
		}
		busy := "–"
		if !math.IsInf(b.Limit, 1) {
			busy = report.FmtPercent(math.Min(1, x*b.Hold.Seconds()/b.Limit))
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
			fmtCount(n), report.FmtLatency(d+z), report.FmtLatency(dmax), report.FmtRate(n/(d+z)), fmtBound(1/dmax), fmtBound(math.Min(n/(d+z), 1/dmax)), fmtCount(n))
		para(w, "response time R ≥ max(D, N·D_max − Z) = max(%s, %s × %s − %s) = %s",
			report.FmtLatency(d), fmtCount(n), report.FmtLatency(dmax), report.FmtLatency(z), report.FmtLatency(math.Max(d, n*dmax-z)))
		state := fmt.Sprintf("%s of the way", report.FmtPercent(n/b.Users))
		if a.Saturated {
			state = "SATURATED"
		}
		para(w, "binds first: %s (%s, each held %s per request), saturating at %s users (%s/s); the load peaks at %s users: %s",
			b.Throttle, fmtSlots(b), report.FmtLatency(b.Hold.Seconds()), fmtUsers(b.Users), fmtBound(b.PerSec), fmtCount(n), state)
	} else {
		para(w, "throughput X ≤ 1/D_max = 1/%s = %s/s", report.FmtLatency(dmax), fmtBound(1/dmax))
		state := fmt.Sprintf("%s of the way", report.FmtPercent(a.Rate/b.PerSec))
		if a.Saturated {
			state = "SATURATED, its queue grows while the peak lasts"
		}
		para(w, "binds first: %s (%s, each held %s per request), saturating at %s requests/s; the load peaks at %s/s: %s",
			b.Throttle, fmtSlots(b), report.FmtLatency(b.Hold.Seconds()), fmtBound(b.PerSec), report.FmtRate(a.Rate), state)
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
		"instance-lock": "instance", "lock": "holder", "cpu": "cores",
	}[b.Kind]
	if math.IsInf(b.Limit, 1) {
		return "no limit"
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
	return report.FmtRate(x)
}

func fmtUsers(x float64) string {
	if math.IsInf(x, 1) {
		return "never"
	}
	return report.FmtLevel(x)
}

// fmtCount writes a count: an integer when it is one.
func fmtCount(x float64) string {
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.FormatInt(int64(x), 10)
	}
	return report.FmtLevel(x)
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

func printBreakdown(w io.Writer, vs []*explained) error {
	header := []string{"per completed request"}
	for _, v := range vs {
		header = append(header, v.name)
	}
	t := report.NewTable(w, 1, header...)
	cell := func(x, total float64) string {
		if total <= 0 {
			return "–"
		}
		return fmt.Sprintf("%s %4s", report.FmtLatency(x), report.FmtPercent(x/total))
	}
	for _, r := range breakdownRows {
		row := []string{r.label}
		any := false
		for _, v := range vs {
			x := r.get(v.run.Breakdown)
			any = any || x != 0
			row = append(row, cell(x, breakdownTotal(v.run.Breakdown)))
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
		r := v.run
		if r.GoodputPerS == 0 {
			rows[0] = append(rows[0], "–")
			rows[1] = append(rows[1], "–")
		} else {
			rows[0] = append(rows[0], report.FmtLatency(breakdownTotal(r.Breakdown)))
			rows[1] = append(rows[1], report.FmtLatency(r.Latency.Mean)+" / "+report.FmtLatency(r.Latency.P99))
		}
		rows[2] = append(rows[2], report.FmtRate(r.GoodputPerS)+", "+report.FmtPercent(r.TimeoutRate))
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

// connEnds splits "connections web→service" into its caller and callee.
func connEnds(b *model.Bound) (from, to string) {
	_, to, _ = strings.Cut(strings.TrimPrefix(b.Throttle, "connections "), "→")
	return b.Tier, to
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
		return " (" + report.FmtPercent(x/b.Limit) + ")"
	}
	switch b.Kind {
	case "connection":
		from, to := connEnds(b)
		for _, c := range r.Calls {
			if c.From == from && c.To == to {
				return fmt.Sprintf("%s of %s connections in use on average%s, %s calls waiting for one (max %s), %s mean wait",
					report.FmtLevel(c.InUseMean), fmtLimit(b.Limit), pct(c.InUseMean), report.FmtLevel(c.WaitingMean), report.FmtLevel(c.WaitingMax), report.FmtLatency(c.WaitMean))
			}
		}
	case "threads", "threads-min":
		if t := tier(b.Tier); t != nil {
			return fmt.Sprintf("%s threads busy on average (max %s) of %s%s, %s work items waiting for a thread",
				report.FmtLevel(t.ThreadsBusyMean), report.FmtLevel(t.ThreadsBusyMax), fmtLimit(b.Limit), pct(t.ThreadsBusyMean), report.FmtLevel(t.ThreadQueueMean))
		}
	case "admission":
		if t := tier(b.Tier); t != nil {
			return fmt.Sprintf("%s requests executing on average (max %s) of %s%s, %s queued (max %s)",
				report.FmtLevel(t.ExecutingMean), report.FmtLevel(t.ExecutingMax), fmtLimit(b.Limit), pct(t.ExecutingMean), report.FmtLevel(t.QueuedMean), report.FmtLevel(t.QueuedMax))
		}
	case "wcf-calls", "wcf-sessions", "wcf-instances":
		if t := tier(b.Tier); t != nil {
			return fmt.Sprintf("%s calls outstanding on average (max %s) against a limit of %s%s",
				report.FmtLevel(t.OutstandingMean), report.FmtLevel(t.OutstandingMax), fmtLimit(b.Limit), pct(t.OutstandingMean))
		}
	case "instance-lock", "lock":
		return fmt.Sprintf("%s per request waiting for a lock", report.FmtLatency(r.Breakdown.LockWait))
	case "cpu":
		if t := tier(b.Tier); t != nil {
			return fmt.Sprintf("CPU %s%% busy on %d cores", report.FmtFixed(100*t.CPUUtil, 1), t.Cores)
		}
	}
	return ""
}

func diagnose(w io.Writer, x *format.Experiment, v *explained) {
	a, r, top := v.a, v.run, &v.sc.Topology
	closed := top.Load.Kind == model.LoadClosed
	b := a.Binding
	if b == nil {
		fmt.Fprintf(w, "\nvariant %s: no throttle limits this system.\n", v.name)
		return
	}
	peak := fmtCount(a.Users) + " users"
	at := fmtUsers(b.Users) + " users"
	if !closed {
		peak = report.FmtRate(a.Rate) + " requests/s"
		at = fmtBound(b.PerSec) + " requests/s"
	}
	total := breakdownTotal(r.Breakdown)
	get, what := waitOf(b.Kind)
	if a.Saturated {
		fmt.Fprintf(w, "\nvariant %s: %s binds (%s).\n", v.name, b.Throttle, fmtSlots(b))
		para(w, "Predicted: it saturates at %s; the load peaks at %s.", at, peak)
	} else {
		fmt.Fprintf(w, "\nvariant %s: no limit binds at the peak of %s.\n", v.name, peak)
		para(w, "The first to bind would be %s (%s), at %s: %s the peak load.", b.Throttle, fmtSlots(b), at, fmtTimes(a.SaturatesAt/peakOf(a)))
	}
	if use := simulatedUse(b, r); use != "" {
		para(w, "Simulated: %s.", use)
	}
	if total > 0 {
		if a.Saturated {
			para(w, "%s is %s of the response time (%s of %s).", capitalise(what), report.FmtPercent(get(r.Breakdown)/total), report.FmtLatency(get(r.Breakdown)), report.FmtLatency(total))
		}
		if label, most := largestPart(r.Breakdown, true); most > 0 && label != what && most > get(r.Breakdown) && most/total > 0.1 {
			para(w, "The simulation finds more time %s (%s of the response time) than %s: the queue of a binding limit backs up into the limits in front of it — or that limit binds too (see its bound above).", label, report.FmtPercent(most/total), what)
		}
		if !a.Saturated {
			label, most := largestPart(r.Breakdown, false)
			para(w, "The response time (%s) is mostly %s (%s).", report.FmtLatency(total), label, report.FmtPercent(most/total))
			if wl, wx := largestPart(r.Breakdown, true); wx/total >= 0.05 {
				s := fmt.Sprintf("The largest wait is %s: %s per request (%s)", wl, report.FmtLatency(wx), report.FmtPercent(wx/total))
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
		para(w, "%s of the requests timed out%s.", report.FmtPercent(r.TimeoutRate), first)
	}
	var cpu []string
	busiest := 0.0
	for _, t := range r.Tiers {
		cpu = append(cpu, fmt.Sprintf("%s %s%%", t.Name, report.FmtFixed(100*t.CPUUtil, 1)))
		busiest = math.Max(busiest, t.CPUUtil)
	}
	idle := ""
	if busiest < 0.5 && a.Saturated && b.Kind != "cpu" {
		idle = " — idle: the requests wait, they do not work"
	}
	para(w, "CPU: %s%s.", strings.Join(cpu, ", "), idle)

	ch := proposeChange(x, v)
	if ch.text != "" {
		if a.Saturated {
			para(w, "Smallest change: %s", ch.text)
		} else {
			para(w, "Nothing to change for this load. %s", ch.text)
		}
	}
	if ch.then != "" {
		para(w, "Then: %s", ch.then)
	}
}

// textWidth is where explain wraps its sentences.
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

// threadMinimum is the thread-pool minimum with the lowest bound, if any.
func threadMinimum(a model.Analysis) *model.Bound {
	for i := range a.Bounds {
		if a.Bounds[i].Kind == "threads-min" {
			return &a.Bounds[i]
		}
	}
	return nil
}

// threadMinimums are the keys of the thread pools' minimums that bound
// the system, lowest bound first.
func threadMinimums(a model.Analysis) []string {
	var keys []string
	for _, b := range a.Bounds {
		if b.Kind != "threads-min" {
			continue
		}
		pool := "worker.min"
		if strings.HasPrefix(b.Throttle, "I/O") {
			pool = "io.min"
		}
		keys = append(keys, "tier."+b.Tier+"."+pool)
	}
	return keys
}

func peakOf(a model.Analysis) float64 {
	if a.Users > 0 {
		return a.Users
	}
	return a.Rate
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

// knob is a setting that moves a throttle's limit.
type knob struct {
	name string   // as a person says it: "maxconnection web→service"
	keys []string // key paths that may set it, tried in order
	from int      // its value now
	// value is the key's value that makes the throttle's limit n.
	value func(n int) int
	max   int // the largest value the key takes
}

// knobFor finds the setting of a throttle's limit, if it has one.
func knobFor(top *model.Topology, b *model.Bound) (knob, bool) {
	tierIdx := -1
	for i := range top.Tiers {
		if top.Tiers[i].Name == b.Tier {
			tierIdx = i
		}
	}
	id := func(n int) int { return n }
	const maxInt32 = math.MaxInt32
	switch b.Kind {
	case "connection":
		if math.IsInf(b.Limit, 1) {
			return knob{}, false
		}
		from, to := connEnds(b)
		key, name := "maxconnection", "maxconnection"
		switch n := b.Note; {
		case strings.Contains(n, "Go http.Transport"):
			key, name = "max_conns_per_host", "MaxConnsPerHost"
		case strings.Contains(n, "Envoy"):
			key, name = "max_connections", "Envoy max_connections"
		case strings.Contains(n, "HikariCP"):
			key, name = "pool_size", "HikariCP maximumPoolSize"
		case strings.Contains(n, "host-specific"), strings.Contains(n, "autoConfig on"):
			key, name = "maxconnection_host", "the host-specific maxconnection"
		case strings.Contains(n, "set in code"):
			key, name = "connection_limit_code", "ServicePointManager.DefaultConnectionLimit"
		}
		k := knob{name: name + " " + from + "→" + to, from: int(b.Limit), value: id, max: maxInt32}
		if key == "pool_size" {
			k.max = 1e6
		}
		if from == "load" {
			k.keys = []string{"load.call." + key}
			return k, true
		}
		calls := 0
		for _, st := range top.Tiers[tierIdx].Steps {
			if st.Kind == model.StepCall {
				calls++
			}
		}
		if calls == 1 {
			k.keys = append(k.keys, "tier."+from+".calls."+key)
		}
		k.keys = append(k.keys, "tier."+from+".call."+to+"."+key)
		if key == "maxconnection" {
			k.keys = append(k.keys, "tier."+from+".call."+to+".maxconnection_host")
		}
		return k, true
	case "threads":
		if tierIdx < 0 {
			return knob{}, false
		}
		if strings.HasPrefix(b.Throttle, "I/O threads") {
			return knob{name: "maxIOThreads of " + b.Tier, keys: []string{"tier." + b.Tier + ".io.max"}, from: top.Tiers[tierIdx].IO.Max, value: id, max: 32767}, true
		}
		return knob{name: "maxWorkerThreads of " + b.Tier, keys: []string{"tier." + b.Tier + ".worker.max"}, from: top.Tiers[tierIdx].Worker.Max, value: id, max: 32767}, true
	case "admission":
		if tierIdx < 0 {
			return knob{}, false
		}
		t := &top.Tiers[tierIdx]
		if t.Admission.Kind == model.AdmitClassic {
			free := t.Admission.MinFreeThreads
			return knob{name: "maxWorkerThreads of " + b.Tier,
				keys: []string{"tier." + b.Tier + ".worker.max"}, from: t.Worker.Max, value: func(n int) int { return n + free }, max: 32767}, true
		}
		return knob{name: "the concurrent request limit of " + b.Tier, keys: []string{"tier." + b.Tier + ".admission.max_executing"}, from: t.Admission.MaxExecuting, value: id, max: 1e7}, true
	case "wcf-calls", "wcf-sessions", "wcf-instances":
		if tierIdx < 0 || top.Tiers[tierIdx].WCF == nil {
			return knob{}, false
		}
		wcf := top.Tiers[tierIdx].WCF
		key, name, from := "max_calls", "MaxConcurrentCalls", wcf.MaxCalls
		switch b.Kind {
		case "wcf-sessions":
			key, name, from = "max_sessions", "MaxConcurrentSessions", wcf.MaxSessions
		case "wcf-instances":
			key, name, from = "max_instances", "MaxConcurrentInstances", wcf.MaxInstances
		}
		return knob{name: name + " of " + b.Tier, keys: []string{"tier." + b.Tier + ".wcf." + key}, from: from, value: id, max: maxInt32}, true
	case "cpu":
		if tierIdx < 0 {
			return knob{}, false
		}
		return knob{name: "the cores of " + b.Tier, keys: []string{"tier." + b.Tier + ".cores"}, from: top.Tiers[tierIdx].Cores, value: id, max: 1024}, true
	}
	return knob{}, false
}

// change is a proposed change and what binds after it.
type change struct{ text, then string }

// proposeChange finds the smallest change that moves the binding limit of
// v: the limit n that carries the peak demand, n ≥ X·H by Little's law,
// and the limit at which the throttle stops binding first (its bound
// reaches the next one). Each is checked by applying it to the variant and
// analysing again, which also says what binds next.
func proposeChange(x *format.Experiment, v *explained) change {
	a, top := v.a, &v.sc.Topology
	b := a.Binding
	hold := b.Hold.Seconds()
	// The next bound: the first one after the binding one that is neither
	// transient nor unlimited.
	var next *model.Bound
	for i := range a.Bounds {
		o := &a.Bounds[i]
		if o == b || o.Kind == "threads-min" || math.IsInf(o.PerSec, 1) || o.PerSec < b.PerSec {
			continue
		}
		next = o
		break
	}
	switch b.Kind {
	case "instance-lock":
		key := "tier." + b.Tier + ".wcf.concurrency"
		ch := change{text: fmt.Sprintf("let the single instance of %s serve calls concurrently: %s = \"Multiple\" (only if the service is thread-safe), or instancing = \"PerCall\".", b.Tier, key)}
		if a2, ok := analyseWith(x, v.name, key, `"Multiple"`); ok && a2.Binding != nil {
			ch.then = fmt.Sprintf("with %s = \"Multiple\", next binds %s", key, describeBound(a2.Binding, &a2))
		}
		return ch
	case "lock":
		return change{text: fmt.Sprintf("shorten %s: it is held %s per request, and the peak load of %s/s needs it held under %s.",
			b.Throttle, report.FmtLatency(hold), report.FmtRate(a.Demand), report.FmtLatency(1/a.Demand))}
	}
	k, ok := knobFor(top, b)
	if !ok {
		return change{}
	}
	limit := int(b.Limit)
	busyAt := func(n int) string { return report.FmtPercent(a.Demand * hold / float64(n)) }
	var parts []string
	if a.Saturated {
		need := max(ceilInt(a.Demand*hold), limit+1)
		comfy := max(ceilInt(a.Demand*hold/0.75), need)
		key, ok := applyKnob(x, v.name, k, b, need)
		if !ok {
			return change{text: fmt.Sprintf("raise %s from %d (%s) to at least %d; tsim could not find the key that sets it.", k.name, k.from, fmtSlots(b), k.value(need))}
		}
		s := fmt.Sprintf("raise %s from %d to ≥ %d (%s = %d): the peak load needs %s/s × %s = %s %s busy on average (Little's law), so %d are %s busy",
			k.name, k.from, k.value(need), key, k.value(need), report.FmtRate(a.Demand), report.FmtLatency(hold), report.FmtLevel(a.Demand*hold), unitOf(b), need, busyAt(need))
		if comfy > need {
			s += fmt.Sprintf("; ≥ %d keep them under 75%% busy, with room for bursts", k.value(comfy))
		}
		parts = append(parts, s+".")
	}
	if next == nil {
		if len(parts) == 0 {
			return change{}
		}
		return change{text: parts[0], then: "nothing: no other throttle limits this system."}
	}
	away := max(ceilInt(next.PerSec*hold), limit+1)
	if k.value(away) > k.max {
		parts = append(parts, fmt.Sprintf("%s cannot go high enough (%d) to stop binding first.", k.name, k.value(away)))
		return change{text: strings.Join(parts, " ")}
	}
	key, ok := applyKnob(x, v.name, k, b, away)
	if !ok {
		return change{text: strings.Join(parts, " ")}
	}
	a2, _ := analyseWith(x, v.name, key, strconv.Itoa(k.value(away)))
	if !a.Saturated {
		parts = append(parts, fmt.Sprintf("Beyond %s, raise %s from %d.", fmtUsersOrRate(b, a), k.name, k.from))
	}
	ch := change{text: strings.Join(parts, " ")}
	if a2.Binding != nil {
		nb := a2.Binding
		if nb.Throttle == b.Throttle {
			// A tie at the ceiling: name the next one.
			for i := range a2.Bounds {
				if o := &a2.Bounds[i]; o.Throttle != b.Throttle && o.Kind != "threads-min" {
					nb = o
					break
				}
			}
		}
		ch.then = fmt.Sprintf("with %s ≥ %d (%s = %d), %s no longer binds first; next binds %s", k.name, k.value(away), key, k.value(away), b.Throttle, describeBound(nb, &a2))
	}
	return ch
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
		return s[i+1:]
	}
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

func ceilInt(x float64) int { return int(math.Ceil(x - 1e-9)) }

// applyKnob finds which of a knob's keys gives throttle b the limit n in
// variant, and returns it.
func applyKnob(x *format.Experiment, variant string, k knob, b *model.Bound, n int) (string, bool) {
	for _, key := range k.keys {
		a, ok := analyseWith(x, variant, key, strconv.Itoa(k.value(n)))
		if !ok {
			continue
		}
		for _, o := range a.Bounds {
			if o.Throttle == b.Throttle && o.Limit == float64(n) {
				return key, true
			}
		}
	}
	return "", false
}

// analyseWith analyses variant with key set to value.
func analyseWith(x *format.Experiment, variant, key, value string) (model.Analysis, bool) {
	sc, err := x.ScenarioWith(variant, []format.Param{{Key: key, Value: value}}, nil)
	if err != nil {
		return model.Analysis{}, false
	}
	return model.Analyse(&sc.Topology), true
}
