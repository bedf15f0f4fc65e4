package results

import (
	"math"
	"testing"
)

// Peak is where At is highest, N* = √((1−σ)/κ); without coherency there
// is none.
func TestUSLPeak(t *testing.T) {
	u := &USL{Sigma: 0.05, Kappa: 2e-4, Lambda: 12}
	n := u.Peak()
	if math.Abs(n-math.Sqrt(0.95/2e-4)) > 1e-9 {
		t.Fatalf("N* = %v", n)
	}
	for _, d := range []float64{-1, -0.01, 0.01, 1} {
		if u.At(n+d) > u.At(n) {
			t.Errorf("X(%v) = %v above X(N*) = %v", n+d, u.At(n+d), u.At(n))
		}
	}
	if got := u.At(1); got != 12 {
		t.Errorf("X(1) = %v, want λ", got)
	}
	if p := (&USL{Sigma: 0.1, Lambda: 1}).Peak(); p != 0 {
		t.Errorf("κ = 0: N* = %v, want 0 (none)", p)
	}
}
