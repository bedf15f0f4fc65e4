package realmode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// tierRT is one tier running for real: an HTTP server on a loopback port
// whose handler walks a request through the same phases as the model's job
// (admission, worker thread, WCF throttles, instance lock, handler thread,
// decode, steps, encode), holding real FIFO semaphores where the model
// holds slots.
type tierRT struct {
	rt    *runner
	idx   int
	spec  *model.Tier
	wcf   bool
	entry bool // its replies count as the system's throughput (model.EntryTiers)

	ln  net.Listener
	srv *http.Server
	url string

	cores      *sem      // CPUCores
	ps         *psCPU    // CPUSharing
	share      *cpuShare // a machine shared with other tiers (model.Tier.Machine)
	worker, io *pool

	admMu     sync.Mutex
	admQ      []*admWaiter
	admHead   int
	executing int

	calls, instances, concLock *sem
	instMu                     sync.Mutex
	singleInstance             bool
	singleCreated              bool // a call has paid the Single instance's creation (model.WCF.InstanceCPU)
	locks                      []*sem

	// WCF sessions (session.go): MaxConcurrentSessions, and the client
	// proxies seen, by id.
	sessions      *sem
	sessMu        sync.Mutex
	sessMap       map[uint64]*sessState
	listenWaiting int   // connections waiting in the netTcp listener for a session (sessMu)
	lvListen      level // listenWaiting over time
	pending       int   // security sessions negotiated, not yet opened (sessMu)

	// StartUp (model Tier.StartUp): openCh is closed once the host has
	// opened; the first request starts it opening.
	openCh   chan struct{}
	openOnce sync.Once

	execMu    sync.Mutex
	execList  []*job
	execHead  int
	execArmed bool
	execCh    chan struct{}

	demand []*lockedSampler // per step (CPU and wait)

	out []*callStat // calls made from this tier

	lvExec, lvQueued, lvOut, lvBusy, lvThreads, lvTQ, lvMem, lvCPU level
	cpuRep                                                         int
	// The model's counters (model tierRT, docs/counters.md): lvQueued the
	// requests not executing yet, lvAppQ the admission queue, lvCur both,
	// lvOut the operations in progress.
	lvCur, lvAppQ, lvPipe, lvInst, lvWBusy, lvWorkers, lvIOBusy, lvIOs level
	aspnet                                                             bool
	walk                                                               []model.Phase // spec.Walk(), once per run
	msgWalk                                                            [2][]model.Phase
	gates                                                              []*sem     // spec.Gates
	cmu                                                                sync.Mutex // guards what follows
	pipes                                                              *model.AppPool
	counts                                                             model.TierCounts // as the simulator keeps them
	resp                                                               *sim.Histogram   // simulated arrival to reply, completed after warm-up
	served, waited                                                     int64

	completed, rejected, aborted atomic.Int64
	wastedNS                     atomic.Int64 // simulated ns of CPU spent on orphaned work
}

type admWaiter struct {
	j    *job
	ch   chan struct{}
	at   time.Duration // real instant it was queued
	gone bool          // the run ended while it waited
	drop bool          // dequeued unserved: its client had gone (clientConnectedCheck)
}

// lockedSampler shares one model sampler between goroutines.
type lockedSampler struct {
	mu sync.Mutex
	s  sim.Sampler
}

func (l *lockedSampler) sample() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Sample()
}

func newTierRT(rt *runner, i int) *tierRT {
	spec := &rt.top.Tiers[i]
	t := &tierRT{rt: rt, idx: i, spec: spec, wcf: spec.WCF != nil, execCh: make(chan struct{}, 1)}
	if spec.StartUp > 0 {
		t.openCh = make(chan struct{})
	}
	for _, l := range t.levels() {
		l.clk = rt.clk
	}
	if spec.Machine > 0 {
		// A machine shared with other tiers (model machine.go): one CPU;
		// each tier's level counts its own demands.
		m := rt.machine(spec)
		t.cores, t.ps = m.cores, m.ps
		t.share = &cpuShare{lv: &t.lvCPU}
		if t.ps != nil {
			t.ps.mu.Lock()
			t.ps.shares = append(t.ps.shares, t.share)
			t.ps.mu.Unlock()
		}
	} else {
		t.cores = newSem(max(spec.Cores, 1))
		t.cores.onChange = func(inUse, _ int) {
			t.lvCPU.add(float64(inUse - t.cpuRep))
			t.cpuRep = inUse
		}
		if rt.opt.CPU == CPUSharing && spec.CPU != model.CPUFCFS {
			t.ps = newPSCPU(rt.clk, spec.Cores)
			t.ps.onChange = func(n int) {
				busy := min(n, max(spec.Cores, 1))
				t.lvCPU.add(float64(busy - t.cpuRep))
				t.cpuRep = busy
			}
		}
	}
	t.worker = newTierPool(rt, t, "worker", spec.Worker)
	t.io = newTierPool(rt, t, "io", spec.IO)
	onThreads := func(busy, threads *level) func(dBusy, dThreads, dWaiting int) {
		return func(dBusy, dThreads, dWaiting int) {
			t.lvBusy.add(float64(dBusy))
			t.lvThreads.add(float64(dThreads))
			t.lvTQ.add(float64(dWaiting))
			busy.add(float64(dBusy))
			threads.add(float64(dThreads))
		}
	}
	t.worker.onChange, t.io.onChange = onThreads(&t.lvWBusy, &t.lvWorkers), onThreads(&t.lvIOBusy, &t.lvIOs)
	t.walk = spec.Walk()
	t.msgWalk = [2][]model.Phase{spec.WalkOf(model.MsgNegotiate), spec.WalkOf(model.MsgClose)}
	for _, n := range spec.Gates {
		t.gates = append(t.gates, newSem(n))
	}
	if spec.Host == model.HostASPNetClassic || spec.Host == model.HostIISIntegrated {
		t.aspnet = true
		t.pipes = model.NewAppPool(model.LegacyASPNet(spec.DotNet))
	}
	t.resp = sim.NewHistogram()
	if w := spec.WCF; w != nil {
		t.calls = newSem(w.MaxCalls)
		t.instances = newSem(w.MaxInstances)
		instRep := 0
		t.instances.onChange = func(inUse, _ int) {
			t.lvInst.add(float64(inUse - instRep))
			instRep = inUse
		}
		t.sessions = newSem(w.MaxSessions)
		t.sessMap = map[uint64]*sessState{}
		if w.Instancing == model.SingleInstance && w.Concurrency != model.ConcurrencyMultiple {
			t.concLock = newSem(1)
		}
	}
	maxLock := -1
	for si := range spec.Steps {
		st := &spec.Steps[si]
		if (st.Kind == model.StepLock || st.Kind == model.StepUnlock) && st.Lock > maxLock {
			maxLock = st.Lock
		}
	}
	for k := 0; k <= maxLock; k++ {
		t.locks = append(t.locks, newSem(1))
	}
	t.demand = make([]*lockedSampler, len(spec.Steps))
	for si := range spec.Steps {
		st := &spec.Steps[si]
		if st.Kind == model.StepCPU || st.Kind == model.StepWait {
			d := st.Demand
			if st.Kind == model.StepCPU && spec.CostMultiplier > 0 && spec.CostMultiplier != 1 {
				d = d.Scale(spec.CostMultiplier)
			}
			// The model's stream path, so that one seed gives both
			// executors the same demands (common random numbers).
			path := fmt.Sprintf("tier/%s/step/%d/%s", spec.Name, si, st.Kind)
			t.demand[si] = &lockedSampler{s: d.Sampler(rt.streams.Stream(path))}
		}
	}
	return t
}

