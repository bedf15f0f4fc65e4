package model

import (
	"math"
	"testing"
)

// fixedRand draws the lowest value every time (sample intervals do not
// change the goals of these tables).
type fixedRand struct{}

func (fixedRand) IntN(int) int { return 0 }

// TestHillClimbingTables feeds the controller one-second samples from two
// made-up pools and checks the goal after every sample against a table
// computed apart from tsim (an independent reading of dotnet/runtime's
// HillClimbing.Update, with the wave components as direct DFT sums where
// tsim uses Goertzel's recurrence), min 4, max 100, CPU low.
//
// By hand, the first rows of "linear" (every thread adds 10 items/s):
//   - samples 1–8 are warm-up (fewer than two whole wave periods after
//     the first sample): the goal is the control setting, 4, plus the
//     square wave of magnitude 1, high on samples 2–3 and 6–7 of each 4:
//     4 5 5 4 4 5 5 4;
//   - sample 9 measures samples 2–9 (threads 4 5 5 4 4 5 5 4): throughput
//     is exactly 10 × threads, so its wave over its mean equals the
//     threads' wave over theirs, ratio = (1 − 0.15) = 0.85, no noise
//     (confidence 1), move = 0.85² × 4 threads/s × 1 s = 2.89, control
//     6.89, wave low on sample 9: goal 6.
func TestHillClimbingTables(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tput  func(goal int) int // completions in a one-second sample
		goals []int
	}{
		{"linear", func(g int) int { return 10 * g },
			[]int{4, 5, 5, 4, 4, 5, 5, 4, 6, 8, 8, 7, 8, 9, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14}},
		// Threads beyond 12 add nothing: the climb slows (ratio 0.85 falls
		// to 0.4 by sample 40 as the samples from below 12 leave the window).
		{"saturating", func(g int) int { return 10 * min(g, 12) },
			[]int{4, 5, 5, 4, 4, 5, 5, 4, 6, 8, 8, 7, 8, 9, 12, 12, 12, 13, 13, 13, 13, 14, 14, 14,
				14, 15, 15, 15, 15, 16, 16, 16, 16, 17, 17, 16, 17, 18, 18, 17}},
	} {
		h := NewHillClimbing(DefaultHillClimbing(), fixedRand{})
		h.ForceChange(4, HCInitializing)
		g := 4
		for k, want := range tc.goals {
			g, _ = h.Update(g, 1, tc.tput(g), 0, 4, 100)
			if g != want {
				t.Fatalf("%s: sample %d: goal %d, want %d (step %+v)", tc.name, k+1, g, want, h.Last)
			}
		}
	}
	// The hand-computed sample 9, in full.
	h := NewHillClimbing(DefaultHillClimbing(), fixedRand{})
	h.ForceChange(4, HCInitializing)
	g := 4
	for k := 0; k < 9; k++ {
		g, _ = h.Update(g, 1, 10*g, 0, 4, 100)
	}
	if st := h.Last; st.State != HCClimbingMove || math.Abs(real(st.Ratio)-0.85) > 1e-12 || st.Confidence < 1 ||
		math.Abs(st.Move-2.89) > 1e-12 || math.Abs(st.Control-6.89) > 1e-12 || st.Goal != 6 || st.UsedSampleCount != 8 {
		t.Errorf("sample 9: %+v", st)
	}
}

// TestHillClimbingCoarseSamples: a sample whose count could be off by
// MaxSampleError is kept and extended by 10 ms (HillClimbing.Update):
// at 21 threads, 3 completions are too few; the next sample is added to
// it.
func TestHillClimbingCoarseSamples(t *testing.T) {
	h := NewHillClimbing(DefaultHillClimbing(), fixedRand{})
	h.ForceChange(21, HCInitializing)
	h.Update(21, 1, 1000, 0, 21, 100) // the first sample is always taken
	if g, next := h.Update(21, 0.1, 3, 0, 21, 100); g != 21 || next != 10e6 || h.Last.State != HCCoarse {
		t.Fatalf("coarse sample: goal %d, next %v, %+v", g, next, h.Last)
	}
	// (21 − 1) / (3 + 130) = 0.150… ≥ 0.15: still coarse; + 1 more is not.
	if h.Update(21, 0.9, 130, 0, 21, 100); h.Last.State != HCCoarse {
		t.Fatalf("133 completions taken: %+v", h.Last)
	}
	h.Update(21, 0.01, 1, 0, 21, 100)
	if st := h.Last; st.State == HCCoarse || st.Completions != 134 || math.Abs(st.Seconds-1.01) > 1e-12 || st.TotalSamples != 2 {
		t.Fatalf("134 completions in 1.01 s: %+v", st)
	}
}

// TestHillClimbingNoMoveUpWhenCPUHigh: above 95 % CPU a move up is
// refused; the wave goes on.
func TestHillClimbingNoMoveUpWhenCPUHigh(t *testing.T) {
	h := NewHillClimbing(DefaultHillClimbing(), fixedRand{})
	h.ForceChange(4, HCInitializing)
	g := 4
	for k := 0; k < 12; k++ {
		g, _ = h.Update(g, 1, 10*g, 96, 4, 100)
	}
	if h.Control() != 4 || h.Last.Move != 0 || real(h.Last.Ratio) <= 0 {
		t.Errorf("control %v after a climb at 96 %% CPU, last %+v", h.Control(), h.Last)
	}
}
