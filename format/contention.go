package format

import (
	"time"

	"github.com/tsim-dev/tsim/model"
)

// The contention mechanisms' keys (model/contention.go, docs/experiment-
// format.md "[tier.scheduler] … [tier.bookkeeping]"): each is off unless
// its switch is set, so an experiment that does not name them runs as
// before.

var contentionKeys = []keyDef{
	{name: "scheduler.context_switches", typ: tBool},
	durKey("scheduler.quantum", 0, time.Second, true),
	durKey("scheduler.switch_cost", 0, 100*time.Millisecond, false),
	durKey("scheduler.refill_cost", 0, 100*time.Millisecond, false),
	{name: "locks.convoy", typ: tBool},
	durKey("locks.wake", 0, time.Second, false),
	enumKey("gc.mode", model.GCModeNames()...),
	floatKey("gc.alloc_per_request_kb", 0, 1e7, false),
	floatKey("gc.gen0_budget_kb", 64, 1e8, false),
	durKey("gc.pause", 0, time.Minute, false),
	durKey("gc.pause_per_thread", 0, time.Second, false),
	intKey("gc.full_every", 0, 1e6, ""),
	durKey("gc.full_pause", 0, time.Hour, false),
	floatKey("memory.limit_mb", 0, 1e9, false),
	enumKey("memory.on_full", model.MemoryActionNames()...),
	floatKey("memory.base_mb", 0, 1e9, false),
	floatKey("memory.stack_kb", 0, 1e7, false),
	floatKey("memory.paging_factor", 0, 1e6, false),
	durKey("bookkeeping.cpu_per_call", 0, time.Second, false),
}

// contentionStepKeys are the step keys beside a step's action.
var contentionStepKeys = []keyDef{
	floatKey("alloc_kb", 0, 1e7, false), // cpu steps
	intKey("acquires", 1, 1e9, ""),      // lock steps
}

// stepExtraOnly names the action a step key of contentionStepKeys goes
// with ("" for any other key).
func stepExtraOnly(k string) string {
	switch k {
	case "alloc_kb":
		return "cpu"
	case "acquires":
		return "lock"
	}
	return ""
}

// contentionDefaults are the defaults of contentionKeys, with their
// sources (docs/experiment-format.md says the same).
var contentionDefaults = map[string]any{
	"scheduler.context_switches": false,
	// Windows Server: a quantum of 12 clock intervals of 15.625 ms
	// (Russinovich & Solomon, "Windows Internals", 5th ed., ch. 5).
	"scheduler.quantum": "187.5ms",
	// Li, Ding & Shen, "Quantifying the Cost of Context Switch" (ExpCS
	// 2007): a direct cost of 3.8 µs.
	"scheduler.switch_cost": "4us",
	// The same paper measures the indirect (cache) cost from a few µs to
	// over 1 ms by working set; 20 µs a displacing thread is tsim's
	// assumption at the low end.
	"scheduler.refill_cost": "20us",
	"locks.convoy":          false,
	// A hand-off is two context switches (the releaser signals, the
	// waiter is switched in): 2 × Li et al.'s 3.8 µs.
	"locks.wake":              "8us",
	"gc.mode":                 "off",
	"gc.alloc_per_request_kb": 0.0,
	// No Microsoft document gives a gen-0 pause; it is "roughly
	// proportional to the survivors" and suspension "normally takes way
	// less than 1ms" (Stephens, .NET Memory Performance Analysis).
	"gc.pause":             "1ms",
	"gc.pause_per_thread":  "0s",
	"gc.full_every":        0,
	"gc.full_pause":        "0s",
	"memory.limit_mb":      0.0,
	"memory.on_full":       "page",
	"memory.base_mb":       0.0,
	"memory.stack_kb":      1024.0, // Windows' default stack, committed whole by the CLR (MSDN <disableCommitThreadStack>)
	"memory.paging_factor": 100.0,  // an assumption: no source gives it
	// No source gives WCF's cost per outstanding call; off.
	"bookkeeping.cpu_per_call": "0s",
}

