package realmode

import (
	"context"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

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

// useCPU serves a CPU demand on the tier's cores. With CPUCores it waits
// for a core (FIFO), then holds it for the demand: first come, first served
// per core, not the model's processor sharing (see the package
// documentation for what differs); with CPUSharing it is processor sharing.
func (t *tierRT) useCPU(ctx context.Context, d time.Duration, root *rootReq) error {
	clk := t.rt.clk
	if t.cont != nil {
		var err error
		if d, err = t.cont.demand(ctx, d); err != nil {
			return err
		}
	}
	t0 := clk.now()
	if t.ps != nil {
		err := t.ps.use(ctx, clk.toReal(d), t.share)
		el := clk.now() - t0
		need := clk.toReal(d)
		root.charge(results.BdCPU, min(el, need))
		if el > need {
			root.charge(results.BdCPUWait, el-need)
		}
		return err
	}
	if err := t.cores.acquire(ctx); err != nil {
		root.charge(results.BdCPUWait, clk.now()-t0)
		return err
	}
	if t.share != nil {
		t.lv[model.LvCPU].add(1) // its own core of the shared machine's
	}
	t1 := clk.now()
	root.charge(results.BdCPUWait, t1-t0)
	err := clk.sleep(ctx, d)
	t.cores.release()
	if t.share != nil {
		t.lv[model.LvCPU].add(-1)
	}
	root.charge(results.BdCPU, clk.now()-t1)
	return err
}
