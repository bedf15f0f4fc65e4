package realmode

import (
	"sync"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// rootReq is one top-level request of the load. Tiers find it by the id
// carried in a header (as a tracer would) to charge their waits to its
// response-time breakdown.
type rootReq struct {
	id    uint64
	start time.Duration // real
	mu    sync.Mutex
	done  bool
	bd    [results.BdN]time.Duration // real
}

// charge adds a real span to a category, unless the root has ended (the
// work is orphaned and on nobody's critical path any more).
func (r *rootReq) charge(cat int, d time.Duration) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if !r.done {
		r.bd[cat] += d
	}
	r.mu.Unlock()
}

// newRoot counts a new top-level request. It returns nil when the run has
// ended, or when MaxInFlight requests are already open: that request is
// counted as rejected at once (see Info.Shed).
func (rt *runner) newRoot() *rootReq {
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil
	}
	rt.generated++
	rt.watchLocked(rt.generated)
	if rt.live >= int64(rt.opt.MaxInFlight) {
		// Counted under the same lock: were the run to end between the
		// two, the shed request would stay in flight, not rejected.
		rt.shed++
		rt.live++
		rt.recordLocked(rt.clk.now(), 0, &[results.BdN]time.Duration{}, results.Rejected)
		rt.mu.Unlock()
		return nil
	}
	rt.live++
	r := &rootReq{id: rt.nextID.Add(1), start: rt.clk.now()}
	rt.roots.Store(r.id, r)
	rt.mu.Unlock()
	return r
}

// rootDone records the end of a top-level request. After the run has
// ended, ends are not counted: those requests stay in flight.
func (rt *runner) rootDone(r *rootReq, o results.Outcome) {
	rt.roots.Delete(r.id)
	now := rt.clk.now()
	r.mu.Lock()
	r.done = true
	bd := r.bd
	r.mu.Unlock()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.closed {
		return
	}
	rt.recordLocked(now, now-r.start, &bd, o)
}

// recordLocked counts an outcome at now of a request that lasted span,
// its breakdown bd (real time); rt.mu is held and the run has not ended.
func (rt *runner) recordLocked(now, span time.Duration, bd *[results.BdN]time.Duration, o results.Outcome) {
	rt.live--
	for i := range bd {
		bd[i] = rt.clk.toSim(bd[i])
	}
	rt.col.Ended(rt.clk.toSim(now), rt.clk.toSim(span), bd, o)
}

const maxPoints = 20000

// resetStats ends the warm-up: statistics restart now.
func (rt *runner) resetStats() {
	now := rt.clk.now()
	rt.mu.Lock()
	rt.measuring.Store(true)
	rt.col.StartMeasuring(rt.generated, rt.live)
	rt.entryDone.Store(0)
	rt.mu.Unlock()
	for _, t := range rt.tiers {
		t.resetStats(now)
	}
	for _, p := range rt.pools {
		p.lvInUse.reset(now)
		p.lvWaiting.reset(now)
	}
	for _, c := range rt.calls {
		c.resetStats()
	}
	for _, f := range rt.farms {
		f.resetStats(now)
	}
}

// maxSamples bounds the time series as the model does: when it fills,
// neighbouring samples are merged and the interval doubles.
const maxSamples = 4096

// sample records every tier's counters at the simulated instant at.
func (rt *runner) sample(at time.Duration, first bool) {
	now := rt.clk.now()
	s := results.Sample{T: at.Seconds(), Tiers: make([]results.TierSample, len(rt.tiers))}
	every := rt.clk.toReal(rt.every)
	for i, t := range rt.tiers {
		s.Tiers[i] = t.sample(now, every, first)
	}
	if len(rt.series) >= maxSamples {
		rt.series = results.CompactSeries(rt.series)
		rt.every *= 2
	}
	rt.series = append(rt.series, s)
}

// gate counts the HTTP handlers in progress and, once closed, lets no new
// one start, so that the end of the run can wait for all of them.
type gate struct {
	mu     sync.Mutex
	n      int
	closed bool
	idle   chan struct{}
}

func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.n++
	return true
}

func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	if g.closed && g.n == 0 && g.idle != nil {
		close(g.idle)
		g.idle = nil
	}
}

// closeAndWait refuses new handlers and waits for the running ones.
func (g *gate) closeAndWait() {
	g.mu.Lock()
	g.closed = true
	if g.n == 0 {
		g.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	g.idle = ch
	g.mu.Unlock()
	<-ch
}
