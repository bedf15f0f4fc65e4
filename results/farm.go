package results

import (
	"reflect"
	"strings"
)

// Balancer is a farm's balancer over the measured period: its policy, its
// own door (connection limit and queue) and how it spread the requests.
type Balancer struct {
	Farm        string  `json:"farm"`
	Policy      string  `json:"policy"`
	Affinity    bool    `json:"session_affinity"`
	Limit       int     `json:"connection_limit"` // 0 = none
	QueueLimit  int     `json:"queue_limit"`
	LatencyS    float64 `json:"latency_s"`
	InUseMean   float64 `json:"connections_in_use_mean"`
	InUseMax    float64 `json:"connections_in_use_max"`
	WaitingMean float64 `json:"waiting_mean"`
	WaitingMax  float64 `json:"waiting_max"`
	// Sent is the requests dispatched to each replica, in replica order
	// (by the balancer, or by callers that balance by themselves).
	Sent     []int64 `json:"sent"`
	Rejected int64   `json:"rejected"` // refused with a 503: its queue was full
	Refused  int64   `json:"refused"`  // sent off their session's machine without affinity: failed there
}

// FarmOf maps a machine's name ("web#2") to its farm's ("web"); other
// names map to themselves.
func FarmOf(name string) string {
	if i := strings.LastIndexByte(name, '#'); i > 0 {
		return name[:i]
	}
	return name
}

// FoldTiers replaces the machines of each farm by one row of the farm's
// totals, at the place of its first machine, and returns the machines
// apart; farm[i] names the farm of tiers[i] ("" for a tier on one
// machine). Without farms it returns tiers itself and no machines.
//
// A farm's row: cores, levels (means and maxima), rates, counts and
// wasted CPU are sums over its machines, so a _max is the sum of the
// machines' maxima (an upper bound of the farm's, which need not
// coincide); CPU utilisation is over all its cores; the means of
// durations and P(wait) are weighted by the requests (calls) of each
// machine, and the maxima of durations are the largest of any machine.
func FoldTiers(tiers []Tier, farm []string) (folded, machines []Tier) {
	if !anyFarm(farm) {
		return tiers, nil
	}
	groups, order := groupBy(len(tiers), farm)
	for _, g := range order {
		if len(groups[g]) == 1 && farm[groups[g][0]] == "" {
			folded = append(folded, tiers[groups[g][0]])
			continue
		}
		var ms []Tier
		for _, i := range groups[g] {
			ms = append(ms, tiers[i])
		}
		machines = append(machines, ms...)
		folded = append(folded, FoldFarm(farm[groups[g][0]], ms))
	}
	return folded, machines
}

// FoldFarm is the totals of one farm's machines (see FoldTiers).
func FoldFarm(name string, ms []Tier) Tier {
	out := foldStruct(ms, func(field string, vals []reflect.Value, w weights) float64 {
		switch {
		case field == "CPUUtil":
			return w.avg(vals, w.cores)
		case field == "PWait", field == "ResponseMean", field == "ResponseP50", field == "ResponseP99":
			return w.avg(vals, w.completed)
		case field == "CallDurationMean":
			return w.avg(vals, w.calls)
		case field == "ExecTimeMean":
			return w.avg(vals, w.completed)
		case isDuration(field) && strings.HasSuffix(field, "Mean"):
			return w.avg(vals, w.arrived)
		case isDuration(field):
			return most(vals)
		}
		return sum(vals)
	}).(Tier)
	out.Name, out.Replicas = name, len(ms)
	return out
}

// FoldSamples folds one sampling instant's tiers as FoldTiers does; cores
// are the tiers' cores (to average CPU %).
func FoldSamples(s []TierSample, cores []int, farm []string) (folded, machines []TierSample) {
	if !anyFarm(farm) {
		return s, nil
	}
	groups, order := groupBy(len(s), farm)
	for _, g := range order {
		if len(groups[g]) == 1 && farm[groups[g][0]] == "" {
			folded = append(folded, s[groups[g][0]])
			continue
		}
		var ms []TierSample
		var cs []int
		for _, i := range groups[g] {
			ms = append(ms, s[i])
			cs = append(cs, cores[i])
		}
		machines = append(machines, ms...)
		folded = append(folded, foldSample(ms, cs))
	}
	return folded, machines
}

