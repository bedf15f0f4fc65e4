package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
	"github.com/tsim-dev/tsim/sim"
)

var cmdPlan = &command{
	Name:      "plan",
	UsageLine: "FILE --goal GOAL (--vary KEY=LO..HI... | --find users|rate) [--users N | --rate R] [--variant NAME] [--set KEY=VALUE]... [--reps N] [--seed N] [--search auto|bisect|grid] [--duration D] [-o DIR] [--quiet]",
	Short:     "find the smallest settings that meet a goal, or the most load a setting holds",
	Long: `Plan searches for the smallest setting that meets a goal, by simulating.

	tsim plan crack.toml --variant fixed --goal "p99<4s,timeouts<0.1%" \
		--vary tier.web.calls.maxconnection=1..128 --users 100
	tsim plan crack.toml --variant fixed --goal "p99<4s,timeouts<0.1%" --find users

The goal is a comma-separated list of clauses, all of which must hold:

	p50<D, p90<D, p99<D, p99.9<D, mean<D
		client latency of completed requests below a duration ("1s",
		"250ms"); a replication in which no request completed misses it.
	timeouts<P%, rejected<P%
		the share of requests that timed out, or were rejected, below P
		percent.
	goodput>R, throughput>R
		requests per second completed at the client (goodput) or by the
		entry tier (throughput) above R.

Confidence. Each point is simulated --reps times (default: the file's
replications, at least 3) with the same seeds at every point (common random
numbers, as in 'tsim run'). A clause holds when its one-sided 95% Student t
confidence bound across the replications does: for "<" the upper bound
mean + t(0.95, n−1)·s/√n must be below the threshold, for ">" the lower
bound mean − t(0.95, n−1)·s/√n above it. With one replication the single
value is judged, without confidence.

Searching a setting (--vary KEY=LO..HI, several allowed). Keys are the key
paths of variants and sweeps. A range is integers ("1..128"), durations
("1s..30s") or numbers; KEY=a,b,c lists the values to try.

	bisection: one integer range of a capacity key — a connection limit
	(maxconnection, max_conns_per_host, max_connections, pool_size,
	proxy_pool_size), a thread pool's max, cores, a WCF throttle or an
	admission limit — for which more never makes the goal harder to meet.
	The top of the range is tried first (if it misses, nothing in the range
	meets the goal), then the bottom, then the middle of the bracket until
	the smallest value that meets the goal is found: about log2(HI−LO)
	points.

	grid: anything else, or --search grid. Each key is tried at its listed
	values, or for a range at LO, the powers of two between and HI (every
	integer if the range holds at most 16), in every combination. The
	answer is the cheapest combination that meets the goal: keys are
	compared in the order of the --vary flags, so give the most expensive
	first (the first key as small as possible, then the second, ...).

Searching the load (--find users or --find rate): the most users (closed
load) or the highest arrival rate (open load) the configuration holds within
the goal: from the file's peak load, doubling (or halving) until the goal
is missed (or met) to bracket the answer, then bisection — to one user, or
to 1% of the rate. The load is constant at the tried value.

The flags are:

	--goal GOAL
		the goal, as above (required).
	--vary KEY=LO..HI, --vary KEY=a,b,c
		a setting to search; repeat for several.
	--find users|rate
		search the load instead of a setting.
	--users N, --rate R
		run at a constant N users (closed loads) or R requests per second
		(open loads): load.users or load.rate is set and the file's
		schedule dropped. Otherwise the file's load, schedule and all, is
		used.
	--variant NAME
		start from this variant (default: the file's first).
	--set KEY=VALUE
		a setting applied at every point; repeat for several.
	--reps N
		replications per point (default: the file's, at least 3).
	--seed N
		the first replication's seed instead of the file's.
	--search auto|bisect|grid
		force the search method of --vary (default auto, as above).
	--duration D
		simulate D at each point instead of the file's duration (quicker,
		noisier).
	-o DIR
		write plan.png under DIR/<file name without extension>/ (default
		"out").
	--quiet
		do not say where the picture was written.

Plan prints every evaluated point (mean and confidence bound of each goal
clause) and the answer, and draws the search in plan.png: each clause's
metric against the searched value, its threshold, the evaluated points
(met or missed) and the answer. The exit status is 1 when nothing in the
range meets the goal.
`,
	Run: runPlan,
}

// ---------------------------------------------------------------------------
// goals

