package format

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// loadErr loads a file and returns its error text ("" when it loads).
func loadErr(t *testing.T, file string, readFile func(string) ([]byte, error)) string {
	t.Helper()
	_, err := LoadExperiment("x.toml", []byte(file), readFile)
	if err == nil {
		return ""
	}
	var le LoadErrors
	if !errors.As(err, &le) {
		t.Fatalf("error is %T, want LoadErrors", err)
	}
	return err.Error()
}

const oneTier = "[load]\nusers = 1\n[[tier]]\nname = \"a\"\n  [[tier.step]]\n  cpu = \"1ms\"\n"

// TestLimitsWithoutInput: LoadExperiment enforces the size, nesting and
// key limits on the data it is given, for callers of the library that do
// not go through package input.
func TestLimitsWithoutInput(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"size", oneTier + strings.Repeat("#", MaxExperimentBytes), "x.toml: file is 1.1 MiB; experiment files may be at most 1 MiB"},
		{"depth", "x = " + strings.Repeat("{a=", 40) + strings.Repeat("}", 40) + "\n", "x.toml:1: nesting deeper than 32 levels (tables, arrays and dotted keys); an experiment needs at most a few"},
		{"dotted", oneTier + strings.Repeat("a.", 40) + "a = 1\n", "x.toml:7: nesting deeper than 32 levels (tables, arrays and dotted keys); an experiment needs at most a few"},
		{"keys", strings.Repeat("[[variant]]\n", MaxKeys+1), "x.toml:50001: more than 50000 keys and tables; an experiment needs far fewer"},
		{"nul", oneTier + "# \x00\n", "x.toml:7: the file contains a NUL byte; a TOML file is text"},
		{"3000 tiers", "[load]\nusers = 1\n" + strings.Repeat("[[tier]]\nname = \"t\"\n", 3000), "x.toml:3: tier: 3000 tiers; at most 1000"},
		{"all tiers broken", "[load]\nusers = 1\n[[tier]]\ncores = 2\n", "x.toml:3: tier[1]: needs a name (name = \"web\")"},
		{"tier name", "[load]\nusers = 1\n[[tier]]\nname = \"" + strings.Repeat("t", 10000) + "\"\n", "x.toml:4: tier[1].name: is 10000 characters long; names may be at most 64"},
		{"tier name chars", "[load]\nusers = 1\n[[tier]]\nname = \"a b\"\n", "x.toml:4: tier[1].name: must be a name of letters, digits, '_' and '-', got \"a b\""},
		{"name", "name = \"" + strings.Repeat("é", 65) + "\"\n" + oneTier, "x.toml:1: name: is 65 characters long; at most 64"},
		{"description", "description = \"" + strings.Repeat("d", MaxDescriptionLen+1) + "\"\n" + oneTier, "x.toml:1: description: is 8.1 KiB long; at most 8 KiB"},
		{"description newline ok", "description = \"\"\"\na\n\tb\n\"\"\"\n" + oneTier, ""},
		{"variant name", oneTier + "[[variant]]\nname = \"" + strings.Repeat("v", 100) + "\"\n", "x.toml:8: variant[1].name: is 100 characters long; at most 64"},
		{"variant description", oneTier + "[[variant]]\nname = \"v\"\ndescription = \"bell \\u0007\"\n", "x.toml:9: variant[1].description: holds the control character U+0007 at byte 5; names and descriptions are plain text"},
		{"seed max int", "seed = 9223372036854775807\n" + oneTier, ""},
		{"seed string", "seed = \"18446744073709551615\"\n" + oneTier, ""},
		{"seed string over", "seed = \"18446744073709551616\"\n" + oneTier, "x.toml:1: seed: must be ≤ 18446744073709551615, got 18446744073709551616"},
		{"seed string bad", "seed = \"0x10\"\n" + oneTier, "x.toml:1: seed: want a whole number from 0 to 18446744073709551615, got \"0x10\""},
		{"seed negative", "seed = -5\n" + oneTier, "x.toml:1: seed: must be ≥ 0, got -5"},
		{"seed TOML overflow", "seed = 18446744073709551615\n" + oneTier, "x.toml:1: TOML syntax: 18446744073709551615 is out of range for int64 (after key \"seed\"); write a seed above 9223372036854775807 as a string, such as seed = \"18446744073709551615\""},
		{"users 0", strings.Replace(oneTier, "users = 1", "users = 0", 1), "x.toml:2: load.users: must be > 0, got 0"},
		{"users -1", strings.Replace(oneTier, "users = 1", "users = -1", 1), "x.toml:2: load.users: must be > 0, got -1"},
		{"rate 0", strings.Replace(oneTier, "users = 1", "rate = 0", 1), "x.toml:2: load.rate: must be > 0, got 0"},
		{"replications", "replications = 10001\n" + oneTier, "x.toml:1: replications: must be ≤ 10000 (more is not a plausible setting), got 10001"},
		{"long enum", strings.Replace(oneTier, "name = \"a\"", "name = \"a\"\npreset = \""+strings.Repeat("p", 1000)+"\"", 1), "x.toml:5: tier.a.preset: unknown value \"" + strings.Repeat("p", 63) + "…\" (1000 bytes) (allowed: …"},
		{"long key path", oneTier + "[[variant]]\nname = \"v\"\nset = { \"" + strings.Repeat("k", 300) + "\" = 1 }\n", "x.toml:9: variant \"v\".set: a key path of 300 bytes; key paths are at most 256 bytes"},
		{"empty topology", "topology = \"\"\n" + oneTier, "x.toml:1: topology: is empty; give a topology name (…"},
	} {
		got := loadErr(t, tc.file, nil)
		want, prefix := strings.CutSuffix(tc.want, "…")
		if got != want && !(prefix && strings.HasPrefix(got, want)) {
			t.Errorf("%s:\ngot:  %s\nwant: %s", tc.name, got, tc.want)
		}
	}
}

