package realmode

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/internal/stallprobe"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// Step tables run for real: the tables both executors share
// (model/modeltest, steps.go) and a few of real mode's own. n users each
// send one request at t0 and leave (modeltest.Burst); each table lists the
// latency and outcome of every request. The simulator must give the table
// exactly, the real executor the same outcomes and latencies within its
// resolution: 8 ms of real time plus 2%, plus what a probe beside the run
// measured, a round trip per request of the burst and the stalls
// (tableFloor). (The users of a burst do not all send at one real
// instant: their HTTP requests compete for 2 cores, and the last of 20
// starts 1–7 ms after the first, measured on this busy machine. A late
// request that queues ends with the others, so its latency is short by
// that much. A stall of the process delays what is due during it.) A run
// that disagrees is run again only when the probe saw it disturbed; when
// every run was, the table is not judged and its test is skipped
// (judge_test.go).

const t0 = modeltest.T0

// burst is modeltest.Burst: n users each send one request at t0 and then
// leave; it runs until t0 + horizon.
func burst(n int, timeout, horizon time.Duration, tiers ...model.Tier) *model.Topology {
	return modeltest.Burst(n, timeout, horizon, tiers...)
}

func cnst(d time.Duration) sim.Dist { return sim.Const(d) }

func cpuStep(d time.Duration) model.Step { return model.Step{Kind: model.StepCPU, Demand: cnst(d)} }
func waitFor(d time.Duration) model.Step { return model.Step{Kind: model.StepWait, Demand: cnst(d)} }

type outcome = modeltest.Outcome

func outcomesOf(res *results.Run) []outcome { return modeltest.Outcomes(res) }

