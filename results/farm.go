package results

import "strings"

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

// FoldFarm is the totals of one farm's machines (see FoldTiers), as
// TierColumns's Machines rules say.
func FoldFarm(name string, ms []Tier) Tier {
	out := ms[0]
	combineMachines(TierColumns, &out, ms, func(w Weight, i int) float64 { return tierWeight(w, &ms[i]) })
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

// foldSample folds one farm's machines' samples, as SampleColumns's
// Machines rules say; cores are the machines' cores.
func foldSample(ms []TierSample, cores []int) TierSample {
	out := ms[0]
	combineMachines(SampleColumns, &out, ms, func(w Weight, i int) float64 {
		if w == ByCores {
			return float64(cores[i])
		}
		return sampleWeight(w, &ms[i])
	})
	return out
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
		out := rs[0]
		combineMachines(CallColumns, &out, rs, func(w Weight, i int) float64 { return callWeight(w, &rs[i]) })
		out.From, out.To = FarmOf(f.From), FarmOf(f.To)
		// The limit: the sum over the distinct pairs, unless one is
		// unlimited (0).
		out.Limit = 0
		pairs := map[key]bool{}
		unlimited := false
		for _, c := range rs {
			if k := (key{c.From, c.To}); !pairs[k] {
				pairs[k] = true
				out.Limit += c.Limit
				unlimited = unlimited || c.Limit == 0
			}
		}
		if unlimited {
			out.Limit = 0
		}
		folded = append(folded, out)
	}
	return folded, machines
}

// MeanBalancers aggregates one scenario's balancers over its replications
// (the same balancers, in the same order, in each), as BalancerColumns's
// Runs rules say: time averages are means, maxima maxima, counts sums;
// the requests sent to each machine are summed machine by machine.
func MeanBalancers(runs [][]Balancer) []Balancer {
	if len(runs) == 0 || len(runs[0]) == 0 {
		return nil
	}
	out := make([]Balancer, len(runs[0]))
	for i := range out {
		var rows []*Balancer
		for _, r := range runs {
			if i < len(r) {
				rows = append(rows, &r[i])
			}
		}
		b := &out[i]
		*b = runs[0][i]
		combineRuns(BalancerColumns, b, rows, float64(len(runs)), noWeight[Balancer])
		b.Sent = make([]int64, len(runs[0][i].Sent))
		for _, s := range rows {
			for k := range b.Sent {
				if k < len(s.Sent) {
					b.Sent[k] += s.Sent[k]
				}
			}
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