func foldSample(ms []TierSample, cores []int) TierSample {
	return foldStruct(ms, func(field string, vals []reflect.Value, w weights) float64 {
		switch field {
		case "CPU":
			ws := make([]float64, len(cores))
			for i, c := range cores {
				ws[i] = float64(c)
			}
			return w.avg(vals, ws)
		case "ExecTimeMS":
			return w.avg(vals, w.field(ms, "ExecN"))
		case "WaitTimeMS":
			return w.avg(vals, w.field(ms, "WaitN"))
		case "CallDuration":
			return w.avg(vals, w.field(ms, "CallN"))
		case "ExecTimeMaxMS", "WaitTimeMaxMS", "CallDurationMax":
			return most(vals)
		}
		return sum(vals)
	}).(TierSample)
}

// FoldCalls folds the caller→callee rows of machines into rows between
// farms (by FarmOf of both ends), at the place of their first row, and
// returns the machines' rows apart. Connections in use and waiting, the
// limit (over the distinct pairs) and the counts are sums (a limit of 0,
// unlimited, stays 0); the mean wait is weighted by calls, the p99 is the
// largest of any row. Without a farm's machine on either side of any row
// it returns calls itself and no machines' rows.
func FoldCalls(calls []Call) (folded, machines []Call) {
	any := false
	for _, c := range calls {
		if FarmOf(c.From) != c.From || FarmOf(c.To) != c.To {
			any = true
		}
	}
	if !any {
		return calls, nil
	}
	type key struct{ from, to string }
	idx := map[key]int{}
	var rows [][]Call
	for _, c := range calls {
		k := key{FarmOf(c.From), FarmOf(c.To)}
		i, ok := idx[k]
		if !ok {
			i = len(rows)
			idx[k] = i
			rows = append(rows, nil)
		}
		rows[i] = append(rows[i], c)
	}
	for _, rs := range rows {
		f := rs[0]
		machine := FarmOf(f.From) != f.From || FarmOf(f.To) != f.To
		if !machine {
			folded = append(folded, rs...)
			continue
		}
		machines = append(machines, rs...)
		out := Call{From: FarmOf(f.From), To: FarmOf(f.To), Resolution: f.Resolution}
		pairs := map[key]bool{}
		unlimited := false
		var wsum float64
		for _, c := range rs {
			if k := (key{c.From, c.To}); !pairs[k] {
				pairs[k] = true
				out.Limit += c.Limit
				unlimited = unlimited || c.Limit == 0
			}
			out.InUseMean += c.InUseMean
			out.InUseMax += c.InUseMax
			out.WaitingMean += c.WaitingMean
			out.WaitingMax += c.WaitingMax
			out.WaitMean += c.WaitMean * float64(c.Calls)
			wsum += float64(c.Calls)
			out.WaitP99 = max(out.WaitP99, c.WaitP99)
			out.Calls += c.Calls
			out.TimedOut += c.TimedOut
			out.Rejected += c.Rejected
			out.Failed += c.Failed
			out.Retries += c.Retries
			out.Proxies += c.Proxies
			out.FactoryHits += c.FactoryHits
			out.FactoriesBuilt += c.FactoriesBuilt
			out.FactoriesPurged += c.FactoriesPurged
			out.NegotiationTimedOut += c.NegotiationTimedOut
			out.NegotiationFailed += c.NegotiationFailed
		}
		if unlimited {
			out.Limit = 0
		}
		if wsum > 0 {
			out.WaitMean /= wsum
		}
		folded = append(folded, out)
	}
	return folded, machines
}