func (t *tierRT) levels() []*level {
	return []*level{&t.lvExec, &t.lvQueued, &t.lvOut, &t.lvBusy, &t.lvThreads, &t.lvTQ, &t.lvMem, &t.lvCPU,
		&t.lvCur, &t.lvAppQ, &t.lvPipe, &t.lvInst, &t.lvWBusy, &t.lvWorkers, &t.lvIOBusy, &t.lvIOs, &t.lvListen}
}

// listen opens the tier's loopback listener; serve runs its HTTP server.
func (t *tierRT) listen() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("realmode: tier %q: %w", t.spec.Name, err)
	}
	t.ln = ln
	t.url = "http://" + ln.Addr().String() + "/"
	t.srv = &http.Server{
		Handler:  t,
		ErrorLog: log.New(io.Discard, "", 0),
	}
	return nil
}

func (t *tierRT) resetStats(now time.Duration) {
	for _, l := range t.levels() {
		l.reset(now)
	}
	t.completed.Store(0)
	t.rejected.Store(0)
	t.aborted.Store(0)
	t.wastedNS.Store(0)
	t.cmu.Lock()
	t.counts.ResetMeasured()
	t.resp.Reset()
	t.served, t.waited = 0, 0
	t.cmu.Unlock()
}

// simNow is the simulated instant now.
func (t *tierRT) simNow() time.Duration { return t.rt.clk.toSim(t.rt.clk.now()) }

// pipesLocked sets the Pipeline Instance Count level (t.cmu held).
func (t *tierRT) pipesLocked() {
	if t.pipes != nil {
		t.lvPipe.add(float64(t.pipes.Count(t.simNow())) - t.lvPipe.value())
	}
}

func (t *tierRT) sample(now time.Duration, every time.Duration, first bool) results.TierSample {
	cpu := 0.0
	a := t.lvCPU.takeInterval(now)
	if !first && every > 0 {
		cpu = 100 * a / (float64(every) * float64(max(t.spec.Cores, 1)))
	}
	t.cmu.Lock()
	t.pipesLocked()
	perS := 0.0
	if !first && t.rt.every > 0 {
		perS = 1 / t.rt.every.Seconds()
	}
	s := results.TierSample{
		Executing:   t.lvExec.value(),
		Queued:      t.lvQueued.value(),
		Outstanding: t.lvOut.value(),
		ThreadsBusy: t.lvBusy.value(),
		Threads:     t.lvThreads.value(),
		ThreadQueue: t.lvTQ.value(),
		CPU:         cpu,
		MemoryMB:    t.lvMem.value() / (1 << 20),

		Current:    t.lvCur.value(),
		AppQueued:  t.lvAppQ.value(),
		Pipelines:  t.lvPipe.value(),
		Instances:  t.lvInst.value(),
		WorkerBusy: t.lvWBusy.value(),
		Workers:    t.lvWorkers.value(),
		IOBusy:     t.lvIOBusy.value(),
		IOThreads:  t.lvIOs.value(),
	}
	t.counts.Sample(&s, perS)
	t.cmu.Unlock()
	seen := map[*connPool]bool{}
	for _, c := range t.out {
		if seen[c.conns] {
			continue
		}
		seen[c.conns] = true
		s.ConnsInUse += c.conns.lvInUse.value()
		s.ConnsWaiting += c.conns.lvWaiting.value()
	}
	return s
}

