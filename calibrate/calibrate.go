package calibrate

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
	"github.com/tsim-dev/tsim/sim"
)

// Options say what to calibrate against what.
type Options struct {
	// Variant is the experiment's variant the capture shows ("" for the
	// first).
	Variant string
	// Machines maps tiers to the capture's machines. A tier not in it is
	// its own name's machine, or TIER-VARIANT's (tsim's own perfmon.csv
	// of several variants), or, when the capture has neither, is left as
	// the experiment has it.
	Machines map[string]string
	// Warmup is how much of the start of the capture to leave out; < 0
	// means the experiment's warm-up.
	Warmup time.Duration
	// Seed replaces the experiment's seed for the simulated runs (0 keeps
	// it), and Reps its replications (0 keeps them): replication k uses
	// the seed runner.ReplicationSeed derives, as tsim run's do.
	Seed uint64
	Reps int
	// Input says what the experiment may read.
	Input input.Options
	// Output names the calibrated experiment in messages and in its own
	// header ("out/calibrated.toml"); nothing is written here.
	Output string
	// NoFigure skips the picture (the fuzz tests).
	NoFigure bool
}

// Result is a calibration: the estimates, the calibrated experiment and
// the simulated counters next to the measured ones.
type Result struct {
	Capture    *Capture
	Experiment string
	Variant    string
	Window     Window
	Tiers      []*TierEstimate
	Changes    []Change
	Notes      []string // what was not written, and why; what does not fit
	// Calibrated is the calibrated experiment file (calibrated.toml).
	Calibrated []byte
	// Compare is each tier's main counters, measured and simulated.
	Compare []Comparison
	Figure  *plots.Figure
	// SimDuration is how long the simulated runs lasted, Reps how many
	// there were.
	SimDuration float64
	Reps        int

	cx         *format.Experiment // the calibrated experiment, loaded
	calibrated *format.Scenario   // its variant, over the capture's span
	window     *window
	set        []format.Param // on the calibrated variant: the capture's span

	// What render needs to write the experiment again.
	x         *format.Experiment
	top       *model.Topology
	pristine  map[string]any
	readFile  func(string) ([]byte, error)
	output    string
	baseNotes int
}

// Window is the part of the capture calibrate read.
type Window struct {
	From, To, Every float64 // seconds since the capture's first row
	Rows, Batches   int
	WarmupFrom      string // where the warm-up came from
}

// Change is one demand calibrate wrote.
type Change struct {
	Tier     string
	Step     int // 1-based
	Key      string
	From, To string // From "" for a step calibrate added
	Why      string
}

// Comparison is one counter of one tier, measured against simulated: the
// means over the window and the series.
type Comparison struct {
	Tier, Machine, Counter, Unit string
	Measured, Simulated          float64
	// SimHalf is the 95% half-width of Simulated over the replications
	// (NaN with one).
	SimHalf                   float64
	MeasuredSeries, SimSeries []plots.TimeValue
}

// RelError is (simulated − measured)/measured; NaN when nothing was
// measured.
func (c Comparison) RelError() float64 {
	if c.Measured == 0 {
		return math.NaN()
	}
	return (c.Simulated - c.Measured) / c.Measured
}

// Run calibrates the experiment at experiment against the capture at
// capture: it reads both, estimates each mapped tier's CPU demand and wait
// per request from the counters (the utilisation law, Little's law),
// writes them into the experiment, simulates the result and compares the
// simulated counters with the measured ones. Nothing is written to disk:
// the caller writes Result.Calibrated and Result.Figure. Every problem of
// the capture is an error naming its file, line and column.
func Run(ctx context.Context, capture, experiment string, opt Options) (*Result, error) {
	c, err := ReadCapture(capture)
	if err != nil {
		return nil, err
	}
	data, readFile, err := input.Open(experiment, opt.Input)
	if err != nil {
		return nil, err
	}
	x, err := format.LoadExperiment(experiment, data, readFile)
	if err != nil {
		return nil, err
	}
	return Calibrate(ctx, c, x, data, readFile, opt)
}

// Calibrate is Run on a capture and an experiment already read: x loaded
// from data, whose named files readFile reads. It is Estimate, then
// Simulate.
func Calibrate(ctx context.Context, c *Capture, x *format.Experiment, data []byte, readFile func(string) ([]byte, error), opt Options) (*Result, error) {
	r, err := Estimate(c, x, data, readFile, opt)
	if err != nil {
		return nil, err
	}
	if err := r.Simulate(ctx, opt); err != nil {
		return nil, err
	}
	return r, nil
}

