package fit

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/format"
)

// The fitted experiment is the experiment's own text, comments and all,
// with each fitted key's value replaced where the file sets it, or added
// to the table it belongs in, and a header saying what was fitted. It is
// then loaded again and must give every scenario the same topology as the
// experiment with the values set (format.Experiment.WithBase), or it is
// not written.

// writeFitted writes set (one value per free input) into text: an input
// of a variant into that variant's set.
func writeFitted(x *format.Experiment, text []byte, readFile func(string) ([]byte, error), free []Free, set []format.Param, header []string) ([]byte, error) {
	doc := scanDoc(string(text))
	for j, kv := range set {
		var err error
		if v := free[j].Variant; v != "" {
			err = doc.setInVariant(v, kv.Key, tomlLiteral(kv.Value))
		} else {
			err = doc.set(kv.Key, tomlLiteral(kv.Value))
		}
		if err != nil {
			return nil, err
		}
	}
	var b strings.Builder
	for _, h := range header {
		b.WriteString(strings.TrimRight("# "+h, " "))
		b.WriteByte('\n')
	}
	b.WriteString("#\n")
	b.WriteString(doc.String())
	out := []byte(b.String())
	if readFile == nil {
		readFile = func(name string) ([]byte, error) { return nil, fmt.Errorf("%s: no file access", name) }
	}
	if err := sameScenarios(x, out, readFile, free, set); err != nil {
		return nil, err
	}
	return out, nil
}

// sameScenarios checks that out, loaded, gives x's scenarios with set
// applied: to its base, and each variant's inputs to its scenarios.
func sameScenarios(x *format.Experiment, out []byte, readFile func(string) ([]byte, error), free []Free, set []format.Param) error {
	z, err := format.LoadExperiment(x.File, out, readFile)
	if err != nil {
		return fmt.Errorf("the text with the values written in does not load: %s", oneLine(err))
	}
	y, err := x.WithBase(baseParams(free, set))
	if err != nil {
		return err
	}
	if z.NumScenarios() != y.NumScenarios() || !reflect.DeepEqual(z.Variants, y.Variants) {
		return errors.New("the text with the values written in has other scenarios")
	}
	for i := range min(y.NumScenarios(), 64) {
		a, err1 := y.Scenario(i)
		b, err2 := z.Scenario(i)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("the text with the values written in differs in scenario %d", i)
		}
		if vs := variantParams(free, set, a.Variant, nil); len(vs) > 0 {
			a, err1 = y.ScenarioWith(a.Variant, append(slices.Clone(a.Params), vs...), nil)
			b, err2 = z.ScenarioWith(b.Variant, b.Params, nil)
		}
		if err1 != nil || err2 != nil || !reflect.DeepEqual(a.Topology, b.Topology) {
			return fmt.Errorf("the text with the values written in differs in scenario %d (%s)", i, a.Variant)
		}
	}
	return nil
}

// tomlLiteral writes a value as TOML: a number, boolean or array as
// given, anything else as a string.
func tomlLiteral(v string) string {
	if _, isString := format.ParseValue(v).(string); isString {
		return strconv.Quote(v)
	}
	return v
}

// doc is a TOML text as lines, with what each key line sets as a key
// path of the experiment format.
type doc struct {
	lines  []string
	paths  []string // per line: the key path it sets, or ""
	after  map[int][]string
	tiers  []tierBlock
	topEnd int // the last line of the top-level keys (-1: none), before the first header
	load   *table
	end    []string // lines appended at the end
}

type table struct {
	name    string
	header  int // its header's line
	lastKey int // its last key's line (the header's when it has none)
}

type tierBlock struct {
	name  string
	body  table // the [[tier]] header and the keys before its first sub-table
	subs  []table
	steps []stepBlock
}

type stepBlock struct {
	table
	call string
}

