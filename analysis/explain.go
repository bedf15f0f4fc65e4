package analysis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

// ExplainOptions control Explain. The zero value simulates every variant
// with the experiment's seed.
type ExplainOptions struct {
	// Path is the file the experiment was read from: the text's heading
	// and the error messages name it, and its stem names an unnamed
	// experiment.
	Path string
	// Seed, when not nil, replaces the experiment's seed.
	Seed *uint64
}

// Explanation is Explain's answer for one experiment.
type Explanation struct {
	Name        string   // the experiment's name, or its file's stem
	Path        string   // as given in ExplainOptions
	Description string   // the experiment's description
	Sweep       []string // the keys of a sweep, left out: each variant is explained at its base values
	Seed        uint64   // the seed of every variant's simulation
	Variants    []*Variant
}

// Variant is one variant explained.
type Variant struct {
	Name, Description string
	// Scenario is the variant at its base values, compiled.
	Scenario format.Scenario
	// Bounds is the operational-law analysis of Scenario.Topology, before
	// simulating: every throttle's bound, binding one first
	// (Bounds.Binding, nil when no throttle limits the system).
	Bounds model.Analysis
	// Run is one simulation of the variant with Explanation.Seed;
	// Run.Breakdown is where a completed request's response time went.
	Run *results.Run
	// Change is the smallest change that moves the binding limit and what
	// binds after it; its zero value proposes nothing.
	Change Change
	// Diagnosis is the third part of the text for this variant, as
	// WriteText prints it: binding limit, its simulated use, the idle
	// resources, the change and what binds next.
	Diagnosis string
}

// Change is a proposed change to a variant's settings.
type Change struct {
	// Knob is the setting that moves the binding limit, as a person names
	// it ("maxconnection web→service"), and From its value now; Knob is
	// empty when no setting does (a lock to shorten).
	Knob string
	From int
	// Set is the smallest change: the key path and value that carry the
	// peak load (the limit n ≥ X·H, Little's law), or the setting that
	// lifts a serialising lock. Set.Key is empty when the load needs no
	// change, or when tsim found no key that sets the knob.
	Set format.Param
	// Comfortable keeps the throttle under 75% busy at the peak, with
	// room for bursts; its Key is empty when Set already does.
	Comfortable format.Param
	// Past is the value at which the throttle stops binding first (its
	// bound reaches the next one), and Next what binds then, from
	// analysing the variant again with it; for a serialising lock, Next
	// is what binds after Set. Past.Key is empty, and Next nil, when no
	// such value was found.
	Past format.Param
	Next *model.Bound
	// Text proposes the change and Then says what binds after it, as the
	// diagnosis writes them.
	Text, Then string
}

// Explain computes every variant's operational-law bounds, simulates each
// variant once (all at once, each on its own engine) with the
// experiment's seed or opt.Seed, and diagnoses it. The sweep, if any, is
// left out: each variant is explained at its base values. A cancelled ctx
// makes Explain return an error once the simulations under way end.
func Explain(ctx context.Context, x *format.Experiment, opt ExplainOptions) (*Explanation, error) {
	ex := &Explanation{Name: x.Name, Path: opt.Path, Description: x.Description, Seed: x.Seed}
	if ex.Name == "" {
		ex.Name = runner.Stem(opt.Path)
	}
	if opt.Seed != nil {
		ex.Seed = *opt.Seed
	}
	for _, ax := range x.Sweep {
		ex.Sweep = append(ex.Sweep, ax.Key)
	}
	for i, name := range x.Variants {
		sc, err := x.ScenarioWith(name, nil, nil)
		if err != nil {
			return nil, err
		}
		ex.Variants = append(ex.Variants, &Variant{Name: name, Description: x.VariantDescription(i), Scenario: sc, Bounds: model.Analyse(&sc.Topology)})
	}

	var wg sync.WaitGroup
	errs := make([]error, len(ex.Variants))
	for i, v := range ex.Variants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v.Run, errs[i] = runner.Sim{}.Run(ctx, &v.Scenario.Topology, ex.Seed, model.Options{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: variant %s (seed %d): %v", opt.Path, ex.Variants[i].Name, ex.Seed, err)
		}
	}
	if ctx.Err() != nil {
		return nil, errors.New("interrupted")
	}
	for _, v := range ex.Variants {
		if v.Bounds.Binding != nil {
			v.Change = proposeChange(x, v)
		}
		var b bytes.Buffer
		diagnose(&b, v)
		v.Diagnosis = b.String()
	}
	return ex, nil
}