// TestNamedFileLimits: the data a ReadFile returns is bounded too, and a
// file named many times is read once.
func TestNamedFileLimits(t *testing.T) {
	reads := map[string]int{}
	files := map[string][]byte{
		"lat.csv":    []byte("1ms\n2ms\n"),
		"huge.csv":   bytes.Repeat([]byte("1\n"), MaxDataBytes/2+1),
		"topo.toml":  []byte(strings.Repeat("# x\n", MaxExperimentBytes/4+1)),
		"secret.csv": []byte("1ms\npassword=hunter2\n"),
	}
	read := func(name string) ([]byte, error) {
		reads[name]++
		if b, ok := files[name]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("no file %s", name)
	}
	var b strings.Builder
	b.WriteString("[load]\nusers = 1\n[[tier]]\nname = \"a\"\n")
	for range 500 {
		b.WriteString("  [[tier.step]]\n  wait = \"empirical(lat.csv)\"\n")
	}
	if got := loadErr(t, b.String(), read); got != "" || reads["lat.csv"] != 1 {
		t.Errorf("500 mentions: %d reads, %s", reads["lat.csv"], got)
	}
	for _, tc := range []struct{ file, want string }{
		{strings.Replace(oneTier, `cpu = "1ms"`, `wait = "empirical(huge.csv)"`, 1),
			`x.toml:6: tier.a.step.1.wait: bad distribution "empirical(huge.csv)": reading huge.csv: file is 64.1 MiB; data files may be at most 64 MiB`},
		{"topology = \"topo.toml\"\n[load]\nusers = 1\n",
			`x.toml:1: topology: cannot read "topo.toml": file is 1.1 MiB; topology files may be at most 1 MiB`},
		{strings.Replace(oneTier, `cpu = "1ms"`, `wait = "empirical(secret.csv)"`, 1),
			`x.toml:6: tier.a.step.1.wait: bad distribution "empirical(secret.csv)": secret.csv:2: bad sample: not a span (write a number of seconds or a Go duration such as 20ms or 1.5s)`},
	} {
		if got := loadErr(t, tc.file, read); got != tc.want {
			t.Errorf("got:  %s\nwant: %s", got, tc.want)
		}
	}

	// MaxTotalBytes: three files of 50 MiB, each allowed alone (and bad
	// on line 2, so that parsing them is quick).
	fifty := bytes.Repeat([]byte("x\n"), 25<<20)
	for _, n := range []string{"a.csv", "b.csv", "c.csv"} {
		files[n] = fifty
	}
	file := "[load]\nusers = 1\n[[tier]]\nname = \"a\"\n" +
		"  [[tier.step]]\n  wait = \"empirical(a.csv)\"\n" +
		"  [[tier.step]]\n  wait = \"empirical(b.csv)\"\n" +
		"  [[tier.step]]\n  wait = \"empirical(c.csv)\"\n"
	want := `x.toml:6: tier.a.step.1.wait: bad distribution "empirical(a.csv)": a.csv:2: bad sample: not a span (write a number of seconds or a Go duration such as 20ms or 1.5s)
x.toml:8: tier.a.step.2.wait: bad distribution "empirical(b.csv)": b.csv:2: bad sample: not a span (write a number of seconds or a Go duration such as 20ms or 1.5s)
x.toml:10: tier.a.step.3.wait: bad distribution "empirical(c.csv)": reading c.csv: with this file the experiment's files would total 150 MiB; together they may be at most 128 MiB`
	if got := loadErr(t, file, read); got != want {
		t.Errorf("total:\ngot:  %s\nwant: %s", got, want)
	}
}

