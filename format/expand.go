package format

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"math"
	"strconv"
	"strings"
	"time"
)

// Variants and sweeps: turning one Experiment into its scenarios.

// NumScenarios is the number of variants times the number of sweep points.
func (x *Experiment) NumScenarios() int { return x.numScenarios() }

func (x *Experiment) numScenarios() int {
	n := len(x.variants)
	for _, a := range x.axes {
		n *= len(a.vals)
		if n > maxScenarios {
			return maxScenarios + 1
		}
	}
	return n
}

// Scenario builds scenario i: its variant's settings, then its sweep values,
// are applied over the base system, and the result is resolved (presets,
// defaults, checks). LoadExperiment has already resolved every variant and every
// single sweep value, so an error here comes only from a combination of
// settings that were each fine alone.
func (x *Experiment) Scenario(i int) (Scenario, error) {
	n := x.NumScenarios()
	if i < 0 || i >= n {
		return Scenario{}, fmt.Errorf("scenario %d out of range [0, %d)", i, n)
	}
	points := n / len(x.variants)
	v := i / points
	idx := make([]int, len(x.axes))
	r := i % points
	for a := len(x.axes) - 1; a >= 0; a-- {
		k := len(x.axes[a].vals)
		idx[a] = r % k
		r /= k
	}
	sc := Scenario{Index: i, Variant: x.variants[v].name}
	for a, ax := range x.axes {
		sc.Params = append(sc.Params, Param{Key: ax.key, Value: ax.strs[idx[a]]})
	}
	p := &loader{files: x.files, sources: x.sources}
	topo, ok := p.scenario(x, v, idx)
	if !ok {
		errs := p.finish()
		for _, e := range errs {
			e.Context = scenarioContext(x, v, idx)
		}
		return sc, errs
	}
	sc.Topology = topo
	return sc, nil
}

func scenarioContext(x *Experiment, v int, idx []int) string {
	var parts []string
	if len(x.variants) > 1 || x.variants[0].name != "base" {
		parts = append(parts, fmt.Sprintf("variant %q", x.variants[v].name))
	}
	for a, ax := range x.axes {
		parts = append(parts, fmt.Sprintf("sweep %s = %s", ax.key, ax.strs[idx[a]]))
	}
	return strings.Join(parts, ", ")
}

// scenario resolves variant v at sweep point idx, adding errors to p.
func (p *loader) scenario(x *Experiment, v int, idx []int) (model.Topology, bool) {
	doc := x.base.clone()
	for _, a := range x.variants[v].sets {
		apply(doc, a.addr, a.s)
	}
	for i, ax := range x.axes {
		apply(doc, ax.addr, ax.vals[idx[i]])
	}
	before := len(p.errs)
	t := p.resolve(doc)
	return t, len(p.errs) == before
}

// apply sets one key of doc. The address was checked against the base
// system, which variants cannot reshape (tiers and step counts are fixed).
func apply(doc *docSpec, a address, s setting) {
	switch a.sc {
	case scopeTop:
		doc.top[a.rel] = s
	case scopeTier:
		doc.tier(a.tier).keys[a.rel] = s
	case scopeStep:
		doc.tier(a.tier).steps[a.step].keys[a.rel] = s
	}
}

// maxCheckWork bounds the tiers and steps checkScenarios resolves: about
// half a second (a few µs each), and 7,000 checks of a file of 5 tiers of
// 3 steps.
const maxCheckWork = 150_000

// checkScenarios resolves every variant with every single sweep value (the
// other axes at their first value), so that LoadExperiment reports the errors a
// scenario would meet; for very large experiments, as many of those as
// maxCheckWork allows, every variant first. An error of the base system
// that every scenario checked shows too is reported once without context;
// others name the first scenario that shows them.
func (p *loader) checkScenarios(x *Experiment) {
	type found struct {
		e     pendingErr
		count int
	}
	// Errors and warnings are gathered alike, each in its own list.
	type gathered struct {
		order  []string
		byText map[string]*found
		inBase map[string]bool
	}
	errs := gathered{byText: map[string]*found{}, inBase: map[string]bool{}}
	warns := gathered{byText: map[string]*found{}, inBase: map[string]bool{}}
	checks := 0
	idx := make([]int, len(x.axes))
	gather := func(g *gathered, list []pendingErr, v int) {
		seen := map[string]bool{}
		for _, e := range list {
			k := e.key + "\x00" + e.msg
			if seen[k] {
				continue
			}
			seen[k] = true
			f := g.byText[k]
			if f == nil {
				e.ctx = scenarioContext(x, v, idx)
				f = &found{e: e}
				g.byText[k] = f
				g.order = append(g.order, k)
			}
			f.count++
		}
	}
	run := func(v int) {
		checks++
		q := &loader{files: p.files, sources: p.sources}
		q.scenario(x, v, idx)
		gather(&errs, q.errs, v)
		gather(&warns, q.warns, v)
	}
	// Errors of the base system alone are reported without context when
	// every scenario shows them too.
	q := &loader{files: p.files, sources: p.sources}
	q.resolve(x.base)
	for _, e := range q.errs {
		errs.inBase[e.key+"\x00"+e.msg] = true
	}
	for _, e := range q.warns {
		warns.inBase[e.key+"\x00"+e.msg] = true
	}
	// Checks cost a resolution of the whole system each: 10,000 variants
	// of 1,000 tiers would take minutes. Beyond a budget of tier and step
	// resolutions the rest is left to Scenario, which resolves each
	// scenario when it runs anyway.
	size := 1
	for _, t := range x.base.tiers {
		size += 1 + len(t.steps)
	}
	maxChecks := max(1, min(20000, maxCheckWork/size))
	for v := range x.variants {
		if checks >= maxChecks {
			break
		}
		run(v) // idx all 0
	}
	for v := range x.variants {
		for a := range x.axes {
			for j := 1; j < len(x.axes[a].vals) && checks < maxChecks; j++ {
				idx[a] = j
				run(v)
			}
			idx[a] = 0
		}
	}
	for _, k := range errs.order {
		f := errs.byText[k]
		if f.count == checks && errs.inBase[k] {
			f.e.ctx = ""
		}
		p.errs = append(p.errs, f.e)
	}
	for _, k := range warns.order {
		f := warns.byText[k]
		if f.count == checks && warns.inBase[k] {
			f.e.ctx = ""
		}
		p.warns = append(p.warns, f.e)
	}
}

