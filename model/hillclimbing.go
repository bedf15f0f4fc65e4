package model

import (
	"math"
	"time"
)

// HillClimbing is the CLR 4+ thread pool's concurrency controller
// (Hellerstein, Morrison and Eilebrecht, "Optimizing Concurrency Levels in
// the .NET ThreadPool", 2008), as dotnet/runtime implements it in
// PortableThreadPool.HillClimbing and CoreCLR in hillclimbing.cpp (the
// same algorithm and defaults; docs/dotnet.md §3e).
//
// It is fed samples — how long, how many work items completed — and moves
// the pool's goal (the number of threads allowed to work at once): a
// control setting plus a square wave of period WavePeriod samples. The
// throughput's component at the wave's frequency, compared with the
// thread count's, says whether the last threads added paid for
// themselves: the setting climbs while a thread more brings more than
// Bias of the throughput per thread, and falls back when it brings less.
//
// It has no clock and no randomness of its own: the pool calls Update
// with each sample's length, and the length of the next sample is drawn
// from Rand (a named tsim stream, where the runtime uses an unseeded
// Random).
type HillClimbing struct {
	P    HillClimbingParams
	Rand interface{ IntN(n int) int }

	control         float64 // the control setting, in threads (fractional)
	totalSamples    int64
	lastThreadCount int
	averageNoise    float64 // smoothed throughput noise at the adjacent frequencies
	accSeconds      float64 // a sample too coarse to use is added to the next
	accCompletions  int
	samples         []float64 // throughput of the last samples (a ring)
	threadCounts    []float64 // the goal during each
	currentSampleMs int

	// Last is what the last Update computed, for tests and traces.
	Last HillClimbingStep
}

// HillClimbingParams are the controller's settings; DefaultHillClimbing
// gives the runtime's defaults (dotnet/runtime
// PortableThreadPool.HillClimbing.CreateHillClimber, "default values
// pulled from CoreCLR"; CoreCLR clrconfignames.h HillClimbing_*).
type HillClimbingParams struct {
	WavePeriod              int     // samples per period of the square wave (4)
	WaveHistorySize         int     // periods kept (8: 32 samples)
	MaxWaveMagnitude        int     // threads (20)
	WaveMagnitudeMultiplier float64 // 1
	Bias                    float64 // target throughput ratio: the gain per thread below which adding is not worth it (0.15)
	TargetSignalToNoise     float64 // 3
	MaxChangePerSecond      float64 // threads per second of sample (4)
	MaxChangePerSample      float64 // threads (20)
	SampleIntervalLowMs     int     // a sample lasts at least a random whole number of ms in [10, 200]
	SampleIntervalHighMs    int
	ErrorSmoothingFactor    float64 // 0.01
	GainExponent            float64 // 2
	MaxSampleError          float64 // a sample must have more than (threads − 1) / 0.15 completions
	CPUHigh                 int     // no move up above this CPU % (PortableThreadPool.CpuUtilizationHigh, 95)
}

// DefaultHillClimbing returns the runtime's defaults (docs/dotnet.md §3e).
func DefaultHillClimbing() HillClimbingParams {
	return HillClimbingParams{
		WavePeriod: 4, WaveHistorySize: 8, MaxWaveMagnitude: 20, WaveMagnitudeMultiplier: 1,
		Bias: 0.15, TargetSignalToNoise: 3, MaxChangePerSecond: 4, MaxChangePerSample: 20,
		SampleIntervalLowMs: 10, SampleIntervalHighMs: 200, ErrorSmoothingFactor: 0.01,
		GainExponent: 2, MaxSampleError: 0.15, CPUHigh: 95,
	}
}

// HillClimbingTransition names why the goal moved, as the runtime's
// StateOrTransition does (its ETW event ThreadPoolWorkerThreadAdjustment
// reports it).
type HillClimbingTransition uint8

const (
	HCWarmup HillClimbingTransition = iota // too few samples yet: the wave alone moves the goal
	HCInitializing
	HCClimbingMove
	HCStabilizing // no thread wave to measure against
	HCStarvation  // the gate thread raised the goal (ForceChange)
	HCThreadTimedOut
	HCCoarse // the sample was too coarse and was kept for the next (no ETW state: tsim's)
)

var hcNames = [...]string{"warmup", "initializing", "climbing", "stabilizing", "starvation", "timed-out", "coarse"}

