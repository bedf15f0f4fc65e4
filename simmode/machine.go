package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// Machines shared by several tiers (Tier.Machine): a test client on the
// service's own box, a load agent beside the service. The tiers of one
// machine share one CPU, processor sharing (sim.PS) or cores first come
// first served, so each one's demands slow the others'. Each tier still
// reports its own CPU: under processor sharing with n demands in service
// on c cores, a tier with k of them uses k·min(1, c/n) cores; first come
// first served, the cores its demands hold.

// machineRT is a shared machine at run time.
type machineRT struct {
	id    int
	cores int
	cpu   *sim.PS
	fcfs  *slots // CPUFCFS: a slot per core
	tiers []*tierRT
}

// machine returns the shared machine id, creating its CPU for the first
// tier that runs on it (whose discipline it takes; format checks that the
// tiers of one machine agree).
func (r *runner) machine(id int, spec *model.Tier) *machineRT {
	for _, m := range r.machines {
		if m.id == id {
			return m
		}
	}
	m := &machineRT{id: id, cores: spec.Cores, cpu: sim.NewPS(r.e, spec.Cores)}
	m.cpu.OnChange = func(now sim.Time, _ int) { m.update(now) }
	if spec.CPU == model.CPUFCFS {
		m.fcfs = newSlots(r.e, spec.Cores)
	}
	r.machines = append(r.machines, m)
	return m
}

// update sets each tier's CPU level from its demands in service.
func (m *machineRT) update(now sim.Time) {
	n := m.cpu.Len()
	for _, t := range m.tiers {
		busy := float64(t.onCPU)
		if m.fcfs == nil && n > m.cores {
			busy = float64(t.onCPU*m.cores) / float64(n)
		}
		t.lv[model.LvCPU].Set(now, busy)
		t.cpuInt.set(now, busy)
	}
}

// cpuIn and cpuOut count a demand of the tier (its job's or its outgoing
// call's) starting and ending on a shared machine's CPU: in service under
// processor sharing, holding a core first come first served.
func (t *tierRT) cpuIn() {
	if t.mach != nil {
		t.onCPU++
		t.mach.update(t.r.e.Now())
	}
}

func (t *tierRT) cpuOut() {
	if t.mach != nil {
		t.onCPU--
		t.mach.update(t.r.e.Now())
	}
}