// Estimate reads the capture against the experiment and writes the
// calibrated experiment (Result.Calibrated, which it has loaded back), without
// simulating it: everything but Compare and Figure.
func Estimate(c *Capture, x *format.Experiment, data []byte, readFile func(string) ([]byte, error), opt Options) (*Result, error) {
	variant := opt.Variant
	if variant == "" {
		variant = x.Variants[0]
	}
	sc, err := x.ScenarioWith(variant, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", x.File, err)
	}
	top := &sc.Topology
	r := &Result{Capture: c, Experiment: x.File, Variant: variant}
	if len(x.Sweep) > 0 {
		r.note("the experiment's sweep is left out: calibrated at its base values, and kept in the calibrated file")
	}
	if len(top.Farms) > 0 {
		return nil, fmt.Errorf("%s: tier %s is a farm of %d machines; calibrate does not handle farms yet", x.File, top.Farms[0].Name, len(top.Farms[0].Replicas))
	}

	// Tiers to machines.
	for t := range opt.Machines {
		if tierIndex(top, t) < 0 {
			return nil, fmt.Errorf("--map: no tier %q in %s (tiers: %s)", t, x.File, strings.Join(tierNames(top), ", "))
		}
	}
	used := map[string]string{}
	for i := range top.Tiers {
		t := &top.Tiers[i]
		m, explicit := opt.Machines[t.Name]
		if !explicit {
			m = findMachine(c, t.Name, variant, len(x.Variants))
		} else if !hasMachine(c, m) {
			return nil, fmt.Errorf("%s:%d:1: --map %s=%s: no machine %s in the capture (machines: %s)", c.File, c.headRow, m, t.Name, m, strings.Join(c.Machines(), ", "))
		}
		if m == "" {
			r.note(fmt.Sprintf("tier %s: no machine %s in the capture (machines: %s); left as the experiment has it (--map MACHINE=%s to calibrate it)",
				t.Name, t.Name, strings.Join(c.Machines(), ", "), t.Name))
			continue
		}
		if o, ok := used[strings.ToLower(m)]; ok {
			return nil, fmt.Errorf("--map: machine %s stands for both tier %s and tier %s; a machine is one tier", m, o, t.Name)
		}
		used[strings.ToLower(m)] = t.Name
		mc, err := c.findCounters(m, resultsTier(t))
		if err != nil {
			return nil, err
		}
		r.Tiers = append(r.Tiers, &TierEstimate{Tier: t.Name, Machine: m, Index: i, Cores: t.Cores, From: mc})
	}
	if len(r.Tiers) == 0 {
		return nil, fmt.Errorf("%s:%d:1: no machine of the capture (%s) is a tier of %s (%s); map them with --map MACHINE=TIER,...",
			c.File, c.headRow, strings.Join(c.Machines(), ", "), x.File, strings.Join(tierNames(top), ", "))
	}
	for _, m := range c.Machines() {
		if _, ok := used[strings.ToLower(m)]; !ok {
			r.note(fmt.Sprintf("machine %s: no tier of the experiment; not read", m))
		}
	}
	for _, e := range r.Tiers {
		t := &top.Tiers[e.Index]
		switch {
		case e.From.wcf && t.WCF == nil:
			r.note(fmt.Sprintf("tier %s: machine %s reports %s, a WCF service, but the tier is not one in the experiment (give it a wcf preset)", t.Name, e.Machine, e.From.wcfObject))
		case !e.From.wcf && t.WCF != nil:
			r.note(fmt.Sprintf("tier %s: a WCF service in the experiment, but machine %s has no ServiceModelService counters (WCF's counters are off unless diagnostics performanceCounters is set); read its ASP.NET counters", t.Name, e.Machine))
		}
		if e.From.aspnet && !aspnetHost(t.Host) {
			r.note(fmt.Sprintf("tier %s: machine %s reports %s counters, but the tier is not ASP.NET-hosted in the experiment", t.Name, e.Machine, e.From.aspName))
		}
	}

	warm, from := opt.Warmup, "--warmup"
	if warm < 0 {
		warm, from = top.Warmup, "the experiment's warm-up"
		if warm < 0 {
			warm, from = 0, "none: the experiment's warm-up is automatic, and a capture has no run to pilot"
		}
	}
	w, span, err := measure(c, top, r.Tiers, warm.Seconds())
	if err != nil {
		return nil, err
	}
	r.window = w
	r.Window = Window{From: w.from, To: w.to, Every: w.every, Rows: len(w.rows), Batches: w.k, WarmupFrom: from}
	r.checkLittle()
	r.checkLoad(top, c, w)

	// The simulated runs last the capture's span.
	if d := time.Duration(math.Ceil(span)) * time.Second; math.Abs(top.Duration.Seconds()-span) > w.every {
		r.set = append(r.set, format.Param{Key: "duration", Value: d.String()})
		r.note(fmt.Sprintf("the simulated run lasts the capture's %s (the experiment says %s)", fmtSeconds(span), fmtSeconds(top.Duration.Seconds())))
	}

	// Write the estimates into the experiment.
	r.pristine, err = rawDoc(data, readFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", x.File, err)
	}
	r.x, r.top, r.readFile, r.output = x, top, readFile, opt.Output
	if r.output == "" {
		r.output = "calibrated.toml"
	}
	r.baseNotes = len(r.Notes)
	if err := r.render(); err != nil {
		return nil, err
	}
	return r, nil
}

