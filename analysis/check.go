package analysis

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

// What tsim check says about a file before it runs, beyond its validity
// and its work (format.Experiment.EstimatedRequests): the memory the run
// will take at its peak, and whether a load arrives faster than the
// configuration serves it — by the operational laws, an open load above
// the binding throttle's bound X ≤ L/H (ρ = λ/X_max > 1) cannot be
// served: the requests it brings in excess wait in a queue that grows for
// as long as it lasts, and the simulator keeps every one of them.

// The memory the simulator takes, measured with runtime.MemStats on runs
// of growing size (go test -run TestCheckMemoryEstimate -v in package
// analysis prints the estimate against the measured peak heap), rounded
// up.
const (
	memPerRun     = 4 << 20   // a replication's own: histograms, kept latency points (20,000), streams
	memPerMachine = 160 << 10 // a tier on one machine (a farm's each): its pools, throttles, counters, connection pools
	memPerUser    = 640       // a closed load's user
	memPerJob     = 1280      // a request at one tier (queued or running; an orphan too)
	memPerLane    = 72        // a connection of a per-connection pool in use, per calling machine (made as used)
	memPerSample  = 64        // one time-series sample of one tier or call
	memReporting  = 64 << 20  // writing the outputs (a picture's pixels)
)

// CheckOptions say what Check compares its estimates with.
type CheckOptions struct {
	// Workers is how many replications run at once (0: GOMAXPROCS).
	Workers int
	// Memory is the memory the run may take, in bytes (MachineMemory);
	// 0 when unknown, and then Check does not warn about memory.
	Memory uint64
	// MemoryShare is the share of Memory above which Check warns; 0 is
	// one half (the rest for the system and for other work).
	MemoryShare float64
}

// Overload is a load that arrives faster than a throttle serves it.
type Overload struct {
	Scenario string // "variant base", with the sweep point
	Throttle string // the binding throttle, as explain names it
	Tier     string // where it lives
	// Arrival is the peak arrival rate (requests/s): the open load's, or
	// for a closed load whose users give up after a timeout and come
	// back, users / (think + timeout); Capacity the throttle's bound and
	// Rho their ratio.
	Arrival, Capacity, Rho float64
	// Seconds is how long the arrivals exceed the capacity, and Backlog
	// the requests that pile up meanwhile, ∫ (arrival − capacity)⁺ dt.
	Seconds, Backlog float64
	// Closed is true for a closed load with a timeout (the orphans of
	// given-up requests pile up), false for an open load.
	Closed bool
	// Queue, when > 0, is the most requests the entry's bounded queues
	// hold (ASP.NET's request queue limit, a balancer's queue limit, a
	// thread pool's bounded queue, on every machine of the entry): beyond
	// it the excess is refused (503) rather than kept, and QueueName says
	// which queue.
	Queue     float64
	QueueName string
	// Stop is the most requests under way before the run stops unstable
	// (twice model.StabilityBound): the simulator keeps no more.
	Stop float64
}

// Kept is the most requests of the overload the run keeps at once: its
// backlog, or the entry's bounded queues when they refuse the rest.
func (o Overload) Kept() float64 {
	kept := o.Backlog
	if o.Queue > 0 {
		kept = math.Min(kept, o.Queue)
	}
	if o.Stop > 0 {
		kept = math.Min(kept, o.Stop)
	}
	return kept
}

// CheckResult is Check's answer.
type CheckResult struct {
	// Requests is the run's estimated work (EstimatedRequests).
	Requests float64
	// PerRun is the estimated peak memory of the largest replication (of
	// the scenarios examined), Concurrent how many replications run at
	// once, and PeakBytes the run's peak: PerRun × Concurrent, plus the
	// aggregated results and the writing of the outputs.
	PerRun     float64
	Concurrent int
	PeakBytes  float64
	// Overloads are the scenarios whose load exceeds their capacity, in
	// scenario order; Examined is how many scenarios were looked at (at
	// most 256, spread over a larger sweep).
	Overloads []Overload
	Examined  int
	// Warnings say the above in sentences, for check to print.
	Warnings []string
}