// scanDoc reads the structure of a TOML text: its tables and the key
// path each key line sets (for the top level, [load], the tiers, their
// sub-tables and their steps).
func scanDoc(text string) *doc {
	d := &doc{lines: strings.Split(text, "\n"), after: map[int][]string{}, topEnd: -1}
	d.paths = make([]string, len(d.lines))
	header := "" // the current table, "" at the top
	var cur *table
	depth := 0 // open brackets of a value spanning lines
	inHeaders := false
	for i, ln := range d.lines {
		if depth > 0 {
			depth += brackets(ln)
			continue
		}
		trim := strings.TrimSpace(ln)
		if strings.HasPrefix(trim, "[") {
			name, array := headerName(trim)
			inHeaders = true
			header = name
			cur = nil
			switch {
			case array && name == "tier":
				d.tiers = append(d.tiers, tierBlock{body: table{name: "tier", header: i, lastKey: i}})
				cur = &d.tiers[len(d.tiers)-1].body
			case array && name == "tier.step" && len(d.tiers) > 0:
				t := &d.tiers[len(d.tiers)-1]
				t.steps = append(t.steps, stepBlock{table: table{name: name, header: i, lastKey: i}})
				cur = &t.steps[len(t.steps)-1].table
			case !array && strings.HasPrefix(name, "tier.") && len(d.tiers) > 0:
				t := &d.tiers[len(d.tiers)-1]
				t.subs = append(t.subs, table{name: strings.TrimPrefix(name, "tier."), header: i, lastKey: i})
				cur = &t.subs[len(t.subs)-1]
			case !array && name == "load":
				d.load = &table{name: name, header: i, lastKey: i}
				cur = d.load
			}
			continue
		}
		key, rest, ok := keyOf(trim)
		if !ok {
			continue
		}
		depth = brackets(rest)
		if !inHeaders {
			d.topEnd = i
			d.paths[i] = key
			continue
		}
		if cur == nil {
			continue
		}
		cur.lastKey = i
		if header == "load" {
			d.paths[i] = "load." + key
			continue
		}
		t := &d.tiers[len(d.tiers)-1]
		switch {
		case header == "tier":
			if key == "name" {
				t.name = unquote(rest)
			}
			d.paths[i] = "tier.\x00." + key
		case header == "tier.step":
			st := &t.steps[len(t.steps)-1]
			if key == "call" {
				st.call = unquote(rest)
			}
			d.paths[i] = fmt.Sprintf("tier.\x00.step.%d.%s", len(t.steps), key)
		case strings.HasPrefix(header, "tier."):
			d.paths[i] = "tier.\x00." + strings.TrimPrefix(header, "tier.") + "." + key
		}
	}
	// The tier's name is known once its block is read: fill it in.
	ti := -1
	for i := range d.lines {
		for ti+1 < len(d.tiers) && d.tiers[ti+1].body.header <= i {
			ti++
		}
		if ti >= 0 && strings.Contains(d.paths[i], "\x00") {
			d.paths[i] = strings.Replace(d.paths[i], "\x00", d.tiers[ti].name, 1)
		}
	}
	return d
}

// headerName reads "[a.b]" or "[[a.b]]" (with any comment after it).
func headerName(s string) (name string, array bool) {
	array = strings.HasPrefix(s, "[[")
	s = strings.TrimLeft(s, "[")
	if i := strings.Index(s, "]"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s), array
}

// keyOf reads "key = value" (key bare, dotted or quoted), returning the
// key with its quotes removed and the value's text.
func keyOf(s string) (key, rest string, ok bool) {
	if s == "" || s[0] == '#' {
		return "", "", false
	}
	eq := -1
	inQ := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQ != 0:
			if c == inQ {
				inQ = 0
			}
		case c == '"' || c == '\'':
			inQ = c
		case c == '=':
			eq = i
		}
		if eq >= 0 {
			break
		}
	}
	if eq <= 0 {
		return "", "", false
	}
	var parts []string
	for _, p := range strings.Split(strings.TrimSpace(s[:eq]), ".") {
		parts = append(parts, strings.Trim(strings.TrimSpace(p), `"'`))
	}
	return strings.Join(parts, "."), strings.TrimSpace(s[eq+1:]), true
}

// brackets is the balance of [ and { over ] and } in a line, outside
// strings and comments.
func brackets(s string) int {
	n := 0
	inQ := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQ != 0:
			if c == '\\' && inQ == '"' {
				i++
			} else if c == inQ {
				inQ = 0
			}
		case c == '"' || c == '\'':
			inQ = c
		case c == '#':
			return n
		case c == '[' || c == '{':
			n++
		case c == ']' || c == '}':
			n--
		}
	}
	return n
}

// valueEnd is where a value's text ends in rest: before its comment.
func valueEnd(rest string) int {
	inQ := byte(0)
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case inQ != 0:
			if c == '\\' && inQ == '"' {
				i++
			} else if c == inQ {
				inQ = 0
			}
		case c == '"' || c == '\'':
			inQ = c
		case c == '#':
			return i
		}
	}
	return len(rest)
}

