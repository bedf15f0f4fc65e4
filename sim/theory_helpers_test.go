package sim

import (
	"math"
	"testing"
)

// The small queueing models of theory_test.go, written directly on the
// Engine: one station (c FCFS servers with an optional capacity, or a
// processor-sharing server), fed by a Poisson source or by the N users of a
// closed loop. Every model measures the same things over one observation
// window [warm, end) (see thObs), so each theory test also checks Little's
// law on it.

// Event kinds of the models.
const (
	thArrive    int32 = iota // a Poisson arrival (source)
	thDepart                 // a service completes (station)
	thThinkDone              // a user's think time ends (closed loop)
	thWarm                   // the warm-up ends: start observing
	thEnd                    // the observation window ends
)

// thDist parses a service-time distribution fixed in a test. The models
// draw from sim's own samplers, so the theory checks also cover them.
func thDist(s string) Dist { return MustParseDist(s) }

// thMean returns the mean of d in seconds.
func thMean(d Dist) float64 { return d.Mean().Seconds() }

// thSecondMoment returns E[S²] = Var S + E[S]² = (1+cv²)·E[S]², in s².
func thSecondMoment(d Dist) float64 {
	m, cv := thMean(d), d.CV()
	return (1 + cv*cv) * m * m
}

// thCustomer is one customer (or, in the closed loop, one user). The models
// recycle them, so a run allocates only while its population grows.
type thCustomer struct {
	arrived, started Time
	tagged           bool // arrived inside the observation window
	job              PSJob
	next             *thCustomer // free list
}

// thFIFO is a ring buffer of waiting customers.
type thFIFO struct {
	buf     []*thCustomer
	head, n int
}