// Check estimates the peak memory of a run of x and finds the loads that
// exceed their capacity, by the operational laws (model.Analyse), before
// anything is simulated. It examines up to 256 scenarios, spread evenly
// over a larger sweep, as EstimatedRequests does.
func Check(x *format.Experiment, opt CheckOptions) *CheckResult {
	res := &CheckResult{Requests: x.EstimatedRequests()}
	n := x.NumScenarios()
	k := min(n, 256)
	tiers := 0
	var largest memory
	for j := range k {
		sc, err := x.Scenario(j * n / k)
		if err != nil {
			continue
		}
		res.Examined++
		top := &sc.Topology
		tiers = max(tiers, len(top.Tiers))
		a := model.Analyse(top)
		ov, ok := overload(top, a)
		if ok {
			ov.Scenario = runner.ScenarioName(sc.Variant, sc.Params)
			res.Overloads = append(res.Overloads, ov)
		}
		if m := runMemory(top, a, ov.Kept()); m.total() > res.PerRun {
			res.PerRun, largest = m.total(), m
		}
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	res.Concurrent = max(1, min(workers, n*max(x.Replications, 1)))
	// Each scenario's aggregate (its tiers' and calls' counters) is kept
	// until the end.
	res.PeakBytes = res.PerRun*float64(res.Concurrent) + float64(n)*float64(2+tiers)*1024 + memReporting

	for i, ov := range res.Overloads {
		if i == 3 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("and %d more scenarios whose load exceeds what they serve (of %d examined)", len(res.Overloads)-3, res.Examined))
			break
		}
		res.Warnings = append(res.Warnings, ov.String())
	}
	share := opt.MemoryShare
	if !(share > 0 && share <= 1) {
		share = 0.5
	}
	if opt.Memory > 0 && res.PeakBytes > share*float64(opt.Memory) {
		at := "1 replication at a time"
		if res.Concurrent > 1 {
			at = fmt.Sprintf("%d replications at once, each up to %s", res.Concurrent, fmtBytes(res.PerRun))
		}
		w := fmt.Sprintf("the run would take about %s of memory at its peak (%s), more than %s of this machine's %s; most of it: %s",
			fmtBytes(res.PeakBytes), at, results.FmtPercent(share), fmtBytes(float64(opt.Memory)), largest.most())
		res.Warnings = append(res.Warnings, w)
	}
	return res
}

// String says what an overload is in a sentence.
func (o Overload) String() string {
	what := "the open load brings"
	if o.Closed {
		what = "users who give up after their timeout and come back bring"
	}
	s := fmt.Sprintf("%s: %s %s requests/s at the peak, more than the %s/s %s (tier %s) serves by the operational laws: ρ = %s; %s requests/s too many",
		o.Scenario, what, results.FmtRate(o.Arrival), results.FmtRate(o.Capacity), o.Throttle, o.Tier, fmtRho(o.Rho), results.FmtRate(o.Arrival-o.Capacity))
	if o.Queue > 0 && o.Backlog > o.Queue {
		return s + fmt.Sprintf("; for %s the excess waits until %s holds %s requests, and the rest are refused (503): about %s of the arrivals meanwhile",
			report.FmtSeconds(o.Seconds), o.QueueName, fmtMany(o.Queue), results.FmtPercent(1-1/o.Rho))
	}
	s += fmt.Sprintf("; for %s the queue grows, by about %s requests in all, every one kept in memory", report.FmtSeconds(o.Seconds), fmtMany(o.Backlog))
	if o.Closed {
		s += " (given-up requests go on as orphans)"
	}
	if o.Stop > 0 && o.Backlog > o.Stop {
		s += fmt.Sprintf(", until %s are under way and the run stops unstable", fmtMany(o.Stop))
	}
	return s
}

// overload finds whether the load of top arrives faster than its binding
// throttle serves (ρ > 1), and how many requests pile up: for an open load
// its rate; for a closed load only when its users give up after a timeout
// (they then come back after thinking, while their orphaned requests go
// on): users / (think + timeout). A closed load without a timeout cannot
// overload: a user waits for its answer.
func overload(top *model.Topology, a model.Analysis) (Overload, bool) {
	if a.Binding == nil || !(a.MaxPerSec > 0) || math.IsInf(a.MaxPerSec, 1) {
		return Overload{}, false
	}
	o := Overload{Throttle: a.Binding.Throttle, Tier: a.Binding.Tier, Capacity: a.MaxPerSec}
	var arrivals model.Schedule
	switch top.Load.Kind {
	case model.LoadOpen:
		arrivals = top.Load.Rate
	case model.LoadClosed:
		t := top.Load.Call.Timeout
		if t <= 0 {
			return Overload{}, false
		}
		cycle := (a.Z + t).Seconds()
		for _, p := range top.Load.Users {
			arrivals = append(arrivals, model.Point{At: p.At, Value: p.Value / cycle})
		}
		o.Closed = true
	default:
		return Overload{}, false
	}
	o.Arrival = arrivals.Max()
	o.Rho = o.Arrival / o.Capacity
	if !(o.Rho > 1) {
		return Overload{}, false
	}
	o.Backlog, o.Seconds = excess(arrivals, o.Capacity, top.Duration)
	o.Queue, o.QueueName = entryQueues(top)
	o.Stop = 2 * float64(model.StabilityBound(top))
	return o, o.Seconds > 0
}

