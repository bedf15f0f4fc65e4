package simmode

import (
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// threadPool is a model.ThreadPool on the calendar: its gate and retire
// ticks are events; acquiring and releasing happen at the engine's now.
type threadPool struct {
	model.ThreadPool
	e *sim.Engine
}

const (
	evGate int32 = iota
	evRetire
)

// newTierPool returns tier t's pool called name ("worker", "io"). The
// CLR 4 controller draws its sample intervals from the stream
// tier/<tier>/<name>/hillclimbing and reads the tier's CPU at its gate
// ticks.
func newTierPool(t *tierRT, name string, spec model.Pool) *threadPool {
	e := t.r.e
	var rnd model.Rand
	if spec.Injection == model.InjectCLR4 {
		rnd = e.Stream(fmtPath("tier", t.spec.Name, name, "hillclimbing"))
	}
	p := &threadPool{ThreadPool: *model.NewThreadPool(spec, rnd), e: e}
	p.Grant = deliver(e)
	p.ArmGate = func(d time.Duration) { e.Schedule(d, sim.ClassArrival, p, evGate, nil) }
	p.ArmRetire = func(d time.Duration) { e.Schedule(d, sim.ClassArrival, p, evRetire, nil) }
	if rnd != nil {
		p.CPU = cpuReader(&t.lv[model.LvCPU], t.spec.Cores)
	}
	return p
}

// cpuReader returns the CPU use in percent of cores, from the tier's CPU
// level, since its previous call (or the level's warm-up reset, if that
// came later).
func cpuReader(lv *level, cores int) func(now time.Duration) int {
	var from sim.Time
	var area0 float64
	return func(now time.Duration) int {
		n := sim.Time(now)
		area := lv.area + lv.v*float64(n-lv.last) // since lv.start
		if lv.start > from {
			from, area0 = lv.start, 0
		}
		a, span := area-area0, n-from
		from, area0 = n, area
		if span <= 0 || cores <= 0 {
			return 0
		}
		return int(100 * a / (float64(span) * float64(cores)))
	}
}

// acquire takes a thread or queues w (see model.ThreadPool.Acquire).
func (p *threadPool) acquire(w *waitRec, h sim.Handler, kind int32, arg any) bool {
	return p.Acquire(w.on(h, kind, arg), time.Duration(p.e.Now()))
}

// Release returns a thread now (model.ThreadPool.Release).
func (p *threadPool) Release() { p.ThreadPool.Release(time.Duration(p.e.Now())) }

func (p *threadPool) OnEvent(e *sim.Engine, kind int32, arg any) {
	switch kind {
	case evGate:
		p.GateTick(time.Duration(e.Now()))
	case evRetire:
		p.RetireTick(time.Duration(e.Now()))
	}
}
