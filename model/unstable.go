package model

import (
	"fmt"
	"math"
	"time"
)

// An open load above capacity (ρ > 1) makes a queue grow for as long as
// the run lasts: nothing in the topology bounds it, and each request in it
// holds memory in either executor, until the process runs out (one such
// run crashed after 134 simulated seconds). Stability is the watch both
// executors keep on it, so that such a run stops with a clear outcome
// instead: when the requests under way grow past a bound far beyond what a
// stable run of the topology holds, and then keep growing to twice the
// bound, the run is unstable and ends there. Its result says where the
// requests piled up, when, and by how much the load exceeds capacity.
//
// The watch is plain arithmetic on counts the executors keep anyway: it
// draws no random number and schedules nothing, so a stable run is the
// same run, event for event and byte for byte, with it or without it.

// StableFloor is the smallest bound: 10,000 requests under way. A stable
// queue holds that many only at an extreme utilisation (an M/M/1 queue at
// ρ = 0.99 exceeds 10,000 with probability ρ^10000 ≈ e^-100), while 20,000
// requests cost the simulator a few megabytes and real mode 20,000
// goroutines.
const StableFloor = 10000

// StabilityBound is the number of requests under way past which a run of
// top is watched for growth (it is unstable when they reach twice it):
// the largest of
//
//   - StableFloor;
//   - twice the peak of a closed load's users, which a stable run may all
//     have under way (and more, counting the work their timed-out
//     requests leave behind);
//   - 16 × the peak arrival rate × the response time of one request with
//     no queueing anywhere (Analysis.D): by Little's law a stable run has
//     rate × its response time under way, and 16× the unqueued time is
//     more than an M/M/1 queue holds on average below ρ = 0.94.
//
// Every limit of the topology bounds requests holding it, not those
// waiting for it, so limits do not raise the bound: a run whose load a
// limit refuses (a full admission queue, max_pending) never grows.
func StabilityBound(top *Topology) int64 {
	n := float64(StableFloor)
	n = max(n, 2*top.Load.Users.Max())
	if rate := peakRate(top); rate > 0 {
		d := Analyse(top).D
		n = max(n, 16*rate*d.Seconds())
	}
	if n > 1<<40 || math.IsNaN(n) {
		n = 1 << 40
	}
	return int64(math.Ceil(n))
}

// peakRate is an open load's peak arrival rate, a replayed trace's mean.
func peakRate(top *Topology) float64 {
	l := &top.Load
	if l.Kind != LoadOpen {
		return 0
	}
	rate := l.Rate.Max()
	if n := len(l.Arrivals); n > 0 && top.Duration > 0 {
		rate = max(rate, float64(n)/top.Duration.Seconds())
	}
	return rate
}

// Stability watches one run: the executor calls Observe now and then (at
// every 64th request generated, say) with what is under way; Observe
// reports true once the run is unstable, and Outcome says why.
type Stability struct {
	top   *Topology
	bound int64 // 0 until the floor is first passed (StabilityBound)

	// Since the requests under way first passed bound in this episode:
	// when, how many, and the requests generated and served by then.
	past          bool
	at            time.Duration
	gen0, served0 int64
	verdict       string
}

// NewStability returns the watch for a run of top.
func NewStability(top *Topology) *Stability { return &Stability{top: top} }

// Backlog is what a run has under way at one instant: the largest number of
// requests in one place (Where names it: "requests in flight", "tier
// \"be\""), and since the run began, the requests generated and those the
// system served (replies of its entry tiers, whoever still waited for
// them).
type Backlog struct {
	Now       time.Duration
	UnderWay  int64
	Where     string
	Generated int64
	Served    int64
}

// Observe takes one look; it reports whether the run is unstable (from
// then on, always).
func (s *Stability) Observe(l Backlog) bool {
	if s.verdict != "" {
		return true
	}
	gate := int64(StableFloor)
	if s.bound > 0 {
		gate = min(gate, s.bound)
	}
	if l.UnderWay <= gate && !s.past {
		return false
	}
	if s.bound == 0 {
		s.bound = StabilityBound(s.top)
	}
	switch {
	case !s.past && l.UnderWay > s.bound:
		s.past, s.at, s.gen0, s.served0 = true, l.Now, l.Generated, l.Served
	case s.past && l.UnderWay < s.bound/2:
		s.past = false // it drained: a passing surge, not a trend
	case s.past && l.UnderWay >= 2*s.bound:
		s.verdict = s.explain(l)
		return true
	}
	return false
}

// Bound is the bound the watch applies: StabilityBound(top), worked out
// when the requests under way first pass StableFloor (0 until then), or
// what SetBound set.
func (s *Stability) Bound() int64 { return s.bound }

// SetBound fixes the bound (tests of real mode, which cannot afford
// 20,000 requests under way).
func (s *Stability) SetBound(n int64) { s.bound = max(n, 1) }

// Outcome is why the run is unstable ("" while it is not).
func (s *Stability) Outcome() string { return s.verdict }

// explain words the verdict at l: where the requests piled up, when they
// passed the bound, and the arrival and service rates since.
func (s *Stability) explain(l Backlog) string {
	span := max((l.Now - s.at).Seconds(), 1e-9)
	arr := float64(l.Generated-s.gen0) / span
	done := float64(l.Served-s.served0) / span
	excess := "the load exceeds capacity"
	if done > 0 {
		excess = fmt.Sprintf("the load exceeds capacity by about %.0f%%", 100*(arr/done-1))
	} else {
		excess += " (nothing was served meanwhile)"
	}
	return fmt.Sprintf("unstable: %s grew past %d at t=%.1fs and kept growing to %d at t=%.1fs, where the run stopped; %s (arrivals %.3g/s, completions %.3g/s)",
		l.Where, s.bound, s.at.Seconds(), l.UnderWay, l.Now.Seconds(), excess, arr, done)
}