// entryQueues is the most requests the bounded queues where the load
// arrives hold, and their name: ASP.NET's request queue (and the requests
// it lets run), a thread pool's bounded queue, on every machine the load
// reaches first, or the balancer's queue in front of them; 0 when the
// entry queues without bound.
func entryQueues(top *model.Topology) (float64, string) {
	c := &top.Load.Call
	entry := []int{c.Target}
	if c.Farm != nil {
		entry = c.Farm.Replicas
		if b := c.Farm.Balancer; b.MaxConns > 0 && b.QueueLimit < math.MaxInt32 && !c.PerHost {
			return float64(b.MaxConns + b.QueueLimit), "the balancer of " + c.Farm.Name
		}
	}
	if len(entry) == 0 || entry[0] < 0 || entry[0] >= len(top.Tiers) {
		return 0, ""
	}
	t := &top.Tiers[entry[0]]
	n := float64(len(entry))
	name := t.Name
	if t.Farm != "" {
		name = fmt.Sprintf("the %d machines of %s", len(entry), t.Farm)
	}
	switch ad := &t.Admission; {
	case ad.Kind == model.AdmitConcurrent && ad.QueueLimit > 0:
		held := ad.QueueLimit
		if !ad.CountExecuting {
			held += ad.MaxExecuting
		}
		return n * float64(held), "the request queue of " + name
	case ad.Kind == model.AdmitClassic && ad.QueueLimit > 0:
		return n * float64(ad.QueueLimit+t.Worker.Max), "the ASP.NET request queue of " + name
	}
	pool := &t.IO
	if t.WCF == nil {
		pool = &t.Worker
	}
	if pool.BoundedQueue {
		return n * float64(pool.QueueLimit+pool.Max), "the thread pool queue of " + name
	}
	return 0, ""
}

// memory is the estimated peak memory of one replication, by what takes
// it (bytes), and the counts they come from.
type memory struct {
	fixed, machines, users, jobs, lanes, series float64
	nMachines, nUsers, nJobs, nLanes, nSamples  float64
	backlog                                     bool // most jobs are an overload's
}

func (m memory) total() float64 {
	return m.fixed + m.machines + m.users + m.jobs + m.lanes + m.series
}

// most names the largest part of m.
func (m memory) most() string {
	parts := []struct {
		b    float64
		what string
	}{
		{m.machines, fmt.Sprintf("the %s machines' pools, throttles and counters", fmtMany(m.nMachines))},
		{m.users, fmt.Sprintf("the %s users", fmtMany(m.nUsers))},
		{m.jobs, fmt.Sprintf("the %s requests under way at once", fmtMany(m.nJobs))},
		{m.lanes, fmt.Sprintf("the %s connections the per-connection pools open", fmtMany(m.nLanes))},
		{m.series, fmt.Sprintf("the time series, %s samples (a longer sample_every)", fmtMany(m.nSamples))},
	}
	if m.backlog {
		parts[2].what = fmt.Sprintf("the %s requests of a load that exceeds capacity (above)", fmtMany(m.nJobs))
	}
	best := parts[0]
	for _, p := range parts[1:] {
		if p.b > best.b {
			best = p
		}
	}
	return best.what
}

// runMemory estimates the peak memory of one replication of top: its
// machines, users and the requests under way at once (Little's law at the
// bound: a closed load's users not thinking, N − X·Z with X = min(X_max,
// N/(D+Z)); an open load's λ·D; plus the backlog of an overload), each
// holding a job at every tier it visits; the connections of
// per-connection pools they open (up to each pool's limit, made as they
// are used); the time series.
func runMemory(top *model.Topology, a model.Analysis, backlog float64) memory {
	m := memory{fixed: memPerRun, nMachines: float64(len(top.Tiers))}
	// Jobs per request: its entry, and one per call it makes, counted on
	// one machine of each farm (a request visits one of them) — an upper
	// estimate of those held at once.
	jobs, calls := 1.0, 0.0
	var pools []*model.Call // per-connection pools, one per calling machine
	pool := func(c *model.Call) {
		if c.Conn.Limit > 0 && c.Conn.PerConnection {
			pools = append(pools, c)
		}
	}
	pool(&top.Load.Call)
	for i := range top.Tiers {
		t := &top.Tiers[i]
		for _, st := range t.Steps {
			if st.Kind != model.StepCall {
				continue
			}
			calls++
			pool(st.Call) // every machine keeps its own pools
			if t.Replica <= 1 {
				jobs++
			}
		}
	}
	var inFlight float64
	d := (a.D + a.Z).Seconds()
	switch top.Load.Kind {
	case model.LoadClosed:
		m.nUsers = a.Users
		x := a.Users / math.Max(d, 1e-9)
		if a.Binding != nil && a.MaxPerSec < x {
			x = a.MaxPerSec
		}
		inFlight = math.Max(0, a.Users-x*a.Z.Seconds())
	case model.LoadOpen:
		inFlight = a.Rate * a.D.Seconds()
	}
	if top.SampleEvery > 0 {
		m.nSamples = float64(top.Duration/top.SampleEvery+1) * (1 + m.nMachines + calls)
	}
	for _, c := range pools {
		m.nLanes += math.Min(float64(c.Conn.Limit), math.Ceil(inFlight+backlog)) * float64(hostsOf(c))
	}
	m.nJobs, m.backlog = (inFlight+backlog)*jobs, backlog > inFlight
	m.machines, m.users, m.jobs = m.nMachines*memPerMachine, m.nUsers*memPerUser, m.nJobs*memPerJob
	m.lanes, m.series = m.nLanes*memPerLane, m.nSamples*memPerSample
	return m
}