// parseSweep reads [sweep] with key and values (or from/to/step, or
// from/to/factor), or [[sweep.axis]] tables of the same keys for a grid.
func (p *loader) parseSweep(src *source, doc *docSpec, v any, x *Experiment) {
	m, ok := v.(map[string]any)
	if !ok {
		p.errorf(pos{src: src, key: "sweep"}, "sweep", "want a [sweep] table, got %s", describe(v))
		return
	}
	if ax, has := m["axis"]; has {
		for _, k := range sortedKeys(m) {
			if k != "axis" {
				p.errorf(pos{src: src, key: "sweep." + k}, "sweep."+k, "with [[sweep.axis]], give %s inside each axis", k)
			}
		}
		arr, ok := tableArray(ax)
		if !ok || len(arr) == 0 {
			p.errorf(pos{src: src, key: "sweep.axis"}, "sweep.axis", "want [[sweep.axis]] tables, got %s", describe(ax))
			return
		}
		for i, am := range arr {
			p.parseAxis(src, doc, am, fmt.Sprintf("sweep.axis[%d]", i), fmt.Sprintf("sweep.axis[%d]", i+1), x)
		}
		return
	}
	p.parseAxis(src, doc, m, "sweep", "sweep", x)
}

var axisKeys = []string{"key", "values", "from", "to", "step", "factor"}

