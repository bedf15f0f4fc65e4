package htmlreport

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// Options are what a report holds besides the results.
type Options struct {
	// Warnings are the run's warnings (pictures not drawn, ...), shown
	// at the top of the page.
	Warnings []string
}

// FileName is the name of the page tsim run writes into an experiment's
// directory.
const FileName = "report.html"

// Report renders report.html for an experiment's results: Experiment's
// page, as bytes.
func Report(r *results.Experiment, opt Options) ([]byte, error) {
	return Experiment(r, opt).HTML()
}

// Experiment builds the page of an experiment's results: what was run,
// the summary of every scenario, what binds, each variant's tiers and
// calls with the connection-limit resolutions, and the charts — every
// tier's counters over time, each request's latency and the latency
// distributions, the load test's latency against the simulated where run
// compared one, or the sweep curves with their confidence bars and the
// USL fit. Only the
// finished scenarios are shown. A command may add sections before
// rendering it (Page.Add).
func Experiment(r *results.Experiment, opt Options) *Page {
	p := &Page{Title: "tsim: " + r.Name}
	p.Lines = headerLines(r)
	done := r.Done()

	var ws []string
	if !r.Complete() {
		ws = append(ws, fmt.Sprintf("interrupted: %d of %d scenarios finished; the others are missing from this page", r.Finished, len(r.Scenarios)))
	}
	ws = append(ws, r.Warnings...) // settings that take no effect
	ws = append(ws, opt.Warnings...)
	if len(ws) > 0 {
		p.Add(&Section{ID: "warnings", Title: "Warnings", Blocks: []Block{{Warnings: ws}}})
	}
	if len(done) == 0 {
		return p
	}

	sum := p.Add(&Section{ID: "summary", Title: "Summary"})
	sum.Add(Block{Table: summaryTable(r, done)})
	if r.Replications > 1 {
		sum.Text("± is the 95%% confidence half-width of the mean over %d replications (Student t).", r.Replications)
	}

	if f := findings(r, done); len(f) > 0 {
		// A sweep's list is long: folded.
		s := p.Add(&Section{ID: "binds", Title: "What binds", Collapsed: len(f) > 12})
		s.Text("Where requests waited, read from the counters of the measured period (the limits that bind are the ones requests queue for); tsim explain says which limit binds and what to change.")
		s.Add(Block{Findings: f})
	}

	if !r.IsSweep() {
		for _, s := range []*Section{countersSection(r, done), latencySection(r, done), loadTestSection(done)} {
			if s != nil {
				p.Add(s)
			}
		}
	} else {
		p.Add(sweepSection(r, done))
		if s := uslSection(r); s != nil {
			p.Add(s)
		}
	}
	if cdf := cdfChart(r, done, nil); cdf != nil {
		s := p.Add(&Section{ID: "latency-cdf", Title: "Latency distribution"})
		s.Add(Block{Charts: &Grid{Columns: 1, Charts: []*Chart{cdf}}})
	}
	if !r.IsSweep() {
		for _, sc := range done {
			p.Add(variantSection(r, sc, len(done) > 1))
		}
	}
	return p
}

// headerLines are the facts under the page's title.
func headerLines(r *results.Experiment) []string {
	var lines []string
	lines = append(lines, "file "+filepath.ToSlash(r.File))
	if r.Description != "" {
		lines = append(lines, strings.Join(strings.Fields(r.Description), " "))
	}
	done := r.Done()
	reps := "1 replication"
	if r.Replications > 1 {
		reps = fmt.Sprintf("%d replications", r.Replications)
	}
	line := fmt.Sprintf("seed %d, %s, mode %s", r.Seed, reps, r.Mode)
	if len(done) > 0 {
		a := done[0].Agg
		line += ", " + fmtSeconds(a.DurationS) + " simulated"
		if a.WarmupS > 0 {
			line += ", warm-up " + fmtSeconds(math.Round(a.WarmupS*10)/10) + " (counts, rates and latencies cover the time after it; the charts the whole run)"
		}
	}
	lines = append(lines, line)
	if r.IsSweep() {
		var axes []string
		for _, ax := range r.Sweep {
			axes = append(axes, ax.Key+" = "+strings.Join(ax.Values, ", "))
		}
		lines = append(lines, "sweep: "+strings.Join(axes, "; "))
	}
	return lines
}

