package realmode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// Options tune one real run.
type Options struct {
	// Seed names the random streams, as for the simulator: one seed gives
	// both executors the same arrivals, think times and demands (in the
	// order the requests ask for them).
	Seed uint64
	// TimeScale is real seconds per simulated second: a simulated span d
	// lasts d × TimeScale. Zero: automatic, DefaultScale(top) lowered if
	// need be to fit Budget.
	TimeScale float64
	// MaxInFlight bounds the top-level requests open at once, and with them
	// the goroutines of the run; a request generated beyond it is counted
	// as rejected at once and reported in Info.Shed. Zero: 10,000, and for
	// an open load room for twice its stability bound
	// (model.StabilityBound), so that a load above capacity stops
	// unstable as in the simulator rather than being shed.
	MaxInFlight int
	// Budget is the longest real run the automatic time scale may give:
	// when DefaultScale would make the run longer, the scale is lowered to
	// fit (with a note in Info, since demands then get shorter than
	// TargetDemand). Zero: DefaultBudget. Not used with TimeScale set.
	Budget time.Duration
	// MaxReal bounds the real length of the run (Duration × TimeScale); a
	// longer run is refused. Zero: 10 minutes. Negative: no bound.
	MaxReal time.Duration
	// CPU is how the cores of a processor-sharing tier are emulated:
	// CPUCores (the default, a core permit per demand, first come first
	// served) or CPUSharing (processor sharing like the model). See the
	// package documentation.
	CPU CPUEmulation
	// NoTimerCompensation turns off the subtraction of the measured timer
	// overshoot from every sleep (see clock); for measuring its effect.
	NoTimerCompensation bool
}

// CPUEmulation is how the real executor serves the CPU demands of a tier
// whose model discipline is processor sharing (a tier modelled first come,
// first served, model.CPUFCFS, always holds a core permit per demand). It
// is real mode's means of running the model on the wall clock, not a
// property of the system modelled: that is model.CPUDiscipline.
type CPUEmulation uint8

const (
	// CPUCores: a demand waits (FIFO) for one of the tier's Cores
	// permits, then holds it for the whole demand: first come, first
	// served per core. A tier never uses more cores than modelled.
	CPUCores CPUEmulation = iota
	// CPUSharing: processor sharing on the wall clock, the model's own
	// discipline: with n demands on c cores each progresses at rate
	// min(1, c/n), by the virtual-time rule of sim.PS.
	CPUSharing
)

var cpuNames = [...]string{"cores", "sharing"}

func (c CPUEmulation) String() string { return cpuNames[c] }

// Defaults of Options.
const (
	DefaultMaxInFlight = 10000
	DefaultMaxReal     = 10 * time.Minute
	DefaultBudget      = 2 * time.Minute
)

// Limits of the automatic time scale.
const (
	// TargetDemand is the real length DefaultScale gives the smallest mean
	// demand: well above Go's timer overshoot (0.15–1 ms, see clock) and
	// the cost of an HTTP call on loopback (0.1–0.3 ms per hop). On a
	// 2-core machine 5 ms kept throughput within a few percent but let
	// p50s and a synchronous bottleneck's mean latency drift 10–12% (the
	// per-hop cost eats the bottleneck's capacity); 10 ms kept every
	// measured case inside DefaultTolerances (see doc.go).
	TargetDemand = 10 * time.Millisecond
	MinScale     = 1e-3 // 1 simulated second lasts at least 1 ms
	MaxScale     = 10.0 // and at most 10 s
)

// Info is what a real run reports besides its results.
type Info struct {
	Scale      float64       // real seconds per simulated second
	Real       time.Duration // wall-clock length of the run
	TimerSlack time.Duration // the timer overshoot estimate at the end (real time)
	Shed       int64         // requests refused because MaxInFlight were open
	NetErrors  int64         // HTTP failures other than timeouts (should be 0)
	Notes      []string
}

// Run executes the topology for real and returns its results in simulated
// time units (see RunWithInfo).
func Run(ctx context.Context, top *model.Topology, opt Options) (*results.Run, error) {
	res, _, err := RunWithInfo(ctx, top, opt)
	return res, err
}

