package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// PrintReport prints an experiment's results: a header line, one row per
// scenario and, without a sweep, each variant's tiers and calls.
func PrintReport(w io.Writer, r *results.Experiment) error {
	done := r.Done()
	if len(done) == 0 {
		return nil
	}
	first := done[0].Agg
	fmt.Fprintf(w, "%s (%s)\n", r.Name, r.File)
	if r.Description != "" {
		desc := Abbreviate(strings.Join(strings.Fields(r.Description), " "), maxDescription)
		if n := Width(w); n > 2 {
			desc = Cut(desc, n-2) // on a terminal, one line
		}
		fmt.Fprintf(w, "  %s\n", desc)
	}
	reps := "1 replication"
	if r.Replications > 1 {
		reps = fmt.Sprintf("%d replications (± is the 95%% confidence half-width)", r.Replications)
	}
	dur := FmtSeconds(first.DurationS) + " simulated"
	if first.WarmupS > 0 {
		dur += ", warm-up " + FmtSeconds(math.Round(first.WarmupS*10)/10)
	}
	note(w, fmt.Sprintf("  seed %d, %s, %s, mode %s", r.Seed, reps, dur, r.Mode))
	if !r.Complete() {
		fmt.Fprintf(w, "  interrupted: %d of %d scenarios finished\n", r.Finished, len(r.Scenarios))
	}
	fmt.Fprintln(w)

	keys := r.SweepKeys()
	header := []string{"variant"}
	for _, k := range keys {
		header = append(header, results.ShortKey(k))
	}
	header = append(header, "goodput/s", "throughput/s", "mean", "p50", "p99", "timeouts", "rejected")
	t := NewTable(w, 1+len(keys), header...)
	for _, sc := range done {
		a := sc.Agg
		row := []string{sc.Variant}
		for _, k := range keys {
			v := ""
			for _, kv := range sc.Params {
				if kv.Key == k {
					v = kv.Value
				}
			}
			row = append(row, v)
		}
		var ci results.Intervals
		if a.CI != nil {
			ci = *a.CI
		}
		lat := func(v float64) string {
			if a.GoodputPerS == 0 { // nothing completed after warm-up
				return "–"
			}
			return results.FmtLatency(v)
		}
		row = append(row,
			results.FmtRate(a.GoodputPerS)+results.FmtPM(ci.GoodputPerS, results.FmtRate),
			results.FmtRate(a.ThroughputPerS),
			lat(a.Latency.Mean),
			lat(a.Latency.P50),
			lat(a.Latency.P99)+results.FmtPM(ci.LatencyP99S, results.FmtLatency),
			results.FmtPercent(a.TimeoutRate)+results.FmtPM(ci.TimeoutRate, results.FmtPercent),
			results.FmtPercent(a.RejectRate))
		if err := t.Append(row); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	printUnstable(w, done)

	if r.IsSweep() {
		fmt.Fprintln(w)
		if len(r.USL) > 0 {
			if err := PrintUSL(w, r); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
		return nil
	}
	if hasLoadTest(r) {
		fmt.Fprintln(w)
		if err := PrintLoadTest(w, r); err != nil {
			return err
		}
	}
	for _, sc := range done {
		if len(done) > 1 {
			fmt.Fprintf(w, "\nvariant %s\n", sc.Variant)
		} else {
			fmt.Fprintln(w)
		}
		if err := PrintTiers(w, sc.Agg.Tiers); err != nil {
			return err
		}
		if len(sc.Agg.Calls) > 0 {
			fmt.Fprintln(w)
			if err := PrintCalls(w, sc.Agg.Calls); err != nil {
				return err
			}
		}
		if len(sc.Agg.Balancers) > 0 {
			fmt.Fprintln(w)
			if err := PrintBalancers(w, sc.Agg.Balancers); err != nil {
				return err
			}
		}
		if r.PerReplica && len(sc.Agg.Replicas) > 0 {
			fmt.Fprintln(w, "\nevery machine of the farms:")
			if err := PrintTiers(w, sc.Agg.Replicas); err != nil {
				return err
			}
			if len(sc.Agg.ReplicaCalls) > 0 {
				fmt.Fprintln(w)
				if err := PrintCalls(w, sc.Agg.ReplicaCalls); err != nil {
					return err
				}
			}
		}
	}
	fmt.Fprintln(w)
	return nil
}

// printSharedMachines says which tiers share one machine's cores
// (results.Tier.Machine): the table's CPU % is each one's share of it.
func printSharedMachines(w io.Writer, tiers []results.Tier) {
	var ids []int
	names := map[int][]string{}
	util := map[int]float64{}
	cores := map[int]int{}
	for _, x := range tiers {
		if x.Machine == 0 {
			continue
		}
		if _, ok := names[x.Machine]; !ok {
			ids = append(ids, x.Machine)
		}
		names[x.Machine] = append(names[x.Machine], TierLabel(x))
		util[x.Machine] += x.CPUUtil
		cores[x.Machine] = x.Cores
	}
	for _, id := range ids {
		notef(w, "  (%s share one machine of %d cores: each CPU %% is its share; the machine's is %s %%)",
			strings.Join(names[id], " and "), cores[id], results.FmtFixed(100*util[id], 1))
	}
}

// PrintTiers prints two tables of a variant's tiers: the levels a PerfMon
// capture shows (mean / max over the measured period), and each tier's
// rates and durations. A dash marks a counter the tier does not have:
// pipelines outside ASP.NET, calls outside WCF (docs/counters.md).
func PrintTiers(w io.Writer, tiers []results.Tier) error {
	t := NewTable(w, 1, "tier", "cores", "CPU %", "executing", "queued", "pipelines", "calls outst.",
		"worker busy", "I/O busy", "wasted CPU s")
	for _, x := range tiers {
		pipes, calls := "–", "–"
		if aspnetHost(x.Host) {
			pipes = results.MeanMax(x.PipelinesMean, x.PipelinesMax)
		}
		if x.WCF {
			calls = results.MeanMax(x.OutstandingMean, x.OutstandingMax)
		}
		err := t.Append([]string{
			TierLabel(x),
			strconv.Itoa(x.Cores),
			results.FmtFixed(100*x.CPUUtil, 1),
			results.MeanMax(x.ExecutingMean, x.ExecutingMax),
			results.MeanMax(x.QueuedMean, x.QueuedMax),
			pipes,
			calls,
			results.MeanMax(x.WorkerBusyMean, x.WorkerBusyMax),
			results.MeanMax(x.IOBusyMean, x.IOBusyMax),
			results.FmtFixed(x.WastedCPUSeconds, 1),
		})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "  (mean / max over the measured period)")
	printSharedMachines(w, tiers)
	fmt.Fprintln(w)
	t = NewTable(w, 1, "tier", "requests/s", "wait time", "execution time", "calls duration",
		"response p50 / p99", "P(wait)")
	pair := func(a, b float64) string { return results.FmtLatency(a) + " / " + results.FmtLatency(b) }
	for _, x := range tiers {
		wait, exec, calls, resp, pw := "–", "–", "–", "–", "–"
		if x.Arrived > 0 || x.Completed > 0 {
			wait, exec = pair(x.WaitTimeMean, x.WaitTimeMax), pair(x.ExecTimeMean, x.ExecTimeMax)
		}
		if x.WCF && x.Calls > 0 {
			calls = pair(x.CallDurationMean, x.CallDurationMax)
		}
		if x.Completed > 0 {
			resp, pw = pair(x.ResponseP50, x.ResponseP99), results.FmtPercent(x.PWait)
		}
		err := t.Append([]string{TierLabel(x), results.FmtRate(x.RequestsPerS), wait, exec, calls, resp, pw})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	note(w, "  (arrivals per second; Request Wait Time, Request Execution Time and Calls Duration, mean / max;\n"+
		"   the response time at the tier of the requests it completed, and the share of them that queued)")
	return nil
}

func PrintCalls(w io.Writer, calls []results.Call) error {
	t := NewTable(w, 1, "call", "conn limit", "conns in use", "waiting for a conn", "conn wait mean / p99", "calls", "timed out")
	var notes, noted []string // a farm's machines share one note
	for _, c := range calls {
		name := c.From + " → " + c.To
		limit := "none"
		if c.Limit > 0 {
			limit = strconv.Itoa(c.Limit)
		}
		if c.Resolution != "" {
			if k := slices.Index(noted, c.Resolution); k >= 0 && results.FarmOf(c.From) != c.From {
				head, rest, _ := strings.Cut(notes[k], ": ")
				notes[k] = head + ", " + name + ": " + rest
			} else {
				notes = append(notes, fmt.Sprintf("  %s: %s", name, c.Resolution))
				noted = append(noted, c.Resolution)
			}
		}
		wait := "–"
		if c.Calls > 0 {
			wait = results.FmtLatency(c.WaitMean) + " / " + results.FmtLatency(c.WaitP99)
		}
		err := t.Append([]string{
			name,
			limit,
			results.MeanMax(c.InUseMean, c.InUseMax),
			results.MeanMax(c.WaitingMean, c.WaitingMax),
			wait,
			strconv.FormatInt(c.Calls, 10),
			strconv.FormatInt(c.TimedOut, 10),
		})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "connection limits:")
		for _, n := range notes {
			note(w, n)
		}
	}
	head := false
	for _, c := range calls {
		if c.Proxies == 0 {
			continue
		}
		if !head {
			fmt.Fprintln(w, "new proxies and their ChannelFactories (cache hits, factories built, purged from the cache):")
			head = true
		}
		notef(w, "  %s → %s: %d proxies, %d hits (%.0f %%), %d built, %d purged", c.From, c.To,
			c.Proxies, c.FactoryHits, 100*float64(c.FactoryHits)/float64(c.Proxies), c.FactoriesBuilt, c.FactoriesPurged)
	}
	return nil
}

// PrintBalancers prints each farm's balancer: its policy, its own door,
// and how many requests it sent to each machine (an imbalance shows here).
func PrintBalancers(w io.Writer, bs []results.Balancer) error {
	t := NewTable(w, 1, "balancer", "policy", "limit", "in use", "waiting", "rejected", "refused", "requests sent to each machine")
	for _, b := range bs {
		limit, inUse, waiting := "none", "–", "–"
		if b.Limit > 0 {
			limit = strconv.Itoa(b.Limit)
			inUse, waiting = results.MeanMax(b.InUseMean, b.InUseMax), results.MeanMax(b.WaitingMean, b.WaitingMax)
		}
		var total int64
		for _, n := range b.Sent {
			total += n
		}
		sent := make([]string, len(b.Sent))
		for i, n := range b.Sent {
			sent[i] = strconv.FormatInt(n, 10)
			if total > 0 && len(b.Sent) <= 8 {
				sent[i] += " (" + results.FmtPercent(float64(n)/float64(total)) + ")"
			}
		}
		err := t.Append([]string{b.Farm, b.Policy, limit, inUse, waiting,
			strconv.FormatInt(b.Rejected, 10), strconv.FormatInt(b.Refused, 10), Abbreviate(strings.Join(sent, ", "), 120)})
		if err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	note(w, "  (refused: sent off their session's machine without affinity, and failed there)")
	return nil
}
