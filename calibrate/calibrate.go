package calibrate

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/loadtest"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/results"
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
	// LoadTest is a load test's results (a JMeter CSV results file, a k6
	// JSON output, a Gatling simulation.log) recorded with the capture:
	// its users and think time become the calibrated experiment's load,
	// and its latency over time is compared with the simulated one. Run
	// reads it into Measured; "" for none.
	LoadTest string
	Measured *loadtest.Result
	// Names is a names file (ParseNames): the English names of the
	// counters of a capture in a language the built-in table does not
	// have. "" for none.
	Names string
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
	// LoadTest is the client latency over time the load test measured
	// against the simulated (nil without --loadtest).
	LoadTest *results.LoadTest
	loadTest *loadFromTest
	Figure   *plots.Figure
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
	var user map[string]string
	if opt.Names != "" {
		data, err := input.ReadRegular(opt.Names, MaxNamesBytes, "names files")
		if err != nil {
			return nil, err
		}
		if user, err = ParseNames(data, opt.Names); err != nil {
			return nil, err
		}
	}
	c, err := readCapture(capture, user)
	if err != nil {
		return nil, err
	}
	if opt.LoadTest != "" {
		data, err := input.ReadRegular(opt.LoadTest, format.MaxDataBytes, "load-test results")
		if err != nil {
			return nil, err
		}
		if opt.Measured, err = loadtest.Parse(data, opt.LoadTest); err != nil {
			return nil, err
		}
	}
	l, err := input.Load(experiment, opt.Input)
	if err != nil {
		return nil, err
	}
	return Calibrate(ctx, c, l.X, l.Data(), l.ReadFile, opt)
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
		} else if !c.hasMachine(m) {
			return nil, fmt.Errorf("%s:%d:1: --map %s=%s: no machine %s in the capture (machines: %s)", c.File, c.headRow, m, t.Name, m, c.machineList())
		}
		if m == "" {
			r.note(fmt.Sprintf("tier %s: no machine %s in the capture (machines: %s); left as the experiment has it (--map MACHINE=%s to calibrate it)",
				t.Name, t.Name, c.machineList(), t.Name))
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
			c.File, c.headRow, c.machineList(), x.File, strings.Join(tierNames(top), ", "))
	}
	for _, m := range c.Machines() {
		if _, ok := used[strings.ToLower(m)]; !ok {
			r.note(fmt.Sprintf("machine %s: no tier of the experiment's variant %q; not read", shortName(m), variant))
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
	if last := c.T[len(c.T)-1]; last > format.MaxDuration.Seconds() {
		// The simulated runs last the capture's span, and tsim's runs
		// last at most format.MaxDuration.
		return nil, fmt.Errorf("%s:%d:1: the capture spans %s (%s to %s, line %d); calibrate simulates the span it reads, at most %s: cut the capture to the incident (relog capture.blg -f csv -o part.csv -b \"M/D/YYYY H:MM:SS\" -e \"M/D/YYYY H:MM:SS\")",
			c.File, c.lines[len(c.lines)-1], fmtLong(last), c.stamp(0), c.stamp(len(c.T)-1), c.lines[len(c.lines)-1], fmtLong(format.MaxDuration.Seconds()))
	}
	w, span, err := measure(c, top, r.Tiers, warm.Seconds())
	if err != nil {
		return nil, err
	}
	r.window = w
	r.Window = Window{From: w.from, To: w.to, Every: w.every, Rows: w.rows(), Batches: w.k, WarmupFrom: from}
	r.Notes = append(r.Notes, c.Notes...)
	for _, e := range r.Tiers {
		if tr := w.tiers[e.Index]; tr.gaps > 0 {
			gaps := fmt.Sprintf("%d gaps", tr.gaps)
			if tr.gaps == 1 {
				gaps = "1 gap"
			}
			r.note(fmt.Sprintf("machine %s: %s in its samples (the longest %s, before line %d; its samples are %s apart): the intervals across them are left out",
				shortName(e.Machine), gaps, fmtSeconds(tr.gapLongest), tr.gapLine, fmtSeconds(tr.every)))
		}
	}
	r.checkLittle()
	if opt.Measured != nil {
		r.useLoadTest(c, opt.Measured)
	}
	if r.loadTest == nil || len(r.loadTest.users) == 0 {
		r.checkLoad(top, c, w)
	}

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
// the time of the last row with a value of a tier's machine.
func measure(c *Capture, top *model.Topology, tiers []*TierEstimate, warm float64) (*window, float64, error) {
	w, err := c.newWindow(tiers, warm)
	if err != nil {
		return nil, 0, err
	}
	sums := map[int][]batchSums{}
	span := 0.0
	for _, e := range tiers {
		tr := w.tiers[e.Index]
		s, err := c.tierSums(w, tr, e.From, e.Cores)
		if err != nil {
			return nil, 0, err
		}
		if s[w.k].rows < MinRows {
			return nil, 0, fmt.Errorf("%s: %s: values in %d of the window's %d rows; calibrate needs at least %d",
				c.head(e.From.rate), c.name(e.From.rate), s[w.k].rows, len(tr.rows), MinRows)
		}
		if s[w.k].n <= 0 {
			return nil, 0, fmt.Errorf("%s: %s is 0 throughout the window (%s to %s): no requests, nothing to estimate",
				c.head(e.From.rate), c.name(e.From.rate), fmtSeconds(w.from), fmtSeconds(w.to))
		}
		sums[e.Index] = s
		rows := c.machineRows(e.From)
		span = math.Max(span, c.T[rows[len(rows)-1]])
	}
	estimate(top, tiers, sums, w.k)
	return w, span, nil
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
	if r.loadTest != nil && len(r.loadTest.users) > 0 {
		if variantSetsLoad(doc) {
			r.note("load: a variant of the experiment sets a load key, so the load test's users are not written into the calibrated experiment (they are used for nothing else)")
		} else {
			r.loadTest.writeLoad(doc)
		}
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

// findMachine is the machine of tier: its own name, or the name tsim's
// perfmon.csv gives it with several variants (TIER-VARIANT); "" if none.
func findMachine(c *Capture, tier, variant string, variants int) string {
	if m := c.machineSet[strings.ToLower(tier)]; m != "" {
		return m
	}
	b := []byte(tier + "-" + variant)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.') {
			b[i] = '-'
		}
	}
	return c.machineSet[strings.ToLower(string(b))]
}

func aspnetHost(h model.HostKind) bool {
	return h.IsASPNet()
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

// Formatting.

// fmtLong writes a long span of seconds in days or years.
func fmtLong(s float64) string {
	switch {
	case s >= 2*365.25*86400:
		return fmt.Sprintf("%.3g years", s/(365.25*86400))
	case s >= 2*86400:
		return fmt.Sprintf("%.3g days", s/86400)
	}
	return fmtSeconds(s)
}