func (p *loader) parseAxis(src *source, doc *docSpec, m map[string]any, tk, label string, x *Experiment) {
	at := func(k string) pos { return pos{src: src, key: tk + "." + k} }
	for _, k := range sortedKeys(m) {
		if !contains(axisKeys, k) {
			p.errorf(at(k), label+"."+k, "unknown key%s", suggestFrom(k, axisKeys, label+"."))
		}
	}
	key, ok := m["key"].(string)
	if !ok {
		p.errorf(pos{src: src, key: tk}, label+".key", "needs the key path to sweep (key = \"tier.web.cores\"), got %s", describe(m["key"]))
		return
	}
	addr, msg := parseKeyPath(doc, key)
	if msg != "" {
		p.errorf(at("key"), label+".key", "%s", msg)
		return
	}
	for _, a := range x.axes {
		if addrKey(a.addr) == addrKey(addr) {
			p.errorf(at("key"), label+".key", "%s is swept twice (as %s)", key, a.key)
			return
		}
	}
	raws, strs, msg := axisValues(m, addr.def)
	if msg != "" {
		p.errorf(pos{src: src, key: tk}, label, "%s", msg)
		return
	}
	ax := axisSpec{key: key, addr: addr, at: at("key")}
	for i, r := range raws {
		vat := at("values")
		if _, has := m["values"]; !has {
			vat = at("from")
		}
		v, err := parseValue(addr.def, r, p.files)
		if err != nil {
			p.errorf(vat, fmt.Sprintf("%s.values[%d]", label, i+1), "%s: %v", key, err)
			continue
		}
		ax.vals = append(ax.vals, setting{v: v, raw: r, at: vat})
		ax.strs = append(ax.strs, strs[i])
	}
	if len(ax.vals) != len(raws) {
		return
	}
	x.axes = append(x.axes, ax)
	x.Sweep = append(x.Sweep, SweepAxis{Key: key, Values: ax.strs})
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// axisValues lists an axis's values as TOML values and canonical strings.
func axisValues(m map[string]any, def *keyDef) ([]any, []string, string) {
	_, hasValues := m["values"]
	_, hasFrom := m["from"]
	_, hasTo := m["to"]
	_, hasStep := m["step"]
	_, hasFactor := m["factor"]
	switch {
	case hasValues && (hasFrom || hasTo || hasStep || hasFactor):
		return nil, nil, "give either values, or from/to with step or factor, not both"
	case hasValues:
		var arr []any
		switch a := m["values"].(type) {
		case []any:
			arr = a
		case []map[string]any:
			for _, e := range a {
				arr = append(arr, e)
			}
		default:
			return nil, nil, fmt.Sprintf("values: want an array, got %s", describe(m["values"]))
		}
		if len(arr) == 0 {
			return nil, nil, "values: empty"
		}
		if len(arr) > maxAxisValues {
			return nil, nil, fmt.Sprintf("values: %d values; at most %d", len(arr), maxAxisValues)
		}
		strs := make([]string, len(arr))
		for i, r := range arr {
			strs[i] = canonical(r)
		}
		return arr, strs, ""
	case hasFrom && hasTo && hasStep != hasFactor:
		return rangeValues(m, def)
	}
	return nil, nil, "needs values = [...], or from, to and step (arithmetic), or from, to and factor (geometric)"
}

func rangeValues(m map[string]any, def *keyDef) ([]any, []string, string) {
	from, to := m["from"], m["to"]
	_, isDur := from.(string)
	if isDur {
		f, err1 := durOf(from)
		t, err2 := durOf(to)
		if err1 != "" || err2 != "" {
			return nil, nil, "from and to: " + err1 + err2
		}
		if t < f {
			return nil, nil, fmt.Sprintf("to (%v) is before from (%v)", t, f)
		}
		var ds []time.Duration
		if st, has := m["step"]; has {
			s, e := durOf(st)
			if e != "" || s <= 0 {
				return nil, nil, `step: want a positive duration such as "100ms"`
			}
			n := (t - f) / s // counted, not accumulated: no overflow near the largest duration
			if n >= maxAxisValues {
				return nil, nil, fmt.Sprintf("more than %d values", maxAxisValues)
			}
			for i := time.Duration(0); i <= n; i++ {
				ds = append(ds, f+i*s)
			}
		} else {
			fac, ok := numOf(m["factor"])
			if !ok || !(fac > 1) || f <= 0 {
				return nil, nil, "factor: want a number > 1 (and from > 0)"
			}
			for d := float64(f); d <= float64(t)*(1+1e-9); d *= fac {
				ds = append(ds, time.Duration(math.Round(d)))
				if len(ds) > maxAxisValues {
					return nil, nil, fmt.Sprintf("more than %d values", maxAxisValues)
				}
			}
		}
		raws := make([]any, len(ds))
		strs := make([]string, len(ds))
		for i, d := range ds {
			strs[i] = d.String()
			raws[i] = strs[i]
		}
		return raws, strs, ""
	}
	f, ok1 := numOf(from)
	t, ok2 := numOf(to)
	if !ok1 || !ok2 {
		return nil, nil, fmt.Sprintf("from and to: want numbers or duration strings, got %s and %s", describe(from), describe(to))
	}
	if t < f {
		return nil, nil, fmt.Sprintf("to (%v) is below from (%v)", t, f)
	}
	ints := def.typ == tInt
	var xs []float64
	if st, has := m["step"]; has {
		s, ok := numOf(st)
		if !ok || !(s > 0) {
			return nil, nil, "step: want a number > 0"
		}
		n := math.Floor((t-f)/s + 1e-9)
		if !(n < maxAxisValues) {
			return nil, nil, fmt.Sprintf("more than %d values", maxAxisValues)
		}
		for i := 0; i <= int(n); i++ {
			x := f + float64(i)*s
			if len(xs) > 0 && x == xs[len(xs)-1] {
				return nil, nil, fmt.Sprintf("step %v is too small to change %v", s, x)
			}
			xs = append(xs, x)
		}
	} else {
		fac, ok := numOf(m["factor"])
		if !ok || !(fac > 1) || !(f > 0) {
			return nil, nil, "factor: want a number > 1 (and from > 0)"
		}
		for x := f; x <= t*(1+1e-9); x *= fac {
			xs = append(xs, x)
			if len(xs) > maxAxisValues {
				return nil, nil, fmt.Sprintf("more than %d values", maxAxisValues)
			}
		}
	}
	var raws []any
	var strs []string
	for _, x := range xs {
		if ints {
			n := int64(math.Round(x))
			if len(raws) > 0 && raws[len(raws)-1] == n {
				continue // geometric steps rounded to the same integer
			}
			raws = append(raws, n)
			strs = append(strs, strconv.FormatInt(n, 10))
			continue
		}
		raws = append(raws, x)
		strs = append(strs, strconv.FormatFloat(x, 'g', 10, 64))
	}
	return raws, strs, ""
}

func numOf(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	}
	return 0, false
}

func durOf(v any) (time.Duration, string) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Sprintf("want a duration string, got %s; ", describe(v))
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Sprintf("bad duration %s (Go syntax such as \"20s\", \"150ms\"); ", quote(s))
	}
	return d, ""
}