// goal is one clause of a goal: a metric below (or above) a threshold.
type goal struct {
	metric string  // p50 p90 p99 p99.9 mean timeouts rejected goodput throughput
	less   bool    // metric < limit; otherwise metric > limit
	limit  float64 // seconds, a fraction, or requests per second
	text   string  // as written, normalised: "p99 < 2s"
}

var goalRe = regexp.MustCompile(`^\s*([a-z0-9.]+)\s*([<>])\s*(\S+)\s*$`)

// parseGoal reads "p99<1s,timeouts<0.1%".
func parseGoal(s string) ([]goal, error) {
	var out []goal
	for _, clause := range strings.Split(s, ",") {
		m := goalRe.FindStringSubmatch(clause)
		if m == nil {
			return nil, fmt.Errorf("goal clause %q: want METRIC<VALUE or METRIC>VALUE, such as p99<1s, timeouts<0.1%%, goodput>50", strings.TrimSpace(clause))
		}
		g := goal{metric: m[1], less: m[2] == "<", text: m[1] + " " + m[2] + " " + m[3]}
		switch g.metric {
		case "p50", "p90", "p99", "p99.9", "mean":
			if !g.less {
				return nil, fmt.Errorf("goal clause %q: latency goals are upper limits (%s<D)", strings.TrimSpace(clause), g.metric)
			}
			d, err := time.ParseDuration(m[3])
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("goal clause %q: want a positive duration such as 1s or 250ms, got %q", strings.TrimSpace(clause), m[3])
			}
			g.limit = d.Seconds()
		case "timeouts", "rejected":
			if !g.less {
				return nil, fmt.Errorf("goal clause %q: %s goals are upper limits (%s<P%%)", strings.TrimSpace(clause), g.metric, g.metric)
			}
			v, ok := strings.CutSuffix(m[3], "%")
			f, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil || f <= 0 || f > 100 {
				return nil, fmt.Errorf("goal clause %q: want a percentage in (0, 100] such as 0.1%%, got %q", strings.TrimSpace(clause), m[3])
			}
			g.limit = f / 100
		case "goodput", "throughput":
			if g.less {
				return nil, fmt.Errorf("goal clause %q: %s goals are lower limits (%s>R)", strings.TrimSpace(clause), g.metric, g.metric)
			}
			f, err := strconv.ParseFloat(strings.TrimSuffix(m[3], "/s"), 64)
			if err != nil || f <= 0 || math.IsInf(f, 0) {
				return nil, fmt.Errorf("goal clause %q: want requests per second, such as 50, got %q", strings.TrimSpace(clause), m[3])
			}
			g.limit = f
		default:
			return nil, fmt.Errorf("goal clause %q: unknown metric %q (p50, p90, p99, p99.9, mean, timeouts, rejected, goodput, throughput)", strings.TrimSpace(clause), g.metric)
		}
		out = append(out, g)
	}
	return out, nil
}

// of is the clause's metric in one replication; latency is +Inf when no
// request completed.
func (g goal) of(r *results.Run) float64 {
	lat := func(v float64) float64 {
		if r.GoodputPerS == 0 {
			return math.Inf(1)
		}
		return v
	}
	switch g.metric {
	case "p50":
		return lat(r.Latency.P50)
	case "p90":
		return lat(r.Latency.P90)
	case "p99":
		return lat(r.Latency.P99)
	case "p99.9":
		return lat(r.Latency.P999)
	case "mean":
		return lat(r.Latency.Mean)
	case "timeouts":
		return r.TimeoutRate
	case "rejected":
		return r.RejectRate
	case "goodput":
		return r.GoodputPerS
	case "throughput":
		return r.ThroughputPerS
	}
	panic("unknown metric " + g.metric)
}

// planLevel is the one-sided confidence level of the goal test.
const planLevel = 0.95

// judge returns the mean of a clause's values across replications and the
// one-sided 95% confidence bound it is judged on (the mean itself with one
// replication), and whether the bound meets the clause.
func (g goal) judge(xs []float64) (mean, bound float64, ok bool) {
	var t sim.Tally
	for _, x := range xs {
		if math.IsInf(x, 0) {
			return math.Inf(1), math.Inf(1), false
		}
		t.Add(x)
	}
	mean, bound = t.Mean(), t.Mean()
	if n := len(xs); n > 1 {
		// TQuantile is two-sided: its 90% value is the one-sided 95% one.
		h := sim.TQuantile(2*planLevel-1, n-1) * math.Sqrt(t.Variance()/float64(n))
		if g.less {
			bound += h
		} else {
			bound -= h
		}
		// A share cannot leave [0, 1], a rate or a latency go below 0.
		bound = math.Max(bound, 0)
		if g.metric == "timeouts" || g.metric == "rejected" {
			bound = math.Min(bound, 1)
		}
	}
	if g.less {
		return mean, bound, bound < g.limit
	}
	return mean, bound, bound > g.limit
}

