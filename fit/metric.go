package fit

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
)

// A metric is one number of a run, named as summary.json names it:
//
//	latency.mean, latency.p50, .p90, .p99, .p999, .max   completed requests' client latency (s)
//	throughput_per_s, goodput_per_s, timeout_rate, reject_rate, first_timeout_s
//	requests.generated, .completed, .timed_out, .rejected, .failed, .in_flight
//	tier.NAME.FIELD          a tier's counter: any number of summary.json's tiers
//	                         (requests_executing_mean, cpu_utilisation, calls_duration_max_s, ...)
//	call.FROM.TO.FIELD       a call's: connections_in_use_mean, connection_wait_mean_s, timed_out, ...
//	breakdown.FIELD          the average request's seconds: connection_wait, cpu, ...
//	clients.latency_mean, .latency_max, .latency_min, .latency_p50, .latency_p90, .latency_p99,
//	clients.completed, .timed_out, .completed_per_s
//	                         the requests that ended in the target's window, as their clients saw them
type metricFn struct {
	kind  string // "run", "tier", "call", "clients"
	name  string // the tier or "FROM.TO"
	field []int  // the field's index path in the struct
	what  string // for clients: the statistic
}

var (
	runFields       = numericFields(reflect.TypeFor[results.Run]())
	tierFields      = numericFields(reflect.TypeFor[results.Tier]())
	callFields      = numericFields(reflect.TypeFor[results.Call]())
	clientsStats    = []string{"latency_mean", "latency_max", "latency_min", "latency_p50", "latency_p90", "latency_p99", "completed", "timed_out", "completed_per_s"}
	runMetricPrefix = []string{"latency.", "requests.", "breakdown."}
)

// numericFields maps the JSON names of a struct's numbers (and of its
// nested structs' as "outer.inner", the JSON name of a struct field
// without its "_s" suffix) to their index paths.
func numericFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			idx := append(slices.Clone(index), i)
			switch f.Type.Kind() {
			case reflect.Float64, reflect.Int64, reflect.Int, reflect.Uint64:
				out[prefix+name] = idx
			case reflect.Struct:
				if prefix == "" {
					walk(f.Type, strings.TrimSuffix(name, "_s")+".", idx)
				}
			}
		}
	}
	walk(t, "", nil)
	return out
}