// hostsOf is how many connection pools one caller keeps for call c: one
// per machine of a farm addressed machine by machine, one otherwise.
func hostsOf(c *model.Call) int {
	if c.Farm != nil && c.PerHost {
		return len(c.Farm.Replicas)
	}
	return 1
}

// excess returns ∫₀ᵈ (s(t) − c)⁺ dt and the time during which s(t) > c,
// for a piecewise-linear schedule that holds its first value before the
// first point and its last after the last.
func excess(s model.Schedule, c float64, d time.Duration) (area, seconds float64) {
	if len(s) == 0 || d <= 0 {
		return 0, 0
	}
	seg := func(t0, t1, v0, v1 float64) {
		if t1 <= t0 {
			return
		}
		a0, a1 := v0-c, v1-c
		switch {
		case a0 >= 0 && a1 >= 0:
			area += (a0 + a1) / 2 * (t1 - t0)
			if a0 > 0 || a1 > 0 {
				seconds += t1 - t0
			}
		case a0 > 0 || a1 > 0: // crosses c
			f := a0 / (a0 - a1) // where it crosses, as a share of the segment
			if a0 > 0 {
				area += a0 / 2 * f * (t1 - t0)
				seconds += f * (t1 - t0)
			} else {
				area += a1 / 2 * (1 - f) * (t1 - t0)
				seconds += (1 - f) * (t1 - t0)
			}
		}
	}
	end := d.Seconds()
	prevT, prevV := 0.0, s[0].Value
	for _, p := range s {
		at := p.At.Seconds()
		if at <= prevT {
			prevV = p.Value
			continue
		}
		e := math.Min(at, end)
		vEnd := prevV + (p.Value-prevV)*(e-prevT)/(at-prevT)
		seg(prevT, e, prevV, vEnd)
		if at >= end {
			return area, seconds
		}
		prevT, prevV = at, p.Value
	}
	seg(prevT, end, prevV, prevV)
	return area, seconds
}

// fmtRho writes a utilisation: 3 significant digits, whole above 100.
func fmtRho(r float64) string {
	if r >= 100 {
		return strconv.FormatFloat(math.Round(r), 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'g', 3, 64)
}

// fmtMany writes a large count in words: "640 million", "9.99 million".
func fmtMany(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.3g billion", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.3g million", x/1e6)
	}
	return fmt.Sprintf("%.0f", x)
}

// fmtBytes writes a size: "512 KB", "38.2 MB", "6.4 GB".
func fmtBytes(b float64) string {
	switch {
	case b >= 1<<40:
		return fmt.Sprintf("%.3g TB", b/(1<<40))
	case b >= 1<<30:
		return fmt.Sprintf("%.3g GB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.3g MB", b/(1<<20))
	}
	return fmt.Sprintf("%.0f KB", math.Ceil(b/(1<<10)))
}

// FmtBytes is fmtBytes for the command line.
func FmtBytes(b float64) string { return fmtBytes(b) }

// MachineMemory is the memory this process may use, in bytes: the
// machine's (MemTotal of /proc/meminfo), or its control group's limit
// when that is lower (cgroup v2 memory.max, v1 memory.limit_in_bytes). It
// returns 0 when neither can be read (another operating system).
func MachineMemory() uint64 {
	var total uint64
	if b, err := readSmall("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
				f := strings.Fields(rest)
				if len(f) == 2 && f[1] == "kB" {
					if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
						total = kb << 10
					}
				}
			}
		}
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := readSmall(p)
		if err != nil {
			continue
		}
		if l, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && l > 0 && (total == 0 || l < total) {
			total = l // "max" (no limit) does not parse
		}
	}
	return total
}

// readSmall reads at most 64 KB of a file of the kernel's.
func readSmall(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, err := f.Read(b)
	if n > 0 {
		return b[:n], nil
	}
	return nil, err
}