// unit scales and names a clause's metric for tables and pictures.
func (g goal) format(v float64) string {
	if math.IsInf(v, 0) {
		return "none"
	}
	switch g.metric {
	case "timeouts", "rejected":
		return report.FmtPercent(v)
	case "goodput", "throughput":
		return report.FmtRate(v) + "/s"
	}
	return report.FmtLatency(v)
}

func (g goal) axis() (label string, scale float64) {
	switch g.metric {
	case "timeouts":
		return "timed out (% of requests)", 100
	case "rejected":
		return "rejected (% of requests)", 100
	case "goodput":
		return "goodput (requests/s)", 1
	case "throughput":
		return "throughput (requests/s)", 1
	case "mean":
		return "mean latency (s)", 1
	}
	return g.metric + " latency (s)", 1
}

// ---------------------------------------------------------------------------
// what is searched

// axis is one searched key and the values it may take.
type axis struct {
	key    string
	ints   bool // an integer range: bisection is possible
	lo, hi int
	// vals are the values of a grid, as written, with their numeric
	// values for ordering (their position for non-numbers).
	vals []string
	nums []float64
}

// monotoneKeys end the key paths of capacity settings: more of them never
// makes a goal harder to meet, so the goal can be bisected on them.
var monotoneKeys = []string{
	".maxconnection", ".maxconnection_host", ".connection_limit_code", ".max_conns_per_host",
	".max_connections", ".pool_size", ".proxy_pool_size", ".worker.max", ".io.max", ".cores",
	".wcf.max_calls", ".wcf.max_sessions", ".wcf.max_instances", ".admission.max_executing", ".admission.max_per_cpu",
}

func (a *axis) monotone() bool {
	for _, s := range monotoneKeys {
		if strings.HasSuffix(a.key, s) {
			return true
		}
	}
	return false
}

// parseVary reads KEY=LO..HI or KEY=a,b,c.
func parseVary(s string) (*axis, error) {
	key, spec, ok := strings.Cut(s, "=")
	key, spec = strings.TrimSpace(key), strings.TrimSpace(spec)
	if !ok || key == "" || spec == "" {
		return nil, fmt.Errorf("--vary %q: want KEY=LO..HI or KEY=a,b,c", s)
	}
	a := &axis{key: key}
	if lo, hi, isRange := strings.Cut(spec, ".."); isRange {
		li, err1 := strconv.Atoi(lo)
		hj, err2 := strconv.Atoi(hi)
		if err1 == nil && err2 == nil {
			if hj < li {
				return nil, fmt.Errorf("--vary %s: %d..%d is empty", key, li, hj)
			}
			a.ints, a.lo, a.hi = true, li, hj
			if hj-li+1 <= 16 {
				for v := li; v <= hj; v++ {
					a.add(strconv.Itoa(v), float64(v))
				}
			} else {
				a.add(strconv.Itoa(li), float64(li))
				for p := 1; p < hj; p *= 2 {
					if p > li {
						a.add(strconv.Itoa(p), float64(p))
					}
				}
				a.add(strconv.Itoa(hj), float64(hj))
			}
			return a, nil
		}
		dl, err1 := time.ParseDuration(lo)
		dh, err2 := time.ParseDuration(hi)
		if err1 == nil && err2 == nil {
			if dh < dl || dl <= 0 {
				return nil, fmt.Errorf("--vary %s: want 0 < LO ≤ HI, got %s", key, spec)
			}
			for d := dl; d < dh; d *= 2 {
				a.add(d.String(), d.Seconds())
			}
			a.add(dh.String(), dh.Seconds())
			return a, nil
		}
		fl, err1 := strconv.ParseFloat(lo, 64)
		fh, err2 := strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil || fh < fl || fl <= 0 || math.IsInf(fh, 0) {
			return nil, fmt.Errorf("--vary %s: want a range of integers (1..128), durations (1s..30s) or positive numbers, got %q", key, spec)
		}
		for f := fl; f < fh; f *= 2 {
			a.add(strconv.FormatFloat(f, 'g', -1, 64), f)
		}
		a.add(strconv.FormatFloat(fh, 'g', -1, 64), fh)
		return a, nil
	}
	numeric := true
	var nums []float64
	vals := strings.Split(spec, ",")
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			nums = append(nums, f)
		} else if d, err := time.ParseDuration(v); err == nil {
			nums = append(nums, d.Seconds())
		} else {
			numeric = false
		}
	}
	for i, v := range vals {
		x := float64(i)
		if numeric {
			x = nums[i]
		}
		a.add(strings.TrimSpace(v), x)
	}
	return a, nil
}

