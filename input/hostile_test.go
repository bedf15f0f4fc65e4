package input

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/format"
)

var update = flag.Bool("update", false, "rewrite testdata/hostile/*.want from what the loader says")

// The hostile corpus: experiment files that once exhausted memory or time,
// or read and printed files outside their folder. Each is opened as the
// command line opens one (Open, then format.LoadExperiment) in a folder
// that also holds the files they point at, and must end with exactly the
// error in its .want file ("ok" when it must load), with $DIR for the
// folder. Refresh with go test ./input -run Hostile -update, and only
// commit a .want diff you understand.
//
// Large cases are generated (hostileGenerated) rather than kept as files.

// secrets appear in files the corpus points at; no message may show them.
var secrets = []string{"hunter2", "wJalrXUtnFEMI", "root:x:0:0"}

// hostileFolder builds root/outside.* (outside the experiment's folder)
// and root/exp/ with the files the corpus names; it returns root/exp.
func hostileFolder(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	exp := filepath.Join(root, "exp")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(exp, "data"), 0o755))
	for name, text := range map[string]string{
		"outside.csv":      "1ms\nroot:x:0:0:root:/root:/bin/bash\n",
		"outside.toml":     "[[tier]]\nname = \"a\"\n  [[tier.step]]\n  cpu = \"1ms\"\n",
		"exp/lat.csv":      "1ms\n2ms\n",
		"exp/secret.csv":   "latency\n1ms\npassword=hunter2\n",
		"exp/env.toml":     "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\n",
		"exp/data/lat.csv": "3ms\n",
	} {
		must(os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	f, err := os.Create(filepath.Join(exp, "big.csv"))
	must(err)
	must(f.Truncate(65 << 20)) // sparse: refused by its size, never read
	must(f.Close())
	if err := os.Symlink("../outside.csv", filepath.Join(exp, "escape.csv")); err != nil {
		t.Skipf("no symbolic links: %v", err)
	}
	must(os.Symlink("..", filepath.Join(exp, "up")))
	if runtime.GOOS != "windows" {
		must(syscall.Mkfifo(filepath.Join(exp, "fifo.csv"), 0o644))
	}
	files, err := filepath.Glob("testdata/hostile/*.toml")
	must(err)
	for _, p := range files {
		b, err := os.ReadFile(p)
		must(err)
		must(os.WriteFile(filepath.Join(exp, filepath.Base(p)), b, 0o644))
	}
	return exp
}

// hostileGenerated are the cases too large to keep as files.
var hostileGenerated = []struct {
	name string
	gen  func() string // the file; "" with size: a sparse file of size bytes
	size int64
	want string
}{
	{"nested-inline-40k", func() string {
		return "x = " + strings.Repeat("{a=", 10000) + "1" + strings.Repeat("}", 10000) + "\n"
	}, 0, "$DIR/nested-inline-40k.toml:1: nesting deeper than 32 levels (tables, arrays and dotted keys); an experiment needs at most a few"},
	{"nested-array-40k", func() string {
		return "[load]\nusers = 1\nx = " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n"
	}, 0, "$DIR/nested-array-40k.toml:3: nesting deeper than 32 levels (tables, arrays and dotted keys); an experiment needs at most a few"},
	{"dotted-key-20k", func() string { return strings.Repeat("a.", 10000) + "a = 1\n" },
		0, "$DIR/dotted-key-20k.toml:1: nesting deeper than 32 levels (tables, arrays and dotted keys); an experiment needs at most a few"},
	{"table-header-60k", func() string { return "[" + strings.Repeat("a.", 30000) + "a]\n" },
		0, "$DIR/table-header-60k.toml:1: a table header of more than 32 parts; an experiment needs at most a few"},
	{"keys-60000", func() string {
		var b strings.Builder
		for i := range 60000 {
			fmt.Fprintf(&b, "k%d = 1\n", i)
		}
		return b.String()
	}, 0, "$DIR/keys-60000.toml:50001: more than 50000 keys and tables; an experiment needs far fewer"},
	{"file-41mb", nil, 41_000_000, "$DIR/file-41mb.toml: file is 39.2 MiB; experiment files may be at most 1 MiB"},
	{"description-100k", func() string {
		return "description = \"" + strings.Repeat("a story ", 12800) + "\"\n[load]\nusers = 1\n" + tierStep(`cpu = "1ms"`)
	}, 0, "$DIR/description-100k.toml:1: description: is 100 KiB long; at most 8 KiB"},
	{"name-10000", func() string {
		return "[load]\nusers = 1\n[[tier]]\nname = \"" + strings.Repeat("n", 10000) + "\"\n"
	}, 0, "$DIR/name-10000.toml:4: tier[1].name: is 10000 characters long; names may be at most 64"},
	{"experiment-name-10000", func() string {
		return "name = \"" + strings.Repeat("n", 10000) + "\"\n[load]\nusers = 1\n" + tierStep(`cpu = "1ms"`)
	}, 0, "$DIR/experiment-name-10000.toml:1: name: is 10000 characters long; at most 64"},
	{"tiers-3000", func() string {
		var b strings.Builder
		b.WriteString("[load]\nusers = 1\n")
		for i := range 3000 {
			fmt.Fprintf(&b, "[[tier]]\nname = \"t%d\"\n  [[tier.step]]\n  cpu = \"1ms\"\n", i)
		}
		return b.String()
	}, 0, "$DIR/tiers-3000.toml:3: tier: 3000 tiers; at most 1000"},
	{"long-key-100k", func() string {
		return "[load]\nusers = 1\n" + strings.Repeat("k", 100_000) + " = 1\n" + tierStep(`cpu = "1ms"`)
	},
		0, "$DIR/long-key-100k.toml:3: load." + strings.Repeat("k", 250) + "…: unknown key (allowed here: …)"},
	{"long-value-500k", func() string {
		return "[load]\nusers = 1\n[[tier]]\nname = \"a\"\ncores = \"" + strings.Repeat("8", 500_000) + "\"\n"
	}, 0, "$DIR/long-value-500k.toml:5: tier.a.cores: want an integer, got string \"" + strings.Repeat("8", 63) + "…\" (500000 bytes)"},
	{"unknown-keys-40000", func() string {
		var b strings.Builder
		b.WriteString("[load]\nusers = 1\n[[tier]]\nname = \"a\"\n")
		for i := range 40000 {
			fmt.Fprintf(&b, "k%05d = 1\n", i)
		}
		return b.String()
	}, 0, unknownKeys40000()},
	{"variants-10000-tiers-1000", func() string {
		var b strings.Builder
		b.WriteString("[load]\nusers = 1\n")
		for i := range 1000 {
			fmt.Fprintf(&b, "[[tier]]\nname = \"t%d\"\n  [[tier.step]]\n  cpu = \"1ms\"\n", i)
		}
		for i := range 10000 {
			fmt.Fprintf(&b, "[[variant]]\nname = \"v%d\"\nset = { \"tier.t%d.cores\" = 2 }\n", i, i%1000)
		}
		return b.String()
	}, 0, "ok"},
	{"empirical-1000-steps", func() string {
		var b strings.Builder
		b.WriteString("[load]\nusers = 1\n[[tier]]\nname = \"a\"\n")
		for range 1000 {
			b.WriteString("  [[tier.step]]\n  wait = \"empirical(lat.csv)\"\n")
		}
		return b.String()
	}, 0, "ok"},
	{"binary-garbage", func() string {
		b := make([]byte, 4096)
		x := uint32(1)
		for i := range b {
			x = x*1664525 + 1013904223
			b[i] = byte(x >> 24)
		}
		return string(b)
	}, 0, "$DIR/binary-garbage.toml:1: the file contains a NUL byte; a TOML file is text"},
}

var allowedList = regexp.MustCompile(`\(allowed here: [^)]*\)`)

func tierStep(step string) string {
	return "[[tier]]\nname = \"a\"\n  [[tier.step]]\n  " + step + "\n"
}

func unknownKeys40000() string {
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "$DIR/unknown-keys-40000.toml:%d: tier.a.k%05d: unknown key (allowed here: …)\n", 5+i, i)
	}
	b.WriteString("$DIR/unknown-keys-40000.toml: and 39980 more errors")
	return b.String()
}

