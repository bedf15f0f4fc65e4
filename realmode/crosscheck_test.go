package realmode

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/internal/stallprobe"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/simmode"
)

// A cross-check runs a topology in the simulator and for real, and judges
// the real run in two ways.
//
// What holds however busy the machine is, asserted on every run: the
// counts are conserved, no call failed in HTTP, and the limits hold as
// the kernel and the runtime see them, sampled while the run goes on
// (connections established to a tier, requests inside an operation).
//
// What depends on time — how close the numbers come to the simulation,
// their order of magnitude, the orderings a story is about (the fixed
// configuration beats the broken one) — is judged with the noise of this
// machine accounted for. A probe beside the real run measures timer
// lateness, stalls and the cost of a loopback round trip (noise), and the
// simulator runs the topology again with those costs added (withNoise).
// Each metric must lie between the ideal and the noisy simulation, or
// within the default tolerances of one of them, widened by the fraction
// of the run the probe found stalled (a p99 also by the most stall time
// in a quarter-second, which a request of the tail may have sat through;
// the instant of the first timeout by the same fraction of the run);
// goodput and mean latency must be within a factor of two of the
// simulator's. On a quiet machine the noisy simulation is close to the
// ideal one and the check is the default tolerances; on a busy one it
// widens by what was measured.
//
// A run the probe saw disturbed (stallprobe's rule: stalls longer than
// maxStall, or for too much of the run or of a quarter-second, while the
// run itself used little CPU) cannot be judged on time: its
// time-dependent verdicts are logged, not asserted, and the case runs
// again, up to maxRuns runs; when every run is disturbed the comparison
// is not judged and its test is reported as skipped, with the disturbance
// measured, once its other checks have asserted (judge_test.go). A run
// that is not disturbed and disagrees fails the test at once: there are
// no blind retries.
// TestCrossCheckCatchesBreaks shows broken semantics failing these checks.
//
// tsim validate, the command, keeps the plain comparison with its default
// tolerances.
const (
	maxStall = stallprobe.MaxStall
	maxRuns  = 3
)

// crossRun is one real run of a cross-check, the simulations it is judged
// against and what was measured beside it.
type crossRun struct {
	name             string
	sim, noisy, real *results.Run
	info             Info
	noise            noise
	selfCPU          float64 // CPU this process used during the run, in cores
	verdicts         []verdict
	// conns is, per tier, the most connections established to it, seen
	// in five samples in a row, half a second (-1: not measured); ops the most requests
	// inside a wait step of an operation (-1 unless watched).
	conns []int
	ops   int
}

// verdict is one metric of the real run against both simulations.
type verdict struct {
	Metric           string
	Sim, Noisy, Real float64
	OK               bool
	Why              string
}

// disturbed says why the run cannot be judged on time, or "".
func (c *crossRun) disturbed() string {
	return c.noise.Disturbed(c.selfCPU, maxStall)
}

// crossCheck runs simTop in the simulator and realTop (the same topology,
// unless a test breaks it on purpose) for real until a run is not
// disturbed, at most maxRuns times, and returns the last run. Every run
// must pass the checks that do not depend on time. When every run was
// disturbed, the comparison is not judged (cannotJudge).
func crossCheck(t *testing.T, name string, simTop, realTop *model.Topology, opt Options, watchOps bool) *crossRun {
	t.Helper()
	c := crossRuns(t, name, simTop, realTop, opt, watchOps, (*crossRun).judged)
	if c.judged() {
		judgedOnTime()
	} else {
		cannotJudge(t, name, fmt.Sprintf("%d runs, the last: %s", maxRuns, c.disturbed()))
	}
	return c
}

