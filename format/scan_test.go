package format

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/tsim-dev/tsim/topologies"
)

// scanSamples are TOML texts whose key lines the scan must get right:
// every way TOML writes strings, comments, keys, tables and arrays.
var scanSamples = []string{
	minimal,
	sweepFile,
	"a = 1\nb.c = 2\n\"d.e\" = 3\n'f' . g = 4\n[t]\nx = 5\n[[u]]\ny = 6\n[[u]]\n[u.v]\nz = 7\n",
	"s = \"a # not a comment = 1\"\nt = 'lit \\'\nu = \"\"\"\nx = 1\n[not.a.table]\n\"\"\"\nv = '''\ny = [\n'''\nw = 1 # c = 2\n",
	"m = \"\"\"a\"\"\"\"\"\nn = 2\no = \"\"\"\\\n  continued\\\"\"\" = \"\"\"\np = 3\n",
	"q = '''x'''''\nr = 4\n",
	"x = {a = 1, b = {c = 2, d.e = 3}, f = [1, {g = 4}, [5, {h = 6}]]}\ny = 7\n",
	"arr = [\n  1, # a = 2\n  [2, 3],\n  {k = \"v\"},\n]\nafter = 1\n",
	"step = [{cpu = \"1ms\"}, {call = \"zz\"}]\n[load]\nusers = 1\n",
	"[ a . \"b.c\" ]\nk = 1\n[[ d ]] # [e]\nl = 2\n",
	"e = \"\"\n f = ''\ng = \"\\\"\"\nh = \"a\\\\\"\ni = 1\n",
	"dt = 1979-05-27T07:32:00Z\nfl = 1.5e3\nhex = 0xff\n[tbl]\n  inner = { }\nz = true\n",
	"desc = \"\"\"\nline\nline \\\n   more\n\"\"\"\nk = 2\n",
	"x = {\n  a = 1,\n  b = 2,\n}\ny = 3\n",
}

// TestScanKeyLines checks that the scan finds the keys of toml's
// MetaData.Keys, in order, on the lines the prefix method finds.
func TestScanKeyLines(t *testing.T) {
	texts := append([]string(nil), scanSamples...)
	for _, n := range topologies.Names() {
		b, _ := topologies.Get(n)
		texts = append(texts, string(b))
	}
	for _, glob := range []string{"../experiments/*.toml", "../experiments/*/*.toml", "testdata/hostile/*.toml"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(b))
		}
	}
	for i, text := range texts {
		var m map[string]any
		md, err := toml.Decode(text, &m)
		if err != nil {
			continue // not valid TOML: the lines are not used
		}
		var lines []int32
		if _, ok := scanTOML(text, 1000, 1<<30, &lines); !ok {
			t.Fatalf("text %d: scan refused valid TOML", i)
		}
		if len(lines) != len(md.Keys()) {
			t.Errorf("text %d: scan found %d keys, toml %d:\n%s", i, len(lines), len(md.Keys()), text)
			continue
		}
		// The prefix method gives the line a multi-line array or inline
		// table starts on; the scan the line of the key itself.
		src := &source{data: text, md: md}
		src.index()
		textLines := strings.Split(text, "\n")
		for o, k := range md.Keys() {
			l := int(lines[o])
			if o > 0 && l < int(lines[o-1]) {
				t.Errorf("text %d: key %d (%s) on line %d, before the key before it", i, o, k, l)
			}
			if want := src.lineOf(o); l < want {
				t.Errorf("text %d: key %d (%s) on line %d, the prefix method says %d", i, o, k, l, want)
			}
			if last := k[len(k)-1]; !strings.Contains(textLines[l-1], last) {
				t.Errorf("text %d: key %d (%s) on line %d: %q", i, o, k, l, textLines[l-1])
			}
		}
	}
}

func TestScanLimits(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int
		msg  string // prefix; "" = accepted
	}{
		// maxDepth 32, maxKeys 100.
		{"x = " + strings.Repeat("{a=", 31) + "1" + strings.Repeat("}", 31) + "\n", 0, ""},
		{"x = " + strings.Repeat("{a=", 32) + "1" + strings.Repeat("}", 32) + "\n", 1, "nesting deeper than 32 levels"},
		{"x = " + strings.Repeat("[", 32) + strings.Repeat("]", 32) + "\n", 0, ""},
		{"\nx = " + strings.Repeat("[", 33) + strings.Repeat("]", 33) + "\n", 2, "nesting deeper than 32 levels"},
		{strings.Repeat("a.", 31) + "a = 1\n", 0, ""},
		{strings.Repeat("a.", 32) + "a = 1\n", 1, "nesting deeper than 32 levels"},
		{"[" + strings.Repeat("a.", 31) + "a]\n", 0, ""},
		{"[" + strings.Repeat("a.", 32) + "a]\n", 1, "a table header of more than 32 parts"},
		{"[" + strings.Repeat("a.", 20) + "a]\n" + strings.Repeat("b.", 10) + "b = 1\n", 0, ""},
		{"[" + strings.Repeat("a.", 20) + "a]\n" + strings.Repeat("b.", 11) + "b = 1\n", 2, "nesting deeper than 32 levels"},
		{"s = \"" + strings.Repeat("{[", 100) + "\"\n", 0, ""},
		{"# " + strings.Repeat("{[", 100) + "\n", 0, ""},
		{"s = '''\n" + strings.Repeat("[", 100) + "\n'''\n", 0, ""},
		{"x = 1\ny = \"a\x00\"\n", 2, "the file contains a NUL byte"},
		{"# \x00\n", 1, "the file contains a NUL byte"},
		{strings.Repeat("k = 1\n", 100), 0, ""},
		{strings.Repeat("k = 1\n", 101), 101, "more than 100 keys"},
		{strings.Repeat("[t]\n", 101), 101, "more than 100 keys"},
		{"x = [" + strings.Repeat("{a = 1},", 101) + "]\n", 1, "more than 100 keys"},
	} {
		se, ok := scanTOML(tc.text, 32, 100, nil)
		if tc.msg == "" {
			if !ok {
				t.Errorf("%.40q: refused: %d: %s", tc.text, se.line, se.msg)
			}
			continue
		}
		if ok || se.line != tc.line || !strings.HasPrefix(se.msg, tc.msg) {
			t.Errorf("%.40q: got %v %d: %s; want line %d: %s…", tc.text, ok, se.line, se.msg, tc.line, tc.msg)
		}
	}
}

// FuzzScan checks the scan against the parser: it must not panic, and on
// text the parser accepts within the limits it must count toml's keys.
func FuzzScan(f *testing.F) {
	for _, s := range scanSamples {
		f.Add(s)
	}
	f.Add("x = [[{a = [{}]}]]\n")
	f.Fuzz(func(t *testing.T, text string) {
		var lines []int32
		_, ok := scanTOML(text, MaxDepth, MaxKeys, &lines)
		if !ok || len(text) > 1<<16 {
			return
		}
		var m map[string]any
		md, err := toml.Decode(text, &m)
		if err != nil {
			return
		}
		if len(lines) != len(md.Keys()) {
			t.Fatalf("scan found %d keys, toml %d", len(lines), len(md.Keys()))
		}
	})
}