// openAndLoad is what the command line does with a file.
func openAndLoad(path string, opt Options) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	data, readFile, err := Open(path, opt)
	if err != nil {
		return err
	}
	x, err := format.LoadExperiment(path, data, readFile)
	if err != nil {
		var le format.LoadErrors
		if !errors.As(err, &le) {
			return fmt.Errorf("not LoadErrors: %T %v", err, err)
		}
		return err
	}
	for i := range min(x.NumScenarios(), 3) {
		if _, err := x.Scenario(i); err != nil {
			return err
		}
	}
	return nil
}

func TestHostile(t *testing.T) {
	exp := hostileFolder(t)
	check := func(name string, got error, want string, took time.Duration) {
		t.Helper()
		text := "ok"
		if got != nil {
			text = strings.ReplaceAll(got.Error(), exp, "$DIR")
		}
		if strings.Contains(want, "(allowed here: …)") { // the list follows the schema
			text = allowedList.ReplaceAllString(text, "(allowed here: …)")
		}
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s: the message shows a file's content (%q):\n%s", name, s, text)
			}
		}
		if strings.HasPrefix(text, "panic") {
			t.Errorf("%s: %s", name, text)
		}
		t.Logf("%s: %v", name, took) // each well under a second; -v shows
		if text != want {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", name, text, want)
		}
	}
	files, _ := filepath.Glob("testdata/hostile/*.toml")
	for _, p := range files {
		name := strings.TrimSuffix(filepath.Base(p), ".toml")
		if runtime.GOOS == "windows" && name == "fifo" {
			continue
		}
		start := time.Now()
		err := openAndLoad(filepath.Join(exp, name+".toml"), Options{})
		took := time.Since(start)
		wantFile := strings.TrimSuffix(p, ".toml") + ".want"
		if *update {
			text := "ok"
			if err != nil {
				text = strings.ReplaceAll(err.Error(), exp, "$DIR")
			}
			if e := os.WriteFile(wantFile, []byte(text+"\n"), 0o644); e != nil {
				t.Fatal(e)
			}
		}
		want, e := os.ReadFile(wantFile)
		if e != nil {
			t.Errorf("%s: %v (run with -update)", name, e)
			continue
		}
		check(name, err, strings.TrimSuffix(string(want), "\n"), took)
	}
	for _, g := range hostileGenerated {
		p := filepath.Join(exp, g.name+".toml")
		if g.gen != nil {
			if err := os.WriteFile(p, []byte(g.gen()), 0o644); err != nil {
				t.Fatal(err)
			}
		} else {
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			f.Truncate(g.size)
			f.Close()
		}
		start := time.Now()
		err := openAndLoad(p, Options{})
		check(g.name, err, g.want, time.Since(start))
	}
}

