package calibrate

import (
	"fmt"
	"math"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// Measure is an estimate and the half-width of its 95% confidence
// interval from batch means (NaN when there are too few batches).
type Measure struct {
	Value, Half float64
}

// Contains reports whether x lies in the confidence interval.
func (m Measure) Contains(x float64) bool { return math.Abs(x-m.Value) <= m.Half }

// Batches is how many batches the window is cut into for the confidence
// intervals; MinRows the fewest samples a window may hold.
const (
	Batches = 10
	MinRows = 30
)

// TierEstimate is what a capture says about one tier's operation, by the
// operational laws, every figure per request of the tier and in seconds.
type TierEstimate struct {
	Tier, Machine string
	Index         int // in the topology
	Cores         int
	From          *machineCounters

	Rate Measure // X: requests per second
	Util Measure // U: the busy share of the cores (0..1)
	// CPU is U·cores/X (the utilisation law): all the CPU a request costs
	// the tier. Known is the part the experiment itself puts there (the
	// bindings' encoding and decoding, proxies), StepCPU the rest: the
	// steps' demand, before the tier's cost multiplier.
	CPU, StepCPU Measure
	Known        float64
	// Residence is the operation's time: by Little's law, the level of
	// operations under way (Calls Outstanding, Requests Executing) over
	// X, or without them the duration counter (Calls Duration, Request
	// Execution Time); AtCPU the part of it at the CPU, queueing for a
	// core included (Stretch times the CPU inside it, M/M/c).
	Residence Measure
	AtCPU     float64
	Stretch   float64
	// Calls is the time per request in calls to other tiers, from their
	// own counters (their Request Wait + Execution Time, or Calls
	// Duration) and the network the experiment gives; CallsKnown whether
	// every callee is in the capture.
	Calls      float64
	CallsKnown bool
	// ConnWait is the wait for connections per request, by Little's law
	// from tsim's Requests Waiting For A Connection (NaN when the capture
	// does not have it: a real one does not).
	ConnWait Measure
	// Wait is what is left: Residence − AtCPU − Calls − ConnWait, the
	// operation's time that no counter accounts for. NaN when a callee is
	// not in the capture.
	Wait Measure
	// Visit is the time a call to the tier takes there, arrival to reply
	// (Request Wait + Execution Time on an ASP.NET host; Calls Duration
	// and the binding's decoding and encoding on a self-hosted service).
	Visit float64
	// Duration is the duration counter's mean, weighted by the rate:
	// Residence when the capture has no level, a check on it otherwise.
	Duration  Measure
	levelSeen bool
	// Refined: the wait was corrected by simulation (refine);
	// WaitAnalytic is what it was before.
	Refined                  bool
	WaitAnalytic             Measure
	waitWritten, unexplained bool
}

// batchSums are the sums of one tier over one batch of rows: the
// interval covered (dt), core-seconds busy, requests (n = Σ X·dt), and
// the level-seconds of the operation (lv), of the requests in the tier
// (cur, ASP.NET's Requests Current) and of the calls waiting for a
// connection (cw), each over the time it was sampled; and the durations
// weighted by the rate, for a capture without the levels.
type batchSums struct {
	dt, busy, n   float64
	lv, lvdt      float64
	cur, curdt    float64
	cw, cwdt      float64
	rs            float64 // Σ R·X·dt: the duration counter
	visit, visitN float64 // Σ (wait + execution)·X·dt on an ASP.NET host
	rows          int
}

// window is the part of the capture calibrate reads: from the end of the
// warm-up to the last sample, cut into batches of time; each tier reads
// its own machine's rows in it.
type window struct {
	k     int     // batches
	from  float64 // seconds since the capture's first row
	to    float64
	start float64 // where the first batch starts: the first interval read
	every float64 // the usual interval between samples
	tiers map[int]*tierRows
}

// tierRows are the rows a tier's machine has values in, within the window.
type tierRows struct {
	rows  []int     // in order
	prev  int       // the row before the first, where its interval starts
	dt    []float64 // the interval each row's rates and durations cover
	batch []int     // the batch of each row
	every float64   // the machine's usual interval
	// gaps are intervals longer than one and a half times the usual one
	// (a capture stopped and restarted, a machine out of reach): the row
	// after each is left out, its rates spanning the gap.
	gaps, gapLine int
	gapLongest    float64
}

// machineRows are the rows in which any of machine counters m has a
// value: its samples (several machines logged apart and merged have rows
// of their own; PerfMon's first sample has levels and no rates).
func (c *Capture) machineRows(m *machineCounters) []int {
	cols := m.columns()
	var out []int
	for i := range c.T {
		for _, k := range cols {
			if !math.IsNaN(c.value(i, k)) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// newWindow takes, for each tier, the rows of its machine whose interval
// starts at or after from seconds (the first row of a machine has no
// interval, nor has the first after a gap) and cuts the window into
// Batches batches of time.
func (c *Capture) newWindow(tiers []*TierEstimate, from float64) (*window, error) {
	w := &window{from: from, k: Batches, tiers: map[int]*tierRows{}, start: math.Inf(1), to: math.Inf(-1)}
	for _, e := range tiers {
		interest := c.machineRows(e.From)
		tr := &tierRows{prev: -1, every: interval(c.T, interest)}
		for j := 1; j < len(interest); j++ {
			i, prev := interest[j], interest[j-1]
			if c.T[prev] < from-1e-9 {
				continue
			}
			d := c.T[i] - c.T[prev]
			if tr.every > 0 && d > 1.5*tr.every {
				tr.gaps++
				if d > tr.gapLongest {
					tr.gapLongest, tr.gapLine = d, c.lines[i]
				}
				continue
			}
			if tr.prev < 0 {
				tr.prev = prev
			}
			tr.rows = append(tr.rows, i)
			tr.dt = append(tr.dt, d)
		}
		if len(tr.rows) < MinRows {
			span := 0.0
			if len(interest) > 0 {
				span = c.T[interest[len(interest)-1]] - c.T[interest[0]]
			}
			return nil, fmt.Errorf("%s:%d:1: %d samples of machine %s after the warm-up of %s (its samples span %s); calibrate needs at least %d: a longer capture or a shorter --warmup",
				c.File, c.headRow, len(tr.rows), shortName(e.Machine), fmtSeconds(from), fmtSeconds(span), MinRows)
		}
		w.tiers[e.Index] = tr
		w.start = math.Min(w.start, c.T[tr.prev])
		w.to = math.Max(w.to, c.T[tr.rows[len(tr.rows)-1]])
		if w.every == 0 || tr.every < w.every {
			w.every = tr.every
		}
	}
	span := w.to - w.start
	for _, tr := range w.tiers {
		tr.batch = make([]int, len(tr.rows))
		for j, i := range tr.rows {
			// The batch of the interval's start (the rows of one machine
			// evenly spaced: row j of n in batch j·k/n).
			b := 0
			if span > 0 {
				b = int(math.Floor((c.T[i]-tr.dt[j]-w.start)/span*float64(w.k) + 1e-9))
			}
			tr.batch[j] = min(max(b, 0), w.k-1)
		}
	}
	return w, nil
}

// rows is the number of rows the window holds, of the machine with most.
func (w *window) rows() int {
	n := 0
	for _, tr := range w.tiers {
		n = max(n, len(tr.rows))
	}
	return n
}

// tierSums sums one tier's counters per batch; batch w.k is the whole
// window. Every value it reads must be a count, a rate, a level or a
// duration: never negative.
func (c *Capture) tierSums(w *window, tr *tierRows, m *machineCounters, cores int) ([]batchSums, error) {
	s := make([]batchSums, w.k+1)
	prevRejected := math.NaN()
	if m.rejected >= 0 {
		prevRejected = c.value(tr.prev, m.rejected)
	}
	for j, i := range tr.rows {
		dt := tr.dt[j]
		u := c.value(i, m.cpu)
		x := c.value(i, m.rate)
		r := c.value(i, m.dur)
		for _, k := range m.columns() {
			if v := c.value(i, k); v < 0 {
				return nil, fmt.Errorf("%s: %s: negative value %g; counters are never negative", c.at(i, k), c.name(k), v)
			}
		}
		if u > 101 {
			return nil, fmt.Errorf("%s: %s: %g above 100; Processor(_Total) is the share of all the cores, at most 100", c.at(i, m.cpu), c.name(m.cpu), u)
		}
		if m.rejected >= 0 {
			// A total since the start: the interval's rejections are its increase.
			if tot := c.value(i, m.rejected); !math.IsNaN(tot) {
				if !math.IsNaN(prevRejected) && tot >= prevRejected && !m.wcf {
					x -= (tot - prevRejected) / dt
					x = math.Max(x, 0)
				}
				prevRejected = tot
			}
		}
		if m.durMS {
			r /= 1000
		}
		lv, cur, cw := math.NaN(), math.NaN(), math.NaN()
		if m.level >= 0 {
			lv = c.value(i, m.level)
		}
		if m.aspCurrent >= 0 {
			cur = c.value(i, m.aspCurrent)
		}
		if m.connWaiting >= 0 {
			cw = c.value(i, m.connWaiting)
		}
		var visit, visitX float64 = math.NaN(), math.NaN()
		if m.aspnet {
			aw, ae := 0.0, c.value(i, m.aspExec)
			if m.aspWait >= 0 {
				aw = c.value(i, m.aspWait)
			}
			visit, visitX = (aw+ae)/1000, c.value(i, m.aspRate)
		}
		for _, b := range []int{tr.batch[j], w.k} {
			bs := &s[b]
			if !math.IsNaN(lv) {
				bs.lv += lv * dt
				bs.lvdt += dt
			}
			if !math.IsNaN(cur) {
				bs.cur += cur * dt
				bs.curdt += dt
			}
			if !math.IsNaN(cw) {
				bs.cw += cw * dt
				bs.cwdt += dt
			}
			if !math.IsNaN(visit) && !math.IsNaN(visitX) {
				bs.visit += visit * visitX * dt
				bs.visitN += visitX * dt
			}
			if math.IsNaN(u) || math.IsNaN(x) || math.IsNaN(r) {
				continue
			}
			bs.rows++
			bs.dt += dt
			bs.busy += u / 100 * float64(cores) * dt
			bs.n += x * dt
			bs.rs += r * x * dt
		}
	}
	return s, nil
}

// known is what the experiment says a request costs a tier besides its
// steps: CPU to decode the request and encode the reply (in), CPU to
// encode its calls and decode their replies and to build proxies (out),
// and per call the network's time.
type known struct {
	in, out float64
	wire    []float64 // per call step, in step order
	targets []int
}

func knownCosts(top *model.Topology, i int) known {
	var k known
	if c := callInto(top, i); c != nil {
		k.in = (c.Binding.Cost(c.RequestKB) + c.Binding.Cost(c.ReplyKB)).Seconds()
		if c.Proxy.Kind == model.ProxyPerCall {
			k.in += c.Binding.SessionCPU.Seconds()
		}
	}
	t := &top.Tiers[i]
	for si := range t.Steps {
		st := &t.Steps[si]
		if st.Kind != model.StepCall {
			continue
		}
		c := st.Call
		if !t.Agent {
			k.out += (c.Binding.Cost(c.RequestKB) + c.Binding.Cost(c.ReplyKB)).Seconds()
		}
		w := (c.Wire(c.RequestKB) + c.Wire(c.ReplyKB)).Seconds()
		if c.Proxy.Kind == model.ProxyPerCall {
			if !t.Agent {
				k.out += (c.Proxy.CreateCost.Mean() + c.Binding.SessionCPU).Seconds()
			}
			w += (time.Duration(2*c.Binding.SessionRoundTrips) * c.Network.Latency).Seconds()
		}
		k.wire = append(k.wire, w)
		k.targets = append(k.targets, c.Target)
	}
	return k
}

// callInto is the first call into tier i (the load's, or a tier's step),
// whose binding decodes its requests: as model.Analyse takes it.
func callInto(top *model.Topology, i int) *model.Call {
	if top.Load.Call.Target == i {
		return &top.Load.Call
	}
	for ti := range top.Tiers {
		for si := range top.Tiers[ti].Steps {
			if st := &top.Tiers[ti].Steps[si]; st.Kind == model.StepCall && st.Call.Target == i {
				return st.Call
			}
		}
	}
	return nil
}

// stretch is the mean time at c cores, queueing included, per unit of
// demand, at utilisation u: M/M/c's R/S = 1 + C(c, cu)/(c(1−u)) with
// Erlang's C (the same for processor sharing, whose number in the system
// is M/M/c's). Above 98% busy the queue is not estimable and the stretch
// is capped there.
func stretch(c int, u float64) float64 {
	if c < 1 || !(u > 0) {
		return 1
	}
	u = math.Min(u, 0.98)
	a := u * float64(c)
	b := 1.0 // Erlang's B, by its recursion
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	erlangC := b / (1 - u*(1-b))
	return 1 + erlangC/(float64(c)*(1-u))
}

// estimate computes every mapped tier's figures from their batch sums.
// Times come from Little's law wherever the capture has the level (the
// operation's time R = N/X from Calls Outstanding or Requests Executing, a
// callee's from Requests Current, the connection wait from the calls
// waiting): a time average over the window holds whatever the load does,
// while a duration counter is the mean of the requests that ended in each
// interval, which no counter weighs right when the load varies.
func estimate(top *model.Topology, tiers []*TierEstimate, sums map[int][]batchSums, k int) {
	byIndex := map[int]*TierEstimate{}
	for _, e := range tiers {
		byIndex[e.Index] = e
	}
	// ci is the estimate over the whole window (batch k) with the
	// half-width from the spread of the batches.
	ci := func(f func(b int) float64) Measure {
		whole := f(k)
		var xs []float64
		for b := 0; b < k; b++ {
			if v := f(b); !math.IsNaN(v) && !math.IsInf(v, 0) {
				xs = append(xs, v)
			}
		}
		if len(xs) < 2 || math.IsNaN(whole) {
			return Measure{whole, math.NaN()}
		}
		var m, ss float64
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		for _, x := range xs {
			ss += (x - m) * (x - m)
		}
		sd := math.Sqrt(ss / float64(len(xs)-1))
		return Measure{whole, sim.TQuantile(0.95, len(xs)-1) * sd / math.Sqrt(float64(len(xs)))}
	}
	div := func(a, b float64) float64 {
		if !(b > 0) {
			return math.NaN()
		}
		return a / b
	}
	type fns struct {
		x, u, d, r, rdur, cw, visit func(b int) float64
	}
	f := map[int]fns{}
	for _, e := range tiers {
		s, e := sums[e.Index], e
		kn := knownCosts(top, e.Index)
		var t fns
		t.x = func(b int) float64 { return div(s[b].n, s[b].dt) }
		t.u = func(b int) float64 { return div(s[b].busy, s[b].dt*float64(e.Cores)) }
		t.d = func(b int) float64 { return div(s[b].busy, s[b].n) }
		t.rdur = func(b int) float64 { return div(s[b].rs, s[b].n) }
		t.r = t.rdur
		if e.From.level >= 0 && s[k].lvdt > 0 {
			e.levelSeen = true
			t.r = func(b int) float64 { return div(div(s[b].lv, s[b].lvdt), t.x(b)) }
		}
		t.cw = func(int) float64 { return math.NaN() }
		if e.From.connWaiting >= 0 && s[k].cwdt > 0 {
			t.cw = func(b int) float64 { return div(div(s[b].cw, s[b].cwdt), t.x(b)) }
		}
		switch {
		case e.From.aspnet && s[k].curdt > 0:
			t.visit = func(b int) float64 { return div(div(s[b].cur, s[b].curdt), t.x(b)) }
		case e.From.aspnet:
			t.visit = func(b int) float64 { return div(s[b].visit, s[b].visitN) }
		default:
			// A self-hosted service decodes and encodes around its operation.
			t.visit = func(b int) float64 { return t.r(b) + stretch(e.Cores, t.u(b))*kn.in }
		}
		f[e.Index] = t
	}
	for _, e := range tiers {
		t := f[e.Index]
		kn := knownCosts(top, e.Index)
		e.Known = kn.in + kn.out
		e.Rate = ci(t.x)
		e.Util = ci(t.u)
		e.CPU = ci(t.d)
		e.StepCPU = ci(func(b int) float64 { return t.d(b) - e.Known })
		e.Residence = ci(t.r)
		e.Duration = ci(t.rdur)
		e.ConnWait = ci(t.cw)
		e.Visit = t.visit(k)
		e.Stretch = stretch(e.Cores, e.Util.Value)
		// The CPU inside the operation: the steps' and the calls'
		// encoding, and on an ASP.NET host, whose Request Execution Time
		// spans it, the request's decoding and the reply's encoding too.
		inR := kn.out
		if !e.From.wcf {
			inR += kn.in
		}
		atCPU := func(b int) float64 { return stretch(e.Cores, t.u(b)) * (t.d(b) - kn.in - kn.out + inR) }
		e.AtCPU = atCPU(k)
		e.CallsKnown = true
		for _, tgt := range kn.targets {
			if byIndex[tgt] == nil {
				e.CallsKnown = false
			}
		}
		if !e.CallsKnown {
			e.Calls = math.NaN()
			e.Wait = Measure{math.NaN(), math.NaN()}
			continue
		}
		calls := func(b int) float64 {
			var c float64
			for j, tgt := range kn.targets {
				c += kn.wire[j] + f[tgt].visit(b)
			}
			return c
		}
		e.Calls = calls(k)
		e.Wait = ci(func(b int) float64 {
			w := t.r(b) - atCPU(b) - calls(b)
			if cw := t.cw(b); !math.IsNaN(cw) {
				w -= cw
			}
			return w
		})
	}
}

// little reports whether the tier's operation time is N/X.
func (e *TierEstimate) little() bool { return e.From.level >= 0 && e.levelSeen }

// rFrom says where the operation's time came from.
func (e *TierEstimate) rFrom() string {
	if e.little() {
		return e.From.levelName + " / " + e.From.rateName
	}
	return e.From.durName
}