func (t *tierRT) result(now time.Duration) results.Tier {
	mean := func(l *level) (float64, float64) { return l.stats(now) }
	cpuM, _ := mean(&t.lvCPU)
	exM, exX := mean(&t.lvExec)
	qM, qX := mean(&t.lvQueued)
	oM, oX := mean(&t.lvOut)
	bM, bX := mean(&t.lvBusy)
	_, thX := mean(&t.lvThreads)
	tqM, _ := mean(&t.lvTQ)
	_, memX := mean(&t.lvMem)
	t.cmu.Lock()
	defer t.cmu.Unlock()
	t.pipesLocked()
	perS := 0.0
	if span := t.rt.clk.simSeconds(now - t.rt.warmAt); span > 0 {
		perS = 1 / span
	}
	curM, curX := mean(&t.lvCur)
	aqM, aqX := mean(&t.lvAppQ)
	piM, piX := mean(&t.lvPipe)
	inM, inX := mean(&t.lvInst)
	lwM, lwX := mean(&t.lvListen)
	wbM, wbX := mean(&t.lvWBusy)
	wkM, wkX := mean(&t.lvWorkers)
	ibM, ibX := mean(&t.lvIOBusy)
	ioM, ioX := mean(&t.lvIOs)
	r := results.Tier{
		Name:                t.spec.Name,
		Cores:               t.spec.Cores,
		Machine:             t.spec.Machine,
		Host:                t.spec.Host.String(),
		DotNet:              t.spec.DotNet,
		WCF:                 t.wcf,
		CPUUtil:             cpuM / float64(max(t.spec.Cores, 1)),
		ExecutingMean:       exM,
		ExecutingMax:        exX,
		QueuedMean:          qM,
		QueuedMax:           qX,
		CurrentMean:         curM,
		CurrentMax:          curX,
		AppQueuedMean:       aqM,
		AppQueuedMax:        aqX,
		PipelinesMean:       piM,
		PipelinesMax:        piX,
		OutstandingMean:     oM,
		OutstandingMax:      oX,
		InstancesMean:       inM,
		InstancesMax:        inX,
		ListenerWaitingMean: lwM,
		ListenerWaitingMax:  lwX,
		ThreadsBusyMean:     bM,
		ThreadsBusyMax:      bX,
		ThreadsMax:          thX,
		ThreadQueueMean:     tqM,
		WorkerBusyMean:      wbM,
		WorkerBusyMax:       wbX,
		WorkersMean:         wkM,
		WorkersMax:          wkX,
		IOBusyMean:          ibM,
		IOBusyMax:           ibX,
		IOThreadsMean:       ioM,
		IOThreadsMax:        ioX,
		MemoryMaxMB:         memX / (1 << 20),
		Completed:           t.completed.Load(),
		Rejected:            t.rejected.Load(),
		Aborted:             t.aborted.Load(),
		WastedCPUSeconds:    time.Duration(t.wastedNS.Load()).Seconds(),
	}
	t.counts.Fill(&r, perS)
	if t.resp.Count() > 0 {
		r.ResponseMean = t.resp.Mean().Seconds()
		r.ResponseP50 = t.resp.Quantile(0.5).Seconds()
		r.ResponseP99 = t.resp.Quantile(0.99).Seconds()
	}
	if t.served > 0 {
		r.PWait = float64(t.waited) / float64(t.served)
	}
	return r
}

// ---------------------------------------------------------------------------
// the HTTP handler

const (
	hdrSpec    = "X-Tsim-Call"    // index of the model.Call that brought the request
	hdrRoot    = "X-Tsim-Root"    // top-level request, for the response-time breakdown
	hdrParent  = "X-Tsim-Parent"  // calling job, to tell whether anybody still waits
	hdrExtra   = "X-Tsim-Extra"   // extra decode CPU (per-call proxy session setup), simulated ns
	hdrOutcome = "X-Tsim-Outcome" // how the server side ended
	hdrUser    = "X-Tsim-User"    // the load's user, for a load agent's per-user proxies
	hdrMsg     = "X-Tsim-Msg"     // a proxy's own message (model.MsgKind): a negotiation leg, a close
	hdrLast    = "X-Tsim-Last"    // "1": the negotiation's last leg
)

// Outcomes on the wire. A downstream timeout or rejection travels up as in
// the model (the caller's call fails with the callee's outcome).
var outcomeStatus = [...]int{
	results.Completed: http.StatusOK,
	results.TimedOut:  http.StatusGatewayTimeout,
	results.Rejected:  http.StatusServiceUnavailable, // ASP.NET "Server Too Busy"
	results.Failed:    http.StatusInternalServerError,
}

func outcomeOf(status int) results.Outcome {
	for o, s := range outcomeStatus {
		if s == status {
			return results.Outcome(o)
		}
	}
	return results.Failed
}

var replyBody = []byte{'.'}

// ServeHTTP runs one request. The work is deliberately not tied to the
// request's context: when the caller times out and drops the connection,
// the request goes on (orphaned work, as in the model) and its reply is
// discarded. Only the run's end or an executionTimeout abort stops it.
func (t *tierRT) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt := t.rt
	if !rt.handlers.enter() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	defer rt.handlers.leave()
	if r.URL.Path == "/warm" {
		rt.warmBarrier(r)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	h := r.Header
	si, err := strconv.Atoi(h.Get(hdrSpec))
	if err != nil || si < 0 || si >= len(rt.calls) {
		http.Error(w, "realmode: bad call index", http.StatusBadRequest)
		return
	}
	j := &job{t: t, spec: rt.calls[si].spec, reqCtx: r.Context()}
	if id, err := strconv.ParseUint(h.Get(hdrRoot), 10, 64); err == nil {
		if v, ok := rt.roots.Load(id); ok {
			j.root = v.(*rootReq)
		}
	}
	if id, err := strconv.ParseUint(h.Get(hdrParent), 10, 64); err == nil && id != 0 {
		if v, ok := rt.jobs.Load(id); ok {
			j.parent = v.(*job)
		}
	}
	if ns, err := strconv.ParseInt(h.Get(hdrExtra), 10, 64); err == nil {
		j.extraCPU = time.Duration(ns)
	}
	if id, err := strconv.Atoi(h.Get(hdrUser)); err == nil && t.spec.Agent {
		j.user = rt.load.userByID(id)
	}
	if m, err := strconv.Atoi(h.Get(hdrMsg)); err == nil && m > 0 && m <= int(model.MsgClose) {
		j.msg, j.last = model.MsgKind(m), h.Get(hdrLast) == "1"
	}
	if id, err := strconv.ParseUint(h.Get(hdrProxy), 10, 64); err == nil && t.wcf && j.spec.Binding.Sessionful {
		j.sess = t.sessionFor(id, h.Get(hdrPerCall) == "1", j.spec.Binding.SessionIdleTimeout, j.msg)
	}
	var o results.Outcome
	if t.spec.OneWay() && rt.handlers.enter() {
		// A one-way operation: the handler answers once the walk has
		// accepted the request (job.accept) and the walk goes on without
		// it, as WCF's reply to a one-way request (HTTP 202) ends the HTTP
		// exchange before the operation runs; the connection is free for
		// the client's next request meanwhile.
		acked, done := make(chan struct{}), make(chan results.Outcome, 1)
		j.acked = acked
		go func() {
			defer rt.handlers.leave()
			done <- t.serve(j)
		}()
		select {
		case <-acked:
			o = results.Completed
		case o = <-done:
			select {
			case <-acked:
				o = results.Completed // answered before its operation ended
			default:
			}
		}
	} else {
		o = t.serve(j)
	}
	w.Header().Set(hdrOutcome, o.String())
	w.Header().Set("Content-Length", "1")
	w.WriteHeader(outcomeStatus[o])
	// One byte of body: the client reads it only after its receive and
	// decode phases, so the connection stays in use until then (model.call
	// holds its connection until cpDone).
	_, _ = w.Write(replyBody)
}