// paramValue is a scenario's value of sweep key k.
func paramValue(sc *results.Scenario, k string) string {
	for _, kv := range sc.Params {
		if kv.Key == k {
			return kv.Value
		}
	}
	return ""
}

func summaryTable(r *results.Experiment, done []*results.Scenario) *Table {
	keys := r.SweepKeys()
	t := &Table{Left: 1 + len(keys)}
	t.Header = []string{"variant"}
	t.Titles = []string{""}
	for _, k := range keys {
		t.Header = append(t.Header, results.ShortKey(k))
		t.Titles = append(t.Titles, k)
	}
	t.Header = append(t.Header, "goodput/s", "throughput/s", "mean", "p50", "p90", "p99", "max",
		"timeouts", "rejected", "generated", "completed", "timed out", "rejected", "failed", "in flight", "first timeout")
	t.Titles = append(t.Titles, "completed requests per second after warm-up", "requests ended per second at the entry tier",
		"client latency of completed requests", "", "", "", "",
		"share of the requests ended after warm-up that timed out", "share rejected (HTTP 503)",
		"requests generated after warm-up", "", "", "", "", "still under way at the end", "the first TimeoutException of the run")
	for _, sc := range done {
		a := sc.Agg
		row := []string{sc.Variant}
		for _, k := range keys {
			row = append(row, paramValue(sc, k))
		}
		var ci results.Intervals
		if a.CI != nil {
			ci = *a.CI
		}
		lat := func(v float64) string {
			if a.Requests.Completed == 0 && a.GoodputPerS == 0 {
				return "–"
			}
			return results.FmtLatency(v)
		}
		first := "none"
		if a.FirstTimeoutS >= 0 {
			first = fmtSeconds(math.Round(a.FirstTimeoutS*10) / 10)
		}
		c := a.Requests
		row = append(row,
			results.FmtRate(a.GoodputPerS)+results.FmtPM(ci.GoodputPerS, results.FmtRate),
			results.FmtRate(a.ThroughputPerS)+results.FmtPM(ci.ThroughputPerS, results.FmtRate),
			lat(a.Latency.Mean)+results.FmtPM(ci.LatencyMeanS, results.FmtLatency),
			lat(a.Latency.P50), lat(a.Latency.P90),
			lat(a.Latency.P99)+results.FmtPM(ci.LatencyP99S, results.FmtLatency),
			lat(a.Latency.Max),
			results.FmtPercent(a.TimeoutRate)+results.FmtPM(ci.TimeoutRate, results.FmtPercent),
			results.FmtPercent(a.RejectRate),
			fmtInt(c.Generated), fmtInt(c.Completed), fmtInt(c.TimedOut), fmtInt(c.Rejected), fmtInt(c.Failed), fmtInt(c.InFlight),
			first)
		t.Rows = append(t.Rows, row)
		cls := make([]string, len(row))
		if a.TimeoutRate > 0 {
			cls[t.Left+7] = "warn"
		}
		if a.RejectRate > 0 {
			cls[t.Left+8] = "warn"
		}
		t.Classes = append(t.Classes, cls)
	}
	t.Notes = []string{"latency: client-observed response time of completed requests after warm-up; counts: requests of the measured period (generated + in flight at warm-up = completed + timed out + rejected + failed + in flight)"}
	return t
}

// tierLabel names a tier in the tables: a farm's totals as "web ×4".
func tierLabel(x results.Tier) string {
	if x.Replicas > 0 {
		return fmt.Sprintf("%s ×%d", x.Name, x.Replicas)
	}
	return x.Name
}