// knob is a setting that moves a throttle's limit.
type knob struct {
	name string   // as a person says it: "maxconnection web→service"
	keys []string // key paths that may set it, tried in order
	from int      // its value now
	// value is the key's value that makes the throttle's limit n.
	value func(n int) int
	max   int // the largest value the key takes
}

// knobFor finds the setting of a throttle's limit, if it has one.
func knobFor(top *model.Topology, b *model.Bound) (knob, bool) {
	tierIdx := -1
	for i := range top.Tiers {
		if t := &top.Tiers[i]; t.Name == b.Tier || (t.Farm == b.Tier && tierIdx < 0) {
			tierIdx = i // a farm: its first machine stands for all
		}
	}
	id := func(n int) int { return n }
	if m := b.Machines; m > 1 && b.Kind != "cpu" {
		// A per-machine limit: the key sets each machine's (each pool's)
		// share of the n the farm needs.
		id = func(n int) int { return (n + m - 1) / m }
	}
	const maxInt32 = math.MaxInt32
	switch b.Kind {
	case "connection":
		if math.IsInf(b.Limit, 1) {
			return knob{}, false
		}
		from, to := connEnds(b)
		key, name := "maxconnection", "maxconnection"
		switch n := b.Note; {
		case strings.Contains(n, "Go http.Transport"):
			key, name = "max_conns_per_host", "MaxConnsPerHost"
		case strings.Contains(n, "Envoy"):
			key, name = "max_connections", "Envoy max_connections"
		case strings.Contains(n, "HikariCP"):
			key, name = "pool_size", "HikariCP maximumPoolSize"
		case strings.Contains(n, "host-specific maxconnection entry for"), strings.Contains(n, "autoConfig on"):
			// The limit came from a host-specific entry, or from autoConfig,
			// over which only a host-specific entry wins. ("no host-specific
			// entry for X" in a note means neither.)
			key, name = "maxconnection_host", "the host-specific maxconnection"
		case strings.Contains(n, "set in code"):
			key, name = "connection_limit_code", "ServicePointManager.DefaultConnectionLimit"
		}
		k := knob{name: name + " " + from + "→" + to, from: int(b.Limit), value: id, max: maxInt32}
		if b.Machines > 1 {
			k.from = int(b.PerMachine)
			k.name += " (per calling machine)"
		}
		if key == "pool_size" {
			k.max = 1e6
		}
		if from == "load" || (tierIdx >= 0 && top.Tiers[tierIdx].Agent) {
			k.keys = []string{"load.call." + key}
			return k, true
		}
		calls := 0
		for _, st := range top.Tiers[tierIdx].Steps {
			if st.Kind == model.StepCall {
				calls++
			}
		}
		if calls == 1 {
			k.keys = append(k.keys, "tier."+from+".calls."+key)
		}
		k.keys = append(k.keys, "tier."+from+".call."+to+"."+key)
		if key == "maxconnection" {
			k.keys = append(k.keys, "tier."+from+".call."+to+".maxconnection_host")
		}
		return k, true
	case "threads":
		if tierIdx < 0 {
			return knob{}, false
		}
		if strings.HasPrefix(b.Throttle, "I/O threads") {
			return knob{name: "maxIOThreads of " + b.Tier, keys: []string{"tier." + b.Tier + ".io.max"}, from: top.Tiers[tierIdx].IO.Max, value: id, max: 32767}, true
		}
		return knob{name: "maxWorkerThreads of " + b.Tier, keys: []string{"tier." + b.Tier + ".worker.max"}, from: top.Tiers[tierIdx].Worker.Max, value: id, max: 32767}, true
	case "admission":
		if tierIdx < 0 {
			return knob{}, false
		}
		t := &top.Tiers[tierIdx]
		if t.Admission.Kind == model.AdmitClassic {
			free := t.Admission.MinFreeThreads
			return knob{name: "maxWorkerThreads of " + b.Tier,
				keys: []string{"tier." + b.Tier + ".worker.max"}, from: t.Worker.Max, value: func(n int) int { return n + free }, max: 32767}, true
		}
		return knob{name: "the concurrent request limit of " + b.Tier, keys: []string{"tier." + b.Tier + ".admission.max_executing"}, from: t.Admission.MaxExecuting, value: id, max: 1e7}, true
	case "wcf-calls", "wcf-sessions", "wcf-instances":
		if tierIdx < 0 || top.Tiers[tierIdx].WCF == nil {
			return knob{}, false
		}
		wcf := top.Tiers[tierIdx].WCF
		key, name, from := "max_calls", "MaxConcurrentCalls", wcf.MaxCalls
		switch b.Kind {
		case "wcf-sessions":
			key, name, from = "max_sessions", "MaxConcurrentSessions", wcf.MaxSessions
		case "wcf-instances":
			key, name, from = "max_instances", "MaxConcurrentInstances", wcf.MaxInstances
		}
		return knob{name: name + " of " + b.Tier, keys: []string{"tier." + b.Tier + ".wcf." + key}, from: from, value: id, max: maxInt32}, true
	case "cpu":
		if tierIdx < 0 {
			return knob{}, false
		}
		if b.Machines > 0 {
			// A farm grows by machines: replicas = ⌈cores needed / cores each⌉.
			per := max(int(b.PerMachine), 1)
			return knob{name: "the machines of " + b.Tier, keys: []string{"tier." + b.Tier + ".replicas"}, from: b.Machines,
				value: func(n int) int { return (n + per - 1) / per }, max: format.MaxReplicas}, true
		}
		return knob{name: "the cores of " + b.Tier, keys: []string{"tier." + b.Tier + ".cores"}, from: top.Tiers[tierIdx].Cores, value: id, max: 1024}, true
	}
	return knob{}, false
}

