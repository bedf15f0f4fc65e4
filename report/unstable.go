package report

import (
	"io"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// printUnstable notes, under the table, each scenario whose runs stopped
// unstable (results.Aggregate.Unstable): their figures cover the run up
// to the stop, not the duration asked for.
func printUnstable(w io.Writer, done []*results.Scenario) {
	for _, sc := range done {
		if sc.Agg.Unstable == "" {
			continue
		}
		name := sc.Variant
		for _, kv := range sc.Params {
			name += " " + results.ShortKey(kv.Key) + "=" + kv.Value
		}
		note(w, "  "+strings.TrimSpace(name)+": "+sc.Agg.Unstable)
	}
}