func (q *thFIFO) push(c *thCustomer) {
	if q.n == len(q.buf) {
		nb := make([]*thCustomer, max(8, 2*len(q.buf)))
		for i := range q.n {
			nb[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = c
	q.n++
}

func (q *thFIFO) pop() *thCustomer {
	c := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return c
}

// thObs observes one station over the window [warm, end).
//
// A customer is tagged if it arrives in the window. W and Wq are averaged
// over the tagged customers, each followed to its departure even after end
// (the run goes on until the last tagged customer has left), so long
// sojourns are not censored. L is the time average of the number in system
// over the window (a Level reset at warm). In steady state
// E[∫_window N dt] = λ·|window|·E[W] exactly (Little 1961), so per run
// L − λ̂·Ŵ has mean zero.
//
// The window also carries Little's law as a sample-path identity
// (Stidham 1974): ∫_warm^end N(t) dt = Σ_i |[a_i, d_i) ∩ [warm, end)|,
// where the right side is summed in whole nanoseconds as customers leave
// (and, at end, for those still present).
type thObs struct {
	warm, end Time
	closed    bool // the window has ended

	number  Level
	present int64
	clipSum int64 // Σ over present customers of max(arrived, warm), ns
	path    int64 // Σ over customers of their time in the window, ns

	offered, blocked int64 // tagged arrivals, and those turned away
	open             int64 // tagged customers still in the system
	resp, wait       Tally // of tagged customers, s

	levelArea float64 // ∫ N dt over the window according to number, ns
}

func (o *thObs) inWindow(now Time) bool { return now >= o.warm && now < o.end }

func (o *thObs) enter(now Time, c *thCustomer) {
	o.present++
	o.clipSum += int64(max(now, o.warm))
	o.number.Set(now, float64(o.present))
	if c.tagged {
		o.open++
	}
}

func (o *thObs) leave(now Time, c *thCustomer) {
	from := max(c.arrived, o.warm)
	o.present--
	o.clipSum -= int64(from)
	if !o.closed && now > from {
		o.path += int64(now - from)
	}
	o.number.Set(now, float64(o.present))
	if c.tagged {
		o.open--
		o.resp.Add(now.Sub(c.arrived).Seconds())
	}
}

// onWarm starts the window (a ClassSample event at warm, after the
// arrivals and departures of that instant).
func (o *thObs) onWarm(now Time) { o.number.Reset(now) }

// onEnd closes the window.
func (o *thObs) onEnd(now Time) {
	o.levelArea = o.number.Mean(now) * float64(now-o.warm)
	o.path += o.present*int64(now) - o.clipSum
	o.closed = true
}

// thRep is the outcome of one replication. Times are seconds.
type thRep struct {
	W, Wq  float64 // mean response and waiting time of tagged customers
	L      float64 // time-average number in system over the window
	Lambda float64 // accepted tagged arrivals per second (= throughput)
	Block  float64 // fraction of tagged arrivals turned away
	Little float64 // L − Lambda·W: mean zero by Little's law
	Area   float64 // ∫ N dt over the window from the Level, s
	Path   float64 // Σ of the customers' time in the window, s
	Events uint64
	Hash   uint64
}

// thSink is where a station sends a customer that has left.
type thSink interface {
	left(e *Engine, c *thCustomer)
}

// thStation is a service station: `servers` FCFS servers and a FIFO
// waiting line with at most `capacity` customers in system (0: no limit),
// or, if ps is set, a processor-sharing server with `servers` cores.
type thStation struct {
	obs      thObs
	servers  int
	capacity int
	ps       *PS
	svc      Sampler
	busy     int
	queue    thFIFO
	out      thSink
	// departures counts every customer that has left.
	departures int64
	// onResp, if set, sees the response time (s) of every tagged customer
	// as it leaves.
	onResp func(w float64)
}

func newThStation(e *Engine, servers, capacity int, ps bool, svc Dist, warm, end Time) *thStation {
	s := &thStation{servers: servers, capacity: capacity, svc: svc.Sampler(e.Stream("station/service"))}
	if ps {
		s.ps = NewPS(e, servers)
	}
	s.obs.warm, s.obs.end = warm, end
	e.ScheduleAt(warm, ClassSample, s, thWarm, nil)
	e.ScheduleAt(end, ClassSample, s, thEnd, nil)
	return s
}

// onArrival admits c, or reports false if the station is full (the caller
// keeps c).
func (s *thStation) onArrival(e *Engine, c *thCustomer) bool {
	now := e.Now()
	c.arrived = now
	c.tagged = s.obs.inWindow(now)
	if c.tagged {
		s.obs.offered++
	}
	if s.capacity > 0 && s.obs.present >= int64(s.capacity) {
		if c.tagged {
			s.obs.blocked++
		}
		return false
	}
	s.obs.enter(now, c)
	switch {
	case s.ps != nil:
		s.ps.Start(&c.job, s.svc.Sample(), s, thDepart, c)
	case s.busy < s.servers:
		s.startService(e, c)
	default:
		s.queue.push(c)
	}
	return true
}

func (s *thStation) startService(e *Engine, c *thCustomer) {
	c.started = e.Now()
	if c.tagged {
		s.obs.wait.Add(c.started.Sub(c.arrived).Seconds())
	}
	s.busy++
	e.Schedule(s.svc.Sample(), ClassCompletion, s, thDepart, c)
}

func (s *thStation) onServiceDone(e *Engine, c *thCustomer) {
	s.obs.leave(e.Now(), c)
	s.departures++
	if s.onResp != nil && c.tagged {
		s.onResp(e.Now().Sub(c.arrived).Seconds())
	}
	if s.ps == nil {
		s.busy--
		if s.queue.n > 0 {
			s.startService(e, s.queue.pop())
		}
	}
	s.out.left(e, c)
	s.maybeStop(e)
}

// maybeStop ends the run once the window is over and every tagged
// customer has left.
func (s *thStation) maybeStop(e *Engine) {
	if s.obs.closed && s.obs.open == 0 {
		e.Stop()
	}
}

func (s *thStation) OnEvent(e *Engine, kind int32, arg any) {
	switch kind {
	case thDepart:
		s.onServiceDone(e, arg.(*thCustomer))
	case thWarm:
		s.obs.onWarm(e.Now())
	case thEnd:
		s.obs.onEnd(e.Now())
		s.maybeStop(e)
	}
}

// rep summarises the run.
func (s *thStation) rep(e *Engine) thRep {
	o := &s.obs
	span := o.end.Sub(o.warm).Seconds()
	r := thRep{
		W:      o.resp.Mean(),
		L:      o.levelArea / float64(o.end-o.warm),
		Lambda: float64(o.offered-o.blocked) / span,
		Area:   o.levelArea / 1e9,
		Path:   float64(o.path) / 1e9,
		Events: e.Events(),
		Hash:   e.TraceHash(),
	}
	if o.wait.Count() > 0 {
		r.Wq = o.wait.Mean()
	}
	if o.offered > 0 {
		r.Block = float64(o.blocked) / float64(o.offered)
	}
	r.Little = r.L - r.Lambda*r.W
	return r
}

// thSource is a Poisson source of rate lambda feeding a station; it also
// takes departed customers back into its free list.
type thSource struct {
	st       *thStation
	lambda   float64
	arrivals *Stream
	free     *thCustomer
}

func (src *thSource) OnEvent(e *Engine, _ int32, _ any) {
	c := src.free
	if c != nil {
		src.free = c.next
	} else {
		c = new(thCustomer)
	}
	if !src.st.onArrival(e, c) {
		src.left(e, c)
	}
	src.schedule(e)
}

func (src *thSource) schedule(e *Engine) {
	e.Schedule(FromSeconds(src.arrivals.ExpFloat64()/src.lambda), ClassArrival, src, thArrive, nil)
}

func (src *thSource) left(_ *Engine, c *thCustomer) {
	c.next = src.free
	src.free = c
}

// thOpenSpec describes an open model: Poisson arrivals of rate Lambda into
// one station. Times are seconds.
type thOpenSpec struct {
	Lambda   float64
	Servers  int
	Capacity int  // 0: no limit
	PS       bool // processor sharing instead of FCFS
	Service  Dist
	Warm     float64 // warm-up deleted
	Span     float64 // length of the observation window
}

// thRunOpen runs one replication of spec with the given seed.
func thRunOpen(spec thOpenSpec, seed uint64) thRep {
	e := New(seed)
	warm := Time(0).Add(FromSeconds(spec.Warm))
	st := newThStation(e, spec.Servers, spec.Capacity, spec.PS, spec.Service, warm, warm.Add(FromSeconds(spec.Span)))
	src := &thSource{st: st, lambda: spec.Lambda, arrivals: e.Stream("source/arrivals")}
	st.out = src
	src.schedule(e)
	e.Run(MaxTime)
	return st.rep(e)
}

// thClosed is a closed loop: N users alternate an exponential think time of
// mean Z (an infinite-server delay station) and one visit to the station.
type thClosed struct {
	st    *thStation
	z     float64
	think *Stream
}

func (u *thClosed) OnEvent(e *Engine, _ int32, arg any) {
	u.st.onArrival(e, arg.(*thCustomer)) // no capacity: always admitted
}

func (u *thClosed) left(e *Engine, c *thCustomer) {
	e.Schedule(FromSeconds(u.think.ExpFloat64()*u.z), ClassArrival, u, thThinkDone, c)
}

// newThClosed builds the closed loop of n users, think time exp(z), and one
// FCFS exponential server of mean service d, observed over
// [warm, warm+span) (seconds). All users start thinking at time 0.
func newThClosed(e *Engine, n int, z, d, warm, span float64) *thClosed {
	w := Time(0).Add(FromSeconds(warm))
	st := newThStation(e, 1, 0, false, Exp(FromSeconds(d)), w, w.Add(FromSeconds(span)))
	u := &thClosed{st: st, z: z, think: e.Stream("users/think")}
	st.out = u
	for range n {
		u.left(e, new(thCustomer))
	}
	return u
}

// thRunClosed runs one replication of the closed loop (see newThClosed).
func thRunClosed(n int, z, d, warm, span float64, seed uint64) thRep {
	e := New(seed)
	u := newThClosed(e, n, z, d, warm, span)
	e.Run(MaxTime)
	return u.st.rep(e)
}

// thReplicate runs reps replications with seeds seed0, seed0+1, ... one
// after another.
func thReplicate(reps int, seed0 uint64, run func(seed uint64) thRep) []thRep {
	out := make([]thRep, reps)
	for i := range out {
		out[i] = run(seed0 + uint64(i))
	}
	return out
}

// thCol extracts one quantity from every replication.
func thCol(reps []thRep, f func(thRep) float64) []float64 {
	xs := make([]float64, len(reps))
	for i, r := range reps {
		xs[i] = f(r)
	}
	return xs
}

// thLevel is the confidence level of every theory check.
const thLevel = 0.99

// thCheck is one theoretical value a replication quantity must match.
type thCheck struct {
	what string
	col  func(thRep) float64
	want float64
}

// thConfirmSeeds offsets the seeds of a confirmation run far from every
// first-stage seed.
const thConfirmSeeds = 1 << 32

// thVerify runs reps replications of run (seeds seed0, seed0+1, ...) and
// checks that the 99% Student t interval over the replications of each
// quantity covers its theoretical value; it adds Little's law (thLittle) to
// every model. It returns the replications.
//
// With some sixty 99% checks in this file, a correct engine would miss one
// by chance about every other time its random streams change. So a miss is
// confirmed before it fails the test: the quantity is estimated again from
// 2·reps fresh replications (seeds seed0 + 2^32 + i), and the test fails
// only if that 99% interval misses too. On a correct engine a check then
// fails with probability about 0.01·0.01; a real bias of the size the first
// interval can see fails the larger second one even more surely.
func thVerify(t *testing.T, reps int, seed0 uint64, run func(seed uint64) thRep, checks ...thCheck) []thRep {
	t.Helper()
	checks = append(checks, thCheck{"Little L − λW", func(r thRep) float64 { return r.Little }, 0})
	first := thReplicate(reps, seed0, run)
	thPathLittle(t, first)
	var missed []thCheck
	for _, c := range checks {
		if !thCovers(t, c.what, thCol(first, c.col), c.want) {
			missed = append(missed, c)
		}
	}
	if len(missed) == 0 {
		return first
	}
	second := thReplicate(2*reps, seed0+thConfirmSeeds, run)
	thPathLittle(t, second)
	for _, c := range missed {
		if !thCovers(t, c.what+" (confirm)", thCol(second, c.col), c.want) {
			t.Errorf("%s: the 99%% intervals of %d and then %d fresh replications both miss the theoretical %.5f",
				c.what, reps, 2*reps, c.want)
		}
	}
	return first
}

// thCovers reports whether the 99% Student t interval over the replication
// values xs covers want, and logs both.
func thCovers(t *testing.T, what string, xs []float64, want float64) bool {
	t.Helper()
	mean, half := MeanCI(xs, thLevel)
	ok := math.Abs(mean-want) <= half
	mark := ""
	if !ok {
		mark = "  MISS"
	}
	t.Logf("%-30s %10.5f ± %.5f (99%%, %d reps)  theory %10.5f%s", what, mean, half, len(xs), want, mark)
	return ok
}

// thPathLittle checks Little's law on every replication as the sample-path
// identity ∫N dt = Σ time in window. Both sides are sums of whole
// nanoseconds; the Level's float sum and one division and multiplication
// round them, hence the 1e-12.
func thPathLittle(t *testing.T, reps []thRep) {
	t.Helper()
	for i, r := range reps {
		if math.Abs(r.Area-r.Path) > 1e-12*r.Path {
			t.Errorf("rep %d: ∫N dt = %.9f s, Σ time in window = %.9f s", i, r.Area, r.Path)
		}
	}
}

// thScale returns full, or full/5 under -short.
func thScale(full float64) float64 {
	if testing.Short() {
		return full / 5
	}
	return full
}
