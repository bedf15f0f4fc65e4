package format

import (
	"errors"
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/results"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/tsim-dev/tsim/topologies"
)

// Experiment is one loaded experiment file: a base system, its variants and
// its sweep. Each (variant, sweep point) pair is a Scenario, built on demand
// by Scenario so that a large sweep never holds all its topologies at once.
type Experiment struct {
	Name, Description, File string
	Seed                    uint64 // master seed of the first replication; default 1
	Replications            int    // default 1
	// Variants are the variant names in file order; a file without
	// [[variant]] has one variant, "base".
	Variants []string
	// Sweep holds the sweep axes; several axes form a grid whose first axis
	// is outermost. Empty without a sweep.
	Sweep []SweepAxis
	// PerReplica (report.per_replica): the reports show every machine of a
	// farm, not only the farm's totals.
	PerReplica bool

	// Warnings are the settings the file makes that take no effect: .NET
	// (and so tsim) overrides or ignores them (docs/dotnet.md, "Settings
	// that take no effect"). In file order, each at most once; a warning
	// seen only in some scenarios names the first in Context.
	Warnings []Warning

	base     *docSpec
	variants []variantSpec
	axes     []axisSpec
	files    *files
	sources  []*source // for messages of Scenario
}

// SweepAxis is one swept key and its values, as the user's canonical strings
// ("8", "150ms", "0.5").
type SweepAxis struct {
	Key    string
	Values []string
}

// Param is one swept key's value at a sweep point.
type Param = results.Param

// Scenario is one variant at one sweep point, resolved.
type Scenario struct {
	Index    int // 0..NumScenarios()-1: variant-major, then sweep points in grid order
	Variant  string
	Params   []Param // the sweep values of this point; empty without a sweep
	Topology model.Topology
}

// VariantDescription returns the description of variant i ("" for base).
func (x *Experiment) VariantDescription(i int) string {
	if i < 0 || i >= len(x.variants) {
		return ""
	}
	return x.variants[i].desc
}

// LoadError is one problem in an experiment file.
type LoadError struct {
	File    string
	Line    int    // 1-based; 0 when unknown
	Context string // the variant or sweep point the problem shows up in; may be empty
	Key     string // the key path, e.g. "tier.web.worker.max"; may be empty
	Msg     string
}