func parseTable(t *testing.T, s string) []outcome {
	t.Helper()
	w, err := modeltest.ParseTable(s)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func fmtOutcomes(os []outcome) string { return modeltest.FormatOutcomes(os) }

// stepScale makes 1 simulated second 50 ms of real time.
const stepScale = 0.05

// table runs top in both executors and checks both against want. The
// real run is nil when every run was disturbed (realTable).
func table(t *testing.T, name string, top *model.Topology, want string, opt Options) (simRes, realRes *results.Run) {
	t.Helper()
	return checkedTable(t, name, top, want, opt, nil)
}

// checkedTable is table, the real run also judged by check (realTable).
func checkedTable(t *testing.T, name string, top *model.Topology, want string, opt Options, check func(r *results.Run, floor float64) []string) (simRes, realRes *results.Run) {
	t.Helper()
	w := parseTable(t, want)
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	s, err := simmode.Run(top, model.Options{Seed: opt.Seed})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcomesOf(s); fmtOutcomes(got) != fmtOutcomes(w) {
		t.Fatalf("%s: the simulator disagrees with the table:\n got  %s\n want %s", name, fmtOutcomes(got), fmtOutcomes(w))
	}
	return s, realTable(t, name, top, w, opt, check)
}

// realTable runs top for real and checks it against the table w and, if
// check is not nil, with check (given the floor the table was judged
// with: what the table checks besides its latencies, which a stall moves
// as it moves them); it runs again, up to maxRuns times, only when a run
// disagrees and the probe saw it disturbed (judgeReal). It returns the
// run that agreed or disagreed undisturbed, nil when every run was
// disturbed: the table is then not judged, and the test is skipped once
// its other checks are made. (Judged apart, after the table, a check
// failed runs whose latencies agreed within a floor its stalls had
// widened to 6 s, which the check's own margins are not:
// ConnectionLimitHandOffAndTimeout's back end completed 4 of 5, the
// orphan's end 50 ms of real time before the run's falling after it, in
// one run of 30 with two busy loops competing, the probe finding 55% of
// it stalled; and saw 2 waiting for a connection where 3 wait.)
func realTable(t *testing.T, name string, top *model.Topology, w []outcome, opt Options, check func(r *results.Run, floor float64) []string) *results.Run {
	t.Helper()
	if opt.Seed == 0 {
		opt.Seed = 1
	}
	if opt.TimeScale == 0 {
		opt.TimeScale = stepScale
	}
	var last *results.Run
	// A stall longer than a table's margins (the users leave 20 ms of
	// real time after they send at stepScale, 14 ms before one would
	// send again in the head-of-line test) can make a request go missing
	// or come in excess: the run says nothing.
	if !judgeReal(t, name, top, opt, tableStall, func(r *results.Run, n noise) string {
		floor := tableFloor(n, len(w), opt.TimeScale)
		last = r
		got := outcomesOf(r)
		ok := len(got) == len(w)
		for i := 0; ok && i < len(w); i++ {
			ok = got[i].Outcome == w[i].Outcome && math.Abs(got[i].Latency-w[i].Latency) <= floor+0.02*w[i].Latency
		}
		if !ok {
			return fmt.Sprintf("\n got  %s\n want %s (±%.3fs +2%%)", fmtOutcomes(got), fmtOutcomes(w), floor)
		}
		if check == nil {
			return ""
		}
		return strings.Join(check(r, floor), "; ")
	}) {
		return nil
	}
	return last
}

// tableStall is the longest stall a step table's run may see and still
// be judged; see realTable.
const tableStall = 10 * time.Millisecond

// judged is the simulated run and the real one, if it was judged.
func judged(s, r *results.Run) []*results.Run {
	if r == nil {
		return []*results.Run{s}
	}
	return []*results.Run{s, r}
}

// runProbed runs top for real with the noise probe beside it; it returns
// what the probe measured and the CPU the process used, in cores.
func runProbed(top *model.Topology, opt Options) (*results.Run, noise, float64, error) {
	stop := stallprobe.Start()
	cpu0, wall0 := stallprobe.CPUTime(), time.Now()
	r, err := Run(context.Background(), top, opt)
	self := float64(stallprobe.CPUTime()-cpu0) / float64(max(time.Since(wall0), 1))
	return r, stop(), self, err
}

// tableFloor is how far, in simulated seconds at the given scale, a real
// latency may be from its table entry when a burst of n requests is sent:
// 8 ms of real time (the spread of a burst's starts on 2 cores, measured
// quiet), plus a round trip per request of the burst (the starts spread
// further when each costs more: a burst of 20 at a measured 1.2 ms a round
// trip came 8–22 ms late), plus the stalls measured during the run, all of
// which may have delayed one request (ten requests of 50 ms each came 22
// ms late in a run whose longest stall was 12 ms, of 32 ms in all); ×10
// under the race detector.
func tableFloor(n noise, requests int, scale float64) float64 {
	floor := (8*time.Millisecond + time.Duration(requests)*n.RTT + max(n.MaxLate, n.Stalled)).Seconds() / scale
	if raceEnabled {
		floor *= 10
	}
	return floor
}

func TestStepCPU(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	// 2 cores, 4 demands of 1 s. Processor sharing (the model's, and
	// CPUSharing: modeltest's ProcessorSharingCPU): all end at 2 s. Core
	// permits (CPUCores, real mode's default): two end at 1 s, two at
	// 2 s; the same mean.
	realTable(t, "cores", burst(4, 0, 3*time.Second, tier("svc", 2, cpuStep(time.Second))), parseTable(t, "1 1 2 2"), Options{}, nil)
}

// TestStepTables runs the step tables both executors share
// (modeltest.StepTables) for real: the simulator exactly, the real run
// within its resolution (table), and what each table checks besides on
// both, the real run within the floor its table was judged with and
// judged with it (a run that fails the check is run again only when the
// probe saw it disturbed).
func TestStepTables(t *testing.T) {
	for _, st := range modeltest.StepTables {
		t.Run(st.Name, func(t *testing.T) {
			t.Parallel() // mostly asleep: two at a time cost the others little
			opt := Options{Seed: st.Seed, TimeScale: st.RealScale}
			if st.Sharing {
				opt.CPU = CPUSharing
			}
			var check func(*results.Run, float64) []string
			if st.Check != nil {
				check = func(r *results.Run, floor float64) []string {
					var out []string
					for _, m := range st.Check(r, floor) {
						out = append(out, "real: "+m)
					}
					return out
				}
			}
			s, _ := checkedTable(t, st.Name, st.Top(), st.Want, opt, check)
			if st.Check == nil {
				return
			}
			for _, m := range st.Check(s, 0) {
				t.Errorf("simulated: %s", m)
			}
		})
	}
}