// proposeChange finds the smallest change that moves the binding limit of
// v: the limit n that carries the peak demand, n ≥ X·H by Little's law,
// and the limit at which the throttle stops binding first (its bound
// reaches the next one). Each is checked by applying it to the variant and
// analysing again, which also says what binds next.
func proposeChange(x *format.Experiment, v *Variant) Change {
	a, top := v.Bounds, &v.Scenario.Topology
	b := a.Binding
	hold := b.Hold.Seconds()
	// The next bound: the first one after the binding one that is neither
	// transient nor unlimited.
	var next *model.Bound
	for i := range a.Bounds {
		o := &a.Bounds[i]
		if o == b || o.Kind == "threads-min" || math.IsInf(o.PerSec, 1) || o.PerSec < b.PerSec {
			continue
		}
		next = o
		break
	}
	switch b.Kind {
	case "instance-lock":
		key := "tier." + b.Tier + ".wcf.concurrency"
		ch := Change{Set: format.Param{Key: key, Value: `"Multiple"`},
			Text: fmt.Sprintf("let the single instance of %s serve calls concurrently: %s = \"Multiple\" (only if the service is thread-safe), or instancing = \"PerCall\".", b.Tier, key)}
		if a2, ok := analyseWith(x, v.Name, key, `"Multiple"`); ok && a2.Binding != nil {
			ch.Next = a2.Binding
			ch.Then = fmt.Sprintf("with %s = \"Multiple\", next binds %s", key, describeBound(a2.Binding, &a2))
		}
		return ch
	case "lock":
		return Change{Text: fmt.Sprintf("shorten %s: it is held %s per request, and the peak load of %s/s needs it held under %s.",
			b.Throttle, results.FmtLatency(hold), results.FmtRate(a.Demand), results.FmtLatency(1/a.Demand))}
	}
	k, ok := knobFor(top, b)
	if !ok {
		return Change{}
	}
	ch := Change{Knob: k.name, From: k.from}
	param := func(key string, n int) format.Param { return format.Param{Key: key, Value: strconv.Itoa(k.value(n))} }
	limit := int(b.Limit)
	busyAt := func(n int) string { return results.FmtPercent(a.Demand * hold / float64(n)) }
	var parts []string
	if a.Saturated {
		need := max(ceilInt(a.Demand*hold), limit+1)
		comfy := max(ceilInt(a.Demand*hold/0.75), need)
		key, ok := applyKnob(x, v.Name, k, b, need)
		if !ok {
			ch.Text = fmt.Sprintf("raise %s from %d (%s) to at least %d; tsim could not find the key that sets it.", k.name, k.from, fmtSlots(b), k.value(need))
			return ch
		}
		ch.Set = param(key, need)
		s := fmt.Sprintf("raise %s from %d to ≥ %d (%s = %d): the peak load needs %s/s × %s = %s %s busy on average (Little's law), so %d are %s busy",
			k.name, k.from, k.value(need), key, k.value(need), results.FmtRate(a.Demand), results.FmtLatency(hold), results.FmtLevel(a.Demand*hold), unitOf(b), need, busyAt(need))
		if comfy > need {
			ch.Comfortable = param(key, comfy)
			s += fmt.Sprintf("; ≥ %d keep them under 75%% busy, with room for bursts", k.value(comfy))
		}
		if callers := farmMachines(top, b.Tier); b.Kind == "connection" && b.Machines > 0 && callers > 0 && b.PerMachine > 0 {
			// A per-machine limit of a calling farm: more machines bring more.
			per := b.PerMachine * float64(b.Machines/callers)
			s += fmt.Sprintf("; or, with the limit as it is, %s machines of %s (tier.%s.replicas = %d), each bringing its %s",
				strconv.Itoa(ceilInt(float64(need)/per)), b.Tier, b.Tier, ceilInt(float64(need)/per), fmtSlots(&model.Bound{Kind: b.Kind, Limit: per}))
		}
		parts = append(parts, s+".")
	}
	if next == nil {
		if len(parts) == 0 {
			return Change{}
		}
		ch.Text, ch.Then = parts[0], "nothing: no other throttle limits this system."
		return ch
	}
	away := max(ceilInt(next.PerSec*hold), limit+1)
	if k.value(away) > k.max {
		parts = append(parts, fmt.Sprintf("%s cannot go high enough (%d) to stop binding first.", k.name, k.value(away)))
		ch.Text = strings.Join(parts, " ")
		return ch
	}
	key, ok := applyKnob(x, v.Name, k, b, away)
	if !ok {
		ch.Text = strings.Join(parts, " ")
		return ch
	}
	ch.Past = param(key, away)
	a2, _ := analyseWith(x, v.Name, key, ch.Past.Value)
	if !a.Saturated {
		parts = append(parts, fmt.Sprintf("Beyond %s, raise %s from %d.", fmtUsersOrRate(b, a), k.name, k.from))
	}
	ch.Text = strings.Join(parts, " ")
	if a2.Binding != nil {
		nb := a2.Binding
		if nb.Throttle == b.Throttle {
			// A tie at the ceiling: name the next one.
			for i := range a2.Bounds {
				if o := &a2.Bounds[i]; o.Throttle != b.Throttle && o.Kind != "threads-min" {
					nb = o
					break
				}
			}
		}
		ch.Next = nb
		ch.Then = fmt.Sprintf("with %s ≥ %d (%s = %d), %s no longer binds first; next binds %s", k.name, k.value(away), key, k.value(away), b.Throttle, describeBound(nb, &a2))
	}
	return ch
}

