package calibrate

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/tsim-dev/tsim/topologies"
)

// The calibrated experiment is the user's file as TOML values, with the
// topology it names laid under it (so that the file stands alone), the
// calibrated steps' demands replaced, and written back as TOML. Comments
// of the original are not kept; the calibrated steps get their own.

// rawDoc decodes an experiment file and lays the topology it names under
// it the way package format merges them: top-level and load keys of the
// file override the topology's, tiers merge by name (keys override, steps
// given replace the topology's), new tiers are appended. readFile reads a
// topology named by path, relative to the experiment.
func rawDoc(data []byte, readFile func(string) ([]byte, error)) (map[string]any, error) {
	var m map[string]any
	if _, err := toml.Decode(string(data), &m); err != nil {
		return nil, err
	}
	ref, ok := m["topology"].(string)
	if !ok {
		return m, nil
	}
	var tb []byte
	var err error
	if strings.ContainsAny(ref, `/\`) || strings.HasSuffix(ref, ".toml") {
		if readFile == nil {
			return nil, fmt.Errorf("topology %q: no file access", ref)
		}
		tb, err = readFile(ref)
	} else {
		tb, err = topologies.Get(ref)
	}
	if err != nil {
		return nil, fmt.Errorf("topology %q: %v", ref, err)
	}
	var t map[string]any
	if _, err := toml.Decode(string(tb), &t); err != nil {
		return nil, fmt.Errorf("topology %q: %v", ref, err)
	}
	// A topology's name and description label the topology, not the
	// experiment.
	delete(t, "name")
	delete(t, "description")
	delete(m, "topology")
	return mergeRaw(t, m), nil
}

// mergeRaw lays over on base: tables merge key by key, tiers by name,
// anything else (values, arrays) replaces.
func mergeRaw(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = deepCopy(v)
	}
	for k, v := range over {
		if k == "tier" {
			out[k] = mergeTiers(tables(out[k]), tables(v))
			continue
		}
		bm, ok1 := out[k].(map[string]any)
		om, ok2 := v.(map[string]any)
		if ok1 && ok2 {
			out[k] = mergeRaw(bm, om)
			continue
		}
		out[k] = deepCopy(v)
	}
	return out
}

func mergeTiers(base, over []map[string]any) []map[string]any {
	out := append([]map[string]any(nil), base...)
	for _, t := range over {
		found := false
		for i, b := range out {
			if b["name"] == t["name"] {
				out[i] = mergeRaw(b, t)
				found = true
				break
			}
		}
		if !found {
			out = append(out, deepCopy(t).(map[string]any))
		}
	}
	return out
}

// tables reads an array of tables in either shape the decoder produces.
func tables(v any) []map[string]any {
	switch a := v.(type) {
	case []map[string]any:
		return a
	case []any:
		var out []map[string]any
		for _, e := range a {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []map[string]any:
		out := make([]map[string]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e).(map[string]any)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// tierOf returns the tier table named name, or nil.
func tierOf(doc map[string]any, name string) map[string]any {
	for _, t := range tables(doc["tier"]) {
		if t["name"] == name {
			return t
		}
	}
	return nil
}

// The writer. Keys come in a fixed order: the well-known ones first, the
// rest sorted, so that the same document gives the same bytes.

var keyOrder = map[string][]string{
	"":        {"name", "description", "seed", "replications", "duration", "warmup", "sample_every", "precision"},
	"tier":    {"name", "preset", "host", "dotnet", "cores"},
	"variant": {"name", "description", "set"},
	"step":    {"cpu", "wait", "call", "lock", "unlock"},
}

// sectionArrays are the arrays of tables written as [[sections]]; other
// arrays are written inline.
var sectionArrays = map[string]bool{"tier": true, "step": true, "variant": true}

type tomlWriter struct {
	b       strings.Builder
	comment func(path string) string // a trailing comment for a key path, or ""
}

func orderedKeys(m map[string]any, kind string) []string {
	var first, rest []string
	for _, k := range keyOrder[kind] {
		if _, ok := m[k]; ok {
			first = append(first, k)
		}
	}
	for k := range m {
		if !contains(first, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(first, rest...)
}

// isSection says whether a value is written as a table of its own.
func isSection(k string, v any, inline bool) (table, array bool) {
	if inline {
		return false, false
	}
	switch v.(type) {
	case map[string]any:
		return true, false
	case []map[string]any:
		return false, sectionArrays[k]
	case []any:
		return false, sectionArrays[k] && len(tables(v)) == len(v.([]any))
	}
	return false, false
}

// table writes the keys of m under the header path (dotted TOML keys) and
// label (the experiment format's key path, for comments). kind selects the
// key order; inlineMaps writes sub-tables inline (a variant's set).
func (w *tomlWriter) table(m map[string]any, header []string, label, kind string, inlineMaps bool) {
	keys := orderedKeys(m, kind)
	for _, k := range keys {
		v := m[k]
		if t, a := isSection(k, v, inlineMaps); t || a {
			continue
		}
		line := fmt.Sprintf("%s%s = %s", indent(header), tomlKey(k), tomlValue(v))
		if c := w.comment(label + k); c != "" {
			line = fmt.Sprintf("%-44s # %s", line, c)
		}
		w.b.WriteString(line + "\n")
	}
	for _, k := range keys {
		sub, ok := m[k].(map[string]any)
		if !ok || inlineMaps || len(sub) == 0 {
			continue
		}
		h := append(append([]string(nil), header...), k)
		w.b.WriteString(blank(h) + indent(h) + "[" + dotted(h) + "]\n")
		w.table(sub, h, label+k+".", k, false)
	}
	for _, k := range keys {
		if _, a := isSection(k, m[k], inlineMaps); !a {
			continue
		}
		h := append(append([]string(nil), header...), k)
		for i, e := range tables(m[k]) {
			w.b.WriteString(blank(h) + indent(h) + "[[" + dotted(h) + "]]\n")
			el := fmt.Sprintf("%s%s.%d.", label, k, i+1)
			if name, ok := e["name"].(string); ok && k == "tier" {
				el = label + k + "." + name + "."
			}
			w.table(e, h, el, k, k == "variant")
		}
	}
}

// blank separates the top-level tables by an empty line; nested ones
// follow their parent's keys at once.
func blank(h []string) string {
	if len(h) == 1 {
		return "\n"
	}
	return ""
}

// indent shifts a nested table by two spaces per level, as tsim's files do.
func indent(header []string) string {
	if len(header) <= 1 {
		return ""
	}
	return strings.Repeat("  ", len(header)-1)
}

func dotted(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		parts[i] = tomlKey(p)
	}
	return strings.Join(parts, ".")
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return tomlString(k)
}

// tomlString writes a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlValue(v any) string {
	switch x := v.(type) {
	case string:
		return tomlString(x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		switch {
		case math.IsNaN(x):
			return "nan"
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".en") {
			s += ".0"
		}
		return s
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tomlValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case []map[string]any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tomlValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := orderedKeys(x, "")
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = tomlKey(k) + " = " + tomlValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return tomlString(fmt.Sprint(v))
}

// writeTOML writes doc after a header of comment lines.
func writeTOML(doc map[string]any, header []string, comment func(path string) string) []byte {
	w := &tomlWriter{comment: comment}
	if w.comment == nil {
		w.comment = func(string) string { return "" }
	}
	for _, h := range header {
		if h == "" {
			w.b.WriteString("#\n")
			continue
		}
		w.b.WriteString("# " + h + "\n")
	}
	w.table(doc, nil, "", "", false)
	return []byte(w.b.String())
}