func unquote(rest string) string {
	v := strings.TrimSpace(rest[:valueEnd(rest)])
	if u, err := strconv.Unquote(v); err == nil {
		return u
	}
	return strings.Trim(v, `'`)
}

// set writes key = lit: over the line that sets it, or as a new line in
// the table it belongs in.
func (d *doc) set(key, lit string) error {
	want := key
	parts := strings.Split(key, ".")
	var tb *tierBlock
	if parts[0] == "tier" && len(parts) >= 3 {
		for i := range d.tiers {
			if d.tiers[i].name == parts[1] {
				tb = &d.tiers[i]
			}
		}
		// tier.N.call.T.k is the step that calls T.
		if parts[2] == "call" && len(parts) >= 5 && tb != nil {
			for n, st := range tb.steps {
				if st.call == parts[3] {
					want = fmt.Sprintf("tier.%s.step.%d.%s", parts[1], n+1, strings.Join(parts[4:], "."))
				}
			}
		}
	}
	for i, p := range d.paths {
		if p != want {
			continue
		}
		ln := d.lines[i]
		eq := strings.Index(ln, "=")
		rest := ln[eq+1:]
		if brackets(rest) != 0 {
			return fmt.Errorf("%s is set over several lines at line %d", key, i+1)
		}
		old := strings.TrimSpace(rest[:valueEnd(rest)])
		d.lines[i] = ln[:eq+1] + " " + lit + "  # fitted (was " + old + ")"
		return nil
	}
	add := func(line int, text string) {
		indent := ""
		if line >= 0 {
			ln := d.lines[line]
			indent = ln[:len(ln)-len(strings.TrimLeft(ln, " \t"))]
		}
		d.after[line] = append(d.after[line], indent+text)
	}
	switch {
	case parts[0] == "tier" && len(parts) >= 3:
		rest := parts[2:]
		if tb == nil {
			d.end = append(d.end, "", "[[tier]]", "name = "+strconv.Quote(parts[1]), strings.Join(rest, ".")+" = "+lit+"  # fitted")
			return nil
		}
		want = strings.TrimPrefix(want, "tier."+parts[1]+".")
		if strings.HasPrefix(want, "step.") || strings.HasPrefix(want, "call.") {
			wp := strings.Split(want, ".")
			n, err := strconv.Atoi(wp[1])
			if wp[0] != "step" || err != nil || n < 1 || n > len(tb.steps) {
				return fmt.Errorf("%s: the file does not write that step of tier %s", key, parts[1])
			}
			add(tb.steps[n-1].lastKey, strings.Join(wp[2:], ".")+" = "+lit+"  # fitted")
			return nil
		}
		if len(rest) > 1 {
			for _, sub := range tb.subs {
				if sub.name == rest[0] {
					add(sub.lastKey, strings.Join(rest[1:], ".")+" = "+lit+"  # fitted")
					return nil
				}
			}
		}
		add(tb.body.lastKey, strings.Join(rest, ".")+" = "+lit+"  # fitted")
		return nil
	case parts[0] == "load" && d.load != nil:
		add(d.load.lastKey, strings.Join(parts[1:], ".")+" = "+lit+"  # fitted")
		return nil
	}
	if d.topEnd >= 0 {
		add(d.topEnd, key+" = "+lit+"  # fitted")
		return nil
	}
	// No top-level key: before the first table.
	for i, ln := range d.lines {
		if strings.HasPrefix(strings.TrimSpace(ln), "[") {
			add(i-1, key+" = "+lit+"  # fitted")
			return nil
		}
	}
	d.end = append(d.end, key+" = "+lit+"  # fitted")
	return nil
}

