package analysis

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// Goal is one clause of a goal: a metric below (or above) a threshold.
type Goal struct {
	Metric string  // p50 p90 p99 p99.9 mean timeouts rejected goodput throughput
	Less   bool    // metric < Limit; otherwise metric > Limit
	Limit  float64 // seconds, a fraction, or requests per second
	Text   string  // as written, normalised: "p99 < 2s"
	// None is "timeouts=0" or "rejected=0": not one such request in any
	// replication (Less, with Limit 0).
	None bool
}

var goalRe = regexp.MustCompile(`^\s*([a-z0-9.]+)\s*([<>=])\s*(\S+)\s*$`)

// ParseGoal reads a goal, a comma-separated list of clauses that must all
// hold, such as "p99<1s,timeouts<0.1%":
//
//	p50<D, p90<D, p99<D, p99.9<D, mean<D   client latency of completed requests below a duration
//	timeouts<P%, rejected<P%               the share of requests timed out, or rejected, below P percent
//	timeouts=0, rejected=0                 not one request timed out, or rejected, in any replication
//	goodput>R, throughput>R                requests per second completed at the client, or by the entry tier, above R
func ParseGoal(s string) ([]Goal, error) {
	var out []Goal
	for _, clause := range strings.Split(s, ",") {
		m := goalRe.FindStringSubmatch(clause)
		if m == nil {
			return nil, fmt.Errorf("goal clause %s: want METRIC<VALUE or METRIC>VALUE, such as p99<1s, timeouts<0.1%%, goodput>50", excerpt(clause))
		}
		g := Goal{Metric: m[1], Less: m[2] == "<", Text: m[1] + " " + m[2] + " " + m[3]}
		if m[2] == "=" {
			if (g.Metric != "timeouts" && g.Metric != "rejected") || strings.TrimSuffix(m[3], "%") != "0" {
				return nil, fmt.Errorf("goal clause %s: only timeouts=0 and rejected=0 are equalities; use < or > for the rest", excerpt(clause))
			}
			g.Less, g.None, g.Limit = true, true, 0
			out = append(out, g)
			continue
		}
		switch g.Metric {
		case "p50", "p90", "p99", "p99.9", "mean":
			if !g.Less {
				return nil, fmt.Errorf("goal clause %s: latency goals are upper limits (%s<D)", excerpt(clause), g.Metric)
			}
			d, err := time.ParseDuration(m[3])
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("goal clause %s: want a positive duration such as 1s or 250ms, got %s", excerpt(clause), excerpt(m[3]))
			}
			g.Limit = d.Seconds()
		case "timeouts", "rejected":
			if !g.Less {
				return nil, fmt.Errorf("goal clause %s: %s goals are upper limits (%s<P%%)", excerpt(clause), g.Metric, g.Metric)
			}
			v, ok := strings.CutSuffix(m[3], "%")
			f, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil || !(f > 0 && f <= 100) { // NaN fails too
				return nil, fmt.Errorf("goal clause %s: want a percentage in (0, 100] such as 0.1%%, got %s", excerpt(clause), excerpt(m[3]))
			}
			g.Limit = f / 100
		case "goodput", "throughput":
			if g.Less {
				return nil, fmt.Errorf("goal clause %s: %s goals are lower limits (%s>R)", excerpt(clause), g.Metric, g.Metric)
			}
			f, err := strconv.ParseFloat(strings.TrimSuffix(m[3], "/s"), 64)
			if err != nil || !(f > 0) || math.IsInf(f, 0) { // NaN fails too
				return nil, fmt.Errorf("goal clause %s: want a finite number of requests per second above 0, such as 50 or 50/s, got %s", excerpt(clause), excerpt(m[3]))
			}
			g.Limit = f
		default:
			return nil, fmt.Errorf("goal clause %s: unknown metric %s (p50, p90, p99, p99.9, mean, timeouts, rejected, goodput, throughput)", excerpt(clause), excerpt(g.Metric))
		}
		out = append(out, g)
	}
	return out, nil
}

