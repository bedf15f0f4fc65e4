package simmode

import (
	"context"
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// Run simulates the topology once and returns its result. It fails only on
// an internal error, such as a broken conservation law; a topology from
// Load is always runnable.
func Run(top *model.Topology, opt model.Options) (*results.Run, error) {
	return RunContext(context.Background(), top, opt)
}

// RunContext is Run, stopped by ctx: once ctx is done, the engine stops
// within a few thousand events (see sim.Engine.Interrupt), about a
// millisecond, and RunContext returns an *InterruptedError that wraps
// ctx.Err() (errors.Is(err, context.Canceled) after a cancel) and no
// result. A context that is never done costs nothing.
func RunContext(ctx context.Context, top *model.Topology, opt model.Options) (*results.Run, error) {
	warm, err := Warmup(ctx, top, opt)
	if err != nil {
		return nil, err
	}
	return runOnce(ctx, top, opt, warm)
}

// Warmup is the warm-up a run of top with opt deletes: top.Warmup, or for
// an automatic one (top.Warmup < 0) the truncation point MSER-5 picks on
// the per-interval mean response times of a pilot run with the same seed,
// which follows the same trajectory.
func Warmup(ctx context.Context, top *model.Topology, opt model.Options) (time.Duration, error) {
	if top.Warmup >= 0 {
		return top.Warmup, nil
	}
	pilot, err := runOnce(ctx, top, opt, 0)
	if err != nil {
		return 0, err
	}
	return autoWarmup(pilot, top.SampleEvery), nil
}

// ResolveWarmup returns top with an automatic warm-up replaced by the one
// the simulator picks for seed (Warmup), or top itself: the real executor
// runs what it is given, so that both executors discard the same initial
// period.
func ResolveWarmup(ctx context.Context, top *model.Topology, seed uint64) (*model.Topology, error) {
	if top.Warmup >= 0 {
		return top, nil
	}
	w, err := Warmup(ctx, top, model.Options{Seed: seed, NoSeries: true})
	if err != nil {
		return nil, err
	}
	t := *top
	t.Warmup = w
	return &t, nil
}

// InterruptedError is the error of a run whose context was done before it
// ended.
type InterruptedError struct {
	At     sim.Time // the virtual instant it stopped at
	Events uint64   // the events it had executed
	Err    error    // the context's error
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("model: run interrupted at %v of virtual time, after %d events: %v", e.At, e.Events, e.Err)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

func runOnce(ctx context.Context, top *model.Topology, opt model.Options, warmup time.Duration) (res *results.Run, err error) {
	if err := ctx.Err(); err != nil {
		return nil, &InterruptedError{Err: err}
	}
	if opt.MaxPoints == 0 {
		opt.MaxPoints = 20000
	}
	r := newRunner(top, opt, warmup)
	if ctx.Done() != nil {
		// Interrupt is the one Engine method safe from another goroutine.
		defer context.AfterFunc(ctx, r.e.Interrupt)()
	}
	r.start()
	if top.Precision > 0 {
		// Batch means of the client latency; stop when precise enough.
		r.col.Precise = sim.NewBatchMeans(64)
		check := top.Duration / 100
		if check < time.Second {
			check = time.Second
		}
		sim.RunPrecise(r.e, sim.PrecisionRule{RelHalfWidth: top.Precision, Level: 0.95, Check: check, Max: sim.Time(top.Duration)}, r.col.Precise)
	} else {
		r.e.Run(sim.Time(top.Duration))
	}
	if r.e.Interrupted() {
		return nil, &InterruptedError{At: r.e.Now(), Events: r.e.Events(), Err: ctx.Err()}
	}
	res = r.collect()
	res.Unstable = r.unstable()
	if !r.col.Counts.Conserved() {
		return res, fmt.Errorf("simmode: requests not conserved over the run: %+v", r.col.Counts)
	}
	if !res.Requests.Conserved() {
		return res, fmt.Errorf("model: requests not conserved after warm-up: %+v", res.Requests)
	}
	return res, nil
}

// autoWarmup applies MSER-5 to the mean latency per sample interval.
func autoWarmup(pilot *results.Run, every time.Duration) time.Duration {
	if every <= 0 || len(pilot.Points) == 0 {
		return 0
	}
	n := int(pilot.Duration/every.Seconds()) + 1
	sum := make([]float64, n)
	cnt := make([]float64, n)
	for _, p := range pilot.Points {
		i := int(p.T / every.Seconds())
		if i >= n {
			i = n - 1
		}
		sum[i] += p.Latency
		cnt[i]++
	}
	var xs []float64
	for i := range sum {
		if cnt[i] > 0 {
			xs = append(xs, sum[i]/cnt[i])
		} else if len(xs) > 0 {
			xs = append(xs, xs[len(xs)-1])
		} else {
			xs = append(xs, 0)
		}
	}
	d := sim.MSER5(xs)
	return time.Duration(d) * every
}

// ---------------------------------------------------------------------------
// runner

type runner struct {
	e     *sim.Engine
	top   *model.Topology
	opt   model.Options
	tiers []*tierRT
	load  *loadRT
	farms []*farmRT // Topology.Farms' balancers
	// machines are the machines several tiers share (machine.go).
	machines []*machineRT

	warmup    sim.Time
	measuring bool // after warm-up

	col       *model.Collector // what the requests came to
	entryDone int64            // entry-tier replies after warm-up (incl. orphans)

	every  time.Duration // current sample interval (doubles as the series fills)
	series []results.Sample
	slab   []results.TierSample // room for the next samples' tiers
	calls  []*callStat
	callOf map[*model.Call]*callStat // call sites by spec, once there are many (callStat)

	// factoryCaches are the callers' ChannelFactory caches (call.go).
	factories model.FactoryCaches

	lanes map[laneKey]*sim.Lane // fixed delays (fixedDelay)

	watch backlogWatch // an open load above capacity (unstable.go)

	// Free lists: requests, calls and roots are recycled so that a long
	// run allocates nothing per request once warm (see release points).
	freeJobs  []*job
	freeCalls []*call
	freeRoots []*rootReq
}

func newRunner(top *model.Topology, opt model.Options, warmup time.Duration) *runner {
	r := &runner{
		e:      sim.New(opt.Seed),
		top:    top,
		opt:    opt,
		warmup: sim.Time(warmup),
		col:    model.NewCollector(opt.MaxPoints),
		every:  top.SampleEvery,
	}
	for i := range top.Tiers {
		r.tiers = append(r.tiers, newTierRT(r, i))
	}
	for i := range top.Farms {
		r.farms = append(r.farms, newFarmRT(r, &top.Farms[i]))
	}
	for _, i := range model.EntryTiers(top) {
		r.tiers[i].entry = true
	}
	r.load = newLoadRT(r)
	return r
}

const (
	evWarmup int32 = iota
	evSample
)

func (r *runner) start() {
	if r.warmup > 0 {
		r.e.ScheduleAt(r.warmup, sim.ClassSample, r, evWarmup, nil)
	} else {
		r.measuring = true
		r.col.StartMeasuring(0, 0)
	}
	if !r.opt.NoSeries && r.top.SampleEvery > 0 {
		r.e.ScheduleAt(0, sim.ClassSample, r, evSample, nil)
	}
	r.load.start()
}

func (r *runner) OnEvent(e *sim.Engine, kind int32, arg any) {
	switch kind {
	case evWarmup:
		r.resetStats()
	case evSample:
		r.sample()
		next := e.Now().Add(r.every)
		if next <= sim.Time(r.top.Duration) {
			e.ScheduleAt(next, sim.ClassSample, r, evSample, nil)
		}
	}
}

func (r *runner) resetStats() {
	now := r.e.Now()
	r.measuring = true
	r.col.StartMeasuring(r.load.generated, r.load.live())
	r.entryDone = 0
	for _, t := range r.tiers {
		t.resetStats(now)
	}
	r.eachCall(func(c *callStat) { c.resetStats(now) })
	for _, f := range r.farms {
		f.resetStats(now)
	}
}

// maxSamples bounds the time series: when it fills, neighbouring samples
// are merged and the interval doubles, so memory does not grow with the
// length of the run.
const maxSamples = 4096

func (r *runner) sample() {
	now := r.e.Now()
	n := len(r.tiers)
	if len(r.slab) < n {
		// The samples' tiers are cut from slabs of many samples', not
		// allocated one sample at a time.
		r.slab = make([]results.TierSample, n*samplesPerSlab)
	}
	s := results.Sample{T: now.Seconds(), Tiers: r.slab[:n:n]}
	r.slab = r.slab[n:]
	for i, t := range r.tiers {
		s.Tiers[i] = t.sample(now, r.every)
	}
	if len(r.series) >= maxSamples {
		r.series = results.CompactSeries(r.series)
		r.every *= 2
		// The samples merged away leave holes in the slabs: move the kept
		// ones' tiers to one new slab, so that the old ones can go.
		packed := make([]results.TierSample, len(r.series)*n)
		for i := range r.series {
			ts := packed[i*n : (i+1)*n : (i+1)*n]
			copy(ts, r.series[i].Tiers)
			r.series[i].Tiers = ts
		}
		r.slab = nil
	}
	if r.series == nil {
		// All the samples the run will take, up to maxSamples: one
		// allocation rather than append's growth a quarter at a time.
		want := maxSamples
		if every := r.top.SampleEvery; every > 0 && r.top.Duration/every < maxSamples {
			want = int(r.top.Duration/every) + 1
		}
		r.series = make([]results.Sample, 0, want)
	}
	r.series = append(r.series, s)
}

// samplesPerSlab is how many samples' tiers one allocation holds.
const samplesPerSlab = 64

// rootDone records the end of a top-level request.
func (r *runner) rootDone(ref rootRef, o results.Outcome) {
	root := ref.r
	now := r.e.Now()
	r.col.Ended(time.Duration(now), now.Sub(root.start), &root.bd, o)
	root.gen++ // references left in orphaned work go stale
	r.freeRoots = append(r.freeRoots, root)
}

func (r *runner) collect() *results.Run {
	now := r.e.Now()
	res := &results.Run{
		Seed:      r.opt.Seed,
		Duration:  now.Seconds(),
		Warmup:    r.warmup.Seconds(),
		Events:    r.e.Events(),
		TraceHash: r.e.TraceHash(),
		Series:    r.series,
	}
	// Conservation is checked independently: the in-flight count is the
	// requests still open, not derived from the others.
	r.col.Fill(res, r.load.generated, r.load.live(), r.entryDone, time.Duration(now-r.warmup))
	for _, t := range r.tiers {
		res.TierNames = append(res.TierNames, t.spec.Name)
		res.Tiers = append(res.Tiers, t.result(now, time.Duration(now-r.warmup)))
	}
	r.eachCall(func(cs *callStat) { res.Calls = append(res.Calls, cs.result(now)) })
	if len(r.farms) > 0 {
		for _, f := range r.farms {
			res.Balancers = append(res.Balancers, f.result(now))
		}
		resp := make([]*sim.Histogram, len(r.tiers))
		for i, t := range r.tiers {
			resp[i] = t.ends.Resp
		}
		model.FoldFarms(r.top, res, resp)
	}
	return res
}

// ---------------------------------------------------------------------------
// fixed delays

// fixedDelay is a delay that is the same every time (a constant think
// time, a call site's transfer time): its events wait in a lane of the
// calendar rather than in its heap (sim.Lane), and run in the same order
// as they would from the heap.
type fixedDelay struct {
	d     time.Duration
	class sim.Class
	lane  *sim.Lane // nil for a zero delay, or with lanes off
}

type laneKey struct {
	d     time.Duration
	class sim.Class
}

// useLanes is off only in the test that checks that lanes change nothing,
// useGroups (the users' think times in a sim.Group) in the one for groups.
var useLanes, useGroups = true, true

// fixedDelay returns the fixed delay d in class, sharing one lane among
// every use of the same (d, class).
func (r *runner) fixedDelay(d time.Duration, class sim.Class) fixedDelay {
	f := fixedDelay{d: max(d, 0), class: class}
	if f.d == 0 || !useLanes {
		return f
	}
	k := laneKey{d, class}
	if f.lane = r.lanes[k]; f.lane == nil {
		if r.lanes == nil {
			r.lanes = map[laneKey]*sim.Lane{}
		}
		f.lane = r.e.NewLane(d, class)
		r.lanes[k] = f.lane
	}
	return f
}

// schedule arranges for h.OnEvent(e, kind, nil) to run the delay from now.
func (f fixedDelay) schedule(e *sim.Engine, h sim.Handler, kind int32) sim.EventID {
	if f.lane != nil {
		return f.lane.Schedule(h, kind, nil)
	}
	return e.Schedule(f.d, f.class, h, kind, nil)
}

// ---------------------------------------------------------------------------
// breakdown categories

// rootReq is one top-level request of the load. Roots are recycled; the
// generation tells a live reference from one left in orphaned work.
type rootReq struct {
	start sim.Time
	gen   uint32
	bd    [results.BdN]time.Duration
}

// rootRef names one top-level request.
type rootRef struct {
	r   *rootReq
	gen uint32
}

// charge adds a span to a category of the root's breakdown, unless the root
// has ended (the work is orphaned and no longer on anybody's critical path).
func (ref rootRef) charge(cat int, d time.Duration) {
	if ref.r != nil && ref.r.gen == ref.gen {
		ref.r.bd[cat] += d
	}
}

func (r *runner) newRoot() rootRef {
	var root *rootReq
	if n := len(r.freeRoots); n > 0 {
		root = r.freeRoots[n-1]
		r.freeRoots = r.freeRoots[:n-1]
		root.bd = [results.BdN]time.Duration{}
	} else {
		root = &rootReq{}
	}
	root.start = r.e.Now()
	return rootRef{root, root.gen}
}

// ---------------------------------------------------------------------------
// levels

// integ is a time integral of a level, for averages over sample intervals.
type integ struct {
	v, area float64
	last    sim.Time
}

func (g *integ) set(now sim.Time, v float64) {
	g.area += g.v * float64(now-g.last)
	g.last = now
	g.v = v
}

// take returns the area since the previous take and restarts it.
func (g *integ) take(now sim.Time) float64 {
	g.set(now, g.v)
	a := g.area
	g.area = 0
	return a
}