func (a *axis) add(v string, x float64) {
	for _, w := range a.vals {
		if w == v {
			return
		}
	}
	a.vals = append(a.vals, v)
	a.nums = append(a.nums, x)
}

// numeric reports whether the axis's values are numbers (or durations).
func (a *axis) numeric() bool {
	for i, v := range a.vals {
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			continue
		}
		if d, err := time.ParseDuration(v); err == nil && d.Seconds() == a.nums[i] {
			continue
		}
		return false
	}
	return true
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// ---------------------------------------------------------------------------
// evaluation

// point is one evaluated configuration.
type point struct {
	order  int            // 1-based evaluation order
	params []format.Param // the searched values (or the load)
	x      []float64      // their numeric values
	vals   [][]float64    // per clause, per replication
	mean   []float64      // per clause
	bound  []float64      // per clause
	ok     bool           // every clause holds
}

// planner evaluates points: every replication of a point with the seeds of
// 'tsim run', all in parallel.
type planner struct {
	ctx     context.Context
	x       *format.Experiment
	path    string
	variant string
	fixed   []format.Param // --set, the load, --duration
	unset   []string
	goals   []goal
	reps    int
	seed    uint64
	workers int
	points  []*point
	cache   map[string]*point
}

func paramsKey(ps []format.Param) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Key + "=" + p.Value + "\x00")
	}
	return b.String()
}