// measure reads the tiers' counters from c over the window that starts
// warm seconds in, and estimates their demands. It returns the window and
// the time of the last row with a value.
func measure(c *Capture, top *model.Topology, tiers []*TierEstimate, warm float64) (*window, float64, error) {
	// The window: the rows with values of these machines, evenly spaced.
	var interest []int
	for i := range c.T {
		for _, e := range tiers {
			if !math.IsNaN(c.value(i, e.From.cpu)) || !math.IsNaN(c.value(i, e.From.rate)) {
				interest = append(interest, i)
				break
			}
		}
	}
	w, err := c.newWindow(interest, warm)
	if err != nil {
		return nil, 0, err
	}
	sums := map[int][]batchSums{}
	for _, e := range tiers {
		s, err := c.tierSums(w, e.From, e.Cores)
		if err != nil {
			return nil, 0, err
		}
		if s[w.k].rows < MinRows {
			return nil, 0, fmt.Errorf("%s: %s: values in %d of the window's %d rows; calibrate needs at least %d",
				c.head(e.From.rate), c.Log.Counters[e.From.rate], s[w.k].rows, len(w.rows), MinRows)
		}
		if s[w.k].n <= 0 {
			return nil, 0, fmt.Errorf("%s: %s is 0 throughout the window (%s to %s): no requests, nothing to estimate",
				c.head(e.From.rate), c.Log.Counters[e.From.rate], fmtSeconds(w.from), fmtSeconds(w.to))
		}
		sums[e.Index] = s
	}
	estimate(top, tiers, sums, w.k)
	return w, c.T[interest[len(interest)-1]], nil
}

// render writes the tiers' estimates into the experiment (Calibrated),
// loads it back and resolves the variant the simulated runs run.
func (r *Result) render() error {
	r.Notes = r.Notes[:r.baseNotes]
	r.Changes = nil
	doc := deepCopy(r.pristine).(map[string]any)
	opts := sim.ParseOptions{ReadFile: r.readFile}
	for _, e := range r.Tiers {
		if err := r.write(doc, r.top, e, opts); err != nil {
			return err
		}
	}
	if err := r.checkOverrides(doc, r.Variant); err != nil {
		return err
	}
	r.Calibrated = writeTOML(doc, r.header(r.x, r.Capture, r.top), r.comment)
	cx, err := format.LoadExperiment(r.output, r.Calibrated, r.readFile)
	if err != nil {
		return fmt.Errorf("the calibrated experiment does not load (a bug in tsim calibrate): %v", err)
	}
	csc, err := cx.ScenarioWith(r.Variant, r.set, nil)
	if err != nil {
		return fmt.Errorf("the calibrated experiment does not resolve (a bug in tsim calibrate): %v", err)
	}
	r.cx, r.calibrated = cx, &csc
	return nil
}

// Simulate runs the calibrated experiment's variant over the capture's
// span (opt.Reps times, or the experiment's replications) and compares
// its counters with the capture's; it draws the figure unless
// opt.NoFigure.
func (r *Result) Simulate(ctx context.Context, opt Options) error {
	runs, err := r.simulate(ctx, opt)
	if err != nil {
		return err
	}
	notes, err := r.refine(runs)
	if err != nil {
		return err
	}
	if notes != nil {
		if err := r.render(); err != nil {
			return err
		}
		r.Notes = append(r.Notes, notes...)
		if runs, err = r.simulate(ctx, opt); err != nil {
			return err
		}
	}
	r.compare(r.Capture, r.window, runs)
	r.checkReproduced()
	if !opt.NoFigure {
		fig, err := r.figure()
		if err != nil {
			return err
		}
		r.Figure = fig
	}
	return nil
}

