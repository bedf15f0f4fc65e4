package model

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// TierCounts: an interval's figures start afresh at each sample, the
// measured period's at warm-up, the raw totals never.
func TestTierCounts(t *testing.T) {
	var c TierCounts
	c.Arrived(false) // in the warm-up
	c.OpStarted(false)
	c.Rejected()
	c.ResetMeasured()
	c.Arrived(true)
	c.Waited(100*time.Millisecond, true)
	c.Executed(300*time.Millisecond, true)
	c.OpStarted(true)
	c.OpEnded(200*time.Millisecond, true)
	var s results.TierSample
	c.Sample(&s, 0.5) // a 2 s interval
	if s.RequestsPerS != 1 || s.CallsPerS != 1 || s.WaitTimeMS != 100 || s.ExecTimeMaxMS != 300 || s.CallDuration != 0.2 ||
		s.Calls != 2 || s.RequestsRejected != 1 || s.ExecN != 1 {
		t.Errorf("first interval %+v", s)
	}
	c.Sample(&s, 0.5)
	if s.RequestsPerS != 0 || s.ExecN != 0 || s.Calls != 2 || s.RequestsRejected != 1 {
		t.Errorf("an empty interval %+v: rates and durations afresh, totals kept", s)
	}
	var r results.Tier
	c.Fill(&r, 0.1) // a 10 s measured period
	if r.Arrived != 1 || r.Calls != 1 || r.RequestsPerS != 0.1 || r.WaitTimeMean != 0.1 || r.ExecTimeMax != 0.3 || r.CallDurationMean != 0.2 {
		t.Errorf("measured period %+v", r)
	}
}