func TestParseSeed(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		err  string
	}{
		{"0", 0, ""},
		{"18446744073709551615", math.MaxUint64, ""},
		{"18446744073709551616", 0, "must be ≤ 18446744073709551615, got 18446744073709551616"},
		{"-1", 0, "must be ≥ 0, got -1"},
		{"x", 0, `want a whole number from 0 to 18446744073709551615, got "x"`},
		{"", 0, `want a whole number from 0 to 18446744073709551615, got ""`},
	} {
		got, err := ParseSeed(tc.in)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("ParseSeed(%q) = %d, %v; want %d, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestFlagChecks(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{CheckReplications(1), ""},
		{CheckReplications(MaxReplications), ""},
		{CheckReplications(10001), "must be between 1 and 10000, got 10001"},
		{CheckReplications(0), "must be between 1 and 10000, got 0"},
		{CheckDuration(time.Minute), ""},
		{CheckDuration(MaxDuration), ""},
		{CheckDuration(1000 * time.Hour), "must be ≤ 720h (more is not a plausible setting), got 1000h0m0s"},
		{CheckDuration(0), "must be > 0, got 0s"},
	} {
		got := ""
		if tc.err != nil {
			got = tc.err.Error()
		}
		if got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1536: "1.5 KiB",
		1 << 20: "1 MiB", 1<<20 + 1: "1.1 MiB", 41_000_000: "39.2 MiB", 150 << 20: "150 MiB", 3 << 30: "3 GiB",
	} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestAbbreviate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"  a\n\tstory \r\n told  ", 80, "a story told"},
		{"clear \x1b[2J screen", 80, "clear [2J screen"},
		{"ééééé", 3, "éé…"},
		{strings.Repeat("word ", 100), 12, "word word w…"},
		{"abc", 0, ""},
	} {
		if got := Abbreviate(tc.in, tc.max); got != tc.want {
			t.Errorf("Abbreviate(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// TestParseValueTooDeep: a --set value nested beyond MaxDepth stays a
// string instead of reaching the parser.
func TestParseValueTooDeep(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	if v, ok := ParseValue(deep).(string); !ok || v != deep {
		t.Errorf("ParseValue(deep) = %T", ParseValue(deep))
	}
	if v, ok := ParseValue("[[1]]").([]any); !ok || len(v) != 1 {
		t.Errorf("ParseValue([[1]]) = %#v", ParseValue("[[1]]"))
	}
}