// simulate runs the calibrated variant opt.Reps times (or the
// experiment's replications), replication k with the seed
// runner.ReplicationSeed derives, as tsim run's.
func (r *Result) simulate(ctx context.Context, opt Options) ([]*results.Run, error) {
	seed := r.cx.Seed
	if opt.Seed != 0 {
		seed = opt.Seed
	}
	reps := opt.Reps
	if reps <= 0 {
		reps = r.cx.Replications
	}
	var runs []*results.Run
	for k := range reps {
		run, err := runner.Sim{}.Run(ctx, &r.calibrated.Topology, runner.ReplicationSeed(seed, k), model.Options{})
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	r.SimDuration, r.Reps = runs[0].Duration, reps
	return runs, nil
}

// RefineStretch is the CPU stretch (time at the CPU over CPU demand)
// above which a written wait is corrected by simulation: where requests
// queue for cores, M/M/c's estimate of that queue, which the wait is what
// is left of, is off by the load's own shape (a closed load queues less
// than Poisson arrivals), and no counter measures the queue.
const RefineStretch = 1.02

// refine corrects the wait of every tier that has one written and a CPU
// busy enough to queue: the estimator is run on the simulated runs of the
// calibrated experiment, whose waits are known, and its bias there is
// subtracted from the estimate (indirect inference); the interval widens
// by the simulation's own. It returns the notes to print, nil when no
// tier needed it.
func (r *Result) refine(runs []*results.Run) ([]string, error) {
	var which []*TierEstimate
	for _, e := range r.Tiers {
		if e.waitWritten && e.Stretch > RefineStretch && !math.IsNaN(e.Wait.Value) {
			which = append(which, e)
		}
	}
	if len(which) == 0 {
		return nil, nil
	}
	top := &r.calibrated.Topology
	est := map[string][]Measure{}
	for _, run := range runs {
		sc, err := simCapture(run, r.Variant)
		if err != nil {
			return nil, fmt.Errorf("reading the simulated run back (a bug in tsim calibrate): %v", err)
		}
		var tiers []*TierEstimate
		for _, e := range r.Tiers {
			mc, err := sc.findCounters(e.Tier, resultsTier(&top.Tiers[e.Index]))
			if err != nil || mc.wcf != e.From.wcf || mc.aspnet != e.From.aspnet {
				return []string{fmt.Sprintf("tier %s: the experiment's tier does not report the counters its machine does, so the wait's split with the CPU queue (%.3g× the CPU demand) is M/M/%d's, not corrected by simulation", e.Tier, e.Stretch, e.Cores)}, nil
			}
			mc.mirror(e.From)
			tiers = append(tiers, &TierEstimate{Tier: e.Tier, Machine: e.Tier, Index: e.Index, Cores: e.Cores, From: mc})
		}
		if _, _, err := measure(sc, top, tiers, r.window.from); err != nil {
			return nil, fmt.Errorf("reading the simulated run back (a bug in tsim calibrate): %v", err)
		}
		for _, t := range tiers {
			est[t.Tier] = append(est[t.Tier], t.Wait)
		}
	}
	var notes []string
	for _, e := range which {
		var written float64
		for _, st := range top.Tiers[e.Index].Steps {
			if st.Kind == model.StepWait {
				written += st.Demand.Mean().Seconds()
			}
		}
		ms := est[e.Tier]
		simMean, simHalf := ms[0].Value, ms[0].Half
		if len(ms) > 1 {
			xs := make([]float64, len(ms))
			for i, m := range ms {
				xs[i] = m.Value
			}
			simMean, simHalf = sim.MeanCI(xs, 0.95)
		}
		bias := simMean - written
		before := e.Wait
		e.Wait = Measure{before.Value - bias, math.Hypot(before.Half, simHalf)}
		notes = append(notes, fmt.Sprintf("tier %s: its CPU is %s busy, and requests queue for its cores (%.3g× the CPU demand by M/M/%d); no counter measures that queue, so the wait, which is what is left of the operation's time, is corrected by simulation: on the calibrated experiment's own runs, whose wait is %s, the same estimate reads %s; the wait becomes %s − (%s) = %s",
			e.Tier, fmtPercent(e.Util.Value), e.Stretch, e.Cores, fmtSeconds(written), fmtSeconds(simMean), fmtSeconds(before.Value), fmtSignedSeconds(bias), fmtMeasure(e.Wait)))
		e.Refined = true
	}
	return notes, nil
}

// simCapture reads a simulated run back as a capture: its perfmon.csv,
// every tier a machine of its own name.
func simCapture(run *results.Run, variant string) (*Capture, error) {
	x := &results.Experiment{Name: "simulated", Seed: run.Seed, Replications: 1, Mode: "sim",
		Scenarios: []*results.Scenario{{Variant: variant, Agg: results.Aggregate{Tiers: run.Tiers, Calls: run.Calls}, First: run}}, Finished: 1}
	pm, err := report.PerfmonCSV(x)
	if err != nil {
		return nil, err
	}
	return ParseCapture(pm, "simulated perfmon.csv")
}

// checkReproduced says, for a tier whose operation time the counters do
// not account for and whose wait calibrate does not write, whether the
// calibrated model reproduces it: if so, the experiment's limits explain
// it (tsim explain says which); if not, the model lacks what holds it.
func (r *Result) checkReproduced() {
	for _, e := range r.Tiers {
		if !e.unexplained {
			continue
		}
		for _, cmp := range r.Compare {
			if cmp.Tier != e.Tier || cmp.Counter != e.From.durName {
				continue
			}
			if err := cmp.RelError(); math.Abs(err) <= 0.15 {
				r.note(fmt.Sprintf("tier %s: the calibrated model reproduces that wait: %s simulated %s, measured %s (%s): the experiment's own limits hold the requests there; tsim explain names the one that binds",
					e.Tier, cmp.Counter, fmtValue(cmp.Simulated)+" "+cmp.Unit, fmtValue(cmp.Measured)+" "+cmp.Unit, fmtRelError(err)))
			} else {
				r.note(fmt.Sprintf("tier %s: the calibrated model does not reproduce that wait: %s simulated %s, measured %s (%s): something holds the requests that the experiment does not have, or has otherwise — a connection limit, a thread pool, a lock (tsim config reads the machine's configuration)",
					e.Tier, cmp.Counter, fmtValue(cmp.Simulated)+" "+cmp.Unit, fmtValue(cmp.Measured)+" "+cmp.Unit, fmtRelError(err)))
			}
		}
	}
}

func fmtSignedSeconds(s float64) string {
	if s < 0 {
		return "−" + fmtSeconds(-s)
	}
	return fmtSeconds(s)
}

func (r *Result) note(s string) { r.Notes = append(r.Notes, s) }

func tierIndex(top *model.Topology, name string) int {
	for i := range top.Tiers {
		if top.Tiers[i].Name == name {
			return i
		}
	}
	return -1
}

func tierNames(top *model.Topology) []string {
	var out []string
	for i := range top.Tiers {
		out = append(out, top.Tiers[i].Name)
	}
	return out
}

func hasMachine(c *Capture, m string) bool {
	for _, x := range c.Machines() {
		if strings.EqualFold(x, m) {
			return true
		}
	}
	return false
}

// findMachine is the machine of tier: its own name, or the name tsim's
// perfmon.csv gives it with several variants (TIER-VARIANT); "" if none.
func findMachine(c *Capture, tier, variant string, variants int) string {
	for _, m := range c.Machines() {
		if strings.EqualFold(m, tier) {
			return m
		}
	}
	b := []byte(tier + "-" + variant)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
			b[i] = '-'
		}
	}
	for _, m := range c.Machines() {
		if strings.EqualFold(m, string(b)) {
			return m
		}
	}
	return ""
}