// crossRuns runs realTop for real until done accepts a run, at most
// maxRuns times, and returns the last run; it logs why it runs again.
func crossRuns(t *testing.T, name string, simTop, realTop *model.Topology, opt Options, watchOps bool, done func(*crossRun) bool) *crossRun {
	t.Helper()
	for k := 1; ; k++ {
		c := cross(t, fmt.Sprintf("%s (run %d)", name, k), simTop, realTop, opt, watchOps)
		c.name = name
		for _, m := range c.semantic() {
			t.Errorf("%s: %s", name, m)
		}
		if done(c) || k == maxRuns {
			return c
		}
		t.Logf("%s: run %d disturbed (%s): its time-dependent verdicts are not judged; running again", name, k, c.disturbed())
	}
}

// judged reports whether the time-dependent checks apply to c.
func (c *crossRun) judged() bool { return c.disturbed() == "" }

// cross makes one real run of realTop beside the probe and the watches,
// and the two simulations of simTop.
func cross(t *testing.T, name string, simTop, realTop *model.Topology, opt Options, watchOps bool) *crossRun {
	t.Helper()
	if raceEnabled {
		t.Skip("timing comparison: meaningless under the race detector")
	}
	opt.Seed = 1
	if opt.TimeScale == 0 {
		// the simulated topology's scale, also when the real one differs
		opt.TimeScale = min(DefaultScale(simTop), DefaultBudget.Seconds()/simTop.Duration.Seconds())
	}
	s, err := simmode.Run(simTop, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := &crossRun{name: name, sim: s, ops: -1}
	var conns []func() int
	var ops func() int
	testHookListening = func(addrs []string) {
		for _, a := range addrs {
			conns = append(conns, watchConns(a))
		}
		if watchOps {
			ops = watchWaitSteps()
		}
	}
	defer func() { testHookListening = nil }()
	stop := stallprobe.Start()
	cpu0, wall0 := stallprobe.CPUTime(), time.Now()
	r, info, err := RunWithInfo(context.Background(), realTop, opt)
	if wall := time.Since(wall0); wall > 0 {
		c.selfCPU = float64(stallprobe.CPUTime()-cpu0) / float64(wall)
	}
	c.noise = stop()
	for _, w := range conns {
		c.conns = append(c.conns, w())
	}
	if ops != nil {
		c.ops = ops()
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c.real, c.info = r, info
	c.noisy, err = simmode.Run(withNoise(simTop, c.noise, info.TimerSlack, info.Scale), model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.verdicts = judge(c.sim, c.noisy, c.real, c.noise, info.Scale)
	load, _ := os.ReadFile("/proc/loadavg")
	t.Logf("%s: scale %.4g, %v real, %.2f cores used, clock slack %v, load average %s\n  noise: %v\n  connections established per tier (sustained max): %v; requests in the operation: %d\n  breakdown sim  %+v\n  breakdown real %+v\n%s",
		name, info.Scale, info.Real.Round(time.Millisecond), c.selfCPU, info.TimerSlack, strings.TrimSpace(string(load)),
		c.noise, c.conns, c.ops, c.sim.Breakdown, c.real.Breakdown, c.table())
	return c
}

// table formats the verdicts.
func (c *crossRun) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-34s %10s %10s %10s  %s\n", "metric", "sim", "noisy sim", "real", "verdict")
	for _, v := range c.verdicts {
		ok := "ok"
		if !v.OK {
			ok = "DIFFERS"
		}
		fmt.Fprintf(&b, "  %-34s %10.4g %10.4g %10.4g  %s (%s)\n", v.Metric, v.Sim, v.Noisy, v.Real, ok, v.Why)
	}
	return b.String()
}

// check reports, as errors, what is wrong on time with a run that is not
// disturbed: the metrics beginning with one of prefixes (all if none)
// that disagree, a goodput or mean latency off by more than a factor of
// two. (The semantic checks were made by crossCheck.)
func (c *crossRun) check(t *testing.T, prefixes ...string) {
	t.Helper()
	if !c.judged() {
		return
	}
	for _, m := range c.onTime(prefixes...) {
		t.Errorf("%s: %s", c.name, m)
	}
}

// onTime returns the time-dependent findings: the metrics beginning with
// one of prefixes (all if none) that disagree, and a goodput or mean
// latency more than a factor of two from the simulator's.
func (c *crossRun) onTime(prefixes ...string) []string {
	var out []string
	within2 := func(what string, sv, rv float64) {
		if sv > 0 && (rv > 2*sv || rv < sv/2) {
			out = append(out, fmt.Sprintf("%s %.4g, simulated %.4g: not within a factor of 2", what, rv, sv))
		}
	}
	within2("goodput", c.sim.GoodputPerS, c.real.GoodputPerS)
	within2("mean latency", c.sim.Latency.Mean, c.real.Latency.Mean)
	for _, v := range c.verdicts {
		if !v.OK && hasPrefix(v.Metric, prefixes) {
			out = append(out, fmt.Sprintf("%s: sim %.4g, noisy sim %.4g, real %.4g: %s", v.Metric, v.Sim, v.Noisy, v.Real, v.Why))
		}
	}
	return out
}

func hasPrefix(s string, prefixes []string) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// semantic returns what is wrong with the real run whatever the machine's
// load: counts not conserved, HTTP errors.
func (c *crossRun) semantic() []string {
	var out []string
	if r := c.real; !r.Requests.Conserved() || r.Requests.Generated == 0 {
		out = append(out, fmt.Sprintf("counts not conserved: %+v", r.Requests))
	}
	if c.info.NetErrors != 0 {
		out = append(out, fmt.Sprintf("%d HTTP errors", c.info.NetErrors))
	}
	return out
}

// judge sets each metric of the real run r against the ideal simulation s
// and the noisy one ns (see the comment at the top of this file).
func judge(s, ns, r *results.Run, n noise, scale float64) []verdict {
	tol := DefaultTolerances.ForScale(scale)
	a, b := Compare(s, r, tol), Compare(ns, r, tol)
	widen := min(n.StalledFrac(), stallprobe.MaxStalled) // a busy run is judged, its own stalls not excused beyond this
	// A request of the tail may have sat through every stall of a
	// quarter-second (a queue behind one thread shifts by each of them).
	tail := max(n.MaxLate, time.Duration(n.Burst*float64(stallprobe.BurstWindow))).Seconds() / scale
	var out []verdict
	for i, x := range a.Rows {
		v := verdict{Metric: x.Metric, Sim: x.Sim, Real: x.Real}
		if i >= len(b.Rows) || b.Rows[i].Metric != x.Metric {
			v.Why = "no such row in the noisy simulation"
			out = append(out, v)
			continue
		}
		y := b.Rows[i]
		v.Noisy = y.Sim
		lo, hi := math.Min(x.Sim, y.Sim), math.Max(x.Sim, y.Sim)
		switch {
		case math.IsNaN(x.Diff):
			v.Why = "missing in the real run"
		case x.OK:
			v.OK, v.Why = true, "agrees with the simulation"
		case y.OK:
			v.OK, v.Why = true, "agrees with the noisy simulation"
		case x.Real >= lo && x.Real <= hi:
			v.OK, v.Why = true, "between the two"
		case x.Rule == rulePP:
			d := 100 * math.Min(math.Abs(x.Real-lo), math.Abs(x.Real-hi))
			v.OK = d <= x.Limit+100*widen
			v.Why = fmt.Sprintf("%.2fpp from the nearer, limit %.1fpp widened by %.1fpp", d, x.Limit, 100*widen)
		case x.Rule == ruleFrac:
			// The first timeout is the earliest of them: one stall near
			// the instant the queue first crosses the timeout moves it.
			if x.Real < 0 || x.Sim < 0 || y.Sim < 0 {
				v.Why = "timeouts in one run only"
				break
			}
			d := math.Min(math.Abs(x.Real-x.Sim), math.Abs(x.Real-y.Sim)) * x.Diff / (x.Real - x.Sim) // as a fraction of the run
			v.OK = math.Abs(d) <= x.Limit+widen
			v.Why = fmt.Sprintf("%.1f%% of the run from the nearer, limit %.0f%% widened by %.1f%%", 100*math.Abs(d), 100*x.Limit, 100*widen)
		default:
			near := lo
			if math.Abs(x.Real-hi) < math.Abs(x.Real-lo) {
				near = hi
			}
			d := math.Abs(x.Real - near)
			abs := 0.0
			switch x.Rule {
			case ruleFloor:
				abs = tol.LatencyFloor
			case ruleLevel:
				abs = tol.LevelAbs
			}
			if x.Metric == "latency p99 s" {
				abs += tail
			}
			rel := math.Inf(1)
			if near != 0 {
				rel = d / math.Abs(near)
			}
			v.OK = rel <= x.Limit+widen || d <= abs
			v.Why = fmt.Sprintf("%+.1f%% from the nearer, limit %.0f%% widened by %.1f%%", 100*(x.Real-near)/math.Abs(near), 100*x.Limit, 100*widen)
			if abs > 0 {
				v.Why += fmt.Sprintf(", or %.3g absolute", abs)
			}
		}
		out = append(out, v)
	}
	return out
}

// watchWaitSteps samples, every 20 ms, how many goroutines are inside a
// wait step of a request (asleep in clock.sleep called by a method of job;
// a CPU demand's sleep is called by tierRT.useCPU), from the runtime's
// goroutine profile, and returns the most seen in two samples in a row.
// The checks require the limit reached, so a change of those names fails
// them rather than passing them unseen.
func watchWaitSteps() func() int {
	p := pprof.Lookup("goroutine")
	var b bytes.Buffer
	return sampleEvery(20*time.Millisecond, 2, func() int {
		b.Reset()
		if p.WriteTo(&b, 1) != nil {
			return -1
		}
		return inWaitStep(b.Bytes())
	})
}

// inWaitStep counts, in a goroutine profile written with debug=1, the
// goroutines whose stack has a method of job right below clock.sleep.
func inWaitStep(profile []byte) int {
	n := 0
	for _, rec := range bytes.Split(profile, []byte("\n\n")) {
		sc := bufio.NewScanner(bytes.NewReader(rec))
		count, prevSleep := 0, false
		for sc.Scan() {
			line := sc.Text()
			if count == 0 {
				// "N @ 0x... 0x..."
				if f, _, ok := strings.Cut(line, " @ "); ok {
					count, _ = strconv.Atoi(f)
				}
				continue
			}
			if prevSleep && strings.Contains(line, "realmode.(*job).") {
				n += count
				break
			}
			prevSleep = strings.Contains(line, "realmode.(*clock).sleep+")
		}
	}
	return n
}

// sampleEvery calls f every d until the returned function is called; that
// returns the largest value f gave in k calls in a row (-1 if f could not
// measure): what was sustained, not a moment's excess. (Go's transport
// hands a closed connection's slot to a waiting dial before it closes the
// socket — persistConn.closeLocked calls decConnsPerHost, then
// conn.Close — so at a load average of 15 a descheduled closing goroutine
// showed three connections against a limit of 2 for two samples 100 ms
// apart. A limit really broken stays broken while connections are kept
// alive, for seconds.)
func sampleEvery(d time.Duration, k int, f func() int) func() int {
	done := make(chan struct{})
	var wg sync.WaitGroup
	best := -1
	wg.Add(1)
	go func() {
		defer wg.Done()
		last := make([]int, 0, k) // the latest k values, oldest first
		if x := f(); x < 0 {
			return
		} else {
			last = append(last, x)
		}
		tk := time.NewTicker(d)
		defer tk.Stop()
		for {
			select {
			case <-done:
				return
			case <-tk.C:
			}
			x := f()
			if x < 0 {
				best = -1
				return
			}
			if len(last) == k {
				last = append(last[:0], last[1:]...)
			}
			last = append(last, x)
			if len(last) == k {
				best = max(best, slices.Min(last))
			}
		}
	}()
	return func() int {
		close(done)
		wg.Wait()
		return best
	}
}