func (e *LoadError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Context != "" {
		b.WriteString(e.Context)
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// A Warning is a setting that takes no effect, where it was written.
type Warning struct {
	File    string
	Line    int    // 1-based; 0 when unknown
	Context string // the variant or sweep point it shows up in; empty when every scenario shows it
	Key     string // the key path, e.g. "tier.web.calls.maxconnection"
	Msg     string // what overrides or ignores it, and why
}

func (w Warning) String() string {
	e := LoadError(w)
	return e.Error()
}

// LoadErrors is every problem LoadExperiment found (at most maxErrors, then a last
// entry saying how many more there were), in file order. LoadExperiment returns it as
// its error.
type LoadErrors []*LoadError

func (l LoadErrors) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

const maxErrors = 20

// maxMsgLen bounds a LoadError's message and context, in runes.
const maxMsgLen = 2000

// LoadExperiment parses and validates one experiment file. name is the file name used
// in messages; readFile reads files named relative to the experiment
// (empirical distributions, topologies given as paths) and may be nil when
// the file needs none. The error, if any, is a LoadErrors.
func LoadExperiment(name string, data []byte, readFile func(string) ([]byte, error)) (*Experiment, error) {
	p := &loader{files: newFiles(readFile)}
	x := p.load(name, data)
	if len(p.errs) > 0 {
		return nil, p.finish()
	}
	return x, nil
}

// loader holds the state of one LoadExperiment call.
type loader struct {
	files   *files
	errs    []pendingErr
	warns   []pendingErr
	sources []*source
	report  map[string]setting // [report]: report.per_replica

	// connUse tracks, while a system is resolved, whether each explicit
	// connection-limit setting decided some call's limit (connUse.go).
	connUse []*keyUse
}

// pendingErr is an error whose line is looked up only when loading fails.
type pendingErr struct {
	at      pos
	ctx     string
	key     string
	msg     string
	inScope bool // for scenario checks: seen in every checked scenario
}

func (p *loader) errorf(at pos, key, format string, args ...any) {
	p.errs = append(p.errs, pendingErr{at: at, key: key, msg: fmt.Sprintf(format, args...)})
}

// warnf records a setting that takes no effect.
func (p *loader) warnf(at pos, key, format string, args ...any) {
	p.warns = append(p.warns, pendingErr{at: at, key: key, msg: fmt.Sprintf(format, args...)})
}

// maxWarnings bounds the warnings an experiment reports.
const maxWarnings = 100

// warnings turns the recorded warnings into Warnings, ordered and
// numbered as finish orders errors.
func (p *loader) warnings() []Warning {
	if len(p.warns) == 0 {
		return nil
	}
	saved := p.errs
	p.errs = p.warns
	errs := p.finishN(maxWarnings, "warnings")
	p.errs = saved
	out := make([]Warning, len(errs))
	for i, e := range errs {
		out[i] = Warning(*e)
	}
	return out
}

func (p *loader) finish() LoadErrors { return p.finishN(maxErrors, "errors") }

func (p *loader) finishN(limit int, noun string) LoadErrors {
	out := make(LoadErrors, 0, len(p.errs))
	type ordered struct {
		e       *LoadError
		src, ix int
	}
	var all []ordered
	seen := map[string]bool{}
	for i, pe := range p.errs {
		// Keys come from the file and messages may quote it: neither may
		// make a message of megabytes.
		e := &LoadError{Context: abbreviateRunes(pe.ctx, maxMsgLen), Key: abbreviateRunes(pe.key, maxKeyPathLen), Msg: abbreviateRunes(pe.msg, maxMsgLen)}
		src := len(p.sources)
		if pe.at.src != nil {
			e.File = pe.at.src.name
			e.Line = pe.at.src.line(pe.at.key)
			src = pe.at.src.order
		} else if len(p.sources) > 0 {
			e.File = p.sources[0].name
		}
		s := e.Error()
		if seen[s] {
			continue
		}
		seen[s] = true
		all = append(all, ordered{e, src, i})
	}
	// File order: the experiment file first, then included files; within a
	// file by line; keys without a line after those with one, in the order found.
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.src != b.src {
			return a.src < b.src
		}
		la, lb := a.e.Line, b.e.Line
		if la == 0 {
			la = 1 << 30
		}
		if lb == 0 {
			lb = 1 << 30
		}
		if la != lb {
			return la < lb
		}
		return a.ix < b.ix
	})
	for i, o := range all {
		if i == limit {
			out = append(out, &LoadError{File: o.e.File, Msg: fmt.Sprintf("and %d more %s", len(all)-limit, noun)})
			break
		}
		out = append(out, o.e)
	}
	return out
}

// docSpec is a system as the files say it: explicit settings only. Presets
// and defaults are applied when a scenario is resolved.
type docSpec struct {
	top   map[string]setting // "duration", "load.users", "load.call.client"
	tiers []*tierSpec
}

type tierSpec struct {
	name  string
	at    pos
	keys  map[string]setting // "cores", "worker.max", "calls.maxconnection"
	steps []*stepSpec
	// stepsAt is where the steps were given (for a topology override).
	stepsAt pos
}

type stepSpec struct {
	at   pos
	keys map[string]setting // "cpu", "call", "timeout", "retry.attempts"
}

func (d *docSpec) tier(name string) *tierSpec {
	for _, t := range d.tiers {
		if t.name == name {
			return t
		}
	}
	return nil
}

func (d *docSpec) tierNames() []string {
	s := make([]string, len(d.tiers))
	for i, t := range d.tiers {
		s[i] = t.name
	}
	return s
}

// clone copies d deeply enough that settings can be changed in the copy.
func (d *docSpec) clone() *docSpec {
	c := &docSpec{top: cloneMap(d.top), tiers: make([]*tierSpec, len(d.tiers))}
	for i, t := range d.tiers {
		ct := *t
		ct.keys = cloneMap(t.keys)
		ct.steps = make([]*stepSpec, len(t.steps))
		for j, s := range t.steps {
			ct.steps[j] = &stepSpec{at: s.at, keys: cloneMap(s.keys)}
		}
		c.tiers[i] = &ct
	}
	return c
}