func aspnetHost(h model.HostKind) bool {
	return h == model.HostASPNetClassic || h == model.HostIISIntegrated
}

// resultsTier describes a tier as report names its counters.
func resultsTier(t *model.Tier) results.Tier {
	return results.Tier{Name: t.Name, Host: t.Host.String(), DotNet: t.DotNet, WCF: t.WCF != nil, Cores: t.Cores}
}

// checkLittle notes a tier whose duration counter disagrees by more than
// 15% with its time by Little's law (N/X): a load that varies within the
// window (the counter is the mean of the requests that ended in each
// interval, which no counter weighs), or counters of different requests.
func (r *Result) checkLittle() {
	for _, e := range r.Tiers {
		if !e.little() || !(e.Residence.Value > 0) || math.IsNaN(e.Duration.Value) {
			continue
		}
		if d := math.Abs(e.Residence.Value-e.Duration.Value) / math.Max(e.Residence.Value, e.Duration.Value); d > 0.15 {
			r.note(fmt.Sprintf("tier %s: %s averages %s (weighted by the rate), Little's law gives %s (%s / %s): the load varies within the window, or the counters describe different requests; the estimates use Little's law",
				e.Tier, e.From.durName, fmtSeconds(e.Duration.Value), fmtSeconds(e.Residence.Value), e.From.levelName, e.From.rateName))
		}
	}
}