// warmBarrier holds a warm-up request until all n of its group arrived.
func (rt *runner) warmBarrier(r *http.Request) {
	n, _ := strconv.Atoi(r.URL.Query().Get("n"))
	id := r.URL.Query().Get("id")
	rt.warmMu.Lock()
	b := rt.warmB[id]
	if b == nil {
		b = &barrier{ch: make(chan struct{})}
		rt.warmB[id] = b
	}
	b.n++
	if b.n >= n {
		close(b.ch)
		delete(rt.warmB, id)
	}
	rt.warmMu.Unlock()
	select {
	case <-b.ch:
	case <-time.After(time.Second):
	}
}

type barrier struct {
	n  int
	ch chan struct{}
}

// ---------------------------------------------------------------------------
// jobs

// job is one request inside a tier (model.job's phases, run by one goroutine).
type job struct {
	t        *tierRT
	id       uint64
	spec     *model.Call
	root     *rootReq
	parent   *job
	reqCtx   context.Context // done when the caller stopped waiting
	ctx      context.Context // the job's own: ends at an abort or the run's end
	cancel   context.CancelCauseFunc
	extraCPU time.Duration
	msg      model.MsgKind // a call, or a negotiation leg or close of its proxy (model.Tier.WalkOf)
	last     bool          // the negotiation's last leg

	admitted  bool
	startedAt time.Duration // real instant of admission
	ended     atomic.Bool

	// The counters (model job): real instants of arrival, of the start of
	// execution and of the operation; whether it ever queued.
	arrived, execAt, opAt time.Duration
	inTier, isExec, inOp  bool
	// A one-way request (model.WCF.OneWay): acked is closed when it is
	// answered (PhaseAccept), accepted set; leftHost: its ASP.NET request
	// ended then.
	acked                  chan struct{}
	accepted               atomic.Bool
	leftHost               bool
	queued, threadRejected bool

	workerW *waiter        // its worker thread, asked for at admission and not yet granted
	held    model.Holdings // what it holds in the tier, given back in reverse (finish)
	thread  *pool
	locks   []int

	sess *sessState // its proxy's session (sessionful WCF bindings)
	user *user      // a load agent's job: the user it calls for
	conc *sem       // the instance lock it takes (concLockOf), once known
}

var (
	errAborted = errors.New("aborted by executionTimeout")
	errStopped = errors.New("run ended")
)

// orphaned reports whether nobody waits for this job's reply any more.
func (j *job) orphaned() bool {
	if j.accepted.Load() {
		return false // a one-way operation: answered, still wanted
	}
	if j.reqCtx.Err() != nil {
		return true
	}
	return j.parent != nil && j.parent.orphaned()
}

func (t *tierRT) usesWorker() bool { return t.spec.HoldsWorker() }

func (t *tierRT) handlerPool() *pool {
	if t.spec.RunsOnIO() {
		return t.io
	}
	return t.worker
}

// serve walks the job from arrival to its end and returns how it ended.
func (t *tierRT) serve(j *job) results.Outcome {
	rt := t.rt
	j.ctx, j.cancel = context.WithCancelCause(rt.workCtx)
	j.id = rt.nextID.Add(1)
	rt.jobs.Store(j.id, j)
	if t.openCh != nil {
		select {
		case <-t.openCh:
		default:
			// The host is not open yet (model tierRT.waitOpen): the
			// request waits, not yet counted at the tier.
			t0 := rt.clk.now()
			if err := t.waitOpen(j.ctx); err != nil {
				return j.finish(results.Failed)
			}
			j.charge(bdAdmit, t0)
			j.queued = true
		}
	}

	arrived := rt.clk.now()
	j.arrived = arrived
	t.cmu.Lock()
	t.counts.Arrived(rt.measuring.Load())
	t.cmu.Unlock()
	d, aw := t.arrive(j)
	switch d {
	case model.DecisionReject:
		return t.reject(j)
	case model.DecisionQueue:
		j.queued = true
		select {
		case <-aw.ch:
			if aw.drop {
				if rt.measuring.Load() {
					t.aborted.Add(1)
				}
				return j.finish(results.Failed)
			}
		case <-j.ctx.Done():
			t.admMu.Lock()
			if !j.held.Holds(model.HoldAdmission) {
				aw.gone = true
				t.lvAppQ.add(-1)
			}
			t.admMu.Unlock()
			return j.finish(results.Failed)
		}
		j.charge(bdAdmit, arrived)
	}
	j.startedAt = rt.clk.now()
	if t.spec.Admission.ExecutionTimeout > 0 {
		t.execMu.Lock()
		t.execList = append(t.execList, j)
		if !t.execArmed {
			t.execArmed = true
			t.execCh <- struct{}{}
		}
		t.execMu.Unlock()
	}
	return j.finish(j.run())
}

