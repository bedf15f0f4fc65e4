package simmode

import (
	"fmt"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// backlogWatch is model.Stability on the simulator: every 64th request the
// load generates, it looks at the requests in flight and at each tier's
// requests queued or executing (which count the work timed-out requests
// left behind), and stops the engine once the run is unstable. Looking
// draws nothing and schedules nothing, so a stable run is unchanged.
type backlogWatch struct {
	stab   *model.Stability
	served int64 // entry-tier replies since the start, orphans' included
}

// watchEvery is how many requests go by between two looks (a power of 2).
const watchEvery = 64

// generated is the load's hook: it looks at the backlog every watchEvery
// requests generated.
func (r *runner) generated(n int64) {
	if n&(watchEvery-1) == 0 {
		r.watchBacklog()
	}
}

func (r *runner) watchBacklog() {
	w := &r.watch
	if w.stab == nil {
		w.stab = model.NewStability(r.top)
	}
	b := model.Backlog{Now: time.Duration(r.e.Now()), UnderWay: r.load.live(), Where: "requests in flight",
		Generated: r.load.generated, Served: w.served}
	for _, t := range r.tiers {
		if n := int64(t.lv[model.LvCurrent].v); n > b.UnderWay {
			b.UnderWay, b.Where = n, fmt.Sprintf("tier %q's requests queued or executing", t.spec.Name)
		}
	}
	if w.stab.Observe(b) {
		if !r.measuring {
			// The warm-up ends at the stop: nothing is measured, and every
			// request under way is in flight at warm-up and at the end.
			r.resetStats()
			r.warmup = r.e.Now()
		}
		r.e.Stop()
	}
}

// unstable is the run's outcome when it was stopped unstable, else "".
func (r *runner) unstable() string {
	if r.watch.stab == nil {
		return ""
	}
	return r.watch.stab.Outcome()
}