// checkLoad compares the experiment's load with what the entry tier saw:
// for a closed load the response time law N = X(R + Z) gives the think
// time the experiment's users imply; counters do not count users.
func (r *Result) checkLoad(top *model.Topology, c *Capture, w *window) {
	var e *TierEstimate
	for _, t := range r.Tiers {
		if t.Index == top.Load.Call.Target {
			e = t
		}
	}
	if e == nil {
		return
	}
	avg := func(s model.Schedule) float64 {
		var sum, n float64
		step := math.Max(1, (w.to-w.from)/2000) // at most about 2000 points, however long the capture
		for t := w.from; t <= w.to; t += step {
			sum += s.At(time.Duration(t * float64(time.Second)))
			n++
		}
		return sum / n
	}
	x := e.Rate.Value
	switch top.Load.Kind {
	case model.LoadClosed:
		n := avg(top.Load.Users)
		lc := &top.Load.Call
		resp := e.Visit + (lc.Wire(lc.RequestKB) + lc.Wire(lc.ReplyKB)).Seconds()
		z := n/x - resp
		msg := fmt.Sprintf("load: the experiment's %.4g users on average over the window, and the %.4g requests/s and %s response time measured at %s, give a think time of %s by the response time law N = X(R + Z); the experiment's is %s. Counters do not count users: N, and so Z, come from the experiment",
			n, x, fmtSeconds(resp), e.Tier, fmtSeconds(z), fmtSeconds(top.Load.Think.Mean().Seconds()))
		if zt := top.Load.Think.Mean().Seconds(); z < 0 || math.Abs(z-zt) > 0.2*math.Max(zt, resp) {
			msg += "; they differ: the experiment's load is not the capture's (fix its users or think time before trusting the comparison)"
		}
		r.note(msg)
	default:
		rate := avg(top.Load.Rate)
		msg := fmt.Sprintf("load: the experiment sends %.4g requests/s on average over the window; %s measured %.4g", rate, e.Tier, x)
		if math.Abs(rate-x) > 0.1*x {
			msg += "; they differ: the experiment's load is not the capture's"
		}
		r.note(msg)
	}
}

// stepKey matches a variant's or a sweep's key of a step's demand.
var stepKey = regexp.MustCompile(`^tier\.([A-Za-z0-9_-]+)\.step\.([0-9]+)\.(cpu|wait)$`)

