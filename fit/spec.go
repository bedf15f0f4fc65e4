package fit

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/tsim-dev/tsim/format"
)

// Spec is a fit specification: which inputs of an experiment are free,
// within which ranges, and which figures they should reproduce.
//
//	experiment = "crack-throttling.toml"  # the experiment, relative to this file
//	variant = "misconfigured"             # the targets' variant unless they name one
//	replications = 3                      # per evaluation (default: the file's, at least 2)
//	max_evaluations = 150                 # distinct input values simulated, at most
//	restarts = 2                          # Nelder–Mead starts after the first
//
//	[[free]]
//	key = "load.think"                    # a key path, as in a variant's set
//	value = "exp({}ms)"                   # the value written, {} the number (default "{}")
//	min = 100
//	max = 5000
//	scale = "log"                         # or "linear" (the default)
//	integer = false
//	start = 500                           # optional: the first start (default: the middle)
//	variant = "rerun"                     # optional: the input of this variant only (a rerun's load)
//
//	[[target]]
//	name = "FE Requests Executing"        # unique
//	metric = "tier.web.requests_executing_mean"
//	value = 69
//	tolerance = 5                         # absolute, or "10%" of value
//	variant = "misconfigured"             # optional
//	relative_to = "fixed"                 # optional: the metric's ratio to another variant's
//	set = { "load.users" = 50 }           # optional: settings of this target's scenario only
//	window = ["90s", "120s"]              # clients.* metrics: the requests that ended in it
//	use = "fit"                           # or "predict": not used to set an input
//	source = "Dong, Crack Throttling (2009): \"91 and 69 in average\""
//
// A tolerance is the figure's precision as a 95% half-width: a model value
// within it reproduces the figure. Metrics are listed by Metrics.
type Spec struct {
	File           string // the specification's name, for messages
	Experiment     string // the experiment's path as written, relative to the specification; may be ""
	Description    string
	Variant        string
	Replications   int // 0: the experiment's, at least 2
	Seed           uint64
	MaxEvaluations int
	Restarts       int
	Free           []Free
	Targets        []Target
}

// Free is one input the fit searches.
type Free struct {
	Key      string
	Template string  // the value written, with {} for the number
	Min, Max float64 // the range, in the template's unit
	Log      bool    // searched on a logarithmic scale
	Integer  bool
	Start    float64 // NaN: the middle of the range
	// Variant, if set, makes the input one variant's: it is set in that
	// variant's scenarios after the variant's own settings (so it may
	// replace one of them, such as a rerun's users_schedule) and written
	// into the variant's set; "" sets it in the base, for every variant.
	Variant string
	Note    string
	Line    int
}

// Target is one figure the fit matches or predicts.
type Target struct {
	Name       string
	Metric     string
	Value      float64
	Tolerance  float64 // absolute
	Variant    string  // "" until Check: the spec's
	RelativeTo string  // "": the metric itself
	Set        []format.Param
	Window     []float64 // [from, to) seconds, for clients.* metrics
	Predict    bool      // use = "predict": the fit does not use it
	Source     string
	Line       int

	metric metricFn
}

// Defaults of a specification.
const (
	DefaultMaxEvaluations = 150
	DefaultRestarts       = 2
	maxFree               = 12
	maxTargets            = 200
	maxEvaluationsLimit   = 100_000
)

// SpecError is one problem of a specification, at a line of its file.
type SpecError struct {
	File string
	Line int
	Msg  string
}