// excerpt quotes at most the first 40 characters of s, trimmed, as %q
// would: an error message does not echo a whole argument back.
func excerpt(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 40 {
		s = string(r[:40]) + "…"
	}
	return strconv.Quote(s)
}

// Of is the clause's metric in one replication; a latency is +Inf when no
// request completed, so that such a replication misses a latency goal.
func (g Goal) Of(r *results.Run) float64 {
	lat := func(v float64) float64 {
		if r.GoodputPerS == 0 {
			return math.Inf(1)
		}
		return v
	}
	switch g.Metric {
	case "p50":
		return lat(r.Latency.P50)
	case "p90":
		return lat(r.Latency.P90)
	case "p99":
		return lat(r.Latency.P99)
	case "p99.9":
		return lat(r.Latency.P999)
	case "mean":
		return lat(r.Latency.Mean)
	case "timeouts":
		return r.TimeoutRate
	case "rejected":
		return r.RejectRate
	case "goodput":
		return r.GoodputPerS
	case "throughput":
		return r.ThroughputPerS
	}
	panic("unknown metric " + g.Metric)
}

// Level is the one-sided confidence level on which goals are judged.
const Level = 0.95

// Judge returns the mean of a clause's values across replications and the
// one-sided 95% Student t confidence bound it is judged on — for "<" the
// upper bound mean + t(0.95, n−1)·s/√n, for ">" the lower bound
// mean − t(0.95, n−1)·s/√n; the single value itself with one replication —
// and whether the bound meets the clause. An infinite value (a replication
// without completed requests, for a latency) misses it.
func (g Goal) Judge(xs []float64) (mean, bound float64, ok bool) {
	var t sim.Tally
	for _, x := range xs {
		if math.IsInf(x, 0) {
			return math.Inf(1), math.Inf(1), false
		}
		t.Add(x)
	}
	mean, bound = t.Mean(), t.Mean()
	if n := len(xs); n > 1 {
		// TQuantile is two-sided: its 90% value is the one-sided 95% one.
		h := sim.TQuantile(2*Level-1, n-1) * math.Sqrt(t.Variance()/float64(n))
		if g.Less {
			bound += h
		} else {
			bound -= h
		}
		// A share cannot leave [0, 1], a rate or a latency go below 0.
		bound = math.Max(bound, 0)
		if g.Metric == "timeouts" || g.Metric == "rejected" {
			bound = math.Min(bound, 1)
		}
	}
	if g.None {
		return mean, bound, t.Max() == 0
	}
	if g.Less {
		return mean, bound, bound < g.Limit
	}
	return mean, bound, bound > g.Limit
}

// Format writes a value of the clause's metric for tables: "3.53 s",
// "0.1%", "45.2/s"; "none" for an infinite one.
func (g Goal) Format(v float64) string {
	if math.IsInf(v, 0) {
		return "none"
	}
	switch g.Metric {
	case "timeouts", "rejected":
		return results.FmtPercent(v)
	case "goodput", "throughput":
		return results.FmtRate(v) + "/s"
	}
	return results.FmtLatency(v)
}

// Axis names the clause's metric for a picture's axis, and the factor
// that scales a value to it (shares are drawn in percent).
func (g Goal) Axis() (label string, scale float64) {
	switch g.Metric {
	case "timeouts":
		return "timed out (% of requests)", 100
	case "rejected":
		return "rejected (% of requests)", 100
	case "goodput":
		return "goodput (requests/s)", 1
	case "throughput":
		return "throughput (requests/s)", 1
	case "mean":
		return "mean latency (s)", 1
	}
	return g.Metric + " latency (s)", 1
}

// GoalText writes a goal's clauses, normalised and joined by sep.
func GoalText(gs []Goal, sep string) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.Text)
	}
	return strings.Join(s, sep)
}
