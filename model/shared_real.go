package model

import "time"

// Exported helpers for the real executor (package realmode), which runs the
// same compiled Topology with goroutines and real HTTP. They only expose
// rules the simulator already applies, so both executors share them.

// Cost returns the CPU one side spends on a message of kb kilobytes:
// CPUBase + CPUPerKB × kb.
func (b *Binding) Cost(kb float64) time.Duration { return b.cost(kb) }

// Wire returns the one-way transfer time of a message of kb kilobytes:
// the network latency plus its bytes over the bandwidth.
func (c *Call) Wire(kb float64) time.Duration { return c.wire(kb) }

// NextChange returns the next instant after now at which the rounded value
// of the schedule changes (when the load adds or retires users).
func NextChange(s Schedule, now time.Duration) (time.Duration, bool) { return nextChange(s, now) }

// NextPositive returns the first schedule point after now with a positive
// value (when open arrivals resume after a zero rate).
func NextPositive(s Schedule, now time.Duration) (time.Duration, bool) { return nextPositive(s, now) }