func cloneMap(m map[string]setting) map[string]setting {
	c := make(map[string]setting, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

type variantSpec struct {
	name, desc string
	at         pos
	sets       []assignment
}

type axisSpec struct {
	key  string
	addr address
	at   pos
	vals []setting // parsed values
	strs []string  // canonical strings
}

// address is a parsed key path: which scope, which tier and step, which key.
type address struct {
	sc     scope
	tier   string
	step   int    // 0-based, for scopeStep
	target string // call.<target>: the call step is found by its target
	rel    string
	def    *keyDef
}

type assignment struct {
	key  string // as the user wrote it
	addr address
	s    setting
}

const (
	maxTiers      = MaxTiers
	maxSteps      = MaxSteps
	maxScenarios  = MaxScenarios
	maxAxisValues = MaxSweepValues
	maxVariants   = MaxVariants
)

func (p *loader) load(name string, data []byte) *Experiment {
	x := &Experiment{File: name, Seed: 1, Replications: 1, files: p.files}
	src := p.newSource(name, data)
	m, ok := p.decode(src)
	if !ok {
		return nil
	}
	root := pos{src: src}
	at := func(k string) pos { return pos{src: src, key: k} }

	if v, ok := m["name"]; ok {
		if s, ok := v.(string); !ok {
			p.errorf(at("name"), "name", "%v", wantErr("a string", v))
		} else if msg := checkLabel(s, MaxNameLen, false); msg != "" {
			p.errorf(at("name"), "name", "%s", msg)
		} else {
			x.Name = s
		}
	}
	if v, ok := m["description"]; ok {
		if s, ok := v.(string); !ok {
			p.errorf(at("description"), "description", "%v", wantErr("a string", v))
		} else if msg := checkLabel(s, MaxDescriptionLen, true); msg != "" {
			p.errorf(at("description"), "description", "%s", msg)
		} else {
			x.Description = s
		}
	}
	if v, ok := m["seed"]; ok {
		switch n := v.(type) {
		case int64:
			if n >= 0 {
				x.Seed = uint64(n)
			} else {
				p.errorf(at("seed"), "seed", "must be ≥ 0, got %d", n)
			}
		case string:
			if seed, err := ParseSeed(n); err != nil {
				p.errorf(at("seed"), "seed", "%v", err)
			} else {
				x.Seed = seed
			}
		default:
			p.errorf(at("seed"), "seed", "%v", wantErr(fmt.Sprintf("a whole number from 0 to %d", MaxSeed), v))
		}
	}
	if v, ok := m["replications"]; ok {
		d := intKey("replications", 1, MaxReplications, "")
		if n, err := parseValue(&d, v, p.files); err != nil {
			p.errorf(at("replications"), "replications", "%v", err)
		} else {
			x.Replications = n.(int)
		}
	}

	doc := p.parseDoc(src, m, false)
	topoFailed := false
	if v, ok := m["topology"]; ok {
		topoFailed = true
		if s, ok := v.(string); ok && s == "" {
			p.errorf(at("topology"), "topology", "is empty; give a topology name (%s) or a path ending in .toml", quoteList(topologies.Names()))
		} else if ok {
			if base := p.include(at("topology"), s); base != nil {
				doc = mergeDocs(base, doc)
				topoFailed = false
			}
		} else {
			p.errorf(at("topology"), "topology", "%v", wantErr("a topology name or path", v))
		}
	}
	x.base = doc
	if s, ok := p.report["per_replica"]; ok {
		x.PerReplica = s.v.(bool)
	}
	if _, hasTiers := m["tier"]; len(doc.tiers) == 0 && !hasTiers && !topoFailed {
		// Not when tiers were given but refused (3,000 of them, or every one
		// broken), nor when the topology failed to load: "no tiers" would be
		// a consequence, not the problem.
		p.errorf(root, "tier", "the experiment has no tiers; add at least one [[tier]] (or topology = %s)", quoteList(topologies.Names()))
	}

	if v, ok := m["variant"]; ok {
		p.parseVariants(src, doc, v, x)
	}
	if len(x.variants) == 0 {
		x.Variants = []string{"base"}
		x.variants = []variantSpec{{name: "base", at: root}}
	}
	if v, ok := m["sweep"]; ok {
		p.parseSweep(src, doc, v, x)
	}
	x.sources = p.sources
	if len(p.errs) > 0 {
		return nil
	}
	if n := x.numScenarios(); n > maxScenarios {
		p.errorf(at("sweep"), "sweep", "%d scenarios (variants × sweep points); at most %d", n, maxScenarios)
		return nil
	}
	p.checkScenarios(x)
	x.Warnings = p.warnings()
	return x
}

// decode parses TOML into a map and records the source's metadata. Before
// the parser sees the text, decode checks it against MaxExperimentBytes,
// MaxDepth and MaxKeys (see scanTOML): the parser is superlinear in
// nesting, and this is what keeps LoadExperiment safe on any input.
func (p *loader) decode(src *source) (map[string]any, bool) {
	if len(src.data) > MaxExperimentBytes {
		what := "experiment files"
		if src.order > 0 {
			what = "topology files"
		}
		p.errorf(pos{src: src}, "", "%s", sizeMessage(int64(len(src.data)), what, MaxExperimentBytes))
		return nil, false
	}
	if se, ok := scanTOML(src.data, MaxDepth, MaxKeys, &src.keyLines); !ok {
		src.fixed = map[string]int{"": se.line}
		p.errorf(pos{src: src}, "", "%s", se.msg)
		return nil, false
	}
	var m map[string]any
	md, err := toml.Decode(src.data, &m)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			src.fixed = map[string]int{"": pe.Position.Line}
			if src.named {
				// A file the experiment names may be any file in its folder:
				// the parser's message can quote it (`found "wJalrXUtnFEMI"`),
				// so only the place is shown.
				p.errorf(pos{src: src}, "", "not valid TOML (column %d); the parser's message is not shown for a file an experiment names, since it may quote the file (tsim check on the file itself shows it)", pe.Position.Col)
				return nil, false
			}
			msg := pe.Message
			if pe.LastKey != "" {
				msg = fmt.Sprintf("%s (after key %s)", msg, quote(pe.LastKey))
			}
			if pe.LastKey == "seed" && strings.Contains(pe.Message, "out of range") {
				msg += fmt.Sprintf("; write a seed above %d as a string, such as seed = \"%d\"", int64(math.MaxInt64), MaxSeed)
			}
			p.errorf(pos{src: src}, "", "TOML syntax: %s", msg)
		} else {
			p.errorf(pos{src: src}, "", "TOML: %v", err)
		}
		return nil, false
	}
	src.md = md
	return m, true
}