func (e *SpecError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// SpecErrors are every problem found, in line order.
type SpecErrors []*SpecError

func (es SpecErrors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

type rawSpec struct {
	Experiment     string      `toml:"experiment"`
	Description    string      `toml:"description"`
	Variant        string      `toml:"variant"`
	Replications   *int64      `toml:"replications"`
	Seed           *int64      `toml:"seed"`
	MaxEvaluations *int64      `toml:"max_evaluations"`
	Restarts       *int64      `toml:"restarts"`
	Free           []rawFree   `toml:"free"`
	Target         []rawTarget `toml:"target"`
}

type rawFree struct {
	Key     string   `toml:"key"`
	Value   *string  `toml:"value"`
	Min     *float64 `toml:"min"`
	Max     *float64 `toml:"max"`
	Scale   string   `toml:"scale"`
	Integer bool     `toml:"integer"`
	Start   *float64 `toml:"start"`
	Variant string   `toml:"variant"`
	Note    string   `toml:"note"`
}

type rawTarget struct {
	Name       string         `toml:"name"`
	Metric     string         `toml:"metric"`
	Value      *float64       `toml:"value"`
	Tolerance  any            `toml:"tolerance"`
	Variant    string         `toml:"variant"`
	RelativeTo string         `toml:"relative_to"`
	Set        map[string]any `toml:"set"`
	Window     []string       `toml:"window"`
	Use        string         `toml:"use"`
	Source     string         `toml:"source"`
}

// ParseSpec reads a specification. Every problem it can see without the
// experiment is reported with its line; Check finds the rest.
func ParseSpec(name string, data []byte) (*Spec, error) {
	// The parser is superlinear in nesting: the format's limits first.
	if line, err := format.ScanTOML(data); err != nil {
		return nil, SpecErrors{{File: name, Line: line, Msg: err.Error()}}
	}
	var raw rawSpec
	md, err := toml.Decode(string(data), &raw)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, SpecErrors{{File: name, Line: pe.Position.Line, Msg: pe.Message}}
		}
		if m := typeErrRe.FindStringSubmatch(err.Error()); m != nil {
			line, _ := strconv.Atoi(m[1])
			return nil, SpecErrors{{File: name, Line: line, Msg: fmt.Sprintf("%s: want %s, got %s", m[2], typeName(m[4]), typeName(m[3]))}}
		}
		return nil, SpecErrors{{File: name, Msg: err.Error()}}
	}
	lines := indexLines(string(data))
	s := &Spec{File: name, Experiment: raw.Experiment, Description: raw.Description, Variant: raw.Variant,
		MaxEvaluations: DefaultMaxEvaluations, Restarts: DefaultRestarts}
	var errs SpecErrors
	bad := func(line int, f string, args ...any) {
		errs = append(errs, &SpecError{File: name, Line: line, Msg: fmt.Sprintf(f, args...)})
	}
	allowed := map[string][]string{
		"":       {"experiment", "description", "variant", "replications", "seed", "max_evaluations", "restarts", "free", "target"},
		"free":   {"key", "value", "min", "max", "scale", "integer", "start", "variant", "note"},
		"target": {"name", "metric", "value", "tolerance", "variant", "relative_to", "set", "window", "use", "source"},
	}
	reported := false
	for _, u := range lines.unknown {
		bad(u.line, "unknown table [%s] ([[free]] and [[target]] are the tables of a fit specification)", u.key)
		reported = true
	}
	for _, kl := range lines.topKeys {
		if !slices.Contains(allowed[""], kl.key) {
			bad(kl.line, "unknown key %q (%s)", kl.key, strings.Join(allowed[""][:7], ", ")+", [[free]], [[target]]")
			reported = true
		}
	}
	for _, name := range []string{"free", "target"} {
		for _, e := range lines.elems[name] {
			for _, kl := range e.keys {
				if !slices.Contains(allowed[name], kl.key) {
					bad(kl.line, "%s: unknown key %q (%s)", name, kl.key, strings.Join(allowed[name], ", "))
					reported = true
				}
			}
		}
	}
	if !reported {
		for _, k := range md.Undecoded() {
			if len(k) >= 2 && k[0] == "target" && k[1] == "set" {
				continue // a scenario's settings: checked against the experiment
			}
			bad(0, "unknown key %q", k.String())
		}
	}
	top := lines.top
	if raw.Replications != nil {
		if *raw.Replications < 1 || *raw.Replications > 1000 {
			bad(top("replications"), "replications must be between 1 and 1000, got %d", *raw.Replications)
		} else {
			s.Replications = int(*raw.Replications)
		}
	}
	if raw.Seed != nil {
		if *raw.Seed < 0 {
			bad(top("seed"), "seed must be ≥ 0, got %d", *raw.Seed)
		}
		s.Seed = uint64(*raw.Seed)
	}
	if raw.MaxEvaluations != nil {
		if *raw.MaxEvaluations < 1 || *raw.MaxEvaluations > maxEvaluationsLimit {
			bad(top("max_evaluations"), "max_evaluations must be between 1 and %d, got %d", maxEvaluationsLimit, *raw.MaxEvaluations)
		} else {
			s.MaxEvaluations = int(*raw.MaxEvaluations)
		}
	}
	if raw.Restarts != nil {
		if *raw.Restarts < 0 || *raw.Restarts > 100 {
			bad(top("restarts"), "restarts must be between 0 and 100, got %d", *raw.Restarts)
		} else {
			s.Restarts = int(*raw.Restarts)
		}
	}

	if len(raw.Free) == 0 {
		bad(0, "no [[free]] input: name at least one key to fit")
	}
	if len(raw.Free) > maxFree {
		bad(lines.elem("free", maxFree, ""), "%d free inputs; at most %d", len(raw.Free), maxFree)
	}
	for i, rf := range raw.Free {
		at := func(k string) int { return lines.elem("free", i, k) }
		f := Free{Key: rf.Key, Template: "{}", Integer: rf.Integer, Start: math.NaN(), Variant: rf.Variant, Note: rf.Note, Line: at("")}
		what := fmt.Sprintf("free %q", rf.Key)
		if rf.Key == "" {
			what = fmt.Sprintf("free #%d", i+1)
			bad(f.Line, "%s: key is required: a key path of the experiment, such as load.think or tier.web.calls.maxconnection", what)
		}
		for j := range i {
			if raw.Free[j].Key == rf.Key && raw.Free[j].Variant == rf.Variant && rf.Key != "" {
				bad(at("key"), "%s: the same key as free #%d", what, j+1)
			}
		}
		if rf.Value != nil {
			f.Template = *rf.Value
			if strings.Count(f.Template, "{}") != 1 {
				bad(at("value"), "%s: value %q must contain {} exactly once, where the number goes (as in \"exp({}ms)\")", what, f.Template)
			}
		}
		switch rf.Scale {
		case "", "linear":
		case "log":
			f.Log = true
		default:
			bad(at("scale"), "%s: scale must be linear or log, got %q", what, rf.Scale)
		}
		if rf.Min == nil || rf.Max == nil {
			bad(f.Line, "%s: min and max are required: the range searched, in the value's unit", what)
		} else {
			f.Min, f.Max = *rf.Min, *rf.Max
			switch {
			case !finite(f.Min) || !finite(f.Max):
				bad(at("min"), "%s: min and max must be finite numbers", what)
			case f.Min >= f.Max:
				bad(at("max"), "%s: max (%v) must be above min (%v)", what, f.Max, f.Min)
			case f.Log && f.Min <= 0:
				bad(at("min"), "%s: a log scale needs min > 0, got %v", what, f.Min)
			case f.Integer && (f.Min != math.Trunc(f.Min) || f.Max != math.Trunc(f.Max)):
				bad(at("min"), "%s: an integer input needs whole min and max, got %v and %v", what, f.Min, f.Max)
			}
		}
		if rf.Start != nil {
			f.Start = *rf.Start
			if rf.Min != nil && rf.Max != nil && (f.Start < f.Min || f.Start > f.Max || !finite(f.Start)) {
				bad(at("start"), "%s: start %v is outside the range [%v, %v]", what, f.Start, f.Min, f.Max)
			}
		}
		s.Free = append(s.Free, f)
	}

	if len(raw.Target) == 0 {
		bad(0, "no [[target]]: give at least one figure to fit")
	}
	if len(raw.Target) > maxTargets {
		bad(lines.elem("target", maxTargets, ""), "%d targets; at most %d", len(raw.Target), maxTargets)
	}
	fitted := 0
	for i, rt := range raw.Target {
		at := func(k string) int { return lines.elem("target", i, k) }
		t := Target{Name: rt.Name, Metric: rt.Metric, Variant: rt.Variant, RelativeTo: rt.RelativeTo, Source: rt.Source, Line: at("")}
		what := fmt.Sprintf("target %q", rt.Name)
		if rt.Name == "" {
			what = fmt.Sprintf("target #%d", i+1)
			bad(t.Line, "%s: name is required (it names the target in the report and for --hold-out)", what)
		} else if strings.Contains(rt.Name, ",") {
			bad(at("name"), "%s: a name may not contain a comma (--hold-out takes a list)", what)
		}
		for j := range i {
			if raw.Target[j].Name == rt.Name && rt.Name != "" {
				bad(at("name"), "%s: the same name as target #%d", what, j+1)
			}
		}
		if rt.Metric == "" {
			bad(t.Line, "%s: metric is required, such as tier.web.requests_executing_mean or latency.p99", what)
		} else if fn, msg := parseMetric(rt.Metric); msg != "" {
			bad(at("metric"), "%s: %s", what, msg)
		} else {
			t.metric = fn
		}
		if rt.Value == nil {
			bad(t.Line, "%s: value is required: the figure", what)
		} else if t.Value = *rt.Value; !finite(t.Value) {
			bad(at("value"), "%s: value must be a finite number", what)
		}
		switch tol := rt.Tolerance.(type) {
		case nil:
			bad(t.Line, "%s: tolerance is required: the figure's precision, absolute (5) or relative (\"10%%\")", what)
		case int64:
			t.Tolerance = float64(tol)
		case float64:
			t.Tolerance = tol
		case string:
			p, ok := strings.CutSuffix(strings.TrimSpace(tol), "%")
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if !ok || err != nil || !(v > 0) || math.IsInf(v, 0) {
				bad(at("tolerance"), "%s: tolerance %q: want a number or a percentage such as \"10%%\"", what, tol)
			} else {
				t.Tolerance = v / 100 * math.Abs(t.Value)
				if t.Tolerance == 0 {
					bad(at("tolerance"), "%s: a relative tolerance of a value of 0 is 0: give it absolute", what)
				}
			}
		default:
			bad(at("tolerance"), "%s: tolerance must be a number or a percentage string, got %v", what, tol)
		}
		if _, isString := rt.Tolerance.(string); !isString && rt.Tolerance != nil && !(t.Tolerance > 0 && finite(t.Tolerance)) {
			bad(at("tolerance"), "%s: tolerance must be above 0, got %v", what, rt.Tolerance)
		}
		switch rt.Use {
		case "", "fit":
			fitted++
		case "predict":
			t.Predict = true
		default:
			bad(at("use"), "%s: use must be fit or predict, got %q", what, rt.Use)
		}
		keys := make([]string, 0, len(rt.Set))
		for k := range rt.Set {
			keys = append(keys, k)
		}
		slices.Sort(keys) // a table's keys have no order; settings of distinct keys commute
		for _, k := range keys {
			t.Set = append(t.Set, format.Param{Key: k, Value: valueText(rt.Set[k])})
		}
		clients := strings.HasPrefix(rt.Metric, "clients.")
		switch {
		case rt.Window == nil && clients:
			bad(t.Line, "%s: a clients.* metric needs window = [\"FROM\", \"TO\"]: the requests that ended in it", what)
		case rt.Window != nil && !clients:
			bad(at("window"), "%s: window applies to clients.* metrics only", what)
		case rt.Window != nil && len(rt.Window) != 2:
			bad(at("window"), "%s: window must be two durations, [\"FROM\", \"TO\"]", what)
		case rt.Window != nil:
			from, err1 := time.ParseDuration(rt.Window[0])
			to, err2 := time.ParseDuration(rt.Window[1])
			if err1 != nil || err2 != nil || from < 0 || to <= from {
				bad(at("window"), "%s: window %q: want two durations FROM < TO, such as [\"0s\", \"90s\"]", what, rt.Window)
			} else {
				t.Window = []float64{from.Seconds(), to.Seconds()}
			}
		}
		if rt.RelativeTo != "" && rt.RelativeTo == rt.Variant {
			bad(at("relative_to"), "%s: relative_to is the target's own variant", what)
		}
		s.Targets = append(s.Targets, t)
	}
	if len(raw.Target) > 0 && fitted == 0 {
		bad(0, "every target has use = \"predict\": at least one must set the inputs")
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b *SpecError) int { return a.Line - b.Line })
		return nil, errs
	}
	return s, nil
}

