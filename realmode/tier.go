package realmode

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// tierRT is one tier running for real: an HTTP server on a loopback port
// whose handler walks a request through the tier's walk (model.Tier.Walk)
// in one goroutine, waiting on real FIFO semaphores where the simulator
// waits for slots. What each phase asks is the model's (model.Tier.Need).
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

	// mu guards the tier's state (what the walk's decisions read and
	// change), its admission queue and its WCF sessions (session.go).
	mu      sync.Mutex
	st      model.TierState
	admQ    []*admWaiter
	admHead int
	sessMap map[uint64]*sessState // the client proxies seen, by id

	model.Throttles[*sem]
	sessions *sem

	// StartUp (model.Tier.StartUp): openCh is closed once the host has
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

	walk    []model.Phase // spec.Walk(), once per run
	msgWalk [2][]model.Phase

	lv     [model.NumLv]level // the levels (docs/counters.md)
	cpuRep int

	cmu    sync.Mutex // guards what follows
	pipes  *model.AppPool
	counts model.TierCounts // the requests' counts and durations, as the simulator keeps them
	ends   model.TierEnds   // completed, rejected, aborted, wasted CPU, response times

	cont *contRT // the contention mechanisms (contention.go); nil when all are off
}

type admWaiter struct {
	j    *job
	ch   chan struct{}
	at   time.Duration // simulated instant it was queued
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
	t := &tierRT{rt: rt, idx: i, spec: spec, wcf: spec.WCF != nil, execCh: make(chan struct{}, 1), ends: model.NewTierEnds()}
	if spec.StartUp > 0 {
		t.openCh = make(chan struct{})
	}
	for k := range t.lv {
		t.lv[k].clk = rt.clk
	}
	lvCPU := &t.lv[model.LvCPU]
	if spec.Machine > 0 {
		// A machine shared with other tiers (machine.go): one CPU; each
		// tier's level counts its own demands.
		m := rt.machine(spec)
		t.cores, t.ps = m.cores, m.ps
		t.share = &cpuShare{lv: lvCPU}
		if t.ps != nil {
			t.ps.mu.Lock()
			t.ps.shares = append(t.ps.shares, t.share)
			t.ps.mu.Unlock()
		}
	} else {
		t.cores = newSem(max(spec.Cores, 1))
		t.cores.onChange = func(inUse, _ int) {
			lvCPU.add(float64(inUse - t.cpuRep))
			t.cpuRep = inUse
		}
		if rt.opt.CPU == CPUSharing && spec.CPU != model.CPUFCFS {
			t.ps = newPSCPU(rt.clk, spec.Cores)
			t.ps.onChange = func(n int) {
				busy := min(n, max(spec.Cores, 1))
				lvCPU.add(float64(busy - t.cpuRep))
				t.cpuRep = busy
			}
		}
	}
	t.worker = newTierPool(rt, t, "worker", spec.Worker)
	t.io = newTierPool(rt, t, "io", spec.IO)
	onThreads := func(busy, threads model.Lv) func(dBusy, dThreads, dWaiting int) {
		return func(dBusy, dThreads, dWaiting int) {
			t.lv[model.LvThreadsBusy].add(float64(dBusy))
			t.lv[model.LvThreads].add(float64(dThreads))
			t.lv[model.LvThreadQueue].add(float64(dWaiting))
			t.lv[busy].add(float64(dBusy))
			t.lv[threads].add(float64(dThreads))
			if dThreads != 0 && t.cont != nil {
				t.cont.memChanged()
			}
		}
	}
	t.worker.onChange, t.io.onChange = onThreads(model.LvWorkerBusy, model.LvWorkers), onThreads(model.LvIOBusy, model.LvIOThreads)
	t.walk = spec.Walk()
	t.msgWalk = [2][]model.Phase{spec.WalkOf(model.MsgNegotiate), spec.WalkOf(model.MsgClose)}
	for _, n := range spec.Gates {
		t.Gates = append(t.Gates, newSem(n))
	}
	if spec.IsASPNet() {
		t.pipes = model.NewAppPool(model.LegacyASPNet(spec.DotNet))
	}
	if w := spec.WCF; w != nil {
		t.Calls = newSem(w.MaxCalls)
		t.Instances = newSem(w.MaxInstances)
		instRep := 0
		t.Instances.onChange = func(inUse, _ int) {
			t.lv[model.LvInstances].add(float64(inUse - instRep))
			instRep = inUse
		}
		t.sessions = newSem(w.MaxSessions)
		t.sessMap = map[uint64]*sessState{}
		if w.SingleLock() {
			t.Singleton = newSem(1)
		}
	}
	for range spec.LockCount() {
		t.Locks = append(t.Locks, newSem(1))
	}
	t.cont = newContRT(t)
	t.demand = make([]*lockedSampler, len(spec.Steps))
	for si := range spec.Steps {
		if d, stream, ok := spec.StepDemand(si); ok {
			t.demand[si] = &lockedSampler{s: d.Sampler(rt.streams.Stream(stream))}
		}
	}
	return t
}

