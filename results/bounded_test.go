package results

import "testing"

func TestPointSamplerStaysBoundedAndEven(t *testing.T) {
	s := PointSampler{Max: 100}
	for i := 1; i <= 10000; i++ {
		s.Add(Point{T: float64(i)})
	}
	ps := s.Points()
	if len(ps) > 100 || len(ps) < 50 {
		t.Fatalf("%d points kept, want 50..100", len(ps))
	}
	// Every kept point is a multiple of the final stride: evenly spread.
	stride := ps[1].T - ps[0].T
	for i := 1; i < len(ps); i++ {
		if ps[i].T-ps[i-1].T != stride {
			t.Fatalf("uneven spacing at %d: %v after %v (stride %v)", i, ps[i].T, ps[i-1].T, stride)
		}
	}
}

func TestCompactSeries(t *testing.T) {
	mk := func(tt, cpu float64) Sample { return Sample{T: tt, Tiers: []TierSample{{CPU: cpu, Executing: tt}}} }
	s := []Sample{mk(0, 0), mk(1, 10), mk(2, 30), mk(3, 50), mk(4, 70)}
	got := CompactSeries(s)
	if len(got) != 3 || got[0].T != 0 || got[1].T != 2 || got[2].T != 4 {
		t.Fatalf("times %v", got)
	}
	if got[1].Tiers[0].CPU != 20 || got[2].Tiers[0].CPU != 60 || got[1].Tiers[0].Executing != 2 {
		t.Errorf("merged %+v", got)
	}
}

// Keeping Max points takes a few allocations, not append's growth by a
// quarter at a time (about five times the final size allocated on the way).
func TestPointSamplerGrowsInFewSteps(t *testing.T) {
	allocs := testing.AllocsPerRun(1, func() {
		s := PointSampler{Max: 20000}
		for i := range 100000 {
			s.Add(Point{T: float64(i)})
		}
	})
	if allocs > 5 {
		t.Fatalf("%v allocations to keep 20,000 points, want at most 5", allocs)
	}
}
