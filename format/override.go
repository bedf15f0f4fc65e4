package format

import (
	"fmt"
	"strings"

	"github.com/BurntSushi/toml"
)

// Overrides: one variant of an experiment with arbitrary key=value settings
// laid over it, for commands that search a key (tsim plan) or try a change
// (tsim explain) rather than run the file's own sweep.

// ScenarioWith builds the named variant with the experiment's sweep left
// out (every swept key keeps its base value), then removes the settings
// named in unset, so that defaults and presets apply to them again, and
// then applies set in order. Keys are the key paths of variants and sweeps
// ("tier.web.calls.maxconnection", "load.users"); values are written as in
// TOML ("8", "0.5", "true") or bare ("150ms", "exp(1s)"), and a value that
// is not a TOML number, boolean or array is taken as a string. Unsetting a
// key the files do not set is allowed and does nothing.
//
// The scenario's Index is -1 (it is none of the file's scenarios) and its
// Params are set. An unknown key, a value of the wrong type or out of range,
// or a combination that does not resolve, is an error naming the key.
func (x *Experiment) ScenarioWith(variant string, set []Param, unset []string) (Scenario, error) {
	v := -1
	for i, vs := range x.variants {
		if vs.name == variant {
			v = i
		}
	}
	if v < 0 {
		return Scenario{}, fmt.Errorf("no variant %q (variants: %s)", variant, strings.Join(x.Variants, ", "))
	}
	sc := Scenario{Index: -1, Variant: variant, Params: append([]Param(nil), set...)}
	doc := x.base.clone()
	for _, a := range x.variants[v].sets {
		apply(doc, a.addr, a.s)
	}
	for _, key := range unset {
		addr, msg := parseKeyPath(x.base, key)
		if msg != "" {
			return sc, fmt.Errorf("%s", msg)
		}
		remove(doc, addr)
	}
	p := &loader{files: x.files, sources: x.sources}
	for _, kv := range set {
		raw := ParseValue(kv.Value)
		a, msg := p.parseAssignment(x.base, kv.Key, raw, pos{})
		if msg != "" {
			return sc, fmt.Errorf("%s", msg)
		}
		apply(doc, a.addr, a.s)
	}
	before := len(p.errs)
	topo := p.resolve(doc)
	if len(p.errs) > before {
		errs := p.finish()
		var parts []string
		if len(x.variants) > 1 || variant != "base" {
			parts = append(parts, fmt.Sprintf("variant %q", variant))
		}
		for _, kv := range set {
			parts = append(parts, kv.Key+" = "+kv.Value)
		}
		for _, e := range errs {
			e.Context = strings.Join(parts, ", ")
		}
		return sc, errs
	}
	sc.Topology = topo
	return sc, nil
}

// ParseValue reads a value as a TOML value ("8" is an integer, "0.5" a
// float, "true" a boolean, "[...]" an array, "\"x\"" a string); anything
// else, such as "150ms" or "exp(1s)", is the string itself.
func ParseValue(s string) any {
	if len(s) > MaxExperimentBytes {
		return s
	}
	if _, ok := scanTOML("v = "+s, MaxDepth, MaxKeys, nil); !ok {
		return s // too deep for the parser; as a string it is an error naming the key
	}
	var m map[string]any
	if _, err := toml.Decode("v = "+s, &m); err == nil {
		if v, ok := m["v"]; ok {
			if _, table := v.(map[string]any); !table {
				return v
			}
		}
	}
	return s
}

// remove deletes one key of doc, so that defaults and presets apply again.
func remove(doc *docSpec, a address) {
	switch a.sc {
	case scopeTop:
		delete(doc.top, a.rel)
	case scopeTier:
		delete(doc.tier(a.tier).keys, a.rel)
	case scopeStep:
		delete(doc.tier(a.tier).steps[a.step].keys, a.rel)
	}
}
