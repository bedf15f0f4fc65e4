package model

import (
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// The counters a .NET engineer reads (docs/counters.md): the pieces both
// executors share to keep them the same way.

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

// TierSample is a tier's time-series sample now: its levels' values
// (level), its CPU utilisation over the interval (cpu, %), and its
// counts' rates (perS: 1 over the interval, 0 for the first sample) and
// durations; the counts start the next interval.
func TierSample(level func(Lv) float64, cpu float64, counts *TierCounts, perS float64) results.TierSample {
	var v [NumLv]float64
	for k := range v {
		v[k] = level(Lv(k))
	}
	var s results.TierSample
	FillSample(&s, &v, cpu)
	counts.Sample(&s, perS)
	return s
}

// TierResult is tier t's result over the measured period: its levels'
// means and peaks (level), its counts' rates (perS: 1 over the period)
// and durations, and how its requests ended.
func TierResult(t *Tier, level func(Lv) (mean, peak float64), counts *TierCounts, perS float64, ends *TierEnds) results.Tier {
	var mean, peak [NumLv]float64
	for k := range mean {
		mean[k], peak[k] = level(Lv(k))
	}
	var r results.Tier
	FillTier(&r, t, &mean, &peak)
	counts.Fill(&r, perS)
	ends.Fill(&r)
	return r
}

// CPUPercent is a tier's CPU utilisation (%) over an interval in which its
// cores were busy for busy in all (in the interval's unit).
func (t *Tier) CPUPercent(busy float64, interval time.Duration) float64 {
	return 100 * busy / (float64(interval) * float64(max(t.Cores, 1)))
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

// Lv is one of a tier's levels (docs/counters.md): counters that go up and
// down over time, kept by both executors in an array indexed by Lv, and
// reported as their time average and maximum (FillTier) and their value
// at each sample (FillSample).
type Lv uint8

const (
	LvExecuting       Lv = iota // requests executing (Requests Executing)
	LvQueued                    // requests not yet executing
	LvOutstanding               // operations in progress (Calls Outstanding)
	LvThreadsBusy               // threads busy, both pools
	LvThreads                   // threads that exist, both pools
	LvThreadQueue               // requests waiting for a thread, both pools
	LvMemory                    // bytes held by the requests in the tier (Tier.MemoryPerRequest)
	LvCPU                       // cores busy with the tier's demands
	LvCurrent                   // requests queued or executing (Requests Current)
	LvAppQueued                 // the admission queue alone (Requests Queued)
	LvPipelines                 // HttpApplication instances (Pipeline Instance Count)
	LvInstances                 // MaxConcurrentInstances slots in use
	LvWorkerBusy                // worker threads busy
	LvWorkers                   // worker threads that exist
	LvIOBusy                    // I/O threads busy
	LvIOThreads                 // I/O threads that exist
	LvListenerWaiting           // connections waiting in the netTcp listener (TierState.ListenWaiting)
	NumLv
)

// Tally is a tier's counters as one executor keeps them, for Visit: the
// simulator's over virtual time, real mode's under its locks. Durations
// are simulated.
type Tally interface {
	Level(k Lv, delta float64) // level k changes by delta now
	Waited(d time.Duration)    // a request starts executing after waiting d (TierCounts.Waited); on ASP.NET it takes an HttpApplication (AppPool.Take)
	Executed(d time.Duration)  // a request that executed for d ends (TierCounts.Executed); on ASP.NET it gives its HttpApplication back
	OpStarted()                // TierCounts.OpStarted
	OpEnded(d time.Duration)   // TierCounts.OpEnded
}

// Visit is one request's passage through its tier's counters: the points
// of its life at which both executors count it (docs/counters.md). Times
// are simulated instants.
type Visit struct {
	// In: counted as arrived (a request refused at the door never is);
	// Exec from the start of execution (ExecAt); InOp while its operation
	// runs (from OpAt); Left: its ASP.NET request ended before the
	// request did (a one-way request answered).
	In, Exec, InOp, Left bool
	ExecAt, OpAt         time.Duration
}

// Enter counts a request admitted or queued at the door: current, queued,
// and its memory.
func (v *Visit) Enter(c Tally, memory int64) {
	v.In = true
	c.Level(LvCurrent, 1)
	c.Level(LvQueued, 1)
	c.Level(LvMemory, float64(memory))
}

// StartExec is the request leaving the queues, at now, having arrived at
// arrived: it is executing (Requests Executing; Request Wait Time ends).
func (v *Visit) StartExec(c Tally, now, arrived time.Duration) {
	if v.Exec {
		return
	}
	v.Exec, v.ExecAt = true, now
	c.Level(LvQueued, -1)
	c.Level(LvExecuting, 1)
	c.Waited(now - arrived)
}

// StartOp is the operation starting (WCF's MethodCalled: Calls, Calls Per
// Second, Calls Outstanding).
func (v *Visit) StartOp(c Tally, now time.Duration) {
	v.InOp, v.OpAt = true, now
	c.Level(LvOutstanding, 1)
	c.OpStarted()
}

// EndOp is the operation returning, or ending with the request (Calls
// Duration).
func (v *Visit) EndOp(c Tally, now time.Duration) {
	v.InOp = false
	c.Level(LvOutstanding, -1)
	c.OpEnded(now - v.OpAt)
}

// endRequest ends the request's counters (Requests Current, Executing or
// Queued, Request Execution Time, its HttpApplication instance).
func (v *Visit) endRequest(c Tally, now time.Duration) {
	c.Level(LvCurrent, -1)
	if v.Exec {
		c.Level(LvExecuting, -1)
		c.Executed(now - v.ExecAt)
	} else {
		c.Level(LvQueued, -1)
	}
}

// Answered is a one-way request answered on an ASP.NET host: its ASP.NET
// request ends there (the operation goes on).
func (v *Visit) Answered(c Tally, now time.Duration) {
	if v.In {
		v.endRequest(c, now)
		v.Left = true
	}
}

// Leave is the request ending: its operation if it still runs, its
// memory, its ASP.NET request if not answered before.
func (v *Visit) Leave(c Tally, now time.Duration, memory int64) {
	if v.InOp {
		v.EndOp(c, now)
	}
	if v.In {
		c.Level(LvMemory, -float64(memory))
		if !v.Left {
			v.endRequest(c, now)
		}
	}
}

// FillSample fills a time-series sample of a tier from its levels' values
// now (v, indexed by Lv) and its CPU utilisation over the interval (%).
func FillSample(s *results.TierSample, v *[NumLv]float64, cpu float64) {
	*s = results.TierSample{
		Executing:   v[LvExecuting],
		Queued:      v[LvQueued],
		Outstanding: v[LvOutstanding],
		ThreadsBusy: v[LvThreadsBusy],
		Threads:     v[LvThreads],
		ThreadQueue: v[LvThreadQueue],
		CPU:         cpu,
		MemoryMB:    v[LvMemory] / (1 << 20),

		Current:    v[LvCurrent],
		AppQueued:  v[LvAppQueued],
		Pipelines:  v[LvPipelines],
		Instances:  v[LvInstances],
		WorkerBusy: v[LvWorkerBusy],
		Workers:    v[LvWorkers],
		IOBusy:     v[LvIOBusy],
		IOThreads:  v[LvIOThreads],
	}
}

// FillTier fills the levels of a tier's result from their time averages
// and maxima over the measured period (indexed by Lv), and what the tier's
// settings say of it.
func FillTier(r *results.Tier, t *Tier, mean, peak *[NumLv]float64) {
	r.Name, r.Cores, r.Machine, r.Host, r.DotNet, r.WCF = t.Name, t.Cores, t.Machine, t.Host.String(), t.DotNet, t.WCF != nil
	r.CPUUtil = mean[LvCPU] / float64(max(t.Cores, 1))
	r.ExecutingMean, r.ExecutingMax = mean[LvExecuting], peak[LvExecuting]
	r.QueuedMean, r.QueuedMax = mean[LvQueued], peak[LvQueued]
	r.CurrentMean, r.CurrentMax = mean[LvCurrent], peak[LvCurrent]
	r.AppQueuedMean, r.AppQueuedMax = mean[LvAppQueued], peak[LvAppQueued]
	r.PipelinesMean, r.PipelinesMax = mean[LvPipelines], peak[LvPipelines]
	r.OutstandingMean, r.OutstandingMax = mean[LvOutstanding], peak[LvOutstanding]
	r.InstancesMean, r.InstancesMax = mean[LvInstances], peak[LvInstances]
	r.ListenerWaitingMean, r.ListenerWaitingMax = mean[LvListenerWaiting], peak[LvListenerWaiting]
	r.ThreadsBusyMean, r.ThreadsBusyMax = mean[LvThreadsBusy], peak[LvThreadsBusy]
	r.ThreadsMax = peak[LvThreads]
	r.ThreadQueueMean = mean[LvThreadQueue]
	r.WorkerBusyMean, r.WorkerBusyMax = mean[LvWorkerBusy], peak[LvWorkerBusy]
	r.WorkersMean, r.WorkersMax = mean[LvWorkers], peak[LvWorkers]
	r.IOBusyMean, r.IOBusyMax = mean[LvIOBusy], peak[LvIOBusy]
	r.IOThreadsMean, r.IOThreadsMax = mean[LvIOThreads], peak[LvIOThreads]
	r.MemoryMaxMB = peak[LvMemory] / (1 << 20)
}

// TierEnds are what a tier counts of its requests' ends over the measured
// period, the same in both executors (real mode locks them).
type TierEnds struct {
	Completed, Rejected, Aborted int64
	Wasted                       time.Duration  // CPU spent on work nobody waits for any more
	Resp                         *sim.Histogram // arrival to reply of the requests completed
	served, waited               int64          // completed, and of those the ones that waited in a queue
}

// NewTierEnds returns empty counts.
func NewTierEnds() TierEnds { return TierEnds{Resp: sim.NewHistogram()} }

// Reset starts the measured period.
func (e *TierEnds) Reset() {
	e.Completed, e.Rejected, e.Aborted, e.Wasted = 0, 0, 0, 0
	e.Resp.Reset()
	e.served, e.waited = 0, 0
}

// Done counts a request completed d after it arrived; queued: it waited
// in one of the tier's queues.
func (e *TierEnds) Done(d time.Duration, queued bool) {
	e.Completed++
	e.Resp.Record(d)
	e.served++
	if queued {
		e.waited++
	}
}

// Fill fills a tier's result with the counts.
func (e *TierEnds) Fill(r *results.Tier) {
	r.Completed, r.Rejected, r.Aborted, r.WastedCPUSeconds = e.Completed, e.Rejected, e.Aborted, e.Wasted.Seconds()
	if e.Resp.Count() > 0 {
		r.ResponseMean = e.Resp.Mean().Seconds()
		r.ResponseP50 = e.Resp.Quantile(0.5).Seconds()
		r.ResponseP99 = e.Resp.Quantile(0.99).Seconds()
	}
	if e.served > 0 {
		r.PWait = float64(e.waited) / float64(e.served)
	}
}
