package analysis

import "github.com/tsim-dev/tsim/results"

// The contention mechanisms (model/contention.go) as explain weighs them
// (mechanism.go): each one's share of a run, read from the tiers'
// counters (results.Tier), the largest over the tiers. A run with every
// mechanism off has all of them 0, and explain says nothing of them.
func init() {
	RegisterMechanism(Mechanism{Name: "context switching", Of: "of the CPU lost to it",
		Remedy: "fewer runnable threads per core — a lower maxConcurrentCalls or thread-pool maximum, or asynchronous handlers that give their thread back; more threads only add switches",
		Share:  largest(func(t *results.Tier) float64 { return t.SwitchCPUShare })})
	RegisterMechanism(Mechanism{Name: "per-call bookkeeping", Of: "of the CPU spent on it",
		Remedy: "fewer calls outstanding at once — a lower throttle in front of the service; raising a limit lengthens every call's bookkeeping",
		Share:  largest(func(t *results.Tier) float64 { return t.BookkeepingCPUShare })})
	RegisterMechanism(Mechanism{Name: "garbage collection", Of: "of the time paused in it (% Time in GC)",
		Remedy: "fewer allocations per request, server GC (gcServer) on a multi-core machine, or fewer requests holding memory at once",
		Share:  largest(func(t *results.Tier) float64 { return t.GCTimePercent / 100 })})
	RegisterMechanism(Mechanism{Name: "paging", Of: "of the CPU lost to it",
		Remedy: "less memory committed at once — a throttle that keeps the concurrent requests' memory within the machine's, asynchronous handlers instead of blocked threads and their stacks — or more memory",
		Share:  largest(func(t *results.Tier) float64 { return t.PagingCPUShare })})
	RegisterMechanism(Mechanism{Name: "a lock convoy", Of: "of the time a lock stood idle, handed to a waking thread",
		Remedy: "hold the lock for less time or split it; more cores or a higher limit only lengthen the convoy",
		Share:  largest(func(t *results.Tier) float64 { return t.LockHandoffShare })})
}

// largest is a share of a run: the largest of f over its tiers, in [0, 1].
func largest(f func(*results.Tier) float64) func(*results.Run) float64 {
	return func(r *results.Run) float64 {
		s := 0.0
		for i := range r.Tiers {
			s = max(s, f(&r.Tiers[i]))
		}
		return min(s, 1)
	}
}