func (s HillClimbingTransition) String() string { return hcNames[s] }

// HillClimbingStep is one Update's arithmetic (the runtime's ETW event
// ThreadPoolWorkerThreadAdjustmentStats carries the same figures).
type HillClimbingStep struct {
	State           HillClimbingTransition
	Seconds         float64 // the sample's length, coarse samples before it included
	Completions     int
	Throughput      float64 // completions per second
	ThreadWave      complex128
	ThroughputWave  complex128
	Noise           float64 // throughput noise of this sample (adjacent frequencies)
	AverageNoise    float64
	Ratio           complex128
	Confidence      float64
	Move            float64 // threads, added to the control setting
	Control         float64
	WaveMagnitude   int
	Goal            int // the new goal
	NextIntervalMs  int
	TotalSamples    int64
	UsedSampleCount int
}

// NewHillClimbing returns a controller with parameters p drawing its
// sample intervals from rnd.
func NewHillClimbing(p HillClimbingParams, rnd interface{ IntN(n int) int }) *HillClimbing {
	n := p.WavePeriod * p.WaveHistorySize
	h := &HillClimbing{P: p, Rand: rnd, samples: make([]float64, n), threadCounts: make([]float64, n)}
	h.currentSampleMs = h.randomInterval()
	return h
}

func (h *HillClimbing) randomInterval() int {
	lo, hi := h.P.SampleIntervalLowMs, h.P.SampleIntervalHighMs
	return lo + h.Rand.IntN(hi-lo+1)
}

// SampleInterval is the length of the first sample.
func (h *HillClimbing) SampleInterval() time.Duration {
	return time.Duration(h.currentSampleMs) * time.Millisecond
}

