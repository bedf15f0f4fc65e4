package model

import (
	"fmt"
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// The counters a .NET engineer reads (docs/counters.md): the pieces both
// executors share to keep them the same way.

// level is a piecewise-constant counter over virtual time and its
// time-weighted average, like sim.Level, but whose maximum counts only the
// values held for a positive time: a request refused at the instant it
// arrived, or a connection taken and given back at one instant, was never
// held, and a PerfMon sample could never have seen it. It is its own type
// (not a sim.Level inside) because a run updates its levels some fifty
// times a request: an update that changes nothing returns at once, and
// one that does change the value is one branch and one multiply-add.
type level struct {
	v     float64
	area  float64  // ∫ v dt over [start, last], in value·nanoseconds
	peak  float64  // largest value held for a positive time, before last
	last  sim.Time // when v was set
	start sim.Time // start of the averaging window
}

// Set changes the value to v at now.
func (l *level) Set(now sim.Time, v float64) {
	if v == l.v {
		return // nothing changes: the integral and the maximum catch up at the next change
	}
	if now != l.last {
		l.hold(now)
	}
	l.v = v
}

// hold closes the segment [last, now] at the current value.
func (l *level) hold(now sim.Time) {
	if now < l.last {
		levelBackwards(now, l.last)
	}
	if l.v > l.peak {
		l.peak = l.v
	}
	l.area += l.v * float64(now-l.last)
	l.last = now
}

func levelBackwards(now, last sim.Time) {
	panic(fmt.Sprintf("model: level updated at %v, before its previous update at %v", now, last))
}

// Add changes the value by delta at now.
// It inlines, so a change costs one call (moveTo), not two (Add, hold).
func (l *level) Add(now sim.Time, delta float64) {
	if v := l.v + delta; v != l.v {
		l.moveTo(now, v)
	}
}

// moveTo is Set to a new value v, hold spelled out.
func (l *level) moveTo(now sim.Time, v float64) {
	if now != l.last {
		if now < l.last {
			levelBackwards(now, l.last)
		}
		if l.v > l.peak {
			l.peak = l.v
		}
		l.area += l.v * float64(now-l.last)
		l.last = now
	}
	l.v = v
}

// Value returns the current value.
func (l *level) Value() float64 { return l.v }

// Mean returns the time average from the last Reset to now (over an empty
// window, the current value).
func (l *level) Mean(now sim.Time) float64 {
	if now < l.last {
		levelBackwards(now, l.last)
	}
	if now == l.start {
		return l.v
	}
	return (l.area + l.v*float64(now-l.last)) / float64(now-l.start)
}

// Max returns the largest value held for a positive time since the last
// Reset, up to now.
func (l *level) Max(now sim.Time) float64 {
	m := l.peak
	if now > l.last {
		m = max(m, l.v)
	}
	return m
}

// Reset restarts the averaging window and the maximum at now.
func (l *level) Reset(now sim.Time) {
	if now < l.last {
		levelBackwards(now, l.last)
	}
	l.start, l.last, l.area, l.peak = now, now, 0, 0
}

// DurationStat accumulates the durations of what ended: how many, their
// sum and their maximum (Request Execution Time, Request Wait Time, Calls
// Duration: means over the requests or calls that ended in an interval, and
// their maximum).
type DurationStat struct {
	N   int64
	Sum time.Duration
	Max time.Duration
}

// Add counts one duration.
func (d *DurationStat) Add(x time.Duration) {
	d.N++
	d.Sum += x
	if x > d.Max {
		d.Max = x
	}
}

// Mean returns the mean in seconds, or 0 when nothing ended.
func (d DurationStat) Mean() float64 {
	if d.N == 0 {
		return 0
	}
	return d.Sum.Seconds() / float64(d.N)
}

// MaxSeconds returns the maximum in seconds.
func (d DurationStat) MaxSeconds() float64 { return d.Max.Seconds() }

// TierCounts are the counts and durations of a tier's requests that both
// executors keep, at the same points of a request's life (docs/counters.md),
// and turn into the same results: i* over the interval since the last
// sample (Requests/Sec, Request Wait and Execution Time, Calls Per Second,
// Calls Duration), m* over the measured period since warm-up, tot* since
// the start (PerfMon's raw counters: Calls, Requests Rejected). Each
// method that counts takes measuring, whether the warm-up has ended. The
// executor serialises the calls (the simulator runs one event at a time;
// real mode holds the tier's counter lock).
type TierCounts struct {
	iArrived, iCalls, mArrived, mCalls, totCalls, totRejected int64
	iExec, iWait, iCall, mExec, mWait, mCall                  DurationStat
}

// Arrived counts a request arriving at the tier (Requests/Sec).
func (c *TierCounts) Arrived(measuring bool) {
	c.iArrived++
	if measuring {
		c.mArrived++
	}
}

// Rejected counts a request the tier refused (Requests Rejected).
func (c *TierCounts) Rejected() { c.totRejected++ }

// Waited counts how long a request waited before it started executing
// (Request Wait Time).
func (c *TierCounts) Waited(d time.Duration, measuring bool) {
	c.iWait.Add(d)
	if measuring {
		c.mWait.Add(d)
	}
}

// Executed counts how long a request executed (Request Execution Time).
func (c *TierCounts) Executed(d time.Duration, measuring bool) {
	c.iExec.Add(d)
	if measuring {
		c.mExec.Add(d)
	}
}

// OpStarted counts an operation starting (Calls, Calls Per Second).
func (c *TierCounts) OpStarted(measuring bool) {
	c.iCalls++
	c.totCalls++
	if measuring {
		c.mCalls++
	}
}

// OpEnded counts how long an operation ran (Calls Duration).
func (c *TierCounts) OpEnded(d time.Duration, measuring bool) {
	c.iCall.Add(d)
	if measuring {
		c.mCall.Add(d)
	}
}

// ResetMeasured starts the measured period (the warm-up has ended).
func (c *TierCounts) ResetMeasured() {
	c.mArrived, c.mCalls = 0, 0
	c.mExec, c.mWait, c.mCall = DurationStat{}, DurationStat{}, DurationStat{}
}

// Sample fills s with the interval's rates (perS: 1 over the interval, 0
// for the first sample) and durations, and starts the next interval.
func (c *TierCounts) Sample(s *results.TierSample, perS float64) {
	s.RequestsPerS = float64(c.iArrived) * perS
	s.CallsPerS = float64(c.iCalls) * perS
	s.ExecTimeMS, s.ExecTimeMaxMS = 1000*c.iExec.Mean(), 1000*c.iExec.MaxSeconds()
	s.WaitTimeMS, s.WaitTimeMaxMS = 1000*c.iWait.Mean(), 1000*c.iWait.MaxSeconds()
	s.CallDuration, s.CallDurationMax = c.iCall.Mean(), c.iCall.MaxSeconds()
	s.ExecN, s.WaitN, s.CallN = c.iExec.N, c.iWait.N, c.iCall.N
	s.Calls, s.RequestsRejected = float64(c.totCalls), float64(c.totRejected)
	c.iArrived, c.iCalls = 0, 0
	c.iExec, c.iWait, c.iCall = DurationStat{}, DurationStat{}, DurationStat{}
}

// Fill fills r with the measured period's rates (perS: 1 over its span)
// and durations.
func (c *TierCounts) Fill(r *results.Tier, perS float64) {
	r.RequestsPerS = float64(c.mArrived) * perS
	r.CallsPerS = float64(c.mCalls) * perS
	r.ExecTimeMean, r.ExecTimeMax = c.mExec.Mean(), c.mExec.MaxSeconds()
	r.WaitTimeMean, r.WaitTimeMax = c.mWait.Mean(), c.mWait.MaxSeconds()
	r.CallDurationMean, r.CallDurationMax = c.mCall.Mean(), c.mCall.MaxSeconds()
	r.Arrived, r.Calls = c.mArrived, c.mCalls
}

// AppPool is ASP.NET's pool of HttpApplication instances, whose size is the
// Pipeline Instance Count (System.Web HttpApplicationFactory). A request
// takes an instance when it starts executing (the counter's "active"
// pipelines are the requests executing) and gives it back to a free list
// when it ends; an instance is created only when the free list is empty,
// so the count is the largest concurrency reached, decaying slowly: every
// TrimPeriod (IdleTimeoutMonitor's 30 s timer) a trim disposes of free
// instances, but only if the free list never fell below 2 since the last
// trim. The .NET version decides how much a trim takes and whether the
// free list is capped:
//
//   - .NET 2.0–3.5 (System.Web 2.0.50727, decompiled): one instance per
//     trim, and at most 100 free instances (a returned instance beyond
//     that is disposed of at once);
//   - .NET 4.x (reference source, HttpApplicationFactory.cs
//     TrimApplicationInstanceFreeList): 3% of the free list + 1 per trim,
//     no cap.
//
// The trims are applied lazily, when the pool is next used or read, in the
// order they would have run: no event of their own. Times are offsets from
// the start of the run, in any unit as long as one is used throughout.
type AppPool struct {
	Legacy  bool // .NET 2.0–3.5 rules
	active  int
	free    int
	minFree int           // fewest free since the last trim
	next    time.Duration // the next trim
}

// TrimPeriod is the period of ASP.NET's IdleTimeoutMonitor timer, which
// trims the free list (System.Web/Hosting/IdleTimeoutMonitor.cs).
const TrimPeriod = 30 * time.Second

// legacyMaxFree caps the free list on .NET 2.0–3.5.
const legacyMaxFree = 100

// NewAppPool returns an empty pool; legacy selects the .NET 2.0–3.5 rules.
func NewAppPool(legacy bool) *AppPool { return &AppPool{Legacy: legacy, next: TrimPeriod} }

// Count is the Pipeline Instance Count at now: instances in use and free.
func (p *AppPool) Count(now time.Duration) int {
	p.catchUp(now)
	return p.active + p.free
}

// Take gives a starting request an instance, reusing a free one if any.
func (p *AppPool) Take(now time.Duration) {
	p.catchUp(now)
	p.active++
	if p.free > 0 {
		p.free--
		p.minFree = min(p.minFree, p.free)
	}
}

// Return takes back the instance of a request that ended.
func (p *AppPool) Return(now time.Duration) {
	p.catchUp(now)
	p.active--
	if p.Legacy && p.free >= legacyMaxFree {
		return // disposed of
	}
	p.free++
}

// catchUp runs the trims due by now.
func (p *AppPool) catchUp(now time.Duration) {
	for p.next <= now {
		p.trim()
		p.next += TrimPeriod
	}
}

func (p *AppPool) trim() {
	low := p.minFree
	p.minFree = p.free
	if low <= 1 || p.free <= 1 {
		return
	}
	n := 1
	if !p.Legacy {
		n = p.free*3/100 + 1
	}
	p.free -= n
	p.minFree = p.free
}

// LegacyASPNet reports whether a .NET version (a tier's DotNet) is of the
// System.Web 2.0.50727 line (2.0, 3.0, 3.5), whose counters and pipeline
// pool differ from 4.x's.
func LegacyASPNet(dotnet string) bool {
	switch dotnet {
	case "2.0", "3.0", "3.5":
		return true
	}
	return false
}