func names(m map[string][]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Metrics lists the metrics a target may name, with NAME, FROM, TO for a
// tier's or a call's.
func Metrics() []string {
	var out []string
	for _, k := range names(runFields) {
		if k == "seed" || k == "events" || k == "trace_hash" || k == "duration_s" || k == "warmup_s" {
			continue
		}
		out = append(out, k)
	}
	for _, k := range names(tierFields) {
		out = append(out, "tier.NAME."+k)
	}
	for _, k := range names(callFields) {
		out = append(out, "call.FROM.TO."+k)
	}
	for _, k := range clientsStats {
		out = append(out, "clients."+k)
	}
	return out
}

// parseMetric reads a metric's name; the message says what is wrong.
func parseMetric(s string) (metricFn, string) {
	parts := strings.Split(s, ".")
	switch parts[0] {
	case "tier":
		if len(parts) != 3 {
			return metricFn{}, "want tier.NAME.FIELD, such as tier.web.requests_executing_mean"
		}
		idx, ok := tierFields[parts[2]]
		if !ok {
			return metricFn{}, fmt.Sprintf("a tier has no counter %q (%s)", parts[2], strings.Join(names(tierFields), ", "))
		}
		return metricFn{kind: "tier", name: parts[1], field: idx}, ""
	case "call":
		if len(parts) != 4 {
			return metricFn{}, "want call.FROM.TO.FIELD, such as call.web.service.connections_waiting_mean"
		}
		idx, ok := callFields[parts[3]]
		if !ok {
			return metricFn{}, fmt.Sprintf("a call has no figure %q (%s)", parts[3], strings.Join(names(callFields), ", "))
		}
		return metricFn{kind: "call", name: parts[1] + "." + parts[2], field: idx}, ""
	case "clients":
		if len(parts) != 2 || !slices.Contains(clientsStats, parts[1]) {
			return metricFn{}, fmt.Sprintf("want clients.STAT, STAT one of %s", strings.Join(clientsStats, ", "))
		}
		return metricFn{kind: "clients", what: parts[1]}, ""
	}
	idx, ok := runFields[s]
	if !ok || s == "seed" || s == "events" || s == "trace_hash" {
		return metricFn{}, fmt.Sprintf("unknown metric (run: %s; tier.NAME.FIELD; call.FROM.TO.FIELD; clients.STAT)",
			strings.Join(runNames(), ", "))
	}
	return metricFn{kind: "run", field: idx}, ""
}

func runNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range names(runFields) {
		if k == "seed" || k == "events" || k == "trace_hash" || k == "duration_s" || k == "warmup_s" {
			continue
		}
		for _, p := range runMetricPrefix {
			if strings.HasPrefix(k, p) {
				k = p + "*"
			}
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// check says what is wrong with the metric for a topology: a tier or call
// it does not have.
func (m metricFn) check(top *model.Topology) string {
	var tiers []string
	for _, t := range top.Tiers {
		tiers = append(tiers, t.Name)
	}
	switch m.kind {
	case "tier":
		if !slices.Contains(tiers, m.name) {
			return fmt.Sprintf("no tier %q (tiers: %s)", m.name, strings.Join(tiers, ", "))
		}
	case "call":
		from, to, _ := strings.Cut(m.name, ".")
		if !slices.Contains(tiers, from) || !slices.Contains(tiers, to) {
			return fmt.Sprintf("no call from %q to %q (tiers: %s)", from, to, strings.Join(tiers, ", "))
		}
	}
	return ""
}

// needsPoints says whether the metric reads the clients' requests one by
// one.
func (m metricFn) needsPoints() bool { return m.kind == "clients" }

// of is the metric in one run; NaN when the run has no such figure (a call
// that was never made, a latency of no request).
func (m metricFn) of(r *results.Run, window []float64) float64 {
	switch m.kind {
	case "run":
		if len(m.field) > 1 && m.field[0] == latencyIndex && r.Latency.None {
			return math.NaN()
		}
		return number(reflect.ValueOf(r).Elem().FieldByIndex(m.field))
	case "tier":
		for i := range r.Tiers {
			if r.Tiers[i].Name == m.name {
				return number(reflect.ValueOf(&r.Tiers[i]).Elem().FieldByIndex(m.field))
			}
		}
	case "call":
		from, to, _ := strings.Cut(m.name, ".")
		for i := range r.Calls {
			if r.Calls[i].From == from && r.Calls[i].To == to {
				return number(reflect.ValueOf(&r.Calls[i]).Elem().FieldByIndex(m.field))
			}
		}
	case "clients":
		return clients(r, m.what, window[0], window[1])
	}
	return math.NaN()
}

var latencyIndex = func() int {
	f, _ := reflect.TypeFor[results.Run]().FieldByName("Latency")
	return f.Index[0]
}()

func number(v reflect.Value) float64 {
	switch v.Kind() {
	case reflect.Float64:
		return v.Float()
	case reflect.Int64, reflect.Int:
		return float64(v.Int())
	case reflect.Uint64:
		return float64(v.Uint())
	}
	return math.NaN()
}

// clients is a statistic of the requests that ended in [from, to), as
// their clients saw them (the run keeps every request's point: see
// pointsFor).
func clients(r *results.Run, what string, from, to float64) float64 {
	var lat []float64
	var timedOut int
	for _, p := range r.Points {
		if p.T < from || p.T >= to {
			continue
		}
		switch p.Outcome {
		case results.Completed:
			lat = append(lat, p.Latency)
		case results.TimedOut:
			timedOut++
		}
	}
	switch what {
	case "completed":
		return float64(len(lat))
	case "timed_out":
		return float64(timedOut)
	case "completed_per_s":
		end := min(to, r.Duration)
		if end <= from {
			return math.NaN()
		}
		return float64(len(lat)) / (end - from)
	}
	if len(lat) == 0 {
		return math.NaN()
	}
	sort.Float64s(lat)
	switch what {
	case "latency_min":
		return lat[0]
	case "latency_max":
		return lat[len(lat)-1]
	case "latency_p50":
		return quantile(lat, 0.5)
	case "latency_p90":
		return quantile(lat, 0.9)
	case "latency_p99":
		return quantile(lat, 0.99)
	}
	var s float64
	for _, x := range lat {
		s += x
	}
	return s / float64(len(lat))
}

// quantile of sorted xs, the nearest rank.
func quantile(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}