// Update takes a sample — seconds long, completions work items completed,
// the goal having been current during it — and returns the new goal and
// how long the next sample should last at least. cpu is the machine's
// CPU use in percent, min and max the pool's limits.
func (h *HillClimbing) Update(current int, seconds float64, completions int, cpu, minThreads, maxThreads int) (goal int, next time.Duration) {
	p := &h.P
	if current != h.lastThreadCount {
		h.ForceChange(current, HCInitializing)
	}
	seconds += h.accSeconds
	completions += h.accCompletions
	// Each thread's count may be off by the item it was in at either end
	// of the sample, except the one reporting; a sample whose error could
	// reach MaxSampleError waits for more (10 ms more at least).
	if h.totalSamples > 0 && (float64(current)-1)/float64(completions) >= p.MaxSampleError {
		h.accSeconds, h.accCompletions = seconds, completions
		h.Last = HillClimbingStep{State: HCCoarse, Seconds: seconds, Completions: completions, Goal: current, NextIntervalMs: 10, TotalSamples: h.totalSamples, Control: h.control}
		return current, 10 * time.Millisecond
	}
	h.accSeconds, h.accCompletions = 0, 0

	throughput := float64(completions) / seconds
	n := int64(len(h.samples))
	i := h.totalSamples % n
	h.samples[i] = throughput
	h.threadCounts[i] = float64(current)
	h.totalSamples++

	st := HillClimbingStep{State: HCWarmup, Seconds: seconds, Completions: completions, Throughput: throughput, TotalSamples: h.totalSamples}
	var ratio complex128
	// Whole periods only, at least two of them, the newest sample
	// included and the very first (whose start is arbitrary) never.
	count := int(min(h.totalSamples-1, n)) / p.WavePeriod * p.WavePeriod
	st.UsedSampleCount = count
	if count > p.WavePeriod {
		var sum, threads float64
		for k := 0; k < count; k++ {
			j := (h.totalSamples - int64(count) + int64(k)) % n
			sum += h.samples[j]
			threads += h.threadCounts[j]
		}
		avgThroughput, avgThreads := sum/float64(count), threads/float64(count)
		if avgThroughput > 0 && avgThreads > 0 {
			period := float64(p.WavePeriod)
			adjacent1 := float64(count) / (float64(count)/period + 1)
			adjacent2 := float64(count) / (float64(count)/period - 1)
			st.ThroughputWave = h.waveComponent(h.samples, count, period) / complex(avgThroughput, 0)
			st.Noise = cabs(h.waveComponent(h.samples, count, adjacent1) / complex(avgThroughput, 0))
			if adjacent2 <= float64(count) {
				st.Noise = math.Max(st.Noise, cabs(h.waveComponent(h.samples, count, adjacent2)/complex(avgThroughput, 0)))
			}
			st.ThreadWave = h.waveComponent(h.threadCounts, count, period) / complex(avgThreads, 0)
			if h.averageNoise == 0 {
				h.averageNoise = st.Noise
			} else {
				h.averageNoise = p.ErrorSmoothingFactor*st.Noise + (1-p.ErrorSmoothingFactor)*h.averageNoise
			}
			if cabs(st.ThreadWave) > 0 {
				ratio = (st.ThroughputWave - complex(p.Bias, 0)*st.ThreadWave) / st.ThreadWave
				st.State = HCClimbingMove
			} else {
				st.State = HCStabilizing
			}
			noise := math.Max(h.averageNoise, st.Noise)
			if noise > 0 {
				st.Confidence = cabs(st.ThreadWave) / noise / p.TargetSignalToNoise
			} else {
				st.Confidence = 1 // no noise at all
			}
		}
	}
	st.Ratio = ratio

	// Only the part of the ratio in phase with the wave moves the
	// setting; the gain is non-linear (small ratios move little) and
	// proportional to the sample's length.
	move := math.Min(1, math.Max(-1, real(ratio)))
	move *= math.Min(1, math.Max(0, st.Confidence))
	sign := 1.0
	if move < 0 {
		sign = -1
	}
	move = math.Pow(math.Abs(move), p.GainExponent) * sign * (p.MaxChangePerSecond * seconds)
	move = math.Min(move, p.MaxChangePerSample)
	if move > 0 && cpu > p.CPUHigh {
		move = 0
	}
	h.control += move
	st.Move = move

	magnitude := int(0.5 + h.control*h.averageNoise*p.TargetSignalToNoise*p.WaveMagnitudeMultiplier*2)
	magnitude = max(1, min(magnitude, p.MaxWaveMagnitude))
	h.control = math.Max(float64(minThreads), math.Min(float64(maxThreads-magnitude), h.control))

	goal = int(h.control + float64(magnitude)*float64((h.totalSamples/int64(p.WavePeriod/2))%2))
	goal = max(minThreads, min(maxThreads, goal))
	if goal != current {
		h.changeThreadCount(goal)
	}
	nextMs := h.currentSampleMs
	if real(ratio) < 0 && goal == minThreads {
		// At the minimum and hurting: stay there longer before trying
		// higher again.
		nextMs = int(0.5 + float64(h.currentSampleMs)*(10*math.Min(-real(ratio), 1)))
	}
	st.AverageNoise, st.Control, st.WaveMagnitude, st.Goal, st.NextIntervalMs = h.averageNoise, h.control, magnitude, goal, nextMs
	h.Last = st
	return goal, time.Duration(nextMs) * time.Millisecond
}

// ForceChange records a goal set from outside (starvation, a thread timed
// out, a raised minimum): the control setting moves by as much.
func (h *HillClimbing) ForceChange(goal int, _ HillClimbingTransition) {
	if goal != h.lastThreadCount {
		h.control += float64(goal - h.lastThreadCount)
		h.changeThreadCount(goal)
	}
}

// changeThreadCount draws a new sample interval whenever the goal moves.
func (h *HillClimbing) changeThreadCount(goal int) {
	h.lastThreadCount = goal
	h.currentSampleMs = h.randomInterval()
}

// Control is the control setting (threads, fractional).
func (h *HillClimbing) Control() float64 { return h.control }

// waveComponent is the component of the last count samples at the given
// period (Goertzel's algorithm), divided by count.
func (h *HillClimbing) waveComponent(ring []float64, count int, period float64) complex128 {
	w := 2 * math.Pi / period
	cos := math.Cos(w)
	coeff := 2 * cos
	var q1, q2 float64
	n := int64(len(ring))
	for k := 0; k < count; k++ {
		q0 := coeff*q1 - q2 + ring[(h.totalSamples-int64(count)+int64(k))%n]
		q2, q1 = q1, q0
	}
	return complex((q1-q2*cos)/float64(count), q2*math.Sin(w)/float64(count))
}

func cabs(c complex128) float64 { return math.Hypot(real(c), imag(c)) }
