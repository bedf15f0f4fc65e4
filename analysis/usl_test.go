package analysis

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// uslData is the law with σ, κ, λ at ns, each throughput times (1 + ε),
// ε normal with standard deviation noise (a fixed stream).
func uslData(sigma, kappa, lambda float64, ns []float64, noise float64, rng *rand.Rand) []results.USLPoint {
	u := results.USL{Sigma: sigma, Kappa: kappa, Lambda: lambda}
	var pts []results.USLPoint
	for _, n := range ns {
		y := u.At(n)
		if noise > 0 {
			y *= 1 + noise*rng.NormFloat64()
		}
		pts = append(pts, results.USLPoint{X: n, Y: y, YLo: y, YHi: y})
	}
	return pts
}

var uslNs = []float64{1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128}

func within(iv results.Interval, x float64) bool { return !iv.None() && iv.Lo <= x && x <= iv.Hi }

// Exact data give back their parameters, R² = 1 and the peak.
func TestFitUSLExact(t *testing.T) {
	u, err := FitUSL(uslData(0.05, 0.002, 10, uslNs, 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(u.Sigma-0.05) > 1e-6 || math.Abs(u.Kappa-0.002) > 1e-8 || math.Abs(u.Lambda-10) > 1e-5 || u.R2 < 1-1e-9 {
		t.Errorf("σ %v κ %v λ %v R² %v", u.Sigma, u.Kappa, u.Lambda, u.R2)
	}
	if want := math.Sqrt(0.95 / 0.002); math.Abs(u.NStar-want) > 1e-3 || math.Abs(u.XStar-u.At(want)) > 1e-3 {
		t.Errorf("N* %v X* %v, want %v and %v", u.NStar, u.XStar, want, u.At(want))
	}
}

// Noisy data (2% per point): σ, κ, λ and N* within their 95% intervals
// (for one data set; a 95% interval misses one in twenty), and over 400
// data sets the intervals hold the true values about 95% of the time
// (the delta method's N* may get somewhat less).
func TestFitUSLRecoversWithinIntervals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const sigma, kappa, lambda = 0.05, 0.002, 10.0
	nstar := math.Sqrt((1 - sigma) / kappa)
	u, err := FitUSL(uslData(sigma, kappa, lambda, uslNs, 0.02, rand.New(rand.NewPCG(1, 2))))
	if err != nil {
		t.Fatal(err)
	}
	if !within(u.SigmaCI, sigma) || !within(u.KappaCI, kappa) || !within(u.LambdaCI, lambda) || !within(u.NStarCI, nstar) || u.R2 < 0.95 {
		t.Errorf("σ %v %v, κ %v %v, λ %v %v, N* %v %v, R² %v", u.Sigma, u.SigmaCI, u.Kappa, u.KappaCI, u.Lambda, u.LambdaCI, u.NStar, u.NStarCI, u.R2)
	}
	var cover [4]int
	const sets = 400
	for range sets {
		u, err := FitUSL(uslData(sigma, kappa, lambda, uslNs, 0.02, rng))
		if err != nil {
			t.Fatal(err)
		}
		for i, ok := range []bool{within(u.SigmaCI, sigma), within(u.KappaCI, kappa), within(u.LambdaCI, lambda), within(u.NStarCI, nstar)} {
			if ok {
				cover[i]++
			}
		}
	}
	t.Logf("coverage of the 95%% intervals over %d data sets: σ %d, κ %d, λ %d, N* %d", sets, cover[0], cover[1], cover[2], cover[3])
	for i, name := range []string{"σ", "κ", "λ", "N*"} {
		// Binomial(400, 0.95): 380 ± 2 sd of 4.4; N* gets more room.
		lo := 0.90
		if name == "N*" {
			lo = 0.85
		}
		if c := float64(cover[i]) / sets; c < lo || c > 0.995 {
			t.Errorf("the 95%% interval of %s held it in %.1f%% of %d data sets", name, 100*c, sets)
		}
	}
}

// Without coherency (κ = 0: Amdahl's law) there is no peak: κ is held at
// 0 or its interval reaches 0, and N*, X* are none. Linear scaling holds
// both σ and κ at 0.
func TestFitUSLNoPeak(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	u, err := FitUSL(uslData(0.1, 0, 20, uslNs, 0.01, rng))
	if err != nil {
		t.Fatal(err)
	}
	if u.NStar != 0 || u.XStar != 0 || !u.NStarCI.None() || !(u.KappaCI.None() || u.KappaCI.Lo == 0) || !within(u.SigmaCI, 0.1) {
		t.Errorf("Amdahl: σ %v %v κ %v %v N* %v", u.Sigma, u.SigmaCI, u.Kappa, u.KappaCI, u.NStar)
	}
	u, err = FitUSL(uslData(0, 0, 5, uslNs, 0, nil))
	if err != nil {
		t.Fatal(err)
	}
	if u.Sigma != 0 || u.Kappa != 0 || math.Abs(u.Lambda-5) > 1e-9 || !u.SigmaCI.None() || !u.KappaCI.None() || u.NStar != 0 {
		t.Errorf("linear: %+v", u)
	}
}

// Fewer than 3 concurrencies cannot determine 3 parameters: an error that
// says so; exactly 3 fit exactly, without intervals; bad values are
// errors naming the point.
func TestFitUSLDegenerate(t *testing.T) {
	pts := uslData(0.05, 0.002, 10, []float64{1, 8}, 0, nil)
	if _, err := FitUSL(pts); !errors.Is(err, ErrUSLPoints) {
		t.Errorf("2 points: %v", err)
	}
	if _, err := FitUSL(append(pts, pts...)); !errors.Is(err, ErrUSLPoints) {
		t.Errorf("2 concurrencies twice: %v", err)
	}
	if _, err := FitUSL(nil); !errors.Is(err, ErrUSLPoints) {
		t.Errorf("none: %v", err)
	}
	u, err := FitUSL(uslData(0.05, 0.002, 10, []float64{1, 16, 64}, 0, nil))
	if err != nil || math.Abs(u.Kappa-0.002) > 1e-7 || !u.SigmaCI.None() || !u.NStarCI.None() || u.NStar == 0 {
		t.Errorf("3 points: %v %+v", err, u)
	}
	for _, bad := range []results.USLPoint{{X: 0, Y: 1}, {X: 2, Y: 0}, {X: 2, Y: math.NaN()}, {X: math.Inf(1), Y: 1}} {
		if _, err := FitUSL(append(uslData(0.05, 0.002, 10, []float64{1, 2, 4}, 0, nil), bad)); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// A sweep over a concurrency-like key is fitted line by line (a variant,
// and the values of the other axes); another key, or a line of fewer than
// 3 concurrencies (or of no throughput: nothing completed), is not; a
// line that cannot be fitted (a concurrency below 1) is named.
func TestFitSweep(t *testing.T) {
	law := results.USL{Sigma: 0.1, Kappa: 0.001, Lambda: 50}
	x := &results.Experiment{Sweep: []results.Axis{{Key: "load.users"}, {Key: "tier.be.cores"}}}
	add := func(variant string, n float64, cores string, y float64) {
		x.Scenarios = append(x.Scenarios, &results.Scenario{Variant: variant,
			Params: []results.Param{{Key: "load.users", Value: strconv.FormatFloat(n, 'g', -1, 64)}, {Key: "tier.be.cores", Value: cores}},
			Agg:    results.Aggregate{ThroughputPerS: y}})
		x.Finished++
	}
	for _, n := range []float64{1, 5, 10, 20, 40, 80} {
		add("base", n, "4", law.At(n))
		add("base", n, "8", 2*law.At(n))
		add("zero", n, "4", 0)
		add("half", n/2, "4", law.At(n))
	}
	for _, n := range []float64{1, 5} {
		add("short", n, "4", law.At(n))
	}
	problems := AttachUSL(x)
	if len(x.USL) != 2 || x.USL[0].Line != "variant base, tier.be.cores=4" || x.USL[1].Line != "variant base, tier.be.cores=8" {
		t.Fatalf("fits %+v", x.USL)
	}
	if u := x.USL[0]; math.Abs(u.Kappa-0.001) > 1e-8 || math.Abs(u.NStar-law.Peak()) > 1e-3 || u.XLabel != "users N" || len(u.Points) != 6 {
		t.Errorf("fit %+v", u)
	}
	if math.Abs(x.USL[1].Lambda-100) > 1e-6 {
		t.Errorf("the second line's λ = %v, want 100", x.USL[1].Lambda)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "variant half, tier.be.cores=4: no USL fit over load.users: usl: point 1: concurrency 0.5: want a finite number ≥ 1") {
		t.Errorf("problems %q", problems)
	}
	x.Sweep[0].Key = "load.call.reply_kb"
	if AttachUSL(x); x.USL != nil {
		t.Errorf("a sweep over reply_kb fitted: %+v", x.USL)
	}
}

// The hook for the contention mechanisms: with every mechanism off (a
// run whose contention counters are 0) nothing dominates; otherwise the
// one that took most does.
func TestDominantMechanism(t *testing.T) {
	r := &results.Run{Tiers: []results.Tier{{Name: "a"}}}
	if m, _, ok := Dominant(r); ok || len(Mechanisms) != 5 {
		t.Fatalf("%q dominates a run with every mechanism off (%d registered, want contention.go's 5)", m.Name, len(Mechanisms))
	}
	r.Tiers[0].GCTimePercent = 20
	r.Tiers = append(r.Tiers, results.Tier{Name: "b", SwitchCPUShare: 0.1, LockHandoffShare: 0.3})
	if m, s, ok := Dominant(r); !ok || m.Name != "a lock convoy" || s != 0.3 {
		t.Errorf("dominant %q %v %v, want the lock convoy (b's 30%%, over a's 20%% in GC)", m.Name, s, ok)
	}
	saved := Mechanisms
	defer func() { Mechanisms = saved }()
	Mechanisms = nil
	RegisterMechanism(Mechanism{Name: "context switches", Of: "of the CPU", Share: func(*results.Run) float64 { return 0.1 }})
	RegisterMechanism(Mechanism{Name: "garbage collection", Of: "of the CPU", Share: func(*results.Run) float64 { return 0.3 }})
	if m, s, ok := Dominant(r); !ok || m.Name != "garbage collection" || s != 0.3 {
		t.Errorf("dominant %v %v %v", m.Name, s, ok)
	}
}
