package calibrate

import (
	"context"
	"fmt"
	"math"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
	"github.com/tsim-dev/tsim/sim"
)

// Simulate runs the calibrated experiment's variant over the capture's
// span (opt.Reps times, or the experiment's replications) and compares
// its counters with the capture's; it draws the figure unless
// opt.NoFigure.
func (r *Result) Simulate(ctx context.Context, opt Options) error {
	runs, err := r.simulate(ctx, opt)
	if err != nil {
		return err
	}
	notes, err := r.refine(runs)
	if err != nil {
		return err
	}
	if notes != nil {
		if err := r.render(); err != nil {
			return err
		}
		r.Notes = append(r.Notes, notes...)
		if runs, err = r.simulate(ctx, opt); err != nil {
			return err
		}
	}
	r.compare(r.Capture, r.window, runs)
	if r.loadTest != nil {
		r.LoadTest = r.loadTest.lt.Compare(runs[0], r.window.from)
	}
	r.checkReproduced()
	if !opt.NoFigure {
		fig, err := r.figure()
		if err != nil {
			return err
		}
		r.Figure = fig
	}
	return nil
}

// simulate runs the calibrated variant opt.Reps times (or the
// experiment's replications), replication k with the seed
// runner.ReplicationSeed derives, as tsim run's.
func (r *Result) simulate(ctx context.Context, opt Options) ([]*results.Run, error) {
	seed := r.cx.Seed
	if opt.Seed != 0 {
		seed = opt.Seed
	}
	reps := opt.Reps
	if reps <= 0 {
		reps = r.cx.Replications
	}
	var runs []*results.Run
	for k := range reps {
		run, err := runner.Sim{}.Run(ctx, &r.calibrated.Topology, runner.ReplicationSeed(seed, k), model.Options{})
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	r.SimDuration, r.Reps = runs[0].Duration, reps
	return runs, nil
}

// RefineStretch is the CPU stretch (time at the CPU over CPU demand)
// above which a written wait is corrected by simulation: where requests
// queue for cores, M/M/c's estimate of that queue, which the wait is what
// is left of, is off by the load's own shape (a closed load queues less
// than Poisson arrivals), and no counter measures the queue.
const RefineStretch = 1.02

// refine corrects the wait of every tier that has one written and a CPU
// busy enough to queue: the estimator is run on the simulated runs of the
// calibrated experiment, whose waits are known, and its bias there is
// subtracted from the estimate (indirect inference); the interval widens
// by the simulation's own. It returns the notes to print, nil when no
// tier needed it.
func (r *Result) refine(runs []*results.Run) ([]string, error) {
	var which []*TierEstimate
	for _, e := range r.Tiers {
		if e.waitWritten && e.Stretch > RefineStretch && !math.IsNaN(e.Wait.Value) {
			which = append(which, e)
		}
	}
	if len(which) == 0 {
		return nil, nil
	}
	top := &r.calibrated.Topology
	est := map[string][]Measure{}
	for _, run := range runs {
		sc, err := simCapture(run, r.Variant)
		if err != nil {
			return nil, fmt.Errorf("reading the simulated run back (a bug in tsim calibrate): %v", err)
		}
		var tiers []*TierEstimate
		for _, e := range r.Tiers {
			mc, err := sc.findCounters(e.Tier, resultsTier(&top.Tiers[e.Index]))
			if err != nil || mc.wcf != e.From.wcf || mc.aspnet != e.From.aspnet {
				return []string{fmt.Sprintf("tier %s: the experiment's tier does not report the counters its machine does, so the wait's split with the CPU queue (%.3g× the CPU demand) is M/M/%d's, not corrected by simulation", e.Tier, e.Stretch, e.Cores)}, nil
			}
			mc.mirror(e.From)
			tiers = append(tiers, &TierEstimate{Tier: e.Tier, Machine: e.Tier, Index: e.Index, Cores: e.Cores, From: mc})
		}
		if _, _, err := measure(sc, top, tiers, r.window.from); err != nil {
			return nil, fmt.Errorf("reading the simulated run back (a bug in tsim calibrate): %v", err)
		}
		for _, t := range tiers {
			est[t.Tier] = append(est[t.Tier], t.Wait)
		}
	}
	var notes []string
	for _, e := range which {
		var written float64
		for _, st := range top.Tiers[e.Index].Steps {
			if st.Kind == model.StepWait {
				written += st.Demand.Mean().Seconds()
			}
		}
		ms := est[e.Tier]
		simMean, simHalf := ms[0].Value, ms[0].Half
		if len(ms) > 1 {
			xs := make([]float64, len(ms))
			for i, m := range ms {
				xs[i] = m.Value
			}
			simMean, simHalf = sim.MeanCI(xs, 0.95)
		}
		bias := simMean - written
		before := e.Wait
		e.WaitAnalytic = before
		e.Wait = Measure{before.Value - bias, math.Hypot(before.Half, simHalf)}
		notes = append(notes, fmt.Sprintf("tier %s: its CPU is %s busy, and requests queue for its cores (%.3g× the CPU demand by M/M/%d); no counter measures that queue, so the wait, which is what is left of the operation's time, is corrected by simulation: on the calibrated experiment's own runs, whose wait is %s, the same estimate reads %s; the wait becomes %s − (%s) = %s",
			e.Tier, fmtPercent(e.Util.Value), e.Stretch, e.Cores, fmtSeconds(written), fmtSeconds(simMean), fmtSeconds(before.Value), fmtSignedSeconds(bias), fmtMeasure(e.Wait)))
		e.Refined = true
	}
	return notes, nil
}

// simCapture reads a simulated run back as a capture: its perfmon.csv,
// every tier a machine of its own name.
func simCapture(run *results.Run, variant string) (*Capture, error) {
	x := &results.Experiment{Name: "simulated", Seed: run.Seed, Replications: 1, Mode: "sim",
		Scenarios: []*results.Scenario{{Variant: variant, Agg: results.Aggregate{Tiers: run.Tiers, Calls: run.Calls}, First: run}}, Finished: 1}
	pm, err := report.PerfmonCSV(x)
	if err != nil {
		return nil, err
	}
	return ParseCapture(pm, "simulated perfmon.csv")
}

// checkReproduced says, for a tier whose operation time the counters do
// not account for and whose wait calibrate does not write, whether the
// calibrated model reproduces it: if so, the experiment's limits explain
// it (tsim explain says which); if not, the model lacks what holds it.
func (r *Result) checkReproduced() {
	for _, e := range r.Tiers {
		if !e.unexplained {
			continue
		}
		for _, cmp := range r.Compare {
			if cmp.Tier != e.Tier || cmp.Counter != e.From.durName {
				continue
			}
			if err := cmp.RelError(); math.Abs(err) <= 0.15 {
				r.note(fmt.Sprintf("tier %s: the calibrated model reproduces that wait: %s simulated %s, measured %s (%s): the experiment's own limits hold the requests there; tsim explain names the one that binds",
					e.Tier, cmp.Counter, fmtValue(cmp.Simulated)+" "+cmp.Unit, fmtValue(cmp.Measured)+" "+cmp.Unit, fmtRelError(err)))
			} else {
				r.note(fmt.Sprintf("tier %s: the calibrated model does not reproduce that wait: %s simulated %s, measured %s (%s): something holds the requests that the experiment does not have, or has otherwise — a connection limit, a thread pool, a lock (tsim config reads the machine's configuration)",
					e.Tier, cmp.Counter, fmtValue(cmp.Simulated)+" "+cmp.Unit, fmtValue(cmp.Measured)+" "+cmp.Unit, fmtRelError(err)))
			}
		}
	}
}