// listen opens the tier's loopback listener; serve runs its HTTP server.
func (t *tierRT) listen() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("realmode: tier %q: %w", t.spec.Name, err)
	}
	t.ln = fdListener{ln}
	t.url = "http://" + ln.Addr().String() + "/"
	t.srv = &http.Server{
		Handler:  t,
		ErrorLog: log.New(io.Discard, "", 0),
	}
	return nil
}

func (t *tierRT) resetStats(now time.Duration) {
	for k := range t.lv {
		t.lv[k].reset(now)
	}
	t.cmu.Lock()
	t.counts.ResetMeasured()
	t.ends.Reset()
	t.cmu.Unlock()
	if t.cont != nil {
		t.cont.reset(now)
	}
}

// simNow is the simulated instant now.
func (t *tierRT) simNow() time.Duration { return t.rt.clk.toSim(t.rt.clk.now()) }

// pipesLocked sets the Pipeline Instance Count level (t.cmu held).
func (t *tierRT) pipesLocked() {
	if t.pipes != nil {
		lv := &t.lv[model.LvPipelines]
		lv.add(float64(t.pipes.Count(t.simNow())) - lv.value())
	}
}

func (t *tierRT) sample(now time.Duration, every time.Duration, first bool) results.TierSample {
	cpu := 0.0
	a := t.lv[model.LvCPU].takeInterval(now)
	if !first && every > 0 {
		cpu = t.spec.CPUPercent(a, every)
	}
	t.cmu.Lock()
	t.pipesLocked()
	perS := 0.0
	if !first && t.rt.every > 0 {
		perS = 1 / t.rt.every.Seconds()
	}
	s := model.TierSample(func(k model.Lv) float64 { return t.lv[k].value() }, cpu, &t.counts, perS)
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
	t.cmu.Lock()
	defer t.cmu.Unlock()
	t.pipesLocked()
	perS := 0.0
	if span := t.rt.clk.simSeconds(now - t.rt.warmAt); span > 0 {
		perS = 1 / span
	}
	r := model.TierResult(t.spec, func(k model.Lv) (float64, float64) { return t.lv[k].stats(now) }, &t.counts, perS, &t.ends)
	if t.cont != nil {
		t.cont.fill(&r, now, t.rt.clk.simSeconds(now-t.rt.warmAt))
	}
	return r
}

// The tier's counters for model.Visit (model.Tally).

func (t *tierRT) Level(k model.Lv, delta float64) {
	t.lv[k].add(delta)
	if k == model.LvMemory && t.cont != nil {
		t.cont.memChanged()
	}
}

func (t *tierRT) Waited(d time.Duration) {
	t.cmu.Lock()
	t.counts.Waited(d, t.rt.measuring.Load())
	if t.pipes != nil {
		t.pipes.Take(t.simNow())
		t.pipesLocked()
	}
	t.cmu.Unlock()
}

func (t *tierRT) Executed(d time.Duration) {
	t.cmu.Lock()
	t.counts.Executed(d, t.rt.measuring.Load())
	if t.pipes != nil {
		t.pipes.Return(t.simNow())
		t.pipesLocked()
	}
	t.cmu.Unlock()
}

func (t *tierRT) OpStarted() {
	t.cmu.Lock()
	t.counts.OpStarted(t.rt.measuring.Load())
	t.cmu.Unlock()
}