func (d *doc) String() string {
	var b strings.Builder
	for _, s := range d.after[-1] {
		b.WriteString(s + "\n")
	}
	for i, ln := range d.lines {
		if ln == deleted {
			for _, s := range d.after[i] {
				b.WriteString(s + "\n")
			}
			continue
		}
		b.WriteString(ln)
		if i < len(d.lines)-1 || len(d.after[i]) > 0 {
			b.WriteByte('\n')
		}
		for k, s := range d.after[i] {
			b.WriteString(s)
			if i < len(d.lines)-1 || k < len(d.after[i])-1 {
				b.WriteByte('\n')
			}
		}
	}
	if len(d.end) > 0 {
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		for _, s := range d.end {
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}

// setInVariant writes key = lit into the set of the [[variant]] named v:
// over the key's value where the set has it, else as its first entry, or
// as a new set line; a comment line above the set says what was fitted.
func (d *doc) setInVariant(v, key, lit string) error {
	// The variant's block: its header to the next header.
	from, to := -1, len(d.lines)
	for i := 0; i < len(d.lines); i++ {
		trim := strings.TrimSpace(d.lines[i])
		if !strings.HasPrefix(trim, "[") {
			continue
		}
		if from >= 0 {
			to = i
			break
		}
		if name, array := headerName(trim); !array || name != "variant" {
			continue
		}
		for k := i + 1; k < len(d.lines); k++ {
			t := strings.TrimSpace(d.lines[k])
			if strings.HasPrefix(t, "[") {
				break
			}
			if kk, rest, ok := keyOf(t); ok && kk == "name" && unquote(rest) == v {
				from = i
				break
			}
		}
	}
	if from < 0 {
		return fmt.Errorf("%s: the file has no [[variant]] named %q to write it into", key, v)
	}
	setLine, last := -1, from
	for k, depth := from+1, 0; k < to; k++ {
		if depth > 0 {
			if depth += brackets(d.lines[k]); depth <= 0 {
				last = k
			}
			continue
		}
		kk, rest, ok := keyOf(strings.TrimSpace(d.lines[k]))
		if !ok {
			continue
		}
		if kk == "set" && setLine < 0 {
			setLine = k
		}
		if depth = brackets(rest); depth <= 0 {
			last = k
		}
	}
	if setLine < 0 {
		d.after[last] = append(d.after[last], "set = { "+strconv.Quote(key)+" = "+lit+" }  # fitted")
		return nil
	}
	// The set's text, from its line to the end of the block, as one string.
	text := strings.Join(d.lines[setLine:to], "\n")
	open := strings.Index(text, "{")
	if open < 0 {
		return fmt.Errorf("%s: variant %q's set is not an inline table", key, v)
	}
	end := open + valueLen(text[open:])
	body := text[open:end]
	var repl string
	if at := findKey(body, key); at >= 0 {
		vs := at + strings.Index(body[at:], "=") + 1
		for vs < len(body) && (body[vs] == ' ' || body[vs] == '\t') {
			vs++
		}
		ve := vs + valueLen(body[vs:])
		repl = body[:vs] + lit + body[ve:]
	} else {
		repl = "{ " + strconv.Quote(key) + " = " + lit + "," + strings.TrimPrefix(body, "{")
	}
	newLines := strings.Split(text[:open]+repl+text[end:], "\n")
	n := to - setLine
	if len(newLines) > n {
		return fmt.Errorf("%s: could not write it into variant %q's set", key, v)
	}
	for k := range n {
		if k < len(newLines) {
			d.lines[setLine+k] = newLines[k]
		} else {
			d.lines[setLine+k] = deleted
		}
	}
	d.after[setLine-1] = append(d.after[setLine-1], "# "+key+": fitted")
	return nil
}

// deleted marks a line the output leaves out (a value that spanned lines
// and now takes one).
const deleted = "\x00deleted"

// findKey is where "key" (quoted) or key (bare) is set in an inline
// table's text, or -1.
func findKey(body, key string) int {
	for _, k := range []string{strconv.Quote(key), key} {
		for at := 0; ; {
			i := strings.Index(body[at:], k)
			if i < 0 {
				break
			}
			i += at
			before := strings.TrimRight(body[:i], " \t\n")
			rest := strings.TrimLeft(body[i+len(k):], " \t")
			if (strings.HasSuffix(before, "{") || strings.HasSuffix(before, ",")) && strings.HasPrefix(rest, "=") {
				return i
			}
			at = i + len(k)
		}
	}
	return -1
}

// valueLen is the length of the TOML value at the start of s: a string,
// an array or inline table (to its closing bracket, across lines), or a
// bare value up to a comma, a closing brace or the line's end.
func valueLen(s string) int {
	depth := 0
	inQ := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQ != 0:
			if c == '\\' && inQ == '"' {
				i++
			} else if c == inQ {
				inQ = 0
				if depth == 0 {
					return i + 1
				}
			}
		case c == '"' || c == '\'':
			inQ = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case depth == 0 && (c == ',' || c == '\n' || c == '#'):
			return i
		}
	}
	return len(s)
}
