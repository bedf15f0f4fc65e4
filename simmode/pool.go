package simmode

import (
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// threadPool is a model.ThreadPool on the calendar: its gate and retire
// ticks are events.
type threadPool struct {
	model.ThreadPool
}

const (
	evGate int32 = iota
	evRetire
)

func newThreadPool(e *sim.Engine, spec model.Pool) *threadPool {
	p := &threadPool{ThreadPool: *model.NewThreadPool(spec)}
	p.Grant = deliver(e)
	p.ArmGate = func(d time.Duration) { e.Schedule(d, sim.ClassArrival, p, evGate, nil) }
	p.ArmRetire = func(d time.Duration) { e.Schedule(d, sim.ClassArrival, p, evRetire, nil) }
	return p
}

// acquire takes a thread or queues w (see model.ThreadPool.Acquire).
func (p *threadPool) acquire(w *waitRec, h sim.Handler, kind int32, arg any) bool {
	return p.Acquire(w.on(h, kind, arg))
}

func (p *threadPool) OnEvent(e *sim.Engine, kind int32, arg any) {
	switch kind {
	case evGate:
		p.GateTick(time.Duration(e.Now()))
	case evRetire:
		p.RetireTick(time.Duration(e.Now()))
	}
}