// RunWithInfo executes the topology for real: every tier an HTTP server on
// a loopback port, every call a real HTTP request, thread pools, throttles,
// locks and cores real FIFO semaphores, demands scaled sleeps. It returns
// the results in simulated-time units (real spans divided by the scale).
//
// If ctx ends first, the run stops cleanly and returns what it measured so
// far with an error saying it was interrupted. Everything it started
// (servers, connections, goroutines) is closed before it returns.
func RunWithInfo(ctx context.Context, top *model.Topology, opt Options) (*results.Run, Info, error) {
	var info Info
	if err := checkSupported(top); err != nil {
		return nil, info, err
	}
	if opt.MaxInFlight <= 0 {
		opt.MaxInFlight = defaultMaxInFlight(top)
	}
	if opt.MaxReal == 0 {
		opt.MaxReal = DefaultMaxReal
	}
	if opt.Budget <= 0 {
		opt.Budget = DefaultBudget
	}
	scale := opt.TimeScale
	if scale == 0 {
		scale = DefaultScale(top)
		if fit := opt.Budget.Seconds() / top.Duration.Seconds(); fit < scale {
			small, _ := smallestDemand(top)
			info.Notes = append(info.Notes, fmt.Sprintf(
				"time scale lowered from %.3g to %.3g to fit the %v budget: the smallest mean demand (%v) lasts %v of real time, and spans under about 1 ms of real time, like the HTTP cost of each call (0.1–0.3 ms), weigh on latencies",
				scale, fit, opt.Budget, small, time.Duration(float64(small)*fit).Round(time.Microsecond)))
			scale = fit
		}
	}
	if !(scale > 0) || math.IsInf(scale, 0) {
		return nil, info, fmt.Errorf("realmode: time scale must be > 0, got %v", scale)
	}
	info.Scale = scale
	realLen := time.Duration(float64(top.Duration) * scale)
	if opt.MaxReal > 0 && realLen > opt.MaxReal {
		return nil, info, fmt.Errorf("realmode: the run would last %v of real time (duration %v × scale %g), more than the %v allowed; lower the time scale, shorten the run or raise MaxReal",
			realLen.Round(time.Second), top.Duration, scale, opt.MaxReal)
	}
	warm := top.Warmup
	if warm < 0 {
		return nil, info, errors.New("realmode: an automatic warm-up (warmup < 0) is the simulator's choice for the seed: resolve it first (simmode.ResolveWarmup)")
	}
	rt := newRunner(top, opt, scale, warm)
	if err := rt.checkFDs(); err != nil {
		rt.shutdown()
		return nil, info, err
	}
	if err := rt.listen(); err != nil {
		rt.shutdown()
		return nil, info, err
	}
	if testHookListening != nil {
		var addrs []string
		for _, t := range rt.tiers {
			addrs = append(addrs, t.ln.Addr().String())
		}
		testHookListening(addrs)
	}
	dctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	rt.watch.stop = stop
	rt.startAll()
	intr := rt.drive(dctx)
	unstable := intr != nil && ctx.Err() == nil && errors.Is(context.Cause(dctx), errUnstable)
	if unstable {
		rt.endUnstable()
	}
	res, err := rt.finish(intr)
	if unstable {
		intr, res.Unstable = nil, rt.watch.outcome
	}
	if err == nil {
		err = rt.fdsRanOut()
	}
	info.Real = rt.endReal
	info.TimerSlack = rt.clk.slack()
	info.Shed = rt.shed
	info.NetErrors = rt.netErrors.Load()
	if info.Shed > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d requests were counted as rejected because %d were already in flight (MaxInFlight)", info.Shed, opt.MaxInFlight))
	}
	if top.Precision > 0 {
		info.Notes = append(info.Notes, "precision-based stopping is not done by the real executor: it ran the full duration")
	}
	if info.NetErrors > 0 {
		info.Notes = append(info.Notes, fmt.Sprintf("%d calls failed with HTTP errors other than timeouts (counted as failed)", info.NetErrors))
	}
	if intr != nil {
		return res, info, fmt.Errorf("realmode: interrupted after %.1fs of %.1fs (simulated): %w", res.Duration, top.Duration.Seconds(), intr)
	}
	return res, info, err
}

// testHookListening, if set, gets the tiers' listening addresses.
var testHookListening func(addrs []string)

// DefaultScale returns the automatic time scale for a topology: the one
// that makes its smallest mean demand (a CPU or wait step, a network
// latency, the think time) last TargetDemand of real time, clamped to
// [MinScale, MaxScale]. Smaller components (binding costs, proxy creation)
// then last less than that and are measured less precisely. Run lowers it
// further when the run would otherwise last longer than Options.Budget.
func DefaultScale(top *model.Topology) float64 {
	smallest, ok := smallestDemand(top)
	if !ok {
		return 1
	}
	s := TargetDemand.Seconds() / smallest.Seconds()
	return min(max(s, MinScale), MaxScale)
}

