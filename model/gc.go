package model

import "time"

// GCMode is the CLR's garbage collector flavour (<gcServer>,
// <gcConcurrent> in the process's configuration; ASP.NET hosts run the
// server GC on a multiprocessor, a console or service the concurrent
// workstation GC unless configured).
type GCMode uint8

const (
	GCOff                   GCMode = iota // no garbage collection modelled
	GCWorkstationConcurrent               // workstation, concurrent (background) full collections: the default of a standalone process
	GCWorkstation                         // workstation, non-concurrent: every collection blocks
	GCServer                              // server: a heap and a GC thread per core, every collection blocks (.NET ≤ 4.0)
)

var gcModeNames = [...]string{"off", "workstation-concurrent", "workstation", "server"}

func (m GCMode) String() string { return gcModeNames[m] }

// GCModeNames are the names of the GCMode values.
func GCModeNames() []string { return append([]string(nil), gcModeNames[:]...) }

// GC is a process's garbage collector: what its requests allocate, the
// gen-0 budget that triggers a collection, and what a collection pauses.
//
// Allocations consume the gen-0 budget; when the budget is used up a
// collection runs ("a GC is triggered when the gen0 allocation budget is
// exhausted", Maoni Stephens, ".NET Memory Performance Analysis") and
// every managed thread of the process is suspended for its pause (a
// blocking collection, and the foreground part of a background one). So a
// process that allocates B bytes a second on a budget of G bytes collects
// B/G times a second and spends (B/G)·pause of every second in GC — the
// `% Time in GC` counter — however many threads wait to run. A pause is
// Pause plus PausePerThread for every thread of the process (suspending
// it and scanning its stack for roots). Every FullEvery-th collection is
// a full (gen 2) one: blocking for FullPause with the non-concurrent
// workstation and the server GC; with the concurrent workstation GC its
// marking runs beside the program and only its suspensions (Pause) stop
// it.
//
// tsim keeps the budget fixed (the CLR tunes it between its minimum and
// maximum by the survival rate it sees) and does not model the CPU the
// collection itself uses beyond stopping the process.
type GC struct {
	Mode GCMode
	// AllocPerRequest is what a request allocates, charged when its
	// message is decoded; a step's Alloc adds to it at the step.
	AllocPerRequest int64 // bytes
	Gen0Budget      int64 // bytes allocated between collections, the whole process (all heaps)
	Pause           time.Duration
	PausePerThread  time.Duration
	FullEvery       int // 0: no full collections
	FullPause       time.Duration
}

// On reports whether the process collects garbage.
func (g *GC) On() bool { return g.Mode != GCOff && g.Gen0Budget > 0 }

// GCState is a process's collector at run time.
type GCState struct {
	Allocated   int64 // since the last collection
	Collections int64 // every collection (each collects gen 0: "# Gen 0 Collections")
	Full        int64 // full (gen 2) collections
	Paused      time.Duration
}

// Allocate records bytes allocated by a thread of the process with
// threads threads, and returns the pause that starts now: the sum of the
// pauses of the collections the allocation triggers (0 for none).
func (g *GC) Allocate(st *GCState, bytes int64, threads int) time.Duration {
	if !g.On() || bytes <= 0 {
		return 0
	}
	st.Allocated += bytes
	var pause time.Duration
	for st.Allocated >= g.Gen0Budget {
		st.Allocated -= g.Gen0Budget
		st.Collections++
		full := g.FullEvery > 0 && st.Collections%int64(g.FullEvery) == 0
		if full {
			st.Full++
		}
		pause += g.PauseOf(full, threads)
	}
	st.Paused += pause
	return pause
}

// PauseOf is the pause of one collection (a full one if full) with threads
// threads in the process.
func (g *GC) PauseOf(full bool, threads int) time.Duration {
	p := g.Pause
	if full && g.Mode != GCWorkstationConcurrent {
		p = g.FullPause
	}
	return p + g.PausePerThread*time.Duration(max(threads, 0))
}

// TimeInGC is the fraction of time a process that allocates rate bytes a
// second spends paused in steady state, with threads threads: collections
// a second times the mean pause (the closed form the tests check).
func (g *GC) TimeInGC(rate float64, threads int) float64 {
	if !g.On() {
		return 0
	}
	perS := rate / float64(g.Gen0Budget)
	mean := g.PauseOf(false, threads).Seconds()
	if g.FullEvery > 0 {
		n := float64(g.FullEvery)
		mean = ((n-1)*mean + g.PauseOf(true, threads).Seconds()) / n
	}
	return perS * mean
}