func ceilInt(x float64) int { return int(math.Ceil(x - 1e-9)) }

// applyKnob finds which of a knob's keys gives throttle b the limit n in
// variant, and returns it.
func applyKnob(x *format.Experiment, variant string, k knob, b *model.Bound, n int) (string, bool) {
	for _, key := range k.keys {
		a, ok := analyseWith(x, variant, key, strconv.Itoa(k.value(n)))
		if !ok {
			continue
		}
		for _, o := range a.Bounds {
			// A farm's limit is a multiple of each machine's: at least n.
			if o.Throttle == b.Throttle && (o.Limit == float64(n) || (b.Machines > 0 && o.Limit >= float64(n))) {
				return key, true
			}
		}
	}
	return "", false
}

// analyseWith analyses variant with key set to value.
func analyseWith(x *format.Experiment, variant, key, value string) (model.Analysis, bool) {
	sc, err := x.ScenarioWith(variant, []format.Param{{Key: key, Value: value}}, nil)
	if err != nil {
		return model.Analysis{}, false
	}
	return model.Analyse(&sc.Topology), true
}

// connEnds splits "connections web→service" into its caller and callee.
func connEnds(b *model.Bound) (from, to string) {
	_, to, _ = strings.Cut(strings.TrimPrefix(b.Throttle, "connections "), "→")
	return b.Tier, to
}

// threadMinimum is the thread-pool minimum with the lowest bound, if any.
func threadMinimum(a model.Analysis) *model.Bound {
	for i := range a.Bounds {
		if a.Bounds[i].Kind == "threads-min" {
			return &a.Bounds[i]
		}
	}
	return nil
}

// threadMinimums are the keys of the thread pools' minimums that bound
// the system, lowest bound first.
func threadMinimums(a model.Analysis) []string {
	var keys []string
	for _, b := range a.Bounds {
		if b.Kind != "threads-min" {
			continue
		}
		pool := "worker.min"
		if strings.HasPrefix(b.Throttle, "I/O") {
			pool = "io.min"
		}
		keys = append(keys, "tier."+b.Tier+"."+pool)
	}
	return keys
}

func peakOf(a model.Analysis) float64 {
	if a.Users > 0 {
		return a.Users
	}
	return a.Rate
}

// farmMachines is the number of machines of the farm called name (0: not a farm).
func farmMachines(top *model.Topology, name string) int {
	n := 0
	for i := range top.Tiers {
		if top.Tiers[i].Farm == name {
			n++
		}
	}
	return n
}
