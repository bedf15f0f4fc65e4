package realmode

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/tsim-dev/tsim/model"
)

// backlogWatch is model.Stability in real mode, as in the simulator: every
// 64th request generated, it looks at the requests in flight and at each
// tier's requests queued or executing, and ends the run once it is
// unstable, with the same outcome. By default an open load may have
// twice the bound in flight (Options.MaxInFlight), so that the watch,
// not the shedding, stops a load above capacity: the goroutines of the
// run stay bounded either way.
type backlogWatch struct {
	stab    *model.Stability
	served  atomic.Int64 // entry-tier replies since the start, orphans' included
	stop    context.CancelCauseFunc
	outcome string // under rt.mu
}

// watchEvery is how many requests go by between two looks (a power of 2).
const watchEvery = 64

// errUnstable ends the drive of an unstable run.
var errUnstable = errors.New("realmode: the run is unstable")

// testStableBound, if > 0, replaces the topology's bound (tests).
var testStableBound int64

// defaultMaxInFlight is MaxInFlight when Options leave it 0:
// DefaultMaxInFlight, and for an open load room for twice the bound of
// its stability watch.
func defaultMaxInFlight(top *model.Topology) int {
	n := DefaultMaxInFlight
	if top.Load.Kind == model.LoadOpen {
		b := testStableBound
		if b <= 0 {
			b = model.StabilityBound(top)
		}
		n = max(n, int(min(2*b+watchEvery, 1<<30)))
	}
	return n
}

// endUnstable ends the warm-up at the stop of an unstable run that
// stopped before it ended: nothing is measured, and every request under
// way is in flight at warm-up and at the end.
func (rt *runner) endUnstable() {
	if rt.measuring.Load() {
		return
	}
	rt.warmAt = rt.clk.now()
	rt.resetStats()
	rt.warmup = rt.clk.toSim(rt.warmAt)
}

// watchLocked is newRoot's look at the backlog, with rt.mu held; n is the
// requests generated so far.
func (rt *runner) watchLocked(n int64) {
	if n&(watchEvery-1) != 0 || rt.watch.outcome != "" {
		return
	}
	w := &rt.watch
	if w.stab == nil {
		w.stab = model.NewStability(rt.top)
		if testStableBound > 0 {
			w.stab.SetBound(testStableBound)
		}
	}
	b := model.Backlog{Now: rt.clk.toSim(rt.clk.now()), UnderWay: rt.live, Where: "requests in flight",
		Generated: n, Served: w.served.Load()}
	for _, t := range rt.tiers {
		if c := int64(t.lv[model.LvCurrent].value()); c > b.UnderWay {
			b.UnderWay, b.Where = c, fmt.Sprintf("tier %q's requests queued or executing", t.spec.Name)
		}
	}
	if w.stab.Observe(b) {
		w.outcome = w.stab.Outcome()
		if w.stop != nil {
			w.stop(errUnstable)
		}
	}
}
