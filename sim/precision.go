package sim

import (
	"fmt"
	"math"
	"time"
)

// defaultMinBatches is PrecisionRule.MinBatches when it is zero.
const defaultMinBatches = 20

// PrecisionRule says when a run has estimated a mean precisely enough: the
// relative half-width of its confidence interval is small enough, or the
// horizon is reached, whichever comes first (sequential stopping, Law &
// Kelton ch. 9).
type PrecisionRule struct {
	// RelHalfWidth is the target: stop when half-width <= RelHalfWidth·|mean|
	// (e.g. 0.01 for 1%). A mean of 0 is only met by a half-width of 0.
	RelHalfWidth float64
	// Level is the confidence level of the interval. Zero means 0.95.
	Level float64
	// Check is how much virtual time passes between checks; it must be
	// positive. The first check is at Check after the start.
	Check time.Duration
	// MinBatches is the least number of full batches before stopping. Zero
	// means 20: with fewer, the t interval rests on a poor variance estimate
	// and the run could stop on a lucky one.
	MinBatches int
	// Max is the hard horizon: the run never goes beyond it.
	Max Time
}

// RunPrecise runs e until rule is met on bm, which the model feeds through
// bm.Add as the run goes, or until rule.Max. It advances the clock a Check at
// a time with e.Run, so events at the stop instant have all run, and tests
// the rule after each step. It returns the instant it stopped at and whether
// the precision target was met; if the model calls e.Stop, or the engine is
// interrupted, it returns then.
//
// A stopping rule makes the run length random, which biases the interval
// slightly (it tends to stop when the spread happens to look small); read the
// final interval at a higher level, or confirm with replications, when that
// matters.
func RunPrecise(e *Engine, rule PrecisionRule, bm *BatchMeans) (stoppedAt Time, reached bool) {
	if rule.Check <= 0 {
		panic(fmt.Sprintf("sim: RunPrecise: Check must be positive, got %v", rule.Check))
	}
	level := rule.Level
	if level == 0 {
		level = 0.95
	}
	minBatches := rule.MinBatches
	if minBatches == 0 {
		minBatches = defaultMinBatches
	}
	met := func() bool {
		mean, half, k := bm.CI(level)
		return k >= max(minBatches, 2) && half <= rule.RelHalfWidth*math.Abs(mean)
	}
	for e.Now() < rule.Max {
		next := min(e.Now().Add(rule.Check), rule.Max)
		e.Run(next)
		if e.Interrupted() {
			return e.Now(), false
		}
		if met() {
			return e.Now(), true
		}
		if e.Now() < next { // the model called Stop
			return e.Now(), false
		}
	}
	return e.Now(), false
}
