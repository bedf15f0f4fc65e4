package model

import (
	"time"

	"github.com/tsim-dev/tsim/results"
)

// ContentionPeriod is what a tier's contention mechanisms cost over the
// measured period, counted and reported the same way by both executors.
type ContentionPeriod struct {
	OOM          int64         // requests failed for want of memory
	CommittedMax int64         // the most memory committed (bytes)
	Handoff      time.Duration // contended locks' wake-ups
	Bookkeeping  time.Duration // CPU of the runtime's bookkeeping
	SwitchLost   float64       // core-ns lost to context switching
	PagingLost   float64       // core-ns lost to paging

	pausedAtReset            time.Duration
	gen0AtReset, gen2AtReset int64
}

// Reset starts the measured period: paused is every GC pause up to now,
// gc the collector's state, committed the memory committed now (0 when
// memory is not modelled).
func (p *ContentionPeriod) Reset(paused time.Duration, gc *GCState, committed int64) {
	*p = ContentionPeriod{CommittedMax: committed, pausedAtReset: paused, gen0AtReset: gc.Collections, gen2AtReset: gc.Full}
}

// Fill writes the period's figures into r: paused is every GC pause up to
// now, span the period's length, cores the tier's.
func (p *ContentionPeriod) Fill(r *results.Tier, paused time.Duration, gc *GCState, span time.Duration, cores int) {
	capacity := float64(span) * float64(cores)
	if span > 0 {
		r.GCTimePercent = 100 * float64(paused-p.pausedAtReset) / float64(span)
	}
	r.Gen0Collections = gc.Collections - p.gen0AtReset
	r.Gen2Collections = gc.Full - p.gen2AtReset
	r.OutOfMemory = p.OOM
	r.CommittedMaxMB = float64(p.CommittedMax) / (1 << 20)
	if capacity > 0 {
		r.SwitchCPUShare = p.SwitchLost / capacity
		r.PagingCPUShare = p.PagingLost / capacity
		r.BookkeepingCPUShare = float64(p.Bookkeeping) / capacity
	}
	if span > 0 {
		r.LockHandoffShare = float64(p.Handoff) / float64(span)
	}
}