func aspnetHost(host string) bool { return host == "aspnet-classic" || host == "iis-integrated" }

// variantSection holds one variant's tables: its tiers, its calls with
// their connection limits and how each was resolved, balancers, proxies
// and where the response time went.
func variantSection(r *results.Experiment, sc *results.Scenario, several bool) *Section {
	s := &Section{ID: "variant-" + anchor(sc.Variant), Title: "Tiers and calls"}
	if several {
		s.Title = "Variant " + sc.Variant
	}
	a := sc.Agg
	s.Add(Block{Table: tierLevels(a.Tiers)}, Block{Table: tierRates(a.Tiers)})
	if len(a.Calls) > 0 {
		s.Add(Block{Table: callsTable(a.Calls)})
		if res := resolutions(a.Calls); len(res) > 0 {
			s.Add(Block{Sub: &Section{ID: "limits-" + anchor(sc.Variant), Title: "Connection limits", Blocks: []Block{{List: res}}}})
		}
		if px := proxies(a.Calls); len(px) > 0 {
			s.Add(Block{Text: "New proxies and their ChannelFactories (cache hits, factories built, purged from the cache):"}, Block{List: px})
		}
	}
	if len(a.Balancers) > 0 {
		s.Add(Block{Table: balancersTable(a.Balancers)})
	}
	if bd := breakdownTable(a); bd != nil {
		s.Add(Block{Table: bd})
	}
	if r.PerReplica && len(a.Replicas) > 0 {
		sub := &Section{ID: "machines-" + anchor(sc.Variant), Title: "Every machine of the farms", Collapsed: true}
		sub.Add(Block{Table: tierLevels(a.Replicas)}, Block{Table: tierRates(a.Replicas)})
		if len(a.ReplicaCalls) > 0 {
			sub.Add(Block{Table: callsTable(a.ReplicaCalls)})
		}
		s.Add(Block{Sub: sub})
	}
	return s
}

func tierLevels(tiers []results.Tier) *Table {
	t := &Table{Left: 1, Caption: "Levels (mean / max over the measured period)",
		Header: []string{"tier", "cores", "CPU %", "executing", "queued", "current", "app queue", "pipelines", "calls outst.", "instances",
			"worker busy", "I/O busy", "work items queued", "wasted CPU s"},
		Titles: []string{"", "", `Processor(_Total)\% Processor Time`, `ASP.NET Apps\Requests Executing`, `ASP.NET\Requests Queued`,
			`ASP.NET\Requests Current`, `ASP.NET Apps\Requests In Application Queue`, `ASP.NET Apps\Pipeline Instance Count`,
			`ServiceModelService\Calls Outstanding`, `ServiceModelService\Instances`,
			"CLR thread pool: worker threads running a request", "CLR thread pool: I/O completion threads running a request",
			"requests waiting for a pool thread (mean)", "CPU spent on requests whose client had already given up"}}
	for _, x := range tiers {
		pipes, calls, inst, app := "–", "–", "–", "–"
		if aspnetHost(x.Host) {
			pipes, app = results.MeanMax(x.PipelinesMean, x.PipelinesMax), results.MeanMax(x.AppQueuedMean, x.AppQueuedMax)
		}
		if x.WCF {
			calls, inst = results.MeanMax(x.OutstandingMean, x.OutstandingMax), results.MeanMax(x.InstancesMean, x.InstancesMax)
		}
		row := []string{tierLabel(x), strconv.Itoa(x.Cores), results.FmtFixed(100*x.CPUUtil, 1),
			results.MeanMax(x.ExecutingMean, x.ExecutingMax), results.MeanMax(x.QueuedMean, x.QueuedMax), results.MeanMax(x.CurrentMean, x.CurrentMax),
			app, pipes, calls, inst,
			results.MeanMax(x.WorkerBusyMean, x.WorkerBusyMax), results.MeanMax(x.IOBusyMean, x.IOBusyMax), results.FmtLevel(x.ThreadQueueMean),
			results.FmtFixed(x.WastedCPUSeconds, 1)}
		cls := make([]string, len(row))
		if x.QueuedMean >= 0.05 {
			cls[4] = "warn"
		}
		t.Rows = append(t.Rows, row)
		t.Classes = append(t.Classes, cls)
	}
	return t
}