// include reads a named or path topology.
func (p *loader) include(at pos, ref string) *docSpec {
	var data []byte
	var err error
	name := ref
	if strings.ContainsAny(ref, `/\`) || strings.HasSuffix(ref, ".toml") {
		if p.files == nil || p.files.read == nil {
			p.errorf(at, "topology", "cannot read %s: this loader has no file access", quote(ref))
			return nil
		}
		data, err = p.files.readFile(ref, MaxExperimentBytes, "topology files")
	} else {
		data, err = topologies.Get(ref)
		name = "topologies/" + ref + ".toml"
		if err != nil {
			p.errorf(at, "topology", "unknown topology %s (known: %s; or give a path ending in .toml)", quote(ref), quoteList(topologies.Names()))
			return nil
		}
	}
	if err != nil {
		p.errorf(at, "topology", "cannot read %s: %v", quote(ref), err)
		return nil
	}
	src := p.newSource(name, data)
	src.named = true
	m, ok := p.decode(src)
	if !ok {
		return nil
	}
	return p.parseDoc(src, m, true)
}

// parseDoc reads the system part of a file: top-level keys, load, tiers.
// topo is true for an included topology file, which may not hold
// experiment-level keys.
func (p *loader) parseDoc(src *source, m map[string]any, topo bool) *docSpec {
	doc := &docSpec{top: map[string]setting{}}
	rest := map[string]any{}
	for _, k := range sortedKeys(m) {
		switch k {
		case "name", "description":
			// read by load; allowed in topologies as labels
		case "seed", "replications", "topology", "variant", "sweep":
			if topo {
				p.errorf(pos{src: src, key: k}, k, "not allowed in a topology file (put it in the experiment)")
			}
		case "report":
			if topo {
				p.errorf(pos{src: src, key: k}, k, "not allowed in a topology file (put it in the experiment)")
				continue
			}
			p.parseReport(src, m[k])
		case "tier":
			p.parseTiers(src, m[k], doc)
		default:
			rest[k] = m[k]
		}
	}
	p.flatten(src, scopeTop, rest, "", "", "", doc.top)
	return doc
}

func (p *loader) parseTiers(src *source, v any, doc *docSpec) {
	arr, ok := tableArray(v)
	if !ok {
		p.errorf(pos{src: src, key: "tier"}, "tier", "want [[tier]] tables, got %s", describe(v))
		return
	}
	if len(arr) > maxTiers {
		p.errorf(pos{src: src, key: "tier"}, "tier", "%d tiers; at most %d", len(arr), maxTiers)
		return
	}
	for i, tm := range arr {
		tk := fmt.Sprintf("tier[%d]", i)
		t := &tierSpec{at: pos{src: src, key: tk}, keys: map[string]setting{}}
		label := fmt.Sprintf("tier[%d]", i+1)
		switch n := tm["name"].(type) {
		case string:
			if msg := nameProblem(n); msg == "" {
				t.name = n
				label = "tier." + n
			} else {
				p.errorf(pos{src: src, key: tk + ".name"}, label+".name", "%s", msg)
			}
		case nil:
			p.errorf(t.at, label, "needs a name (name = \"web\")")
		default:
			p.errorf(pos{src: src, key: tk + ".name"}, label+".name", "%v", wantErr("a name", n))
		}
		if t.name != "" && doc.tier(t.name) != nil {
			p.errorf(pos{src: src, key: tk + ".name"}, label, "a second tier named %s; tier names must be unique", quote(t.name))
			continue
		}
		rest := map[string]any{}
		for _, k := range sortedKeys(tm) {
			switch k {
			case "name":
			case "step":
				p.parseSteps(src, tm[k], tk, label, t)
			default:
				rest[k] = tm[k]
			}
		}
		p.flatten(src, scopeTier, rest, "", tk+".", label+".", t.keys)
		if t.name != "" {
			doc.tiers = append(doc.tiers, t)
		}
	}
}

func (p *loader) parseSteps(src *source, v any, tk, label string, t *tierSpec) {
	t.stepsAt = pos{src: src, key: tk + ".step"}
	arr, ok := tableArray(v)
	if !ok {
		p.errorf(t.stepsAt, label+".step", "want [[tier.step]] tables, got %s", describe(v))
		return
	}
	if len(arr) > maxSteps {
		p.errorf(t.stepsAt, label+".step", "%d steps; at most %d", len(arr), maxSteps)
		return
	}
	t.steps = make([]*stepSpec, 0, len(arr))
	for j, sm := range arr {
		sk := fmt.Sprintf("%s.step[%d]", tk, j)
		s := &stepSpec{at: pos{src: src, key: sk}, keys: map[string]setting{}}
		p.flatten(src, scopeStep, sm, "", sk+".", fmt.Sprintf("%s.step.%d.", label, j+1), s.keys)
		t.steps = append(t.steps, s)
	}
}

// tableArray accepts an array of tables in either of the shapes the TOML
// decoder produces.
func tableArray(v any) ([]map[string]any, bool) {
	switch a := v.(type) {
	case []map[string]any:
		return a, true
	case []any:
		out := make([]map[string]any, len(a))
		for i, e := range a {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, false
			}
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

// flatten walks a table of scope sc, checking and converting every key into
// out under its relative name. prefix is the relative name of the table
// ("" or "worker."), tomlKey the indexed TOML key of the table and label the
// user's key path of the table ("tier.web.").
func (p *loader) flatten(src *source, sc scope, m map[string]any, prefix, tomlKey, label string, out map[string]setting) {
	for _, k := range sortedKeys(m) {
		v := m[k]
		name := prefix + k
		at := pos{src: src, key: tomlKey + k}
		if d := lookupKey(sc, name); d != nil {
			pv, err := parseValue(d, v, p.files)
			if err != nil {
				p.errorf(at, label+name, "%v", err)
				continue
			}
			out[name] = setting{v: pv, raw: v, at: at}
			continue
		}
		if sub, ok := v.(map[string]any); ok && isKeyPrefix(sc, name) {
			p.flatten(src, sc, sub, name+".", tomlKey+k+".", label, out)
			continue
		}
		p.errorf(at, label+name, "unknown key%s", suggestKey(sc, name, label))
	}
}

// suggestKey proposes the closest known key of a scope.
func suggestKey(sc scope, name, label string) string {
	switch sc {
	case scopeTop:
		if name == "load.call.timeout" {
			return `; the load client's timeout is load.timeout`
		}
		if name == "load.call.call" {
			return `; the load's entry tier is load.target`
		}
	case scopeTier:
		if lookupKey(scopeStep, name) != nil {
			return fmt.Sprintf("; %s is a step key: put it in a [[tier.step]], or use calls.%s for every call of the tier", name, name)
		}
	}
	if s := suggest(name, scopeCands[sc]); s != "" {
		return fmt.Sprintf("; did you mean %s%s?", label, s)
	}
	return scopeAllowed[sc]
}

