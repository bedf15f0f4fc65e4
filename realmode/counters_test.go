package realmode

import (
	"fmt"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/simmode"
)

// The PerfMon counters run for real (model/counters_test.go has their step
// tables): the counts and maxima must be the simulator's exactly, the
// durations within the step tables' resolution, judged with the table on
// the same run (checkedTable): a stall that delays one request of the
// burst by more than the second until the first ends can take one from a
// maximum, as it moves the latencies, within a floor it widens.

func counterSummary(tr results.Tier) string {
	return fmt.Sprintf("executing %g queued %g current %g app-queue %g outstanding %g | arrived %d calls %d rejected %d completed %d",
		tr.ExecutingMax, tr.QueuedMax, tr.CurrentMax, tr.AppQueuedMax, tr.OutstandingMax, tr.Arrived, tr.Calls, tr.Rejected, tr.Completed)
}

func TestCountersForReal(t *testing.T) {
	// ASP.NET: 2 admitted at once, one worker thread, a queue of 2: of
	// five requests one runs, one waits for the thread, two wait in the
	// queue, one is refused (simmode: TestASPNetCountersStepTable).
	web := model.Tier{Name: "web", Host: model.HostIISIntegrated, DotNet: "4.0", Cores: 8, CostMultiplier: 1,
		Worker: model.Pool{Min: 1, Max: 1}, IO: model.Pool{Min: 100, Max: 100},
		Admission: model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 2, QueueLimit: 2},
		Steps:     []model.Step{waitFor(time.Second)}}
	// WCF: MaxConcurrentCalls 2, four calls (simmode: TestWCFCountersStepTable).
	svc := model.Tier{Name: "svc", Cores: 8, CostMultiplier: 1,
		Worker: model.Pool{Min: 100, Max: 100}, IO: model.Pool{Min: 100, Max: 100},
		WCF:   &model.WCF{MaxCalls: 2, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple},
		Steps: []model.Step{waitFor(time.Second)}}
	for _, c := range []struct {
		name  string
		top   *model.Topology
		table string
	}{
		{"aspnet", burst(5, 0, 6*time.Second, web), "0/rejected 1 2 3 4"},
		{"wcf", burst(4, 0, 4*time.Second, svc), "1 1 2 2"},
	} {
		s, err := simmode.Run(c.top, model.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		want := counterSummary(s.Tiers[0])
		_, r := checkedTable(t, c.name, c.top, c.table, Options{}, func(r *results.Run, _ float64) (out []string) {
			if g := counterSummary(r.Tiers[0]); g != want {
				out = append(out, fmt.Sprintf("real counters\n got  %s\n want %s", g, want))
			}
			// Every request that ran took a second (50 ms of real time): a
			// sleep is never early, so less means the counter misses time;
			// more is what a stall of the busy machine adds (a 35 ms stall
			// is +0.7 s here), so only a gross excess fails — the model's
			// step tables pin the value, tsim validate the agreement.
			if d := r.Tiers[0].ExecTimeMean; d < 0.9 || d > 4 {
				out = append(out, fmt.Sprintf("Request Execution Time mean %.3f s, want ≈1", d))
			}
			return out
		})
		if r != nil {
			t.Logf("%s: Request Execution Time mean %.3f s (1 s simulated)", c.name, r.Tiers[0].ExecTimeMean)
		}
	}
}
