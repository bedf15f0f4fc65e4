package simmode

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
	"github.com/tsim-dev/tsim/results"
)

// tableOf is "latency[/outcome]" of every request of a burst, in
// order of latency, as modeltest's tables write them.
func tableOf(res *results.Run) string {
	pts := append([]results.Point(nil), res.Points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Latency < pts[j].Latency })
	var b []string
	for _, p := range pts {
		s := fmt.Sprintf("%g", roundMS(p.Latency))
		if p.Outcome != results.Completed {
			s += "/" + p.Outcome.String()
		}
		b = append(b, s)
	}
	return strings.Join(b, " ")
}

// TestContentionStepTables: each mechanism's table, exactly
// (model/modeltest/contention.go works every entry out).
func TestContentionStepTables(t *testing.T) {
	for _, c := range modeltest.ContentionTables() {
		res, err := Run(c.Top, model.Options{Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if got := tableOf(res); got != c.Want {
			t.Errorf("%s:\n got  %s\n want %s", c.Name, got, c.Want)
		}
		if !res.Requests.Conserved() {
			t.Errorf("%s: counts do not add up: %+v", c.Name, res.Requests)
		}
		tr := res.Tiers[0]
		switch c.Name {
		case "garbage collection":
			// One pause of 0.5 s in the 8 s run.
			if tr.Gen0Collections != 1 || !near(tr.GCTimePercent, 100*0.5/8, 1e-9) {
				t.Errorf("%s: %d collections, %% time in GC %v; want 1, %v", c.Name, tr.Gen0Collections, tr.GCTimePercent, 100*0.5/8)
			}
		case "memory: OutOfMemory":
			if tr.OutOfMemory != 1 || res.Requests.Failed != 1 || tr.CommittedMaxMB != 200 {
				t.Errorf("%s: out_of_memory %d, failed %d, committed max %v MB; want 1, 1, 200", c.Name, tr.OutOfMemory, res.Requests.Failed, tr.CommittedMaxMB)
			}
		case "lock hand-off":
			// Two hand-offs of 100 ms in the 7 s run.
			if !near(tr.LockHandoffShare, 0.2/7, 1e-9) {
				t.Errorf("%s: hand-off share %v, want %v", c.Name, tr.LockHandoffShare, 0.2/7)
			}
		case "bookkeeping":
			// 200 ms of bookkeeping on 1 core over 7 s.
			if !near(tr.BookkeepingCPUShare, 0.2/7, 1e-9) {
				t.Errorf("%s: bookkeeping share %v, want %v", c.Name, tr.BookkeepingCPUShare, 0.2/7)
			}
		case "context switches, 4 requests":
			// 5.6 s of the core busy, 1 − 1/1.4 of it lost; 10 s run.
			if !near(tr.SwitchCPUShare, 5.6*(1-1/1.4)/10, 1e-6) {
				t.Errorf("%s: switching share %v, want %v", c.Name, tr.SwitchCPUShare, 5.6*(1-1/1.4)/10)
			}
		case "memory: paging":
			if !near(tr.PagingCPUShare, 3*(1-1/1.5)/7, 1e-6) {
				t.Errorf("%s: paging share %v, want %v", c.Name, tr.PagingCPUShare, 3*(1-1/1.5)/7)
			}
		}
	}
}

func near(a, b, tol float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= tol*max(1, b)
}