func tierRates(tiers []results.Tier) *Table {
	t := &Table{Left: 1, Caption: "Rates and durations (mean / max)",
		Header: []string{"tier", "requests/s", "calls/s", "wait time", "execution time", "calls duration", "response p50 / p99", "P(wait)", "arrived", "completed", "rejected", "aborted"},
		Titles: []string{"", `ASP.NET Apps\Requests/Sec`, `ServiceModelService\Calls Per Second`, `ASP.NET\Request Wait Time`,
			`ASP.NET\Request Execution Time`, `ServiceModelService\Calls Duration`,
			"arrival to reply at the tier, of the requests it completed", "share of completed requests that queued somewhere at the tier",
			"", "", "HTTP 503", "executionTimeout, client gone"}}
	pair := func(a, b float64) string { return results.FmtLatency(a) + " / " + results.FmtLatency(b) }
	for _, x := range tiers {
		wait, exec, calls, resp, pw, cps := "–", "–", "–", "–", "–", "–"
		if x.Arrived > 0 || x.Completed > 0 {
			wait, exec = pair(x.WaitTimeMean, x.WaitTimeMax), pair(x.ExecTimeMean, x.ExecTimeMax)
		}
		if x.WCF {
			cps = results.FmtRate(x.CallsPerS)
			if x.Calls > 0 {
				calls = pair(x.CallDurationMean, x.CallDurationMax)
			}
		}
		if x.Completed > 0 {
			resp, pw = pair(x.ResponseP50, x.ResponseP99), results.FmtPercent(x.PWait)
		}
		t.Rows = append(t.Rows, []string{tierLabel(x), results.FmtRate(x.RequestsPerS), cps, wait, exec, calls, resp, pw,
			fmtInt(x.Arrived), fmtInt(x.Completed), fmtInt(x.Rejected), fmtInt(x.Aborted)})
	}
	return t
}

func callsTable(calls []results.Call) *Table {
	t := &Table{Left: 1, Caption: "Calls and their connections (mean / max)",
		Header: []string{"call", "conn limit", "conns in use", "waiting for a conn", "conn wait mean / p99", "calls", "timed out", "rejected", "failed", "retries"},
		Titles: []string{"", "System.Net maxconnection (ServicePointManager) as resolved", "", "", "", "", "", "", "", ""}}
	for _, c := range calls {
		limit := "none"
		if c.Limit > 0 {
			limit = strconv.Itoa(c.Limit)
		}
		wait := "–"
		if c.Calls > 0 {
			wait = results.FmtLatency(c.WaitMean) + " / " + results.FmtLatency(c.WaitP99)
		}
		row := []string{c.From + " → " + c.To, limit, results.MeanMax(c.InUseMean, c.InUseMax), results.MeanMax(c.WaitingMean, c.WaitingMax), wait,
			fmtInt(c.Calls), fmtInt(c.TimedOut), fmtInt(c.Rejected), fmtInt(c.Failed), fmtInt(c.Retries)}
		cls := make([]string, len(row))
		if c.WaitingMean >= 0.05 {
			cls[3] = "warn"
		}
		if c.TimedOut > 0 {
			cls[6] = "warn"
		}
		t.Rows = append(t.Rows, row)
		t.Classes = append(t.Classes, cls)
	}
	return t
}