// scopeCands are the keys a file may write in each scope, and
// scopeAllowed the message that lists them, computed once: a file of
// 50,000 unknown keys asks for them 50,000 times.
var scopeCands, scopeAllowed = func() (cands [len(scopeDefs)][]string, allowed [len(scopeDefs)]string) {
	for sc := range scopeDefs {
		for _, d := range scopeDefs[sc] {
			cands[sc] = append(cands[sc], d.name)
		}
		switch scope(sc) {
		case scopeTop:
			cands[sc] = append(cands[sc], "name", "description", "seed", "replications", "topology", "tier", "variant", "sweep")
		case scopeTier:
			cands[sc] = append(cands[sc], "name", "step")
		}
		allowed[sc] = fmt.Sprintf(" (allowed here: %s)", strings.Join(topLevelNames(cands[sc]), ", "))
	}
	return cands, allowed
}()

// topLevelNames shortens a key list to its distinct first components.
func topLevelNames(keys []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		if i := strings.IndexByte(k, '.'); i >= 0 {
			k = k[:i]
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// mergeDocs lays over on top of base: top-level keys override, tiers merge
// by name (keys override; steps, if given, replace the base tier's steps),
// new tiers are appended.
func mergeDocs(base, over *docSpec) *docSpec {
	out := base.clone()
	for k, v := range over.top {
		out.top[k] = v
	}
	for _, t := range over.tiers {
		bt := out.tier(t.name)
		if bt == nil {
			out.tiers = append(out.tiers, t)
			continue
		}
		for k, v := range t.keys {
			bt.keys[k] = v
		}
		if t.steps != nil {
			bt.steps = t.steps
			bt.stepsAt = t.stepsAt
		}
		bt.at = t.at
	}
	return out
}

func (p *loader) parseVariants(src *source, doc *docSpec, v any, x *Experiment) {
	arr, ok := tableArray(v)
	if !ok {
		p.errorf(pos{src: src, key: "variant"}, "variant", "want [[variant]] tables, got %s", describe(v))
		return
	}
	if len(arr) > maxVariants {
		p.errorf(pos{src: src, key: "variant"}, "variant", "%d variants; at most %d", len(arr), maxVariants)
		return
	}
	names := map[string]bool{}
	for i, vm := range arr {
		vk := fmt.Sprintf("variant[%d]", i)
		vs := variantSpec{at: pos{src: src, key: vk}}
		label := fmt.Sprintf("variant[%d]", i+1)
		for _, k := range sortedKeys(vm) {
			at := pos{src: src, key: vk + "." + k}
			switch k {
			case "name":
				s, ok := vm[k].(string)
				if !ok || s == "" {
					p.errorf(at, label+".name", "%v", wantErr("a non-empty string", vm[k]))
					continue
				}
				if msg := checkLabel(s, MaxNameLen, false); msg != "" {
					p.errorf(at, label+".name", "%s", msg)
					continue
				}
				vs.name = s
				label = "variant " + quote(s) // what later messages name it by (its keys sort after name)
			case "description":
				s, ok := vm[k].(string)
				if !ok {
					p.errorf(at, label+".description", "%v", wantErr("a string", vm[k]))
					continue
				}
				if msg := checkLabel(s, MaxDescriptionLen, true); msg != "" {
					p.errorf(at, label+".description", "%s", msg)
					continue
				}
				vs.desc = s
			case "set":
				set, ok := vm[k].(map[string]any)
				if !ok {
					p.errorf(at, label+".set", "want a table of key paths, such as set = { \"tier.web.cores\" = 4 }, got %s", describe(vm[k]))
					continue
				}
				seen := map[string]string{}
				for _, key := range sortedKeys(set) {
					kat := pos{src: src, key: vk + ".set." + key}
					a, err := p.parseAssignment(doc, key, set[key], kat)
					if err != "" {
						p.errorf(kat, label+".set", "%s", err)
						continue
					}
					if other, dup := seen[addrKey(a.addr)]; dup {
						p.errorf(kat, label+".set", "%s and %s name the same setting; give it once", other, key)
						continue
					}
					seen[addrKey(a.addr)] = key
					vs.sets = append(vs.sets, a)
				}
			default:
				p.errorf(at, label+"."+k, "unknown key%s", suggestFrom(k, []string{"name", "description", "set"}, label+"."))
			}
		}
		if vs.name == "" {
			if _, has := vm["name"]; !has {
				p.errorf(vs.at, label, "needs a name")
			}
			continue
		}
		if names[vs.name] {
			p.errorf(vs.at, label, "a second variant named %s", quote(vs.name))
			continue
		}
		names[vs.name] = true
		x.variants = append(x.variants, vs)
		x.Variants = append(x.Variants, vs.name)
	}
}

// addrKey identifies the setting an address names, whatever path named it.
func addrKey(a address) string {
	return fmt.Sprintf("%d|%s|%d|%s", a.sc, a.tier, a.step, a.rel)
}

func suggestFrom(k string, cands []string, label string) string {
	if s := suggest(k, cands); s != "" {
		return fmt.Sprintf("; did you mean %s%s?", label, s)
	}
	return fmt.Sprintf(" (allowed: %s)", strings.Join(cands, ", "))
}

// parseAssignment parses a key path and its value. It returns a message on
// error.
func (p *loader) parseAssignment(doc *docSpec, key string, raw any, at pos) (assignment, string) {
	addr, msg := parseKeyPath(doc, key)
	if msg != "" {
		return assignment{}, msg
	}
	v, err := parseValue(addr.def, raw, p.files)
	if err != nil {
		return assignment{}, fmt.Sprintf("%s: %v", key, err)
	}
	return assignment{key: key, addr: addr, s: setting{v: v, raw: raw, at: at}}, ""
}

// maxKeyPathLen bounds a key path: tier.<name>.step.<n>.<key> with the
// longest names.
const maxKeyPathLen = 256

// parseKeyPath resolves a variant or sweep key path against the base system.
func parseKeyPath(doc *docSpec, key string) (address, string) {
	if len(key) > maxKeyPathLen {
		return address{}, fmt.Sprintf("a key path of %s; key paths are at most %d bytes", lengthOf(key), maxKeyPathLen)
	}
	parts := strings.Split(key, ".")
	for _, s := range structuralKeys {
		if key == s || strings.HasPrefix(key, s+".") {
			return address{}, fmt.Sprintf("%s cannot be set by a variant or sweep: it shapes the experiment itself", key)
		}
	}
	if parts[0] != "tier" {
		d := lookupKey(scopeTop, key)
		if d == nil {
			return address{}, fmt.Sprintf("unknown key %q%s", key, pathSuggestion(scopeTop, key, ""))
		}
		return address{sc: scopeTop, rel: key, def: d}, ""
	}
	if len(parts) < 3 {
		return address{}, fmt.Sprintf("key %q is incomplete: write tier.<name>.<key>, e.g. tier.%s.cores", key, firstTier(doc))
	}
	t := doc.tier(parts[1])
	if t == nil {
		return address{}, fmt.Sprintf("key %q: no tier %q (tiers: %s)", key, parts[1], strings.Join(doc.tierNames(), ", "))
	}
	prefix := "tier." + t.name + "."
	switch parts[2] {
	case "step":
		if len(parts) < 5 {
			return address{}, fmt.Sprintf("key %q is incomplete: write tier.%s.step.<n>.<key>", key, t.name)
		}
		n, err := strconv.Atoi(parts[3])
		if err != nil || n < 1 || n > len(t.steps) {
			return address{}, fmt.Sprintf("key %q: tier %s has steps 1 to %d", key, t.name, len(t.steps))
		}
		rel := strings.Join(parts[4:], ".")
		d := lookupKey(scopeStep, rel)
		if d == nil {
			return address{}, fmt.Sprintf("unknown key %q%s", key, pathSuggestion(scopeStep, rel, prefix+"step."+parts[3]+"."))
		}
		return address{sc: scopeStep, tier: t.name, step: n - 1, rel: rel, def: d}, ""
	case "call":
		if len(parts) < 5 {
			return address{}, fmt.Sprintf("key %q is incomplete: write tier.%s.call.<target>.<key>", key, t.name)
		}
		target := parts[3]
		var idx []int
		for j, s := range t.steps {
			if c, ok := s.keys["call"]; ok && c.v == target {
				idx = append(idx, j)
			}
		}
		switch len(idx) {
		case 0:
			return address{}, fmt.Sprintf("key %q: tier %s has no call to %q", key, t.name, target)
		case 1:
		default:
			return address{}, fmt.Sprintf("key %q: tier %s calls %s from several steps (%s); use tier.%s.step.<n>.%s",
				key, t.name, target, joinInts(idx, 1), t.name, strings.Join(parts[4:], "."))
		}
		rel := strings.Join(parts[4:], ".")
		d := lookupKey(scopeStep, rel)
		if d == nil || rel == "call" || !isCallKey(rel) {
			return address{}, fmt.Sprintf("unknown call key %q%s", key, pathSuggestion(scopeStep, rel, prefix+"call."+target+"."))
		}
		return address{sc: scopeStep, tier: t.name, step: idx[0], target: target, rel: rel, def: d}, ""
	}
	rel := strings.Join(parts[2:], ".")
	if rel == "name" || rel == "step" {
		return address{}, fmt.Sprintf("%s cannot be set by a variant or sweep", key)
	}
	d := lookupKey(scopeTier, rel)
	if d == nil {
		return address{}, fmt.Sprintf("unknown key %q%s", key, pathSuggestion(scopeTier, rel, prefix))
	}
	return address{sc: scopeTier, tier: t.name, rel: rel, def: d}, ""
}

func isCallKey(rel string) bool {
	for _, d := range callKeys {
		if d.name == rel {
			return true
		}
	}
	return false
}

func pathSuggestion(sc scope, rel, prefix string) string {
	var cands []string
	for _, d := range scopeDefs[sc] {
		cands = append(cands, d.name)
	}
	if s := suggest(rel, cands); s != "" {
		return fmt.Sprintf("; did you mean %q?", prefix+s)
	}
	return ""
}

func firstTier(doc *docSpec) string {
	if len(doc.tiers) > 0 {
		return doc.tiers[0].name
	}
	return "web"
}

func joinInts(xs []int, add int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x + add)
	}
	return strings.Join(s, ", ")
}

// parseReport reads the [report] table: per_replica.
func (p *loader) parseReport(src *source, v any) {
	m, ok := v.(map[string]any)
	if !ok {
		p.errorf(pos{src: src, key: "report"}, "report", "want a [report] table, got %s", describe(v))
		return
	}
	p.report = map[string]setting{}
	d := keyDef{name: "per_replica", typ: tBool}
	for _, k := range sortedKeys(m) {
		at := pos{src: src, key: "report." + k}
		if k != "per_replica" {
			p.errorf(at, "report."+k, "unknown key%s", suggestFrom(k, []string{"per_replica"}, "report."))
			continue
		}
		pv, err := parseValue(&d, m[k], p.files)
		if err != nil {
			p.errorf(at, "report."+k, "%v", err)
			continue
		}
		p.report[k] = setting{v: pv, raw: m[k], at: at}
	}
}
