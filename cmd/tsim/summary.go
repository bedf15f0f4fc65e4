package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// ciLevel is the confidence level of the intervals across replications.
const ciLevel = 0.95

// aggregate is one scenario summarised over its replications:
//
//   - request counts, tier and call counts, and events are summed;
//   - throughput, goodput, timeout and reject rates, warm-up and the time
//     averages of tiers and calls are means over the replications;
//   - latency statistics, the latency quantiles and the response-time
//     breakdown are means over the replications that completed a request
//     after warm-up (a replication in which every request timed out has no
//     latency to average);
//   - maxima are maxima, and first_timeout_s is the earliest;
//   - ci holds the 95% Student t confidence half-widths of the mean across
//     replications, t(0.975, n−1)·s/√n, when there are two or more.
type aggregate struct {
	DurationS      float64           `json:"duration_s"`
	WarmupS        float64           `json:"warmup_s"`
	Requests       results.Counts    `json:"requests"`
	ThroughputPerS float64           `json:"throughput_per_s"`
	GoodputPerS    float64           `json:"goodput_per_s"`
	Latency        results.Latency   `json:"latency_s"`
	TimeoutRate    float64           `json:"timeout_rate"`
	RejectRate     float64           `json:"reject_rate"`
	FirstTimeoutS  float64           `json:"first_timeout_s"` // -1 if none
	Tiers          []results.Tier    `json:"tiers"`
	Calls          []results.Call    `json:"calls"`
	Breakdown      results.Breakdown `json:"breakdown_s"`
	Events         uint64            `json:"events"`
	CI             *intervals        `json:"ci,omitempty"`

	quantiles []float64 // mean latency at q = 0.001 ... 0.999, for latency-cdf.png
}

// intervals are confidence half-widths; null where fewer than two
// replications had a value.
type intervals struct {
	Level          float64  `json:"level"`
	ThroughputPerS *float64 `json:"throughput_per_s"`
	GoodputPerS    *float64 `json:"goodput_per_s"`
	LatencyMeanS   *float64 `json:"latency_mean_s"`
	LatencyP99S    *float64 `json:"latency_p99_s"`
	TimeoutRate    *float64 `json:"timeout_rate"`
}