// resolutions are the calls' connection limits and how each was resolved,
// a farm's machines sharing one line.
func resolutions(calls []results.Call) []string {
	var notes, noted []string
	for _, c := range calls {
		if c.Resolution == "" {
			continue
		}
		name := c.From + " → " + c.To
		if k := slices.Index(noted, c.Resolution); k >= 0 && results.FarmOf(c.From) != c.From {
			head, rest, _ := strings.Cut(notes[k], ": ")
			notes[k] = head + ", " + name + ": " + rest
			continue
		}
		notes = append(notes, name+": "+c.Resolution)
		noted = append(noted, c.Resolution)
	}
	return notes
}

func proxies(calls []results.Call) []string {
	var out []string
	for _, c := range calls {
		if c.Proxies == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%s → %s: %d proxies, %d hits (%.0f %%), %d built, %d purged", c.From, c.To,
			c.Proxies, c.FactoryHits, 100*float64(c.FactoryHits)/float64(c.Proxies), c.FactoriesBuilt, c.FactoriesPurged))
	}
	return out
}

func balancersTable(bs []results.Balancer) *Table {
	t := &Table{Left: 2, Caption: "Balancers", Header: []string{"balancer", "policy", "limit", "in use", "waiting", "rejected", "refused", "requests sent to each machine"}}
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
			sent[i] = fmtInt(n)
			if total > 0 && len(b.Sent) <= 8 {
				sent[i] += " (" + results.FmtPercent(float64(n)/float64(total)) + ")"
			}
		}
		t.Rows = append(t.Rows, []string{b.Farm, b.Policy, limit, inUse, waiting, fmtInt(b.Rejected), fmtInt(b.Refused), strings.Join(sent, ", ")})
	}
	return t
}

// breakdownParts name the response-time breakdown's parts, in order.
var breakdownParts = []struct {
	name string
	get  func(b results.Breakdown) float64
}{
	{"waiting for a connection", func(b results.Breakdown) float64 { return b.ConnWait }},
	{"waiting for admission (ASP.NET queue)", func(b results.Breakdown) float64 { return b.AdmissionWait }},
	{"waiting for a thread", func(b results.Breakdown) float64 { return b.ThreadWait }},
	{"waiting for a WCF throttle", func(b results.Breakdown) float64 { return b.ThrottleWait }},
	{"waiting for a lock", func(b results.Breakdown) float64 { return b.LockWait }},
	{"waiting for CPU", func(b results.Breakdown) float64 { return b.CPUWait }},
	{"CPU", func(b results.Breakdown) float64 { return b.CPU }},
	{"outside the model (database, disk)", func(b results.Breakdown) float64 { return b.ExternalWait }},
	{"network", func(b results.Breakdown) float64 { return b.Network }},
	{"other", func(b results.Breakdown) float64 { return b.Other }},
}

func breakdownTable(a results.Aggregate) *Table {
	var total float64
	for _, p := range breakdownParts {
		total += p.get(a.Breakdown)
	}
	if total <= 0 {
		return nil
	}
	t := &Table{Left: 1, Caption: "Where the response time of a completed request went (mean, from the entry tier down)",
		Header: []string{"part", "seconds", "share"}}
	for _, p := range breakdownParts {
		v := p.get(a.Breakdown)
		if v == 0 {
			continue
		}
		row := []string{p.name, results.FmtLatency(v), results.FmtPercent(v / total)}
		cls := []string{"", "", ""}
		if strings.HasPrefix(p.name, "waiting") && v/total >= 0.2 {
			cls[2] = "warn"
		}
		t.Rows = append(t.Rows, row)
		t.Classes = append(t.Classes, cls)
	}
	return t
}

// findings say where requests waited and were lost, scenario by scenario,
// as PAL lists what crossed its thresholds: a connection limit that calls
// queue for, a tier's queues, the part of the response time spent
// waiting, timeouts and rejections.
func findings(r *results.Experiment, done []*results.Scenario) []Finding {
	var out []Finding
	for _, sc := range done {
		name := ""
		if len(done) > 1 {
			name = sc.Label() + ": "
		}
		for _, f := range scenarioFindings(sc.Agg) {
			f.Text = name + f.Text
			out = append(out, f)
		}
	}
	return out
}

