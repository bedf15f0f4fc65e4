package analysis

import "github.com/tsim-dev/tsim/results"

// The hook by which explain says what makes throughput fall past its
// peak. Without the contention mechanisms of issue 24 (model/
// contention.go: scheduling overhead from runnable threads beyond the
// cores, lock hand-off and convoys, garbage collection, memory and
// paging, per-call bookkeeping) raising a limit never costs anything, so
// a throughput curve rises and flattens and nothing dominates past a peak
// there is none of. Each mechanism registers here how much of a run it
// took, from that run's counters (contention.go), and explain's diagnosis
// names the one that takes most ("Of what grows with concurrency,
// garbage collection dominates: 31% of the time paused in it"). With
// every mechanism off, Dominant finds nothing and explain prints what it
// printed before.

// Mechanism is a cost that grows with concurrency.
type Mechanism struct {
	// Name is what explain calls it: "context switches", "the instance
	// lock's convoy", "garbage collection", "paging".
	Name string
	// Of names what Share is a share of: "of the CPU", "of the response
	// time".
	Of string
	// Share is the share, in [0, 1], the mechanism took in run r.
	Share func(r *results.Run) float64
	// Remedy is what a person changes when it dominates, as explain
	// writes it after "Against it: ".
	Remedy string
}

// Dominating is the share from which explain says a mechanism decides
// what helps: the operational-law bounds do not see it, so their smallest
// change is then "by the bounds alone" and may not help at all.
const Dominating = 0.2

// Mechanisms are the contention mechanisms explain weighs, in the order
// they were registered (RegisterMechanism): contention.go's five.
var Mechanisms []Mechanism

// RegisterMechanism adds m to Mechanisms; a package that models a
// mechanism calls it from an init function.
func RegisterMechanism(m Mechanism) { Mechanisms = append(Mechanisms, m) }

// Dominant returns the registered mechanism that took the largest share
// of run r, and that share; ok is false when none took any.
func Dominant(r *results.Run) (m Mechanism, share float64, ok bool) {
	if r == nil {
		return Mechanism{}, 0, false
	}
	for _, c := range Mechanisms {
		if s := c.Share(r); s > share {
			m, share, ok = c, s, true
		}
	}
	return m, share, ok
}