// waitOpen waits for the service host to open; the first request starts
// it opening (StartUp).
func (t *tierRT) waitOpen(ctx context.Context) error {
	t.openOnce.Do(func() {
		go func() {
			_ = t.rt.clk.sleep(t.rt.workCtx, t.spec.StartUp)
			close(t.openCh)
		}()
	})
	select {
	case <-t.openCh:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// arrive takes the admission decision (model.DecideClassic or
// model.DecideConcurrent) and, for a request that runs, begins its worker
// acquisition in the same critical section: the model advances an admitted
// request to its worker thread at the same instant, so the next decision
// already sees that thread busy.
func (t *tierRT) arrive(j *job) (model.Decision, *admWaiter) {
	a := &t.spec.Admission
	t.admMu.Lock()
	defer t.admMu.Unlock()
	var d model.Decision
	queued := len(t.admQ) - t.admHead
	switch a.Kind {
	case model.AdmitNone:
		d = model.DecisionRun
	case model.AdmitClassic:
		d = model.DecideClassic(t.spec.Worker.Max, t.worker.busy(), a.MinFreeThreads, queued, a.QueueLimit)
	case model.AdmitConcurrent:
		d = model.DecideConcurrent(t.executing, a.MaxExecuting, queued, a.QueueLimit, a.CountExecuting)
	}
	if d == model.DecisionReject {
		return d, nil // refused at the door: never held anything
	}
	j.inTier = true
	t.lvCur.add(1)
	t.lvQueued.add(1)
	t.lvMem.add(float64(t.spec.MemoryPerRequest))
	switch d {
	case model.DecisionRun:
		t.admitLocked(j)
	case model.DecisionQueue:
		w := &admWaiter{j: j, ch: make(chan struct{}), at: t.rt.clk.now()}
		t.admQ = append(t.admQ, w)
		t.lvAppQ.add(1)
		return d, w
	}
	return d, nil
}

// reject ends a request the tier refuses (HTTP 503).
func (t *tierRT) reject(j *job) results.Outcome {
	return j.finish(t.countRejected())
}

// countRejected counts a request refused for want of a thread (a
// bounded thread-pool queue that is full); serve's finish ends it.
func (t *tierRT) countRejected() results.Outcome {
	t.cmu.Lock()
	t.counts.Rejected()
	t.cmu.Unlock()
	if t.rt.measuring.Load() {
		t.rejected.Add(1)
	}
	return results.Rejected
}

// startExec is the request leaving the queues (model job.startExec).
func (j *job) startExec() {
	if j.isExec {
		return
	}
	t := j.t
	now := t.rt.clk.now()
	j.isExec, j.execAt = true, now
	t.lvQueued.add(-1)
	t.lvExec.add(1)
	w := t.rt.clk.toSim(now - j.arrived)
	t.cmu.Lock()
	t.counts.Waited(w, t.rt.measuring.Load())
	if t.pipes != nil {
		t.pipes.Take(t.simNow())
		t.pipesLocked()
	}
	t.cmu.Unlock()
}

// startOp and endOp bracket the operation (model job.startOp, endOp).
func (j *job) startOp() {
	t := j.t
	j.inOp, j.opAt = true, t.rt.clk.now()
	t.lvOut.add(1)
	t.cmu.Lock()
	t.counts.OpStarted(t.rt.measuring.Load())
	t.cmu.Unlock()
}

func (j *job) endOp() {
	t := j.t
	j.inOp = false
	t.lvOut.add(-1)
	d := t.rt.clk.toSim(t.rt.clk.now() - j.opAt)
	t.cmu.Lock()
	t.counts.OpEnded(d, t.rt.measuring.Load())
	t.cmu.Unlock()
}

// queue is s.acquire, noting whether the job had to wait (P(wait)).
func (j *job) queue(s *sem) func(context.Context) error {
	return func(ctx context.Context) error {
		w := s.begin()
		if w != nil {
			j.queued = true
		}
		return s.wait(ctx, w)
	}
}

// queueThread is queue for a thread pool.
func (j *job) queueThread(p *pool) func(context.Context) error {
	return func(ctx context.Context) error {
		w := p.begin()
		if w != nil {
			j.queued = true
		}
		return p.wait(ctx, w)
	}
}

func (t *tierRT) admitLocked(j *job) {
	t.executing++
	j.held.Take(model.HoldAdmission)
	if t.usesWorker() {
		j.workerW, j.threadRejected = t.worker.beginBounded()
		if j.workerW == nil && !j.threadRejected {
			j.held.Take(model.HoldWorker)
		}
		if j.workerW != nil {
			j.queued = true
		}
	}
}

// drain starts queued requests while the admission rule allows
// (model.CanDrainClassic, or the concurrency cap); one whose client has
// gone after waiting longer than ClientConnectedCheck is dropped unserved.
func (t *tierRT) drain() {
	a := &t.spec.Admission
	t.admMu.Lock()
	defer t.admMu.Unlock()
	for t.admHead < len(t.admQ) {
		ok := true
		switch a.Kind {
		case model.AdmitClassic:
			ok = model.CanDrainClassic(t.spec.Worker.Max, t.worker.busy(), a.MinFreeThreads)
		case model.AdmitConcurrent:
			ok = t.executing < a.MaxExecuting
		}
		if !ok {
			break
		}
		w := t.admQ[t.admHead]
		t.admQ[t.admHead] = nil
		t.admHead++
		if w.gone {
			continue
		}
		t.lvAppQ.add(-1)
		if cc := a.ClientConnectedCheck; cc > 0 && w.j.orphaned() && t.rt.clk.now()-w.at > t.rt.clk.toReal(cc) {
			// clientConnectedCheck: the client has gone; drop it unserved.
			w.drop = true
			close(w.ch)
			continue
		}
		t.admitLocked(w.j)
		close(w.ch)
	}
	if t.admHead > 1024 && t.admHead*2 > len(t.admQ) {
		n := copy(t.admQ, t.admQ[t.admHead:])
		clear(t.admQ[n:])
		t.admQ, t.admHead = t.admQ[:n], 0
	}
}

// execLoop is ASP.NET's executionTimeout check: once armed it ticks every
// ExecutionCheck while admitted requests exist, aborting those that have
// run ExecutionTimeout or longer (model tierRT.OnEvent evExecCheck).
func (t *tierRT) execLoop(ctx context.Context) {
	a := &t.spec.Admission
	every := a.ExecutionCheck
	if every <= 0 {
		every = 15 * time.Second
	}
	clk := t.rt.clk
	limit := clk.toReal(a.ExecutionTimeout)
	for {
		select {
		case <-t.execCh:
		case <-ctx.Done():
			return
		}
		for again := true; again; {
			if clk.sleep(ctx, every) != nil {
				return
			}
			now := clk.now()
			t.execMu.Lock()
			for t.execHead < len(t.execList) {
				j := t.execList[t.execHead]
				if j.ended.Load() {
					t.execList[t.execHead] = nil
					t.execHead++
					continue
				}
				if now-j.startedAt < limit {
					break
				}
				t.execList[t.execHead] = nil
				t.execHead++
				if t.rt.measuring.Load() {
					t.aborted.Add(1)
				}
				j.cancel(errAborted)
			}
			if t.execHead > 1024 && t.execHead*2 > len(t.execList) {
				n := copy(t.execList, t.execList[t.execHead:])
				clear(t.execList[n:])
				t.execList, t.execHead = t.execList[:n], 0
			}
			again = t.execHead < len(t.execList)
			if !again {
				t.execArmed = false
			}
			t.execMu.Unlock()
		}
	}
}

// charge adds the real time since t0 to a category of the root's breakdown.
func (j *job) charge(cat int, t0 time.Duration) {
	j.root.charge(cat, j.t.rt.clk.now()-t0)
}

// waitFor runs an acquisition and charges its wait to cat.
func (j *job) waitFor(cat int, acquire func(context.Context) error) error {
	t0 := j.t.rt.clk.now()
	err := acquire(j.ctx)
	j.charge(cat, t0)
	return err
}

// run takes the phases after admission and the steps (model job.advance).
// A non-nil context error (abort, end of run) ends the job as failed.
func (j *job) run() results.Outcome {
	if j.threadRejected {
		return j.t.countRejected() // the worker pool's bounded queue was full
	}
	walk := j.t.walk
	if j.msg != model.MsgCall {
		walk = j.t.msgWalk[j.msg-1]
	}
	for _, ph := range walk {
		if o, end := j.take(ph); end {
			return o
		}
	}
	return results.Completed
}

// take runs one phase of the tier's walk (model/walk.go), the same walk
// the simulator's job follows; end reports that the request ended there,
// with outcome o.
func (j *job) take(ph model.Phase) (o results.Outcome, end bool) {
	t := j.t
	w := t.spec.WCF
	switch ph.Kind {
	case model.PhaseAdmission:
		// decided before the walk (arrive, admitLocked)
	case model.PhaseWorker:
		// The worker thread's wait began at admission.
		if j.workerW != nil {
			err := j.waitFor(bdThread, func(ctx context.Context) error { return t.worker.wait(ctx, j.workerW) })
			// The wait is over either way: when it failed, sem.wait already
			// gave the place or the granted thread back, so finish must not
			// do it a second time (a second release of a thread granted as
			// the job's context ended panicked with the pool's lock held).
			j.workerW = nil
			if err != nil {
				return results.Failed, true
			}
			j.held.Take(model.HoldWorker)
		}
		if t.aspnet {
			j.startExec() // ASP.NET: past the queue, on its worker thread
		}
	case model.PhaseSession:
		// The proxy's session (sessionful bindings): opened by the first
		// call on the proxy, waited for by the others.
		if err := j.openSession(); err != nil {
			if errors.Is(err, errRefused) {
				return t.countRejected(), true
			}
			if errors.Is(err, errClientGone) {
				// The client gave up while the call waited for its session:
				// its channel was never accepted; dropped (model
				// job.clientGone).
				if t.rt.measuring.Load() {
					t.aborted.Add(1)
				}
			}
			return results.Failed, true
		}
	case model.PhaseInstance:
		switch {
		case w.Instancing == model.SingleInstance:
			t.instMu.Lock()
			if !t.singleInstance {
				iw := t.instances.begin()
				t.instMu.Unlock()
				j.queued = j.queued || iw != nil
				if err := j.waitFor(bdThrottle, func(ctx context.Context) error { return t.instances.wait(ctx, iw) }); err != nil {
					return results.Failed, true
				}
				t.instMu.Lock()
				t.singleInstance = true // the Single instance lives for the run
			}
			t.instMu.Unlock()
		case w.Instancing == model.PerCall || !j.sessionful():
			// PerCall, or PerSession without a session: an instance per
			// call. (A session keeps its own PerSession instance.)
			if err := j.waitFor(bdThrottle, j.queue(t.instances)); err != nil {
				return results.Failed, true
			}
			j.held.Take(model.HoldInstance)
		}
	case model.PhaseCallSlot:
		if err := j.waitFor(bdThrottle, j.queue(t.calls)); err != nil {
			return results.Failed, true
		}
		j.held.Take(model.HoldCallSlot)
	case model.PhaseChannel:
		// A session's PerSession instance, one call at a time, before
		// decoding (model.Tier.Walk).
		if l := j.lockBeforeDecode(); l != nil {
			j.conc = l
			if err := j.waitFor(bdLock, j.queue(l)); err != nil {
				return results.Failed, true
			}
			j.held.Take(model.HoldChannel)
		}
	case model.PhaseConcurrency:
		// The singleton's lock, taken after decoding (model.Tier.Walk); a
		// request that finds it taken is paused without its thread (model
		// job.pause) and takes one again once it holds the lock.
		if l := j.lockAfterDecode(); l != nil {
			j.conc = l
			lw := l.begin()
			paused := false
			if lw != nil {
				j.queued = true
				if j.held.Drop(model.HoldThread) {
					j.thread.release()
					paused = true
					t.drain()
				}
			}
			if err := j.waitFor(bdLock, func(ctx context.Context) error { return l.wait(ctx, lw) }); err != nil {
				return results.Failed, true
			}
			j.held.Take(model.HoldInstanceLock)
			if paused {
				if err := j.waitFor(bdThread, j.queueThread(j.thread)); err != nil {
					return results.Failed, true
				}
				j.held.Take(model.HoldThread)
			}
			if !t.aspnet {
				j.startExec() // past its instance lock, on its thread
			}
		}
	case model.PhaseActivate:
		if need := w.ActivateCPU(j.createsInstance()); need > 0 {
			if j.useCPU(need) != nil {
				return results.Failed, true
			}
		}
	case model.PhaseGate:
		if err := j.waitFor(bdThrottle, j.queue(t.gates[ph.Gate])); err != nil {
			return results.Failed, true
		}
		j.held.TakeGate()
	case model.PhaseThread:
		p := t.handlerPool()
		j.thread = p
		if p == t.worker && j.held.Holds(model.HoldWorker) {
			// An ASP.NET page runs on the worker thread it was given.
			j.held.Move(model.HoldWorker, model.HoldThread)
		} else {
			var tw *waiter
			if t.usesWorker() {
				tw = p.begin()
			} else {
				var rejected bool
				if tw, rejected = p.beginBounded(); rejected {
					return t.countRejected(), true // its first thread: the pool's queue is full
				}
			}
			j.queued = j.queued || tw != nil
			if err := j.waitFor(bdThread, func(ctx context.Context) error { return p.wait(ctx, tw) }); err != nil {
				return results.Failed, true
			}
			j.held.Take(model.HoldThread)
		}
		if !t.aspnet && (!t.wcf || j.lockAfterDecode() == nil) {
			j.startExec() // elsewhere: on the thread its operation runs on (once past its instance lock, if it takes one)
		}
	case model.PhaseNegotiate:
		if j.last && t.wcf && j.sess != nil {
			t.sessMu.Lock()
			ok := t.pendLocked(j.sess)
			t.sessMu.Unlock()
			if !ok {
				return results.Failed, true // QuotaExceeded: SecurityNegotiationException at the client
			}
		}
	case model.PhaseSessionClose:
		if j.sess != nil {
			t.sessMu.Lock()
			t.closeSessionLocked(j.sess) // the Cancel ends the session
			t.sessMu.Unlock()
		}
	case model.PhaseDecode:
		need := j.extraCPU
		if j.msg == model.MsgCall {
			need += j.spec.Binding.Cost(j.spec.RequestKB)
		}
		if need > 0 {
			if j.useCPU(need) != nil {
				return results.Failed, true
			}
		}
	case model.PhaseAccept:
		j.accept()
	case model.PhaseSteps:
		return j.steps()
	case model.PhaseEncode:
		if t.spec.OneWay() {
			break // no reply message
		}
		if need := j.spec.Binding.Cost(j.spec.ReplyKB); need > 0 {
			if j.useCPU(need) != nil {
				return results.Failed, true
			}
		}
	case model.PhaseDone:
		return results.Completed, true
	}
	return 0, false
}

// steps runs the operation's steps.
func (j *job) steps() (o results.Outcome, end bool) {
	t := j.t
	j.startOp()
	for si := range t.spec.Steps {
		st := &t.spec.Steps[si]
		switch st.Kind {
		case model.StepCPU:
			if j.useCPU(t.demand[si].sample()) != nil {
				return results.Failed, true
			}
		case model.StepWait:
			d := t.demand[si].sample()
			t0 := t.rt.clk.now()
			err := t.rt.clk.sleep(j.ctx, d)
			j.charge(bdExternal, t0)
			if err != nil {
				return results.Failed, true
			}
		case model.StepLock:
			if err := j.waitFor(bdLock, j.queue(t.locks[st.Lock])); err != nil {
				return results.Failed, true
			}
			j.held.TakeLock(st.Lock)
		case model.StepUnlock:
			j.unlock(st.Lock)
		case model.StepCall:
			o, err := j.call(st.Call)
			if err != nil {
				return results.Failed, true
			}
			if o != results.Completed {
				return o, true
			}
		}
	}
	j.endOp()
	return 0, false
}

// useCPU runs a CPU demand of the job on its tier; work done for nobody
// (orphaned) is counted as wasted, as in the model.
func (j *job) useCPU(d time.Duration) error {
	err := j.t.useCPU(j.ctx, d, j.root)
	if err == nil && j.orphaned() && j.t.rt.measuring.Load() {
		j.t.wastedNS.Add(int64(d))
	}
	return err
}

// useCPU serves a CPU demand on the tier's cores. With CPUCores it waits
// for a core (FIFO), then holds it for the demand: first come, first served
// per core, not the model's processor sharing (see the package
// documentation for what differs); with CPUSharing it is processor sharing.
func (t *tierRT) useCPU(ctx context.Context, d time.Duration, root *rootReq) error {
	clk := t.rt.clk
	t0 := clk.now()
	if t.ps != nil {
		err := t.ps.use(ctx, clk.toReal(d), t.share)
		el := clk.now() - t0
		need := clk.toReal(d)
		root.charge(bdCPU, min(el, need))
		if el > need {
			root.charge(bdCPUWait, el-need)
		}
		return err
	}
	if err := t.cores.acquire(ctx); err != nil {
		root.charge(bdCPUWait, clk.now()-t0)
		return err
	}
	if t.share != nil {
		t.lvCPU.add(1) // its own core of the shared machine's
	}
	t1 := clk.now()
	root.charge(bdCPUWait, t1-t0)
	err := clk.sleep(ctx, d)
	t.cores.release()
	if t.share != nil {
		t.lvCPU.add(-1)
	}
	root.charge(bdCPU, clk.now()-t1)
	return err
}

func (j *job) unlock(l int) {
	if j.held.DropLock(l) {
		j.t.locks[l].release()
	}
}

// call makes a downstream call (model job.startCall/afterCall): an
// asynchronous handler returns its thread while it waits, a reentrant
// instance its lock; both are taken back before the job goes on. The error
// is the job's own context ending (abort or end of run).
func (j *job) call(spec *model.Call) (results.Outcome, error) {
	t := j.t
	rt := t.rt
	async := t.spec.Async
	reentrant := t.spec.WCF != nil && t.spec.WCF.Concurrency == model.ConcurrencyReentrant
	if async && j.held.Drop(model.HoldThread) {
		j.thread.release()
		t.drain()
	}
	if reentrant && j.held.Drop(model.HoldInstanceLock) {
		j.conc.release()
	}
	o, gone := rt.doCall(j.ctx, rt.callOf[spec], t, j, j.user, j.root)
	if gone {
		return results.Failed, context.Cause(j.ctx)
	}
	if async && !j.held.Holds(model.HoldThread) {
		if err := j.waitFor(bdThread, j.queueThread(j.thread)); err != nil {
			return results.Failed, err
		}
		j.held.Take(model.HoldThread)
	}
	if reentrant && !j.held.Holds(model.HoldInstanceLock) && j.conc != nil {
		if err := j.waitFor(bdLock, j.queue(j.conc)); err != nil {
			return results.Failed, err
		}
		j.held.Take(model.HoldInstanceLock)
	}
	return o, nil
}

// endRequest ends the request's counters (model job.endRequest).
func (j *job) endRequest(now time.Duration) {
	t := j.t
	t.lvCur.add(-1)
	if !j.isExec {
		t.lvQueued.add(-1)
		return
	}
	t.lvExec.add(-1)
	d := t.rt.clk.toSim(now - j.execAt)
	t.cmu.Lock()
	t.counts.Executed(d, t.rt.measuring.Load())
	if t.pipes != nil {
		t.pipes.Return(t.simNow())
		t.pipesLocked()
	}
	t.cmu.Unlock()
}

// accept answers a one-way request (model job.accept): on an ASP.NET host
// the request ends, giving back its worker thread and its admission; the
// handler replies (acked) while the walk goes on.
func (j *job) accept() {
	t := j.t
	if t.aspnet {
		if j.inTier {
			j.endRequest(t.rt.clk.now())
			j.leftHost = true
		}
		if j.held.Drop(model.HoldWorker) {
			t.worker.release()
		}
		if j.held.Drop(model.HoldAdmission) {
			t.admMu.Lock()
			t.executing--
			t.admMu.Unlock()
		}
		t.drain()
	}
	if j.acked != nil {
		j.accepted.Store(true)
		close(j.acked)
		j.acked = nil
	}
}

// Give gives back one of the job's holdings (model.Holdings.Release).
func (j *job) Give(k model.Hold, i int) {
	t := j.t
	switch k {
	case model.HoldLock:
		t.locks[i].release()
	case model.HoldInstanceLock, model.HoldChannel:
		j.conc.release()
	case model.HoldThread:
		j.thread.release()
	case model.HoldGate:
		t.gates[i].release()
	case model.HoldCallSlot:
		t.calls.release()
	case model.HoldInstance:
		t.instances.release()
	case model.HoldSession:
		if !j.keepsSession() {
			t.sessMu.Lock()
			t.closeSessionLocked(j.sess)
			t.sessMu.Unlock()
		}
	case model.HoldWorker:
		t.worker.release()
	case model.HoldAdmission:
		t.admMu.Lock()
		t.executing--
		t.admMu.Unlock()
	}
}

// finish gives back what the job holds, in the reverse of the walk's
// order (model.Holdings), and records the end.
func (j *job) finish(o results.Outcome) results.Outcome {
	t := j.t
	rt := t.rt
	j.ended.Store(true)
	if j.workerW != nil {
		// Still queued for its worker (abort or end of run): give up the
		// place, or the thread if it was granted meanwhile.
		t.worker.mu.Lock()
		j.workerW.Cancel()
		t.worker.mu.Unlock()
		j.workerW = nil
	}
	j.held.Release(j)
	if j.inOp {
		j.endOp()
	}
	now := rt.clk.now()
	if j.inTier {
		t.lvMem.add(-float64(t.spec.MemoryPerRequest))
		if !j.leftHost {
			j.endRequest(now)
		}
	}
	t.cmu.Lock()
	if o == results.Completed && rt.measuring.Load() && j.msg == model.MsgCall {
		t.resp.Record(rt.clk.toSim(now - j.arrived))
		t.served++
		if j.queued {
			t.waited++
		}
	}
	t.cmu.Unlock()
	if o == results.Completed && rt.measuring.Load() && j.msg == model.MsgCall {
		t.completed.Add(1)
		if t.entry {
			rt.entryDone.Add(1)
		}
	}
	j.leaveSession()
	t.drain()
	rt.jobs.Delete(j.id)
	j.cancel(nil)
	return o
}

// rmachine is a machine several tiers share (model.Tier.Machine): one set
// of cores, or one processor-sharing CPU, for all of them.
type rmachine struct {
	id    int
	cores *sem
	ps    *psCPU
}

// machine returns the shared machine of spec, creating it for the first of
// its tiers (whose discipline it takes; format checks that they agree).
func (rt *runner) machine(spec *model.Tier) *rmachine {
	for _, m := range rt.machines {
		if m.id == spec.Machine {
			return m
		}
	}
	m := &rmachine{id: spec.Machine, cores: newSem(max(spec.Cores, 1))}
	if rt.opt.CPU == CPUSharing && spec.CPU != model.CPUFCFS {
		m.ps = newPSCPU(rt.clk, spec.Cores)
	}
	rt.machines = append(rt.machines, m)
	return m
}