// MeanBalancers aggregates one scenario's balancers over its replications
// (the same balancers, in the same order, in each): time averages are
// means, maxima maxima, counts sums.
func MeanBalancers(runs [][]Balancer) []Balancer {
	if len(runs) == 0 || len(runs[0]) == 0 {
		return nil
	}
	n := float64(len(runs))
	out := make([]Balancer, len(runs[0]))
	for i := range out {
		b := &out[i]
		f := runs[0][i]
		*b = Balancer{Farm: f.Farm, Policy: f.Policy, Affinity: f.Affinity, Limit: f.Limit, QueueLimit: f.QueueLimit, LatencyS: f.LatencyS,
			Sent: make([]int64, len(f.Sent))}
		for _, r := range runs {
			if i >= len(r) {
				continue
			}
			s := r[i]
			b.InUseMean += s.InUseMean / n
			b.InUseMax = max(b.InUseMax, s.InUseMax)
			b.WaitingMean += s.WaitingMean / n
			b.WaitingMax = max(b.WaitingMax, s.WaitingMax)
			for k := range b.Sent {
				if k < len(s.Sent) {
					b.Sent[k] += s.Sent[k]
				}
			}
			b.Rejected += s.Rejected
			b.Refused += s.Refused
		}
	}
	return out
}

func anyFarm(farm []string) bool {
	for _, f := range farm {
		if f != "" {
			return true
		}
	}
	return false
}

// groupBy groups indexes 0..n−1 by farm name, each ungrouped index alone,
// in the order of their first member.
func groupBy(n int, farm []string) (map[string][]int, []string) {
	groups := map[string][]int{}
	var order []string
	for i := 0; i < n; i++ {
		k := "\x00" + farm[i]
		if farm[i] == "" {
			k = "\x01" + string(rune(i))
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	return groups, order
}

// weights are the per-machine weights of a fold.
type weights struct {
	cores, completed, arrived, calls []float64
}

func (weights) avg(vals []reflect.Value, ws []float64) float64 {
	var s, t float64
	for i, v := range vals {
		s += v.Float() * ws[i]
		t += ws[i]
	}
	if t == 0 {
		return mean(vals)
	}
	return s / t
}

func (weights) field(ms []TierSample, name string) []float64 {
	out := make([]float64, len(ms))
	for i := range ms {
		out[i] = float64(reflect.ValueOf(ms[i]).FieldByName(name).Int())
	}
	return out
}

func isDuration(field string) bool {
	return strings.Contains(field, "Time") || strings.Contains(field, "Duration") || strings.HasPrefix(field, "Response")
}

// foldStruct folds a slice of structs field by field: strings and bools
// from the first, integers summed, floats by f. Slices are left empty.
func foldStruct[T any](ms []T, f func(field string, vals []reflect.Value, w weights) float64) any {
	var w weights
	if tiers, ok := any(ms).([]Tier); ok {
		for _, t := range tiers {
			w.cores = append(w.cores, float64(t.Cores))
			w.completed = append(w.completed, float64(t.Completed))
			w.arrived = append(w.arrived, float64(t.Arrived))
			w.calls = append(w.calls, float64(t.Calls))
		}
	}
	var out T
	ov := reflect.ValueOf(&out).Elem()
	typ := ov.Type()
	first := reflect.ValueOf(ms[0])
	for k := 0; k < typ.NumField(); k++ {
		fv := ov.Field(k)
		vals := make([]reflect.Value, len(ms))
		for i := range ms {
			vals[i] = reflect.ValueOf(ms[i]).Field(k)
		}
		switch fv.Kind() {
		case reflect.String, reflect.Bool:
			fv.Set(first.Field(k))
		case reflect.Int, reflect.Int64:
			var s int64
			for _, v := range vals {
				s += v.Int()
			}
			fv.SetInt(s)
		case reflect.Float64:
			fv.SetFloat(f(typ.Field(k).Name, vals, w))
		}
	}
	return out
}

func sum(vals []reflect.Value) float64 {
	s := 0.0
	for _, v := range vals {
		s += v.Float()
	}
	return s
}

func mean(vals []reflect.Value) float64 { return sum(vals) / float64(len(vals)) }

func most(vals []reflect.Value) float64 {
	m := 0.0
	for _, v := range vals {
		m = max(m, v.Float())
	}
	return m
}