// TestHostileAllowOutside: --allow-outside reads outside the folder, but
// still refuses devices and still does not print what it read.
func TestHostileAllowOutside(t *testing.T) {
	exp := hostileFolder(t)
	for _, tc := range []struct{ name, want string }{
		{"traversal-hidden", "$DIR/traversal-hidden.toml:6: tier.a.step.1.wait: bad distribution \"empirical(data/../../outside.csv)\": data/../../outside.csv:2: bad sample: not a span (write a number of seconds or a Go duration such as 20ms or 1.5s)"},
		{"symlink", "$DIR/symlink.toml:7: tier.a.step.1.wait: bad distribution \"empirical(escape.csv)\": escape.csv:2: bad sample: not a span (write a number of seconds or a Go duration such as 20ms or 1.5s)"},
		{"topology-traversal", "ok"},
	} {
		err := openAndLoad(filepath.Join(exp, tc.name+".toml"), Options{AllowOutside: true})
		text := "ok"
		if err != nil {
			text = strings.ReplaceAll(err.Error(), exp, "$DIR")
		}
		if text != tc.want {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", tc.name, text, tc.want)
		}
	}
	if runtime.GOOS != "windows" {
		err := openAndLoad(filepath.Join(exp, "dev-zero.toml"), Options{AllowOutside: true})
		want := "$DIR/dev-zero.toml:7: tier.a.step.1.wait: bad distribution \"empirical(/dev/zero)\": reading /dev/zero: /dev/zero: a character device, not a regular file; only regular files are read"
		if err == nil || strings.ReplaceAll(err.Error(), exp, "$DIR") != want {
			t.Errorf("dev-zero, allowed outside: %v", err)
		}
	}
}