var typeErrRe = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): incompatible types: TOML value has type ([^;]+); destination has type (.+)$`)

// typeName says a TOML or Go type in words.
func typeName(t string) string {
	switch strings.TrimPrefix(t, "*") {
	case "float64", "float", "Float":
		return "a number"
	case "int64", "integer", "Integer":
		return "an integer"
	case "string", "String":
		return "a string"
	case "bool", "Bool":
		return "true or false"
	case "[]string":
		return "an array of strings"
	case "map[string]interface {}", "map[string]any", "Hash":
		return "a table"
	case "Array", "[]interface {}":
		return "an array"
	}
	return t
}

// valueText writes a setting of a target's set as ScenarioWith takes it.
func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return fmt.Sprint(v)
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Check resolves the specification against its experiment: the variants
// and tiers the targets name, the keys of the free inputs and of the
// targets' settings. Every problem is reported with the specification's
// line.
func (s *Spec) Check(x *format.Experiment) error {
	var errs SpecErrors
	bad := func(line int, f string, args ...any) {
		errs = append(errs, &SpecError{File: s.File, Line: line, Msg: fmt.Sprintf(f, args...)})
	}
	if s.Variant == "" {
		s.Variant = x.Variants[0]
	} else if !slices.Contains(x.Variants, s.Variant) {
		bad(0, "variant %q: the experiment has %s", s.Variant, strings.Join(x.Variants, ", "))
	}
	// Every input at both ends of its range must be a value the experiment
	// accepts, and all of them at their starts together.
	var all []format.Param
	for _, f := range s.Free {
		if f.Variant != "" && !slices.Contains(x.Variants, f.Variant) {
			bad(f.Line, "free %q: variant %q: the experiment has %s", f.Key, f.Variant, strings.Join(x.Variants, ", "))
			continue
		}
		p := format.Param{Key: f.Key, Value: f.text(f.startValue())}
		lo, hi := format.Param{Key: f.Key, Value: f.text(f.Min)}, format.Param{Key: f.Key, Value: f.text(f.Max)}
		for _, q := range []format.Param{lo, hi} {
			var err error
			if f.Variant == "" {
				_, err = x.WithBase([]format.Param{q})
			} else {
				_, err = x.ScenarioWith(f.Variant, []format.Param{q}, nil)
			}
			if err != nil {
				bad(f.Line, "free %q: %v", f.Key, oneLine(err))
				break
			}
		}
		all = append(all, p)
	}
	if len(errs) > 0 {
		return errs
	}
	y, err := x.WithBase(baseParams(s.Free, all))
	if err != nil {
		bad(0, "free inputs: %v", err)
		return errs
	}
	for i := range s.Targets {
		t := &s.Targets[i]
		if t.Variant == "" {
			t.Variant = s.Variant
		}
		what := fmt.Sprintf("target %q", t.Name)
		ok := true
		for _, v := range []string{t.Variant, t.RelativeTo} {
			if v != "" && !slices.Contains(x.Variants, v) {
				bad(t.Line, "%s: variant %q: the experiment has %s", what, v, strings.Join(x.Variants, ", "))
				ok = false
			}
		}
		if !ok {
			continue
		}
		sc, err := y.ScenarioWith(t.Variant, variantParams(s.Free, all, t.Variant, t.Set), nil)
		if err != nil {
			bad(t.Line, "%s: %v", what, oneLine(err))
			continue
		}
		if msg := t.metric.check(&sc.Topology); msg != "" {
			bad(t.Line, "%s: metric %q: %s", what, t.Metric, msg)
		}
		if t.RelativeTo != "" {
			if _, err := y.ScenarioWith(t.RelativeTo, variantParams(s.Free, all, t.RelativeTo, t.Set), nil); err != nil {
				bad(t.Line, "%s: relative_to %q: %v", what, t.RelativeTo, oneLine(err))
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// baseParams are the settings of set (one per free input) that go into
// the experiment's base: those of the inputs of no variant.
func baseParams(free []Free, set []format.Param) []format.Param {
	var out []format.Param
	for j, kv := range set {
		if free[j].Variant == "" {
			out = append(out, kv)
		}
	}
	return out
}

// variantParams are the settings of a scenario of variant v: its own
// inputs' values, then extra (a target's set).
func variantParams(free []Free, set []format.Param, v string, extra []format.Param) []format.Param {
	var out []format.Param
	for j, kv := range set {
		if free[j].Variant != "" && free[j].Variant == v {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// startValue is where the first Nelder–Mead run starts.
func (f *Free) startValue() float64 {
	if !math.IsNaN(f.Start) {
		return f.Start
	}
	return f.fromUnit(0.5)
}

// fromUnit maps u in [0, 1] onto the range (logarithmically for a log
// scale), rounded as the value is written.
func (f *Free) fromUnit(u float64) float64 {
	u = min(max(u, 0), 1)
	var v float64
	if f.Log {
		v = f.Min * math.Pow(f.Max/f.Min, u)
	} else {
		v = f.Min + u*(f.Max-f.Min)
	}
	return f.round(v)
}

// toUnit maps a value of the range onto [0, 1].
func (f *Free) toUnit(v float64) float64 {
	if f.Log {
		return math.Log(v/f.Min) / math.Log(f.Max/f.Min)
	}
	return (v - f.Min) / (f.Max - f.Min)
}

// round keeps an integer whole and a real number to 4 significant
// digits: the value written, so that the file says what was simulated.
func (f *Free) round(v float64) float64 {
	if f.Integer {
		return min(max(math.Round(v), f.Min), f.Max)
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return min(max(r, f.Min), f.Max)
}

// text is the value written for v: the template with the number in it.
func (f *Free) text(v float64) string {
	return strings.Replace(f.Template, "{}", numText(v), 1)
}

// numText writes a number without an exponent ("1500", "0.25").
func numText(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// lineIndex finds the lines of a specification's keys: its keys are
// plain, its tables [[free]] and [[target]].
type lineIndex struct {
	topKeys []keyLine
	elems   map[string][]elemLines // array table → its elements in order
	unknown []keyLine              // [table] headers, which a specification has none of
}

type keyLine struct {
	key  string
	line int
}

type elemLines struct {
	line int // the header's
	keys []keyLine
}

var (
	headerRe = regexp.MustCompile(`^\s*\[\[\s*([A-Za-z0-9_.-]+)\s*\]\]`)
	tableRe  = regexp.MustCompile(`^\s*\[\s*([A-Za-z0-9_.-]+)\s*\]`)
	keyRe    = regexp.MustCompile(`^\s*"?([A-Za-z0-9_.-]+)"?\s*=`)
)

func indexLines(text string) lineIndex {
	ix := lineIndex{elems: map[string][]elemLines{}}
	cur := ""
	for i, ln := range strings.Split(text, "\n") {
		if m := headerRe.FindStringSubmatch(ln); m != nil {
			cur = m[1]
			ix.elems[cur] = append(ix.elems[cur], elemLines{line: i + 1})
			continue
		}
		if m := tableRe.FindStringSubmatch(ln); m != nil {
			cur = "[" + m[1]
			ix.unknown = append(ix.unknown, keyLine{m[1], i + 1})
			continue
		}
		m := keyRe.FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		k := strings.SplitN(m[1], ".", 2)[0]
		switch {
		case cur == "":
			ix.topKeys = append(ix.topKeys, keyLine{k, i + 1})
		case !strings.HasPrefix(cur, "["):
			es := ix.elems[cur]
			es[len(es)-1].keys = append(es[len(es)-1].keys, keyLine{k, i + 1})
		}
	}
	return ix
}

// elem is the line of key k of element i of array table name, or of the
// element's header, or 0.
func (ix lineIndex) elem(name string, i int, k string) int {
	es := ix.elems[name]
	if i >= len(es) {
		return 0
	}
	for _, kl := range es[i].keys {
		if kl.key == k {
			return kl.line
		}
	}
	return es[i].line
}

// top is the line of a top-level key, or 0.
func (ix lineIndex) top(k string) int {
	for _, kl := range ix.topKeys {
		if kl.key == k {
			return kl.line
		}
	}
	return 0
}