func (t *tierRT) OpEnded(d time.Duration) {
	t.cmu.Lock()
	t.counts.OpEnded(d, t.rt.measuring.Load())
	t.cmu.Unlock()
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

// Outcomes on the wire. A downstream timeout or rejection travels up as
// the caller's call failing with the callee's outcome.
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
// the request goes on (orphaned work) and its reply is discarded. Only the
// run's end or an executionTimeout abort stops it.
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
	j := &job{t: t, reqCtx: r.Context()}
	j.Call = rt.calls[si].spec
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
		j.ExtraCPU = time.Duration(ns)
	}
	if id, err := strconv.Atoi(h.Get(hdrUser)); err == nil && t.spec.Agent {
		j.user = rt.load.userByID(id)
	}
	if m, err := strconv.Atoi(h.Get(hdrMsg)); err == nil && m > 0 && m <= int(model.MsgClose) {
		j.Msg, j.Last = model.MsgKind(m), h.Get(hdrLast) == "1"
	}
	if id, err := strconv.ParseUint(h.Get(hdrProxy), 10, 64); err == nil && t.wcf && j.Call.Binding.Sessionful {
		j.sess = t.sessionFor(id, h.Get(hdrPerCall) == "1", j.Call.Binding.SessionIdleTimeout, j.Msg)
		j.Session, j.Sessionful = &j.sess.Session, true
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
	// decode phases, so the connection stays in use until then, as the
	// simulator's call holds its connection until it has decoded.
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
// admission

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
			// The host is not open yet (model.Tier.StartUp): the request
			// waits, not yet counted at the tier.
			t0 := rt.clk.now()
			if err := t.waitOpen(j.ctx); err != nil {
				return j.finish(results.Failed)
			}
			j.charge(results.BdAdmit, t0)
			j.queued = true
		}
	}

	t0 := rt.clk.now()
	j.arrived = t.simNow()
	t.cmu.Lock()
	t.counts.Arrived(rt.measuring.Load())
	t.cmu.Unlock()
	if t.cont != nil && t.cont.fails() {
		// OutOfMemoryException: the process cannot commit the request's
		// memory (model.Memory); it fails before it holds anything.
		return j.finish(results.Failed)
	}
	d, aw := t.arrive(j)
	switch d {
	case model.DecisionReject:
		return t.reject(j)
	case model.DecisionQueue:
		select {
		case <-aw.ch:
			if aw.drop {
				t.countAborted()
				return j.finish(results.Failed)
			}
		case <-j.ctx.Done():
			t.mu.Lock()
			if !j.Held.Holds(model.HoldAdmission) {
				aw.gone = true
				t.lv[model.LvAppQueued].add(-1)
			}
			t.mu.Unlock()
			return j.finish(results.Failed)
		}
		j.charge(results.BdAdmit, t0)
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

// arrive takes the admission decision (model.Tier.Admit) and, for a
// request that runs, begins its worker acquisition in the same critical
// section: the simulator advances an admitted request to its worker thread
// at the same instant, so the next decision already sees that thread busy.
func (t *tierRT) arrive(j *job) (model.Decision, *admWaiter) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.spec.Admit(t.worker.busy(), t.st.Executing, len(t.admQ)-t.admHead)
	if d == model.DecisionReject {
		return d, nil // refused at the door: never held anything
	}
	j.visit.Enter(t, t.spec.MemoryPerRequest)
	switch d {
	case model.DecisionRun:
		t.admitLocked(j)
	case model.DecisionQueue:
		j.queued = true // here, under the lock: drain may admit it at once
		w := &admWaiter{j: j, ch: make(chan struct{}), at: t.simNow()}
		t.admQ = append(t.admQ, w)
		t.lv[model.LvAppQueued].add(1)
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
	if t.rt.measuring.Load() {
		t.ends.Rejected++
	}
	t.cmu.Unlock()
	return results.Rejected
}

// countAborted counts a request dropped or aborted.
func (t *tierRT) countAborted() {
	if t.rt.measuring.Load() {
		t.cmu.Lock()
		t.ends.Aborted++
		t.cmu.Unlock()
	}
}

func (t *tierRT) admitLocked(j *job) {
	t.st.Admit(&j.Req)
	if t.spec.HoldsWorker() {
		j.workerW, j.threadRejected = t.worker.beginBounded()
		if j.workerW == nil && !j.threadRejected {
			j.Held.Take(model.HoldWorker)
		}
		if j.workerW != nil {
			j.queued = true
		}
	}
}

// drain starts queued requests while the admission rule allows
// (model.Tier.CanStart); one whose client has gone after waiting longer
// than ClientConnectedCheck is dropped unserved.
func (t *tierRT) drain() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.admHead < len(t.admQ) && t.spec.CanStart(t.worker.busy(), t.st.Executing) {
		w := t.admQ[t.admHead]
		t.admQ[t.admHead] = nil
		t.admHead++
		if w.gone {
			continue
		}
		t.lv[model.LvAppQueued].add(-1)
		if t.spec.Admission.DropsQueued(w.j.orphaned(), t.simNow()-w.at) {
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
// run ExecutionTimeout or longer.
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
				if j.ended.Load() || j.accepted.Load() { // ended, or a one-way request ASP.NET has completed
					t.execList[t.execHead] = nil
					t.execHead++
					continue
				}
				if now-j.startedAt < limit {
					break
				}
				t.execList[t.execHead] = nil
				t.execHead++
				t.countAborted()
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