// smallestDemand returns the smallest positive mean among the CPU and wait
// steps, the calls' network latencies and the think time.
func smallestDemand(top *model.Topology) (time.Duration, bool) {
	smallest := time.Duration(math.MaxInt64)
	see := func(d time.Duration) {
		if d > 0 && d < smallest {
			smallest = d
		}
	}
	seeCall := func(c *model.Call) { see(c.Network.Latency) }
	for i := range top.Tiers {
		t := &top.Tiers[i]
		for si := range t.Steps {
			st := &t.Steps[si]
			switch st.Kind {
			case model.StepCPU:
				m := st.Demand.Mean()
				if t.CostMultiplier > 0 {
					m = time.Duration(float64(m) * t.CostMultiplier)
				}
				see(m)
			case model.StepWait:
				see(st.Demand.Mean())
			case model.StepCall:
				seeCall(st.Call)
			}
		}
	}
	seeCall(&top.Load.Call)
	for i := range top.Farms {
		see(top.Farms[i].Balancer.Latency)
	}
	if top.Load.Kind == model.LoadClosed {
		see(top.Load.Think.Mean())
	}
	return smallest, smallest != time.Duration(math.MaxInt64)
}

// checkSupported refuses what the real executor does not run yet.
func checkSupported(top *model.Topology) error {
	if top.Duration <= 0 {
		return errors.New("realmode: the run's duration must be > 0")
	}
	check := func(from string, c *model.Call) error {
		if c.Target < 0 || c.Target >= len(top.Tiers) {
			return fmt.Errorf("realmode: call from %s: no tier %d", from, c.Target)
		}
		return nil
	}
	if err := check("load", &top.Load.Call); err != nil {
		return err
	}
	for i := range top.Tiers {
		t := &top.Tiers[i]
		for si := range t.Steps {
			if st := &t.Steps[si]; st.Kind == model.StepCall {
				if err := check(t.Name, st.Call); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// runner

type runner struct {
	top     *model.Topology
	opt     Options
	clk     *clock
	streams sim.Streams
	warmup  time.Duration // simulated

	workCtx    context.Context
	workCancel context.CancelCauseFunc

	tiers  []*tierRT
	calls  []*callStat // call sites in topology order: the load's first
	callOf map[*model.Call]*callStat
	pools  []*connPool
	load   *loadRT
	farms  []*farmRT // Topology.Farms (farm.go)

	// factories are the callers' ChannelFactory caches (fmu).
	fmu       sync.Mutex
	factories model.FactoryCaches

	roots  sync.Map // id → *rootReq
	jobs   sync.Map // id → *job
	nextID atomic.Uint64

	handlers gate
	warmMu   sync.Mutex
	warmB    map[string]*barrier
	loadWG   sync.WaitGroup
	helpers  sync.WaitGroup

	measuring atomic.Bool
	warmAt    time.Duration // real instant the statistics restarted
	entryDone atomic.Int64
	netErrors atomic.Int64
	fdStart   int64        // fdExhausted when the run began (fdbudget.go)
	watch     backlogWatch // an open load above capacity (unstable.go)

	mu              sync.Mutex
	closed          bool
	col             *model.Collector // what the requests came to (rt.mu)
	generated, live int64            // requests generated, and still under way (rt.mu)
	shed            int64

	series  []results.Sample
	every   time.Duration // current sample interval (doubles as the series fills)
	endReal time.Duration
	// machines are the machines several tiers share (tier.go).
	machines []*rmachine
}

func newRunner(top *model.Topology, opt Options, scale float64, warm time.Duration) *runner {
	rt := &runner{
		top: top, opt: opt, warmup: warm,
		clk:     newClock(scale, !opt.NoTimerCompensation),
		streams: sim.NewStreams(opt.Seed),
		callOf:  map[*model.Call]*callStat{},
		warmB:   map[string]*barrier{},
		col:     model.NewCollector(maxPoints),
	}
	rt.workCtx, rt.workCancel = context.WithCancelCause(context.Background())
	for i := range top.Tiers {
		rt.tiers = append(rt.tiers, newTierRT(rt, i))
	}
	for _, i := range model.EntryTiers(top) {
		rt.tiers[i].entry = true
	}
	rt.newFarms()
	rt.addCall(&top.Load.Call, nil)
	for _, t := range rt.tiers {
		for si := range t.spec.Steps {
			if st := &t.spec.Steps[si]; st.Kind == model.StepCall {
				rt.addCall(st.Call, t)
			}
		}
	}
	rt.load = newLoadRT(rt)
	return rt
}

func (rt *runner) addCall(spec *model.Call, from *tierRT) {
	if rt.callOf[spec] != nil {
		return
	}
	cs := rt.newCallStat(spec, from, 0)
	rt.callOf[spec] = cs
	if f := spec.Farm; f != nil && spec.PerHost {
		// A call site per machine of the farm, made before the run: the
		// handlers read them without a lock.
		cs.hosts = []*callStat{cs}
		for r := 1; r < len(f.Replicas); r++ {
			cs.hosts = append(cs.hosts, rt.newCallStat(spec, from, r))
		}
	}
}

// newCallStat makes the statistics of a call site; rep is the machine a
// PerHost call addresses (0 otherwise).
func (rt *runner) newCallStat(spec *model.Call, from *tierRT, rep int) *callStat {
	name := "load"
	if from != nil {
		name = from.spec.Name
	}
	cs := &callStat{rt: rt, idx: len(rt.calls), from: name, spec: spec, to: spec.Target, host: rt.top.HostName(spec, rep), wait: sim.NewHistogram()}
	if f := spec.Farm; f != nil && spec.PerHost {
		cs.to = f.Replicas[rep]
	}
	if f := spec.Farm; f != nil && direct(spec) {
		cs.bal = model.NewBalanceState(len(f.Replicas))
		cs.rnd = rt.streams.Stream(fmt.Sprintf("call/%s/%s/balance", name, cs.host))
	}
	// Callers of one target host from one machine share its connections.
	for _, p := range rt.pools {
		if p.from == name && p.host == cs.host {
			cs.conns = p
		}
	}
	if cs.conns == nil {
		cs.conns = newConnPool(rt, name, cs, &spec.Conn)
		rt.pools = append(rt.pools, cs.conns)
	}
	cs.proxy = &proxyState{mutex: newSem(1)}
	cs.proxy.Proxies = model.NewProxies(&spec.Proxy, func(perCall, fresh bool) *proxyInst {
		return &proxyInst{ClientProxy: model.ClientProxy{PerCall: perCall, Fresh: fresh}, id: rt.nextID.Add(1)}
	})
	if spec.Proxy.Kind == model.ProxyPoolWait {
		cs.proxy.pool = newSem(max(spec.Proxy.PoolSize, 1))
	}
	path := fmt.Sprintf("call/%s/%s", name, cs.host)
	cs.backoff = model.NewBackoff(&spec.Retry, rt.streams.Stream(path+"/backoff"), rt.streams.Stream(path+"/jitter"))
	cs.fmu, cs.factories, cs.tierCall = &rt.fmu, rt.factories.For(name, spec, cs.host), from != nil && spec.Proxy.Priced()
	cs.endpoints = model.NewEndpoints(&spec.Proxy, rt.streams.Stream(path+"/endpoint"))
	rt.calls = append(rt.calls, cs)
	if from != nil {
		from.out = append(from.out, cs)
	}
	return cs
}

func (rt *runner) listen() error {
	for _, t := range rt.tiers {
		if err := t.listen(); err != nil {
			return err
		}
	}
	for _, f := range rt.farms {
		if f.lb != nil {
			if err := f.lb.listen(); err != nil {
				return err
			}
		}
	}
	return nil
}

// startAll starts the clock, the servers, the pools' gate and retire
// loops, the executionTimeout checks and the load.
func (rt *runner) startAll() {
	ctx := rt.workCtx
	bg := func(f func(context.Context)) {
		rt.helpers.Add(1)
		go func() {
			defer rt.helpers.Done()
			f(ctx)
		}()
	}
	for _, t := range rt.tiers {
		bg(func(context.Context) { _ = t.srv.Serve(t.ln) })
	}
	for _, f := range rt.farms {
		if b := f.lb; b != nil {
			bg(func(context.Context) { _ = b.srv.Serve(b.ln) })
		}
	}
	var wg sync.WaitGroup
	for _, p := range rt.pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.warm(rt)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		rt.clk.calibrate()
	}()
	wg.Wait()
	rt.clk.reset()
	for _, t := range rt.tiers {
		for _, p := range []*pool{t.worker, t.io} {
			bg(p.gateLoop)
			bg(p.retireLoop)
		}
		if t.spec.Admission.ExecutionTimeout > 0 {
			bg(t.execLoop)
		}
	}
	if rt.warmup <= 0 {
		rt.mu.Lock()
		rt.measuring.Store(true)
		rt.col.StartMeasuring(0, 0)
		rt.mu.Unlock()
	}
	rt.load.start(ctx)
}

// drive is the run's timetable: the end of the warm-up, the samples every
// SampleEvery, the end. Ties are taken in the model's order (warm-up, then
// the sample, then the end). It returns ctx's cause if ctx ended first.
func (rt *runner) drive(ctx context.Context) error {
	const (
		evWarm = iota
		evSample
		evEnd
	)
	end := rt.top.Duration
	rt.every = rt.top.SampleEvery
	warmPending := rt.warmup > 0
	next := time.Duration(0)
	first := true
	for {
		at, kind := end, evEnd
		if rt.every > 0 && next <= at {
			at, kind = next, evSample
		}
		if warmPending && rt.warmup <= at {
			at, kind = rt.warmup, evWarm
		}
		if err := rt.clk.sleepUntil(ctx, rt.clk.toReal(at)); err != nil {
			return err
		}
		switch kind {
		case evWarm:
			rt.warmAt = rt.clk.now()
			rt.resetStats()
			warmPending = false
		case evSample:
			rt.sample(at, first)
			first = false
			next += rt.every
		case evEnd:
			return nil
		}
	}
}

// finish freezes the statistics, collects the results and closes
// everything. Requests still open at this instant stay in flight.
func (rt *runner) finish(intr error) (*results.Run, error) {
	rt.endReal = rt.clk.now()
	rt.mu.Lock()
	rt.closed = true
	end := rt.top.Duration
	if intr != nil {
		end = min(end, rt.clk.toSim(rt.endReal))
	}
	if n := rt.load.unsentTrace(end); n > 0 {
		rt.generated += n
		rt.live += n
	}
	rt.mu.Unlock()
	res := rt.collect(intr != nil)
	rt.shutdown()
	if !rt.col.Counts.Conserved() {
		return res, fmt.Errorf("realmode: requests not conserved over the run: %+v", rt.col.Counts)
	}
	if !res.Requests.Conserved() {
		return res, fmt.Errorf("realmode: requests not conserved after warm-up: %+v", res.Requests)
	}
	return res, nil
}

// shutdown stops every request, server, connection and goroutine of the
// run and waits for them.
func (rt *runner) shutdown() {
	rt.workCancel(errStopped)
	for _, t := range rt.tiers {
		if t.ps != nil {
			t.ps.close()
		}
	}
	for _, t := range rt.tiers {
		if t.srv != nil {
			_ = t.srv.Close() // closes the listener and every connection
		} else if t.ln != nil {
			_ = t.ln.Close()
		}
	}
	for _, f := range rt.farms {
		if b := f.lb; b != nil {
			if b.srv != nil {
				_ = b.srv.Close()
			} else if b.ln != nil {
				_ = b.ln.Close()
			}
		}
	}
	rt.handlers.closeAndWait()
	rt.loadWG.Wait()
	for _, p := range rt.pools {
		p.closeIdle()
	}
	for _, f := range rt.farms {
		if f.lb != nil {
			f.lb.tr.CloseIdleConnections()
		}
	}
	rt.helpers.Wait()
}

func (rt *runner) collect(interrupted bool) *results.Run {
	now := rt.endReal
	clk := rt.clk
	dur := rt.top.Duration.Seconds()
	if interrupted {
		dur = clk.simSeconds(now)
	}
	res := &results.Run{
		Seed:     rt.opt.Seed,
		Duration: dur,
		Warmup:   rt.warmup.Seconds(),
		Series:   rt.series,
	}
	rt.col.Fill(res, rt.generated, rt.live, rt.entryDone.Load(), clk.toSim(now-rt.warmAt))
	for _, t := range rt.tiers {
		res.TierNames = append(res.TierNames, t.spec.Name)
		res.Tiers = append(res.Tiers, t.result(now))
	}
	for _, cs := range rt.calls {
		res.Calls = append(res.Calls, cs.result(now))
	}
	if len(rt.farms) > 0 {
		resp := make([]*sim.Histogram, len(rt.tiers))
		for i, t := range rt.tiers {
			t.cmu.Lock()
			resp[i] = sim.NewHistogram()
			resp[i].Merge(t.ends.Resp)
			t.cmu.Unlock()
		}
		for _, f := range rt.farms {
			res.Balancers = append(res.Balancers, f.result(now))
		}
		model.FoldFarms(rt.top, res, resp)
	}
	return res
}
