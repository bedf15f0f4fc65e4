package report

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// appendCSVFloat's fast way for whole numbers prints what
// strconv.FormatFloat(x, 'g', 6, 64) prints.
func TestAppendCSVFloat(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 7, 42, 99999, 100000, 999999, 1e6, -999999, -1e6, 1234567,
		0.5, -0.25, 1.0000001, 86.6, 1e-9, 123456.5, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		xs = append(xs, math.Round(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(8)))), rng.NormFloat64()*1000)
	}
	for _, x := range xs {
		if got, want := string(appendCSVFloat(nil, x)), strconv.FormatFloat(x, 'g', 6, 64); got != want {
			t.Fatalf("appendCSVFloat(%v) = %q, want %q", x, got, want)
		}
	}
}

// TimeseriesCSV writes what encoding/csv writes, names that need quotes
// included.
func TestTimeseriesCSVIsEncodingCSV(t *testing.T) {
	run := &results.Run{TierNames: []string{"fe", `odd, "name"`}}
	for k := range 50 {
		s := results.Sample{T: float64(k) / 3, Tiers: []results.TierSample{
			{Executing: float64(k), CPU: 12.5 * float64(k%5), ExecTimeMS: 1000 / float64(k+1)},
			{Queued: float64(k % 3), ConnsWaiting: -0.0, MemoryMB: 1e7 * float64(k)},
		}}
		run.Series = append(run.Series, s)
	}
	r := &results.Experiment{Replications: 1, Scenarios: []*results.Scenario{{Variant: "with,comma", First: run}}}
	r.Finished = 1
	got, err := TimeseriesCSV(r)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	w := csv.NewWriter(&want)
	head := []string{"variant", "t_s", "tier"}
	for _, c := range timeseriesColumns {
		head = append(head, c.Name)
	}
	w.Write(head)
	for _, s := range run.Series {
		for i := range s.Tiers {
			row := []string{"with,comma", strconv.FormatFloat(s.T, 'g', 6, 64), run.TierNames[i]}
			for _, c := range timeseriesColumns {
				row = append(row, strconv.FormatFloat(*c.F(&s.Tiers[i]), 'g', 6, 64))
			}
			w.Write(row)
		}
	}
	w.Flush()
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("TimeseriesCSV differs from encoding/csv's:\n%s\nwant\n%s", got[:min(len(got), 400)], want.Bytes()[:min(want.Len(), 400)])
	}
}