// eval evaluates the given configurations (those not evaluated yet) and
// returns their points.
func (p *planner) eval(configs [][]format.Param, xs [][]float64) ([]*point, error) {
	out := make([]*point, len(configs))
	type job struct {
		pt  *point
		sc  *format.Scenario
		rep int
	}
	var jobs []job
	for i, ps := range configs {
		if pt := p.cache[paramsKey(ps)]; pt != nil {
			out[i] = pt
			continue
		}
		sc, err := p.x.ScenarioWith(p.variant, append(append([]format.Param(nil), p.fixed...), ps...), p.unset)
		if err != nil {
			return nil, err
		}
		pt := &point{order: len(p.points) + 1, params: ps, x: xs[i], vals: make([][]float64, len(p.goals))}
		for g := range pt.vals {
			pt.vals[g] = make([]float64, p.reps)
		}
		p.points = append(p.points, pt)
		p.cache[paramsKey(ps)] = pt
		out[i] = pt
		for k := range p.reps {
			jobs = append(jobs, job{pt, &sc, k})
		}
	}
	ch := make(chan job)
	errs := make(chan error, len(jobs))
	var wg sync.WaitGroup
	for range min(p.workers, max(len(jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				if p.ctx.Err() != nil {
					continue
				}
				r, err := runner.Sim{}.Run(p.ctx, &j.sc.Topology, runner.ReplicationSeed(p.seed, j.rep), model.Options{NoSeries: true, MaxPoints: 1})
				if err != nil {
					errs <- fmt.Errorf("%s: %s, replication %d (seed %d): %w", p.path, runner.ScenarioName(p.variant, j.pt.params), j.rep+1, runner.ReplicationSeed(p.seed, j.rep), err)
					continue
				}
				for g, gl := range p.goals {
					j.pt.vals[g][j.rep] = gl.of(r)
				}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	if err := p.ctx.Err(); err != nil {
		return nil, errors.New("interrupted")
	}
	for _, pt := range out {
		if pt.mean != nil {
			continue
		}
		pt.ok = true
		for g, gl := range p.goals {
			m, b, ok := gl.judge(pt.vals[g])
			pt.mean = append(pt.mean, m)
			pt.bound = append(pt.bound, b)
			pt.ok = pt.ok && ok
		}
	}
	return out, nil
}

func (p *planner) evalOne(ps []format.Param, x float64) (*point, error) {
	pts, err := p.eval([][]format.Param{ps}, [][]float64{{x}})
	if err != nil {
		return nil, err
	}
	return pts[0], nil
}

// bisect finds the smallest value of an integer axis that meets the goal,
// assuming that a larger value never misses it where a smaller one meets
// it. ok is false when even the largest misses.
func (p *planner) bisect(a *axis) (best int, ok bool, err error) {
	at := func(v int) (*point, error) {
		return p.evalOne([]format.Param{{Key: a.key, Value: strconv.Itoa(v)}}, float64(v))
	}
	hi, err := at(a.hi)
	if err != nil || !hi.ok {
		return 0, false, err
	}
	if a.lo == a.hi {
		return a.hi, true, nil
	}
	lo, err := at(a.lo)
	if err != nil {
		return 0, false, err
	}
	if lo.ok {
		return a.lo, true, nil
	}
	l, h := a.lo, a.hi // l misses, h meets
	for h-l > 1 {
		m := l + (h-l)/2
		pt, err := at(m)
		if err != nil {
			return 0, false, err
		}
		if pt.ok {
			h = m
		} else {
			l = m
		}
	}
	return h, true, nil
}

// grid evaluates every combination of the axes' values and returns the
// cheapest that meets the goal: the smallest in the first axis, then the
// second, and so on (nil when none does).
func (p *planner) grid(axes []*axis) (*point, error) {
	var configs [][]format.Param
	var xs [][]float64
	idx := make([]int, len(axes))
	for {
		var ps []format.Param
		var x []float64
		for i, a := range axes {
			ps = append(ps, format.Param{Key: a.key, Value: a.vals[idx[i]]})
			x = append(x, a.nums[idx[i]])
		}
		configs, xs = append(configs, ps), append(xs, x)
		i := len(axes) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(axes[i].vals) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			break
		}
	}
	pts, err := p.eval(configs, xs)
	if err != nil {
		return nil, err
	}
	var best *point
	for _, pt := range pts {
		if pt.ok && (best == nil || cheaper(pt.x, best.x)) {
			best = pt
		}
	}
	return best, nil
}

// cheaper compares two grid points lexicographically.
func cheaper(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// findLoad finds the most users (or the highest rate) that meets the goal:
// exponential search from start for a bracket, then bisection, to one user
// or to 1% of the rate. ok is false when even the smallest load tried
// misses the goal; capped is true when the largest load allowed meets it.
func (p *planner) findLoad(users bool, start float64) (best float64, ok, capped bool, err error) {
	key := "load.rate"
	if users {
		key = "load.users"
	}
	const maxLoad = 1e6
	fmtLoad := func(v float64) string {
		if users {
			return strconv.Itoa(int(v))
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	at := func(v float64) (bool, error) {
		pt, err := p.evalOne([]format.Param{{Key: key, Value: fmtLoad(v)}}, v)
		if err != nil {
			return false, err
		}
		return pt.ok, nil
	}
	if users {
		start = math.Max(1, math.Round(start))
	}
	good, err := at(start)
	if err != nil {
		return 0, false, false, err
	}
	var lo, hi float64 // lo meets, hi misses
	if good {
		lo = start
		for {
			next := math.Min(2*lo, maxLoad)
			if next == lo {
				return lo, true, true, nil
			}
			g, err := at(next)
			if err != nil {
				return 0, false, false, err
			}
			if !g {
				hi = next
				break
			}
			lo = next
		}
	} else {
		hi = start
		smallest := 1.0
		if !users {
			smallest = start / 1024
		}
		for {
			next := hi / 2
			if users {
				next = math.Floor(next)
			}
			if next < smallest {
				return 0, false, false, nil
			}
			g, err := at(next)
			if err != nil {
				return 0, false, false, err
			}
			if g {
				lo = next
				break
			}
			hi = next
		}
	}
	for {
		if users && hi-lo <= 1 {
			break
		}
		if !users && hi/lo <= 1.01 {
			break
		}
		m := (lo + hi) / 2
		if users {
			m = math.Floor(m)
		} else {
			m, _ = strconv.ParseFloat(fmtLoad(m), 64)
		}
		g, err := at(m)
		if err != nil {
			return 0, false, false, err
		}
		if g {
			lo = m
		} else {
			hi = m
		}
	}
	return lo, true, false, nil
}

// ---------------------------------------------------------------------------
// the command

func runPlan(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	goalFlag := fs.String("goal", "", "")
	var varies, sets multiFlag
	fs.Var(&varies, "vary", "")
	fs.Var(&sets, "set", "")
	find := fs.String("find", "", "")
	users := fs.Int("users", 0, "")
	rate := fs.Float64("rate", 0, "")
	variant := fs.String("variant", "", "")
	reps := fs.Int("reps", 0, "")
	seed := fs.Uint64("seed", 0, "")
	search := fs.String("search", "auto", "")
	duration := fs.String("duration", "", "")
	outDir := fs.String("o", "out", "")
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
	case *goalFlag == "":
		return c.usageError(e, "no --goal given (such as --goal \"p99<1s,timeouts<0.1%%\")")
	case len(varies) == 0 && *find == "":
		return c.usageError(e, "nothing to search: give --vary KEY=LO..HI, or --find users (or rate)")
	case len(varies) > 0 && *find != "":
		return c.usageError(e, "--find searches the load of one configuration: give it with --variant and --set, not --vary")
	case *find != "" && *find != "users" && *find != "rate":
		return c.usageError(e, "--find must be users or rate, got %q", *find)
	case set["users"] && set["rate"]:
		return c.usageError(e, "--users and --rate: give one (users for closed loads, rate for open ones)")
	case set["users"] && *users < 1:
		return c.usageError(e, "--users must be at least 1, got %d", *users)
	case set["rate"] && !(*rate > 0):
		return c.usageError(e, "--rate must be > 0, got %v", *rate)
	case *find == "users" && set["users"], *find == "rate" && set["rate"]:
		return c.usageError(e, "--find %s searches the load: do not also fix it with --%s", *find, *find)
	case set["reps"] && *reps < 1:
		return c.usageError(e, "--reps must be at least 1, got %d", *reps)
	case *search != "auto" && *search != "bisect" && *search != "grid":
		return c.usageError(e, "--search must be auto, bisect or grid, got %q", *search)
	}
	goals, err := parseGoal(*goalFlag)
	if err != nil {
		return c.usageError(e, "%v", err)
	}
	var axes []*axis
	for _, v := range varies {
		a, err := parseVary(v)
		if err != nil {
			return c.usageError(e, "%v", err)
		}
		for _, b := range axes {
			if b.key == a.key {
				return c.usageError(e, "--vary %s given twice", a.key)
			}
		}
		axes = append(axes, a)
	}
	useBisect := len(axes) == 1 && axes[0].ints && (*search == "bisect" || *search == "auto" && axes[0].monotone())
	if *search == "bisect" && !useBisect {
		return c.usageError(e, "--search bisect needs one --vary with an integer range (KEY=LO..HI)")
	}

	path := files[0]
	x, err := runner.LoadFile(path)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	if *variant == "" {
		*variant = x.Variants[0]
	}
	p := &planner{ctx: ctx, x: x, path: path, variant: *variant, goals: goals, seed: x.Seed,
		reps: max(x.Replications, 3), workers: numWorkers(), cache: map[string]*point{}}
	if set["reps"] {
		p.reps = *reps
	}
	if set["seed"] {
		p.seed = *seed
	}
	for _, s := range sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return c.usageError(e, "--set %q: want KEY=VALUE", s)
		}
		p.fixed = append(p.fixed, format.Param{Key: strings.TrimSpace(k), Value: strings.TrimSpace(v)})
	}
	if set["duration"] {
		p.fixed = append(p.fixed, format.Param{Key: "duration", Value: *duration})
	}
	base, err := x.ScenarioWith(p.variant, p.fixed, nil)
	if err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	closed := base.Topology.Load.Kind == model.LoadClosed
	switch {
	case (set["users"] || *find == "users") && !closed:
		c.errorf(e, "%s: the load is open (arrivals per second); use --rate or --find rate", path)
		return exitFailure
	case (set["rate"] || *find == "rate") && closed:
		c.errorf(e, "%s: the load is closed (users with think time); use --users or --find users", path)
		return exitFailure
	}
	loadNote := "the file's load"
	switch {
	case set["users"]:
		p.fixed = append(p.fixed, format.Param{Key: "load.users", Value: strconv.Itoa(*users)})
		p.unset = append(p.unset, "load.users_schedule")
		loadNote = fmt.Sprintf("%d users, constant", *users)
	case set["rate"]:
		p.fixed = append(p.fixed, format.Param{Key: "load.rate", Value: strconv.FormatFloat(*rate, 'g', -1, 64)})
		p.unset = append(p.unset, "load.rate_schedule")
		loadNote = fmt.Sprintf("%s requests/s, constant", report.FmtRate(*rate))
	case *find == "users":
		p.unset = append(p.unset, "load.users_schedule")
		loadNote = "users searched, constant at each point"
	case *find == "rate":
		p.unset = append(p.unset, "load.rate_schedule")
		loadNote = "rate searched, constant at each point"
	}
	// Every searched key must be settable: try the first value of each.
	for _, a := range axes {
		if _, err := x.ScenarioWith(p.variant, append(append([]format.Param(nil), p.fixed...), format.Param{Key: a.key, Value: a.vals[0]}), p.unset); err != nil {
			c.errorf(e, "--vary: %v", err)
			return exitFailure
		}
	}

	var out bytes.Buffer
	w := &out
	name := x.Name
	if name == "" {
		name = runner.Stem(path)
	}
	fmt.Fprintf(w, "%s (%s): plan\n", name, path)
	var fixed []string
	for _, kv := range p.fixed {
		if kv.Key != "load.users" && kv.Key != "load.rate" {
			fixed = append(fixed, kv.Key+" = "+kv.Value)
		}
	}
	extra := ""
	if len(fixed) > 0 {
		extra = "; " + strings.Join(fixed, ", ")
	}
	para(w, "variant %s, %s%s; %d replications per point (seeds %s), %s simulated", p.variant, loadNote, extra, p.reps,
		seedList(p.seed, p.reps), report.FmtSeconds(base.Topology.Duration.Seconds()))
	var gtexts []string
	for _, g := range goals {
		gtexts = append(gtexts, g.text)
	}
	rule := "the one-sided 95% Student t confidence bound across replications"
	if p.reps == 1 {
		rule = "one replication, without confidence"
	}
	para(w, "goal: %s, each judged on %s", strings.Join(gtexts, " and "), rule)

	var (
		answerText  string
		answerX     = math.NaN()
		answerLabel string
		found       bool
		xLabel      string
	)
	switch {
	case *find != "":
		start := 0.0
		a := model.Analyse(&base.Topology)
		if *find == "users" {
			start, xLabel = a.Users, "users"
		} else {
			start, xLabel = a.Rate, "arrival rate (requests/s)"
		}
		para(w, "search: the most %s within the goal — doubling from the file's peak of %s to bracket it, then bisection",
			map[string]string{"users": "users", "rate": "requests per second"}[*find], fmtCount(start))
		best, ok, capped, err := p.findLoad(*find == "users", start)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		found = ok
		if ok {
			answerX = best
			unit := " users"
			if *find == "rate" {
				unit = " requests/s"
			}
			answerLabel = "answer: " + fmtCount(best) + unit
			answerText = fmt.Sprintf("the configuration holds %s%s within the goal", fmtCount(best), unit)
			if capped {
				answerText += " (the search stops there)"
			} else if *find == "users" {
				answerText += fmt.Sprintf("; at %s it misses", fmtCount(best+1))
			} else {
				answerText += " (to 1%)"
			}
		} else {
			answerText = "even the smallest load tried misses the goal"
		}
	case useBisect:
		a := axes[0]
		xLabel = a.key
		para(w, "search: bisection over %s in %d..%d (a capacity setting: more never makes the goal harder to meet)", a.key, a.lo, a.hi)
		best, ok, err := p.bisect(a)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		found = ok
		if ok {
			answerX = float64(best)
			answerLabel = fmt.Sprintf("answer: %d", best)
			answerText = fmt.Sprintf("%s = %d, the smallest value that meets the goal", a.key, best)
			if best > a.lo {
				answerText += fmt.Sprintf(" (%d misses it)", best-1)
			} else {
				answerText += " (the bottom of the range)"
			}
		} else {
			answerText = fmt.Sprintf("nothing in %d..%d meets the goal: even %s = %d misses it", a.lo, a.hi, a.key, a.hi)
		}
	default:
		xLabel = axes[0].key
		var desc []string
		size := 1
		for _, a := range axes {
			desc = append(desc, fmt.Sprintf("%s ∈ {%s}", a.key, strings.Join(a.vals, ", ")))
			size *= len(a.vals)
		}
		order := ""
		if len(axes) > 1 {
			order = "; cheapest = smallest in the first key, then the next"
		}
		para(w, "search: grid of %d points, %s%s", size, strings.Join(desc, " × "), order)
		best, err := p.grid(axes)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		found = best != nil
		if found {
			var kv []string
			for _, ps := range best.params {
				kv = append(kv, ps.Key+" = "+ps.Value)
			}
			answerText = strings.Join(kv, ", ") + ", the cheapest point of the grid that meets the goal"
			if len(axes) == 1 {
				answerX = best.x[0]
				answerLabel = "answer: " + best.params[0].Value
			}
		} else {
			answerText = "no point of the grid meets the goal"
		}
	}
	fmt.Fprintln(w)
	if err := printPoints(w, p, axes, *find); err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	fmt.Fprintln(w)
	if found {
		para(w, "answer: %s.", answerText)
	} else {
		para(w, "no answer: %s.", answerText)
	}

	fig, err := planFigure(name, p, axes, xLabel, answerX, answerLabel)
	if err != nil {
		fmt.Fprintf(w, "plan.png not drawn: %v\n", err)
	} else {
		written, err := report.WriteFigure(filepath.Join(*outDir, runner.Stem(path)), "plan.png", fig)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		if !*quiet {
			fmt.Fprintf(w, "wrote %s\n", written)
		}
	}
	e.stdout.Write(out.Bytes())
	if !found {
		return exitFailure
	}
	return exitOK
}

func seedList(seed uint64, reps int) string {
	var s []string
	for k := range min(reps, 3) {
		s = append(s, strconv.FormatUint(runner.ReplicationSeed(seed, k), 10))
	}
	if reps > 3 {
		s = append(s, "...")
	}
	return strings.Join(s, ", ")
}

// printPoints prints every evaluated point, ordered by the searched
// values, with each clause's mean and bound.
func printPoints(w io.Writer, p *planner, axes []*axis, find string) error {
	header := []string{"#"}
	if find != "" {
		header = append(header, find)
	}
	for _, a := range axes {
		header = append(header, report.ShortKey(a.key))
	}
	for _, g := range p.goals {
		b := "upper"
		if !g.less {
			b = "lower"
		}
		if p.reps == 1 {
			header = append(header, g.metric)
		} else {
			header = append(header, g.metric+" mean → "+b+" bound")
		}
	}
	header = append(header, "meets goal")
	t := report.NewTable(w, 0, header...)
	pts := append([]*point(nil), p.points...)
	slices.SortStableFunc(pts, func(a, b *point) int {
		switch {
		case cheaper(a.x, b.x):
			return -1
		case cheaper(b.x, a.x):
			return 1
		}
		return 0
	})
	for _, pt := range pts {
		row := []string{strconv.Itoa(pt.order)}
		for _, kv := range pt.params {
			row = append(row, kv.Value)
		}
		for g, gl := range p.goals {
			cell := gl.format(pt.mean[g])
			if p.reps > 1 && !math.IsInf(pt.mean[g], 0) {
				cell += " → " + gl.format(pt.bound[g])
			}
			row = append(row, cell)
		}
		verdict := "yes"
		if !pt.ok {
			var missed []string
			for g, gl := range p.goals {
				if _, _, ok := gl.judge(pt.vals[g]); !ok {
					missed = append(missed, gl.metric)
				}
			}
			verdict = "no: " + strings.Join(missed, ", ")
		}
		row = append(row, verdict)
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  (# is the order in which the points were evaluated)")
	return nil
}

// planFigure draws the search: a panel per clause, the metric against the
// first searched key (a line per value of the second, if any).
func planFigure(name string, p *planner, axes []*axis, xLabel string, answer float64, answerLabel string) (*plots.Figure, error) {
	if len(axes) > 0 && !axes[0].numeric() {
		return nil, fmt.Errorf("%s is not numeric", axes[0].key)
	}
	var panels []plots.PlanPanel
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, pt := range p.points {
		lo, hi = math.Min(lo, pt.x[0]), math.Max(hi, pt.x[0])
	}
	for g, gl := range p.goals {
		label, scale := gl.axis()
		pn := plots.PlanPanel{Metric: label, Goal: gl.limit * scale, GoalLabel: "goal: " + gl.text}
		byLabel := map[string]int{}
		for _, pt := range p.points {
			if math.IsInf(pt.mean[g], 0) {
				continue // no request completed: no latency to draw
			}
			l := ""
			if len(pt.params) > 1 {
				var parts []string
				for _, kv := range pt.params[1:] {
					parts = append(parts, report.ShortKey(kv.Key)+"="+kv.Value)
				}
				l = strings.Join(parts, ", ")
			}
			i, ok := byLabel[l]
			if !ok {
				i = len(pn.Series)
				byLabel[l] = i
				pn.Series = append(pn.Series, plots.PlanSeries{Label: l})
			}
			s := &pn.Series[i]
			s.X = append(s.X, pt.x[0])
			s.Y = append(s.Y, pt.mean[g]*scale)
			s.Bound = append(s.Bound, pt.bound[g]*scale)
			s.OK = append(s.OK, pt.ok)
		}
		if len(pn.Series) == 0 {
			continue
		}
		panels = append(panels, pn)
	}
	logX := lo > 0 && hi/lo >= 20
	title := fmt.Sprintf("%s: plan for %s, variant %s", name, goalText(p.goals), p.variant)
	return plots.Plan(title, xLabel, logX, panels, answer, answerLabel)
}

func goalText(gs []goal) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.text)
	}
	return strings.Join(s, ", ")
}