// halfWidth is the confidence half-width of the mean of xs, or nil.
func halfWidth(xs []float64) *float64 {
	if len(xs) < 2 {
		return nil
	}
	_, h := sim.MeanCI(xs, ciLevel)
	if math.IsNaN(h) || math.IsInf(h, 0) {
		return nil
	}
	return &h
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// aggregateRuns summarises the replications of one scenario, in
// replication order.
func aggregateRuns(runs []*results.Run) aggregate {
	a := aggregate{DurationS: runs[0].Duration, FirstTimeoutS: -1}
	var warm, thr, good, tor, rej []float64
	var withLat []*results.Run
	for _, r := range runs {
		warm = append(warm, r.Warmup)
		thr = append(thr, r.ThroughputPerS)
		good = append(good, r.GoodputPerS)
		tor = append(tor, r.TimeoutRate)
		rej = append(rej, r.RejectRate)
		a.Requests = a.Requests.Add(r.Requests)
		a.Events += r.Events
		if r.FirstTimeout >= 0 && (a.FirstTimeoutS < 0 || r.FirstTimeout < a.FirstTimeoutS) {
			a.FirstTimeoutS = r.FirstTimeout
		}
		if r.GoodputPerS > 0 {
			withLat = append(withLat, r)
		}
	}
	a.WarmupS, a.ThroughputPerS, a.GoodputPerS = mean(warm), mean(thr), mean(good)
	a.TimeoutRate, a.RejectRate = mean(tor), mean(rej)

	var lmean, lp99 []float64
	for _, r := range withLat {
		lmean = append(lmean, r.Latency.Mean)
		lp99 = append(lp99, r.Latency.P99)
	}
	if k := float64(len(withLat)); k > 0 {
		l := &a.Latency
		b := &a.Breakdown
		for _, r := range withLat {
			l.Mean += r.Latency.Mean / k
			l.P50 += r.Latency.P50 / k
			l.P90 += r.Latency.P90 / k
			l.P99 += r.Latency.P99 / k
			l.P999 += r.Latency.P999 / k
			l.Max = math.Max(l.Max, r.Latency.Max)
			o := r.Breakdown
			b.ConnWait += o.ConnWait / k
			b.AdmissionWait += o.AdmissionWait / k
			b.ThreadWait += o.ThreadWait / k
			b.ThrottleWait += o.ThrottleWait / k
			b.LockWait += o.LockWait / k
			b.CPUWait += o.CPUWait / k
			b.CPU += o.CPU / k
			b.ExternalWait += o.ExternalWait / k
			b.Network += o.Network / k
			b.Other += o.Other / k
		}
		var nq float64
		for _, r := range withLat {
			if len(r.Quantiles) == 0 {
				continue
			}
			if a.quantiles == nil {
				a.quantiles = make([]float64, len(r.Quantiles))
			}
			if len(r.Quantiles) != len(a.quantiles) {
				continue
			}
			nq++
			for i, v := range r.Quantiles {
				a.quantiles[i] += v
			}
		}
		for i := range a.quantiles {
			a.quantiles[i] /= nq
		}
	}
	a.Tiers = aggregateTiers(runs)
	a.Calls = aggregateCalls(runs)
	if len(runs) > 1 {
		a.CI = &intervals{
			Level:          ciLevel,
			ThroughputPerS: halfWidth(thr),
			GoodputPerS:    halfWidth(good),
			LatencyMeanS:   halfWidth(lmean),
			LatencyP99S:    halfWidth(lp99),
			TimeoutRate:    halfWidth(tor),
		}
	}
	return a
}

// aggregateTiers averages each tier's counters over the replications (the
// tiers are the same in every replication of a scenario).
func aggregateTiers(runs []*results.Run) []results.Tier {
	out := make([]results.Tier, len(runs[0].Tiers))
	n := float64(len(runs))
	for i := range out {
		t := &out[i]
		t.Name, t.Cores = runs[0].Tiers[i].Name, runs[0].Tiers[i].Cores
		for _, r := range runs {
			if i >= len(r.Tiers) {
				continue
			}
			s := r.Tiers[i]
			t.CPUUtil += s.CPUUtil / n
			t.ExecutingMean += s.ExecutingMean / n
			t.ExecutingMax = math.Max(t.ExecutingMax, s.ExecutingMax)
			t.QueuedMean += s.QueuedMean / n
			t.QueuedMax = math.Max(t.QueuedMax, s.QueuedMax)
			t.OutstandingMean += s.OutstandingMean / n
			t.OutstandingMax = math.Max(t.OutstandingMax, s.OutstandingMax)
			t.ThreadsBusyMean += s.ThreadsBusyMean / n
			t.ThreadsBusyMax = math.Max(t.ThreadsBusyMax, s.ThreadsBusyMax)
			t.ThreadsMax = math.Max(t.ThreadsMax, s.ThreadsMax)
			t.ThreadQueueMean += s.ThreadQueueMean / n
			t.MemoryMaxMB = math.Max(t.MemoryMaxMB, s.MemoryMaxMB)
			t.Completed += s.Completed
			t.Rejected += s.Rejected
			t.Aborted += s.Aborted
			t.WastedCPUSeconds += s.WastedCPUSeconds / n
		}
	}
	return out
}

// aggregateCalls averages each caller→callee pair over the replications.
// A run lists a pair when it is first used, so pairs are matched by (from,
// to, occurrence) rather than by position, and listed in tier order: the
// load's calls first, then by caller and callee.
func aggregateCalls(runs []*results.Run) []results.Call {
	type key struct {
		from, to string
		nth      int
	}
	var keys []key
	sums := map[key]*results.Call{}
	waits := map[key]int{}
	n := float64(len(runs))
	for _, r := range runs {
		seen := map[[2]string]int{}
		for _, c := range r.Calls {
			pair := [2]string{c.From, c.To}
			k := key{c.From, c.To, seen[pair]}
			seen[pair]++
			s := sums[k]
			if s == nil {
				s = &results.Call{From: c.From, To: c.To, Limit: c.Limit, Resolution: c.Resolution}
				sums[k] = s
				keys = append(keys, k)
			}
			s.InUseMean += c.InUseMean / n
			s.InUseMax = math.Max(s.InUseMax, c.InUseMax)
			s.WaitingMean += c.WaitingMean / n
			s.WaitingMax = math.Max(s.WaitingMax, c.WaitingMax)
			if c.Calls > 0 {
				s.WaitMean += c.WaitMean
				s.WaitP99 += c.WaitP99
				waits[k]++
			}
			s.Calls += c.Calls
			s.TimedOut += c.TimedOut
			s.Rejected += c.Rejected
			s.Failed += c.Failed
			s.Retries += c.Retries
		}
	}
	order := map[string]int{"load": -1}
	for i, name := range runs[0].TierNames {
		order[name] = i
	}
	rank := func(k key) [3]int { return [3]int{order[k.from], order[k.to], k.nth} }
	sortStable(keys, func(a, b key) bool {
		ra, rb := rank(a), rank(b)
		for i := range ra {
			if ra[i] != rb[i] {
				return ra[i] < rb[i]
			}
		}
		return false
	})
	out := make([]results.Call, 0, len(keys))
	for _, k := range keys {
		c := *sums[k]
		if w := waits[k]; w > 0 {
			c.WaitMean /= float64(w)
			c.WaitP99 /= float64(w)
		}
		out = append(out, c)
	}
	return out
}

// sortStable is an insertion sort: the lists are a handful of calls.
func sortStable[T any](xs []T, less func(a, b T) bool) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && less(xs[j], xs[j-1]); j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// ---------------------------------------------------------------------------
// summary.json

// params is a scenario's sweep values, written as a JSON object in sweep
// axis order.
type params []format.Param

func (p params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.Key)
		v, _ := json.Marshal(kv.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// scenarioJSON is one scenario in summary.json.
type scenarioJSON struct {
	Variant string `json:"variant"`
	Params  params `json:"params"`
	aggregate
}

// summaryJSON is summary.json. Its top-level results are those of the
// first scenario (the first variant at the first sweep point); variants
// lists every variant when the experiment has no sweep, points every
// (variant, sweep point) when it has one.
type summaryJSON struct {
	Experiment       string   `json:"experiment"`
	Description      string   `json:"description"`
	File             string   `json:"file"`
	Seed             uint64   `json:"seed"`
	Replications     int      `json:"replications"`
	ReplicationSeeds []uint64 `json:"replication_seeds"`
	Mode             string   `json:"mode"`
	// Complete is false when the run was interrupted; the missing
	// scenarios are then absent from variants and points.
	Complete  bool            `json:"complete"`
	Scenarios int             `json:"scenarios"`
	Sweep     []sweepAxisJSON `json:"sweep"`
	scenarioJSON
	Variants []scenarioJSON `json:"variants"`
	Points   []scenarioJSON `json:"points"`
}

type sweepAxisJSON struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

func experimentName(p *plan) string {
	if p.x.Name != "" {
		return p.x.Name
	}
	return p.stem
}

// summaryBytes renders summary.json. Only the finished scenarios are
// written; there is at least one.
func summaryBytes(r *experimentResult) ([]byte, error) {
	p := r.plan
	done := r.done()
	s := summaryJSON{
		Experiment:       experimentName(p),
		Description:      p.x.Description,
		File:             filepath.ToSlash(p.path),
		Seed:             p.seed,
		Replications:     p.reps,
		ReplicationSeeds: p.seeds(),
		Mode:             p.mode,
		Complete:         r.complete(),
		Scenarios:        len(r.scenarios),
		Sweep:            []sweepAxisJSON{},
		Variants:         []scenarioJSON{},
		Points:           []scenarioJSON{},
	}
	for _, ax := range p.x.Sweep {
		s.Sweep = append(s.Sweep, sweepAxisJSON{ax.Key, ax.Values})
	}
	for i, sc := range done {
		j := scenarioJSON{Variant: sc.variant, Params: params(sc.params), aggregate: sc.agg}
		if j.Params == nil {
			j.Params = params{}
		}
		if i == 0 {
			s.scenarioJSON = j
		}
		if p.sweep() {
			s.Points = append(s.Points, j)
		} else {
			s.Variants = append(s.Variants, j)
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ---------------------------------------------------------------------------
// CSV

// csvFloat formats a float for the CSV files: six significant digits, the
// same bytes on every run.
func csvFloat(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

func csvInt(x int64) string { return strconv.FormatInt(x, 10) }

func csvOpt(x *float64) string {
	if x == nil {
		return ""
	}
	return csvFloat(*x)
}

// paramKeys returns the sweep keys, in axis order.
func paramKeys(p *plan) []string {
	var keys []string
	for _, ax := range p.x.Sweep {
		keys = append(keys, ax.Key)
	}
	return keys
}

// summaryCSV renders summary.csv: one row per finished scenario.
func summaryCSV(r *experimentResult) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	keys := paramKeys(r.plan)
	head := append([]string{"variant"}, keys...)
	head = append(head, "throughput_per_s", "goodput_per_s",
		"latency_mean_s", "latency_p50_s", "latency_p90_s", "latency_p99_s", "latency_max_s",
		"timeout_rate", "reject_rate",
		"generated", "completed", "timed_out", "rejected", "failed", "in_flight",
		"ci_throughput_per_s", "ci_goodput_per_s", "ci_latency_mean_s", "ci_latency_p99_s", "ci_timeout_rate")
	if err := w.Write(head); err != nil {
		return nil, err
	}
	for _, sc := range r.done() {
		a := sc.agg
		row := []string{sc.variant}
		for _, k := range keys {
			v := ""
			for _, kv := range sc.params {
				if kv.Key == k {
					v = kv.Value
				}
			}
			row = append(row, v)
		}
		c := a.Requests
		row = append(row, csvFloat(a.ThroughputPerS), csvFloat(a.GoodputPerS),
			csvFloat(a.Latency.Mean), csvFloat(a.Latency.P50), csvFloat(a.Latency.P90), csvFloat(a.Latency.P99), csvFloat(a.Latency.Max),
			csvFloat(a.TimeoutRate), csvFloat(a.RejectRate),
			csvInt(c.Generated), csvInt(c.Completed), csvInt(c.TimedOut), csvInt(c.Rejected), csvInt(c.Failed), csvInt(c.InFlight))
		ci := a.CI
		if ci == nil {
			ci = &intervals{}
		}
		row = append(row, csvOpt(ci.ThroughputPerS), csvOpt(ci.GoodputPerS), csvOpt(ci.LatencyMeanS), csvOpt(ci.LatencyP99S), csvOpt(ci.TimeoutRate))
		if err := w.Write(row); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// timeseriesCSV renders timeseries.csv: each variant's counters per tier
// at every sampling instant of its first replication. Sweeps have none.
func timeseriesCSV(r *experimentResult) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	if err := w.Write([]string{"variant", "t_s", "tier",
		"requests_executing", "requests_queued", "calls_outstanding",
		"threads_busy", "threads", "thread_queue",
		"connections_in_use", "connections_waiting", "cpu_percent", "memory_mb"}); err != nil {
		return nil, err
	}
	for _, sc := range r.done() {
		if sc.first == nil {
			continue
		}
		names := sc.first.TierNames
		for _, s := range sc.first.Series {
			for i, t := range s.Tiers {
				name := ""
				if i < len(names) {
					name = names[i]
				}
				if err := w.Write([]string{sc.variant, csvFloat(s.T), name,
					csvFloat(t.Executing), csvFloat(t.Queued), csvFloat(t.Outstanding),
					csvFloat(t.ThreadsBusy), csvFloat(t.Threads), csvFloat(t.ThreadQueue),
					csvFloat(t.ConnsInUse), csvFloat(t.ConnsWaiting), csvFloat(t.CPU), csvFloat(t.MemoryMB)}); err != nil {
					return nil, err
				}
			}
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}
