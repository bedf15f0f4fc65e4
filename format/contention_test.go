package format

import (
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
)

const contentionBase = `
name = "c"
duration = "10s"
[load]
kind = "closed"
target = "app"
users = 4
think = "1s"
[[tier]]
name = "app"
cores = 4
`

// TestContentionOffByDefault: a tier that names none of the keys has
// every mechanism off (its results cannot change).
func TestContentionOffByDefault(t *testing.T) {
	topo := loadTopo(t, contentionBase+`step = [{cpu = "5ms"}]`)
	if c := topo.Tiers[0].Contention; c.On() || c != (model.Contention{}) {
		t.Fatalf("contention %+v, want the zero value", c)
	}
}

func TestContentionKeys(t *testing.T) {
	topo := loadTopo(t, contentionBase+`
memory_per_request_kb = 64
step = [{cpu = "5ms", alloc_kb = 10}, {lock = "trace", acquires = 3000}, {cpu = "1ms"}, {unlock = "trace"}]
[tier.scheduler]
context_switches = true
[tier.locks]
convoy = true
[tier.gc]
mode = "server"
alloc_per_request_kb = 100
[tier.memory]
limit_mb = 4096
on_full = "fail"
[tier.bookkeeping]
cpu_per_call = "20us"
`)
	tr := topo.Tiers[0]
	c := tr.Contention
	if c.Sched != (model.Scheduler{On: true, Quantum: 187500 * time.Microsecond, SwitchCost: 4 * time.Microsecond, RefillCost: 20 * time.Microsecond}) {
		t.Errorf("scheduler %+v", c.Sched)
	}
	if c.Handoff != (model.Handoff{Convoy: true, Wake: 8 * time.Microsecond}) {
		t.Errorf("handoff %+v", c.Handoff)
	}
	if c.GC != (model.GC{Mode: model.GCServer, AllocPerRequest: 100 << 10, Gen0Budget: 4 * 2048 << 10, Pause: time.Millisecond}) {
		t.Errorf("gc %+v", c.GC)
	}
	if c.Memory != (model.Memory{Limit: 4096 << 20, OnFull: model.MemoryFail, StackPerThread: 1 << 20, PagingFactor: 100}) {
		t.Errorf("memory %+v", c.Memory)
	}
	if c.Bookkeeping.PerCall != 20*time.Microsecond {
		t.Errorf("bookkeeping %+v", c.Bookkeeping)
	}
	if tr.Steps[0].Alloc != 10<<10 || tr.Steps[1].Acquires != 3000 || tr.Steps[2].Acquires != 0 {
		t.Errorf("steps %+v", tr.Steps)
	}
	// The workstation budget is 4/5 of the assumed 2 MB cache.
	ws := loadTopo(t, contentionBase+"step = [{cpu = \"5ms\"}]\n[tier.gc]\nmode = \"workstation\"\n")
	if b := ws.Tiers[0].Contention.GC.Gen0Budget; b != 1677721 {
		t.Errorf("workstation gen-0 budget %d", b)
	}
}

func TestContentionBadSteps(t *testing.T) {
	for _, c := range []struct{ steps, want string }{
		{`step = [{cpu = "5ms", acquires = 2}]`, `tier.app.step.1.acquires: applies only to lock steps (this step is cpu)`},
		{`step = [{wait = "5ms", alloc_kb = 2}]`, `tier.app.step.1.alloc_kb: applies only to cpu steps (this step is wait)`},
		{`step = [{call = "app", alloc_kb = 2}]`, `tier.app.step.1.alloc_kb: applies only to cpu steps (this step is call)`},
		{`step = [{lock = "l", acquires = 0}, {unlock = "l"}]`, `acquires`},
	} {
		_, err := LoadExperiment("test.toml", []byte(contentionBase+c.steps), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.steps, err, c.want)
		}
	}
}