// scenarioFindings are one scenario's findings, worst first.
func scenarioFindings(a results.Aggregate) []Finding {
	var bad, warn, info []Finding
	for _, c := range a.Calls {
		if c.WaitingMean < 0.05 || c.Limit <= 0 {
			continue
		}
		f := Finding{Level: "warn", Text: fmt.Sprintf("%s → %s: the connection limit of %d binds: %s of %d connections in use on average, %s calls waiting for one (max %s), waiting %s on average (p99 %s)",
			c.From, c.To, c.Limit, results.FmtLevel(c.InUseMean), c.Limit, results.FmtLevel(c.WaitingMean), results.FmtLevel(c.WaitingMax), results.FmtLatency(c.WaitMean), results.FmtLatency(c.WaitP99))}
		if c.TimedOut > 0 {
			f.Level = "bad"
			f.Text += fmt.Sprintf("; %d calls timed out", c.TimedOut)
		}
		if f.Level == "bad" {
			bad = append(bad, f)
		} else {
			warn = append(warn, f)
		}
	}
	for _, t := range a.Tiers {
		var qs []string
		if t.AppQueuedMean >= 0.05 {
			qs = append(qs, fmt.Sprintf("%s in the application queue", results.FmtLevel(t.AppQueuedMean)))
		} else if t.QueuedMean >= 0.05 {
			qs = append(qs, fmt.Sprintf("%s requests queued", results.FmtLevel(t.QueuedMean)))
		}
		if t.ThreadQueueMean >= 0.05 {
			qs = append(qs, fmt.Sprintf("%s work items waiting for a pool thread", results.FmtLevel(t.ThreadQueueMean)))
		}
		if t.ListenerWaitingMean >= 0.05 {
			qs = append(qs, fmt.Sprintf("%s connections waiting in the listener", results.FmtLevel(t.ListenerWaitingMean)))
		}
		if len(qs) > 0 {
			warn = append(warn, Finding{Level: "warn", Text: fmt.Sprintf("%s: %s on average (wait %s on average, max %s)",
				tierLabel(t), strings.Join(qs, ", "), results.FmtLatency(t.WaitTimeMean), results.FmtLatency(t.WaitTimeMax))})
		}
		if t.CPUUtil >= 0.8 {
			warn = append(warn, Finding{Level: "warn", Text: fmt.Sprintf("%s: CPU %s %% busy", tierLabel(t), results.FmtFixed(100*t.CPUUtil, 0))})
		}
		if t.Rejected > 0 {
			bad = append(bad, Finding{Level: "bad", Text: fmt.Sprintf("%s: %d requests rejected (HTTP 503)", tierLabel(t), t.Rejected)})
		}
	}
	var total float64
	for _, p := range breakdownParts {
		total += p.get(a.Breakdown)
	}
	if total > 0 {
		for _, p := range breakdownParts {
			if v := p.get(a.Breakdown); strings.HasPrefix(p.name, "waiting") && v/total >= 0.1 {
				info = append(info, Finding{Level: "info", Text: fmt.Sprintf("%s of the response time of a completed request (%s of %s) went %s",
					results.FmtPercent(v/total), results.FmtLatency(v), results.FmtLatency(total), p.name)})
			}
		}
	}
	if c := a.Requests; c.TimedOut > 0 {
		f := Finding{Level: "bad", Text: fmt.Sprintf("%d requests timed out (%s)", c.TimedOut, results.FmtPercent(a.TimeoutRate))}
		if a.FirstTimeoutS >= 0 {
			f.Text += ", the first at " + fmtSeconds(math.Round(a.FirstTimeoutS*10)/10)
		}
		bad = append([]Finding{f}, bad...)
	}
	return append(append(bad, warn...), info...)
}

// anchor makes a name fit for an id: letters, digits and '-'.
func anchor(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

func join(xs []string, sep string) string { return strings.Join(xs, sep) }
