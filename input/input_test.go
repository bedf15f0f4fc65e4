package input

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/tsim-dev/tsim/format"
)

// tree builds an experiment folder with files, a symbolic link escaping it
// and one staying inside, and a file outside it.
//
//	root/outside.csv
//	root/exp/x.toml, exp/lat.csv, exp/data/lat.csv
//	root/exp/escape.csv -> ../outside.csv
//	root/exp/inside.csv -> data/lat.csv
//	root/exp/dirlink -> ..
func tree(t *testing.T) (root, exp string) {
	t.Helper()
	root = t.TempDir()
	exp = filepath.Join(root, "exp")
	write := func(name, text string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("outside.csv", "1ms\nsecret line\n")
	write("exp/x.toml", "name = \"x\"\n")
	write("exp/lat.csv", "1ms\n")
	write("exp/data/lat.csv", "2ms\n")
	for link, target := range map[string]string{
		"exp/escape.csv": "../outside.csv",
		"exp/inside.csv": "data/lat.csv",
		"exp/dirlink":    "..",
		"exp/abslink":    filepath.Join(root, "outside.csv"),
		"exp/absinside":  filepath.Join(exp, "lat.csv"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
	}
	return root, exp
}

func TestReadFileConfined(t *testing.T) {
	root, exp := tree(t)
	r := NewReader(exp, Options{})
	for _, tc := range []struct {
		name string
		want string // content, or the error's prefix after "!"
	}{
		{"lat.csv", "1ms\n"},
		{"data/lat.csv", "2ms\n"},
		{"./data/../lat.csv", "1ms\n"},
		{"inside.csv", "2ms\n"},
		{"absinside", "1ms\n"},
		{"../outside.csv", "!../outside.csv: outside the experiment's folder " + exp + "/; files an experiment names must be inside it (--allow-outside permits others)"},
		{"../../etc/passwd", "!../../etc/passwd: outside the experiment's folder"},
		{"data/../../outside.csv", "!data/../../outside.csv: outside the experiment's folder"},
		{"/etc/shadow", "!/etc/shadow: an absolute path; files an experiment names must be inside its folder " + exp + "/ (--allow-outside permits others)"},
		{filepath.Join(root, "outside.csv"), "!" + filepath.Join(root, "outside.csv") + ": an absolute path"},
		{"escape.csv", "!escape.csv: a symbolic link that leads outside the experiment's folder " + exp + "/"},
		{"abslink", "!abslink: a symbolic link that leads outside"},
		{"dirlink/outside.csv", "!dirlink/outside.csv: a symbolic link that leads outside"},
		{"missing.csv", "!open " + filepath.Join(exp, "missing.csv") + ": no such file or directory"},
		{"data", "!" + filepath.Join(exp, "data") + ": a directory, not a file; only regular files are read"},
		{"", "!an empty file name"},
	} {
		b, err := r.ReadFile(tc.name)
		if want, isErr := strings.CutPrefix(tc.want, "!"); isErr {
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("ReadFile(%q) = %q, %v; want error %q…", tc.name, b, err, want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("ReadFile(%q): the error quotes the file: %v", tc.name, err)
			}
			continue
		}
		if err != nil || string(b) != tc.want {
			t.Errorf("ReadFile(%q) = %q, %v; want %q", tc.name, b, err, tc.want)
		}
	}

	// --allow-outside: anywhere, but still only regular files.
	r = NewReader(exp, Options{AllowOutside: true})
	for _, name := range []string{"../outside.csv", "escape.csv", "abslink", filepath.Join(root, "outside.csv"), "dirlink/outside.csv"} {
		if b, err := r.ReadFile(name); err != nil || string(b) != "1ms\nsecret line\n" {
			t.Errorf("AllowOutside: ReadFile(%q) = %q, %v", name, b, err)
		}
	}
	if runtime.GOOS != "windows" {
		if _, err := r.ReadFile("/dev/zero"); err == nil || err.Error() != "/dev/zero: a character device, not a regular file; only regular files are read" {
			t.Errorf("AllowOutside: /dev/zero: %v", err)
		}
	}
}

func TestSpecialFilesRefusedBeforeReading(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /dev or FIFOs")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: a character device, not a regular file; only regular files are read"},
		{"/dev/urandom", "/dev/urandom: a character device, not a regular file; only regular files are read"},
		{"/dev/null", "/dev/null: a character device, not a regular file; only regular files are read"},
		{fifo, fifo + ": a named pipe (FIFO), not a regular file; only regular files are read"},
		{dir, dir + ": a directory, not a file; only regular files are read"},
	} {
		// A FIFO without a writer would block an open: this returning at
		// all is half the test.
		_, _, err := Open(tc.path, Options{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("Open(%s): %v; want %s", tc.path, err, tc.want)
		}
	}
	// Named by an experiment, with --allow-outside (inside, a device or
	// FIFO is refused the same way).
	r := NewReader(dir, Options{})
	if _, err := r.ReadFile("fifo.toml"); err == nil || !strings.Contains(err.Error(), "a named pipe (FIFO), not a regular file") {
		t.Errorf("ReadFile(fifo): %v", err)
	}
}

func TestSizeLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# filler\n"), 300_000), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := Open(big, Options{})
	if want := big + ": file is 2.6 MiB; experiment files may be at most 1 MiB"; err == nil || err.Error() != want {
		t.Errorf("Open(big): %v; want %s", err, want)
	}
	for _, n := range []string{"a.csv", "b.csv", "c.csv"} {
		if err := os.WriteFile(filepath.Join(dir, n), bytes.Repeat([]byte("1ms\n"), 1000), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := NewReader(dir, Options{MaxFileBytes: 3 << 10, MaxTotalBytes: 8000})
	if _, err := r.ReadFile("a.csv"); err == nil || err.Error() != filepath.Join(dir, "a.csv")+": file is 4.0 KiB; files an experiment names may be at most 3 KiB" {
		t.Errorf("MaxFileBytes: %v", err)
	}
	r = NewReader(dir, Options{MaxTotalBytes: 8 << 10})
	for i, n := range []string{"a.csv", "b.csv", "a.csv", "data/../b.csv"} {
		if _, err := r.ReadFile(n); err != nil {
			t.Errorf("read %d (%s): %v", i, n, err) // a file read again costs nothing
		}
	}
	if _, err := r.ReadFile("c.csv"); err == nil || !strings.HasSuffix(err.Error(), "c.csv: with this file the experiment's files would total 11.8 KiB; together they may be at most 8 KiB") {
		t.Errorf("MaxTotalBytes: %v", err)
	}
}

// TestReadBounded: the limit holds for the bytes read, not for the size
// Stat reported, as for a file that grows while it is read. Linux's /proc
// files are regular files of size 0 with content.
func TestReadBounded(t *testing.T) {
	const p = "/proc/self/maps"
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		t.Skip("no /proc/self/maps of size 0")
	}
	if _, err := ReadRegular(p, 50, "test files"); err == nil || err.Error() != p+": file is more than 50 bytes; test files may be at most 50 bytes" {
		t.Errorf("ReadRegular(%s, 50): %v", p, err)
	}
}

// TestOpenLoads: the reader Open returns serves format.LoadExperiment, and
// what a shared experiment names cannot reach out of its folder.
func TestOpenLoads(t *testing.T) {
	_, exp := tree(t)
	write := func(name, text string) string {
		p := filepath.Join(exp, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("topo.toml", "[[tier]]\nname = \"a\"\n  [[tier.step]]\n  wait = \"empirical(data/lat.csv)\"\n")
	good := write("good.toml", "topology = \"topo.toml\"\n[load]\nusers = 1\n")
	data, readFile, err := Open(good, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := format.LoadExperiment(good, data, readFile); err != nil {
		t.Errorf("good.toml: %v", err)
	}

	bad := write("bad.toml", "[load]\nusers = 1\n[[tier]]\nname = \"a\"\n  [[tier.step]]\n  wait = \"empirical(../outside.csv)\"\n  [[tier.step]]\n  wait = \"empirical(escape.csv)\"\n")
	data, readFile, err = Open(bad, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = format.LoadExperiment(bad, data, readFile)
	if err == nil || strings.Contains(err.Error(), "secret") ||
		!strings.Contains(err.Error(), "bad.toml:6: tier.a.step.1.wait: bad distribution \"empirical(../outside.csv)\": reading ../outside.csv: ../outside.csv: outside the experiment's folder") ||
		!strings.Contains(err.Error(), "bad.toml:8: tier.a.step.2.wait: bad distribution \"empirical(escape.csv)\": reading escape.csv: escape.csv: a symbolic link that leads outside") {
		t.Errorf("bad.toml:\n%v", err)
	}
	// With AllowOutside the file is read, and its bad line is named, not
	// quoted.
	data, readFile, _ = Open(bad, Options{AllowOutside: true})
	_, err = format.LoadExperiment(bad, data, readFile)
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "outside.csv:2: bad sample: not a span") {
		t.Errorf("bad.toml, allowed outside:\n%v", err)
	}
}

// TestRepositoryExperiments: every experiment of the repository opens and
// loads under the default Options.
func TestRepositoryExperiments(t *testing.T) {
	files, _ := filepath.Glob("../experiments/*.toml")
	more, _ := filepath.Glob("../experiments/*/*.toml")
	files = append(files, more...)
	if len(files) == 0 {
		t.Skip("no experiments")
	}
	for _, p := range files {
		data, readFile, err := Open(p, Options{})
		if err == nil {
			_, err = format.LoadExperiment(p, data, readFile)
		}
		if err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