// checkOverrides refuses a chosen variant that sets a demand calibrate
// wrote (the capture would be calibrated into the wrong place) and notes
// the other variants and sweeps that do.
func (r *Result) checkOverrides(doc map[string]any, variant string) error {
	changed := map[string]bool{}
	for _, ch := range r.Changes {
		changed[fmt.Sprintf("tier.%s.step.%d.%s", ch.Tier, ch.Step, ch.Key)] = true
	}
	for _, v := range tables(doc["variant"]) {
		set, _ := v["set"].(map[string]any)
		name, _ := v["name"].(string)
		for _, k := range sortedKeys(set) {
			if !stepKey.MatchString(k) || !changed[k] {
				continue
			}
			if name == variant {
				return fmt.Errorf("variant %q sets %s, a demand calibrate estimates; calibrate a variant that does not (--variant), or move the setting into the tier", name, k)
			}
			r.note(fmt.Sprintf("variant %q sets %s: it overrides the calibrated value in that variant", name, k))
		}
	}
	if sw, ok := doc["sweep"].(map[string]any); ok {
		for _, k := range sortedKeys(sw) {
			if changed[k] {
				r.note(fmt.Sprintf("the sweep varies %s: it overrides the calibrated value", k))
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// write puts tier e's estimates into its steps in doc: the CPU steps
// scaled to the estimated CPU, the wait steps to the estimated wait, or a
// step added where the experiment has none and the capture shows one.
func (r *Result) write(doc map[string]any, top *model.Topology, e *TierEstimate, opts sim.ParseOptions) error {
	t := &top.Tiers[e.Index]
	td := tierOf(doc, t.Name)
	if td == nil {
		return fmt.Errorf("tier %s: not in the experiment's document (a bug in tsim calibrate)", t.Name)
	}
	steps := tables(td["step"])
	if len(steps) != len(t.Steps) {
		return fmt.Errorf("tier %s: %d steps in the file, %d resolved (a bug in tsim calibrate)", t.Name, len(steps), len(t.Steps))
	}
	mult := t.CostMultiplier
	if !(mult > 0) {
		mult = 1
	}
	var cpuSteps, waitSteps []int
	var cpu0, wait0 float64
	hasCalls := false
	for i := range t.Steps {
		switch t.Steps[i].Kind {
		case model.StepCPU:
			cpuSteps = append(cpuSteps, i)
			cpu0 += t.Steps[i].Demand.Mean().Seconds()
		case model.StepWait:
			waitSteps = append(waitSteps, i)
			wait0 += t.Steps[i].Demand.Mean().Seconds()
		case model.StepCall, model.StepLock:
			hasCalls = true
		}
	}
	for _, v := range []struct {
		what string
		x    float64
	}{{"CPU", e.StepCPU.Value}, {"wait", e.Wait.Value}} {
		if v.x > format.MaxDuration.Seconds() || math.IsInf(v.x, 0) {
			c := r.Capture
			return fmt.Errorf("%s: tier %s: the capture gives %s of %s a request (from %s and %s); tsim's demands are at most %s: these are not a running service's counters",
				c.head(e.From.rate), t.Name, fmtSeconds(v.x), v.what, c.Log.Counters[e.From.rate], c.Log.Counters[e.From.cpu], fmtSeconds(format.MaxDuration.Seconds()))
		}
	}
	cpu := e.StepCPU.Value / mult
	ms := func(m Measure) string { return fmtMeasure(m) }
	cpuWhy := fmt.Sprintf("%s of CPU a request: %s × %d cores / %s, less %s the experiment's bindings spend",
		ms(e.StepCPU), fmtPercent(e.Util.Value), e.Cores, fmtRate(e.Rate.Value), fmtSeconds(e.Known))
	if mult != 1 {
		cpuWhy += fmt.Sprintf(", divided by the cost multiplier %g", mult)
	}
	if err := r.scale(steps, t, e, "cpu", cpuSteps, cpu0, cpu, e.StepCPU, cpuWhy, opts, td); err != nil {
		return err
	}
	if math.IsNaN(e.Wait.Value) {
		r.note(fmt.Sprintf("tier %s: its wait is not identified: it calls a tier the capture does not have, so the time of its calls is unknown; its waits are left as they are", t.Name))
		return nil
	}
	waitWhy := fmt.Sprintf("%s not at the CPU nor in calls: the operation's %s (%s) − %s at the CPU", ms(e.Wait), fmtSeconds(e.Residence.Value), e.rFrom(), fmtSeconds(e.AtCPU))
	if e.Calls > 0 {
		waitWhy += " − " + fmtSeconds(e.Calls) + " in calls"
	}
	if !math.IsNaN(e.ConnWait.Value) {
		waitWhy += " − " + fmtSeconds(e.ConnWait.Value) + " waiting for connections"
	}
	if len(waitSteps) == 0 && hasCalls {
		if significant(e.Wait, e.Residence.Value) {
			e.unexplained = true
			what := "a connection, a lock or a thread"
			if !math.IsNaN(e.ConnWait.Value) {
				what = "a lock or a thread"
			}
			r.note(fmt.Sprintf("tier %s: %s of each request is %s: a wait inside %s — for %s — that the counters do not name; the tier has no wait step, so nothing is written: it is the model's to produce (compare the simulated %s below)",
				t.Name, fmtMeasure(e.Wait), "not at the CPU nor in calls", t.Name, what, e.From.durName))
		}
		return nil
	}
	n := len(r.Changes)
	err := r.scale(steps, t, e, "wait", waitSteps, wait0, e.Wait.Value, e.Wait, waitWhy, opts, td)
	e.waitWritten = len(r.Changes) > n
	return err
}

// significant says whether an estimate is clearly above zero: its
// interval's lower end, and above 1 ms and 2% of the residence.
func significant(m Measure, residence float64) bool {
	lo := m.Value
	if !math.IsNaN(m.Half) {
		lo -= m.Half
	}
	return lo > 0 && m.Value > math.Max(1e-3, 0.02*residence)
}

// scale sets the steps of one kind (cpu or wait) to a total of want
// seconds, keeping their shapes and their split; adds a step when the tier
// has none and the capture clearly shows some.
func (r *Result) scale(steps []map[string]any, t *model.Tier, e *TierEstimate, key string, idx []int, have, want float64, m Measure, why string, opts sim.ParseOptions, td map[string]any) error {
	if len(idx) == 0 {
		if !significant(m, e.Residence.Value) {
			return nil
		}
		to := newDist(want)
		steps = append(steps, map[string]any{key: to})
		td["step"] = steps
		r.Changes = append(r.Changes, Change{Tier: t.Name, Step: len(steps), Key: key, To: to,
			Why: why + "; a new step: the experiment's tier had none, and its shape (exp) is assumed"})
		return nil
	}
	if want <= 0 {
		for _, i := range idx {
			r.Changes = append(r.Changes, Change{Tier: t.Name, Step: i + 1, Key: key, From: t.Steps[i].Demand.String(), To: "0s",
				Why: why + "; nothing is left for it"})
			steps[i][key] = "0s"
		}
		return nil
	}
	for n, i := range idx {
		d := t.Steps[i].Demand
		var to string
		var err error
		switch {
		case have > 0 && d.IsZero():
			continue // a zero step stays zero: the others carry the demand
		case have > 0:
			to, err = scaledDist(d, want/have, opts)
		case n == 0:
			to = newDist(want) // every step was zero: the first takes it all
		default:
			continue
		}
		if err != nil {
			return fmt.Errorf("tier %s step %d: %v", t.Name, i+1, err)
		}
		w := why
		if len(idx) > 1 {
			w += fmt.Sprintf("; split between the tier's %d %s steps as the experiment splits them", len(idx), key)
		}
		r.Changes = append(r.Changes, Change{Tier: t.Name, Step: i + 1, Key: key, From: d.String(), To: to, Why: w})
		steps[i][key] = to
	}
	return nil
}

// comment is the trailing comment of a calibrated key.
func (r *Result) comment(path string) string {
	for _, ch := range r.Changes {
		if path == fmt.Sprintf("tier.%s.step.%d.%s", ch.Tier, ch.Step, ch.Key) {
			if ch.From == "" {
				return "calibrated (new step)"
			}
			return "calibrated; was " + ch.From
		}
	}
	return ""
}

// header is the calibrated file's opening comment.
func (r *Result) header(x *format.Experiment, c *Capture, top *model.Topology) []string {
	var machines []string
	for _, e := range r.Tiers {
		machines = append(machines, e.Machine+" = "+e.Tier)
	}
	h := []string{
		fmt.Sprintf("Calibrated by tsim calibrate: %s, variant %q, against the capture %s", x.File, r.Variant, c.File),
		fmt.Sprintf("(machines %s), from %s to %s of the capture (%d samples, %s apart).", strings.Join(machines, ", "),
			fmtSeconds(r.Window.From), fmtSeconds(r.Window.To), r.Window.Rows, fmtSeconds(r.Window.Every)),
		"",
	}
	for _, e := range r.Tiers {
		h = append(h, fmt.Sprintf("%s: %s requests/s; CPU %s a request (%s of %d cores busy); operation %s; wait %s",
			e.Tier, fmtMeasureRate(e.Rate), fmtMeasure(e.CPU), fmtPercent(e.Util.Value), e.Cores, fmtMeasure(e.Residence), fmtMeasure(e.Wait)))
	}
	h = append(h, "",
		"CPU per request is U·cores/X (the utilisation law), less what the experiment's bindings spend;",
		"a tier's wait is its operation's time less its time at the CPU (queueing for cores included)",
		"and in calls. Counters give means only: the steps keep the experiment's distributions' shapes",
		"and its split between steps (a new step is exponential). Waits for connections, locks and threads",
		"are the model's to produce and are not written. The topology is written out in full and the",
		"original's comments are not kept. docs/field-calibrate.md says what cannot be identified.",
		"")
	return h
}

// Formatting.

func fmtMeasure(m Measure) string {
	if math.IsNaN(m.Value) {
		return "not identified"
	}
	if math.IsNaN(m.Half) {
		return fmtSeconds(m.Value)
	}
	return fmtSeconds(m.Value) + " ± " + fmtSpanPlain(m.Half, m.Value)
}

// fmtSpanPlain writes a half-width in the unit of the value it goes with.
func fmtSpanPlain(h, v float64) string {
	if h == 0 {
		return "0"
	}
	av := math.Max(math.Abs(v), h)
	switch {
	case av >= 1:
		return strconv.FormatFloat(round2(h), 'f', -1, 64) + " s"
	case av >= 1e-3:
		return strconv.FormatFloat(round2(h*1e3), 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(round2(h*1e6), 'f', -1, 64) + " µs"
}

func round2(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 1-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

func fmtMeasureRate(m Measure) string {
	if math.IsNaN(m.Half) {
		return fmt.Sprintf("%.3g", m.Value)
	}
	return fmt.Sprintf("%.3g ± %.2g", m.Value, m.Half)
}

func fmtRate(x float64) string { return fmt.Sprintf("%.3g requests/s", x) }

func fmtPercent(u float64) string { return fmt.Sprintf("%.3g%%", 100*u) }
