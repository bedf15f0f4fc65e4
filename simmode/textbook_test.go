package simmode_test

import (
	"math"
	"os"
	"regexp"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// TestTextbookModels runs the experiment files of docs/textbook-models.md
// and checks their counters against the formulas the document quotes, as
// theory_test.go does: the 99% Student t interval over replications must
// cover the theory.
func TestTextbookModels(t *testing.T) {
	doc, err := os.ReadFile("../docs/textbook-models.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllSubmatch(doc, -1)
	type check struct {
		name string
		get  func(r *results.Run) float64
		want float64
	}
	tier := func(r *results.Run) *results.Tier { return &r.Tiers[0] }
	// The models' theory (the formulas are in theory_test.go).
	mmc := func(c int, lambda float64) (pw, w float64) {
		term, sum := 1.0, 0.0
		for k := 0; k < c; k++ {
			sum += term
			term *= lambda / float64(k+1)
		}
		top := term * float64(c) / (float64(c) - lambda)
		pw = top / (sum + top)
		return pw, pw/(float64(c)-lambda) + 1
	}
	mmck := func(c, k int, lambda float64) (block, l, w float64) {
		p := []float64{1}
		sum := 1.0
		for n := 1; n <= k; n++ {
			p = append(p, p[n-1]*lambda/float64(min(n, c)))
			sum += p[n]
		}
		for n := range p {
			l += float64(n) * p[n] / sum
		}
		block = p[k] / sum
		return block, l, l / (lambda * (1 - block))
	}
	erlangB := func(c int, a float64) float64 {
		b := 1.0
		for k := 1; k <= c; k++ {
			b = a * b / (float64(k) + a*b)
		}
		return b
	}
	mva := func(n int, z, d float64) (x, r, q float64) {
		for k := 1; k <= n; k++ {
			r = d * (1 + q)
			x = float64(k) / (r + z)
			q = x * r
		}
		return x, r, q
	}
	pw, w := mmc(2, 1.6)
	block, l, wk := mmck(2, 5, 2.5)
	b := erlangB(4, 3)
	x, r, q := mva(10, 4, 0.5)
	checks := map[string][]check{
		"mmc-cores": {
			{"P(wait) = Erlang C", func(r *results.Run) float64 { return tier(r).PWait }, pw},
			{"Calls Duration = W", func(r *results.Run) float64 { return tier(r).CallDurationMean }, w},
			{"Calls Outstanding = L", func(r *results.Run) float64 { return tier(r).OutstandingMean }, 1.6 * w},
			{"client latency = W", func(r *results.Run) float64 { return r.Latency.Mean }, w},
		},
		"mmck-threads": {
			{"blocking P_K", func(r *results.Run) float64 { return r.RejectRate }, block},
			{"Requests Current = L", func(r *results.Run) float64 { return tier(r).CurrentMean }, l},
			{"response time = W", func(r *results.Run) float64 { return tier(r).ResponseMean }, wk},
			{"Request Wait Time = Wq", func(r *results.Run) float64 { return tier(r).WaitTimeMean }, wk - 1},
		},
		"erlang-b": {
			{"blocking = Erlang B", func(r *results.Run) float64 { return r.RejectRate }, b},
			{"connections in use = a(1 − B)", func(r *results.Run) float64 { return r.Calls[0].InUseMean }, 3 * (1 - b)},
		},
		"closed-mva": {
			{"Calls Per Second = X", func(res *results.Run) float64 { return tier(res).CallsPerS }, x},
			{"Calls Duration = R", func(res *results.Run) float64 { return tier(res).CallDurationMean }, r},
			{"Calls Outstanding = Q", func(res *results.Run) float64 { return tier(res).OutstandingMean }, q},
		},
	}
	if len(blocks) != len(checks) {
		t.Fatalf("docs/textbook-models.md has %d TOML blocks, the test checks %d", len(blocks), len(checks))
	}
	for _, blk := range blocks {
		x, err := format.LoadExperiment("textbook.toml", blk[1], nil)
		if err != nil {
			t.Fatalf("docs/textbook-models.md: %v\n%s", err, blk[1])
		}
		cs, ok := checks[x.Name]
		if !ok {
			t.Fatalf("no theory for the model %q", x.Name)
		}
		sc, err := x.Scenario(0)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([][]float64, len(cs))
		for k := 1; k <= x.Replications; k++ {
			res, err := simmode.Run(&sc.Topology, model.Options{Seed: uint64(k), NoSeries: true, MaxPoints: 1})
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range cs {
				vals[i] = append(vals[i], c.get(res))
			}
		}
		for i, c := range cs {
			m, h := sim.MeanCI(vals[i], 0.99)
			t.Logf("%s: %-32s sim %.4f ± %.4f, theory %.4f", x.Name, c.name, m, h, c.want)
			if math.Abs(m-c.want) > h {
				t.Errorf("%s: %s: %.4f ± %.4f (99%%) does not cover the theory's %.4f", x.Name, c.name, m, h, c.want)
			}
		}
	}
}
