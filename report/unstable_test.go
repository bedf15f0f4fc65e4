package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// A scenario whose runs stopped unstable says so under the table, and in
// summary.json; a stable one adds nothing (its bytes are unchanged).
func TestUnstableOutcomeReported(t *testing.T) {
	const outcome = "unstable: requests in flight grew past 10000 at t=1886.5s and kept growing to 20001 at t=3914.7s, where the run stopped; the load exceeds capacity by about 49% (arrivals 15/s, completions 10.1/s)"
	runs := []*results.Run{{Unstable: outcome}, {}}
	agg := results.Aggregate{Unstable: results.UnstableOf(runs)}
	if want := outcome + " (1 of 2 replications)"; agg.Unstable != want {
		t.Fatalf("aggregate outcome %q, want %q", agg.Unstable, want)
	}
	var out bytes.Buffer
	printUnstable(&out, []*results.Scenario{
		{Variant: "open", Params: []results.Param{{Key: "load.rate", Value: "15"}}, Agg: agg},
		{Variant: "open", Params: []results.Param{{Key: "load.rate", Value: "8"}}},
	})
	if got := out.String(); !strings.Contains(got, "open rate=15: "+agg.Unstable) || strings.Count(got, "unstable") != 1 {
		t.Errorf("printed %q", got)
	}
	js, _ := json.Marshal(agg)
	stable, _ := json.Marshal(results.Aggregate{})
	if !strings.Contains(string(js), `"unstable":"unstable: requests in flight`) || strings.Contains(string(stable), "unstable") {
		t.Errorf("summary.json: %s / %s", js, stable)
	}
}