func init() {
	for k, v := range contentionDefaults {
		tierDefaults[k] = v
	}
}

// gcCacheKB is the last-level cache the default gen-0 budget assumes.
const gcCacheKB = 2048

// resolveContention fills tier.Contention from the tier's keys; a
// mechanism whose switch is off stays the zero value.
func resolveContention(c *chain, tier *model.Tier) {
	ct := &tier.Contention
	ct.Sched = model.Scheduler{
		On:         c.bool(scopeTier, "scheduler.context_switches"),
		Quantum:    c.dur(scopeTier, "scheduler.quantum"),
		SwitchCost: c.dur(scopeTier, "scheduler.switch_cost"),
		RefillCost: c.dur(scopeTier, "scheduler.refill_cost"),
	}
	if !ct.Sched.On {
		ct.Sched = model.Scheduler{}
	}
	if c.bool(scopeTier, "locks.convoy") {
		ct.Handoff = model.Handoff{Convoy: true, Wake: c.dur(scopeTier, "locks.wake")}
	}
	g := &ct.GC
	g.Mode = model.GCMode(indexOf(model.GCModeNames(), c.str(scopeTier, "gc.mode")))
	g.AllocPerRequest = int64(c.float(scopeTier, "gc.alloc_per_request_kb") * 1024)
	g.Gen0Budget = int64(gen0BudgetKB(g.Mode, tier.Cores) * 1024)
	if s, ok := c.explicit("gc.gen0_budget_kb"); ok {
		g.Gen0Budget = int64(s.v.(float64) * 1024)
	}
	g.Pause = c.dur(scopeTier, "gc.pause")
	g.PausePerThread = c.dur(scopeTier, "gc.pause_per_thread")
	g.FullEvery = c.int(scopeTier, "gc.full_every")
	g.FullPause = c.dur(scopeTier, "gc.full_pause")
	if g.Mode == model.GCOff {
		*g = model.GC{}
	}
	m := &ct.Memory
	m.Limit = int64(c.float(scopeTier, "memory.limit_mb") * (1 << 20))
	m.OnFull = model.MemoryAction(indexOf(model.MemoryActionNames(), c.str(scopeTier, "memory.on_full")))
	m.Base = int64(c.float(scopeTier, "memory.base_mb") * (1 << 20))
	m.StackPerThread = int64(c.float(scopeTier, "memory.stack_kb") * 1024)
	m.PagingFactor = c.float(scopeTier, "memory.paging_factor")
	if m.Limit == 0 {
		*m = model.Memory{}
	}
	ct.Bookkeeping = model.Bookkeeping{PerCall: c.dur(scopeTier, "bookkeeping.cpu_per_call")}
	if tier.CPU == model.CPUFCFS {
		// Context switches, pauses and paging slow a processor-sharing CPU
		// (sim.PS); the textbook FCFS cores have no time slices to lose.
		for _, k := range []struct {
			key string
			on  bool
		}{{"scheduler.context_switches", ct.Sched.On}, {"gc.mode", g.On()}, {"memory.limit_mb", m.On() && m.OnFull == model.MemoryPage}} {
			if k.on {
				c.errAt(k.key, "needs cpu_discipline = \"sharing\" (it slows or stops a time-sliced CPU; the FCFS cores have none)")
			}
		}
	}
}

// gen0BudgetKB is the CLR's gen-0 budget for a last-level cache of
// gcCacheKB (gc.cpp, get_gen0_min_size): the workstation GC takes 4/5 of
// the cache, at least 256 KB; the server GC the cache, at least 256 KB, for
// each of its heaps, one a core.
func gen0BudgetKB(mode model.GCMode, cores int) float64 {
	if mode == model.GCServer {
		return max(gcCacheKB, 256) * float64(max(cores, 1))
	}
	return max(4*gcCacheKB/5.0, 256)
}
