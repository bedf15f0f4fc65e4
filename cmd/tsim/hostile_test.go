//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The hostile corpus: inputs that once crashed, hung, wrote where they
// should not or printed files back, for every command, as TestHostileInputs
// has them for tsim run. Each case runs Main in a sandbox and asserts:
//
//   - no crash: no "internal error", no runtime dump;
//   - the exit status it wants, and, when given, words of its message;
//   - nothing written outside the sandbox's out folder, and nothing in the
//     sandbox that is not a regular file (a FIFO, a device, a symbolic link)
//     replaced or changed, even inside out;
//   - at most a few hundred bytes of any input printed back (inputs are
//     filled with a marker, and no secret a link points at is printed);
//   - no hang: a case that has not returned in hostileTimeout is
//     cancelled, and fails.
//
// A case that needs root (a device node) skips when not run as root.

// filler is the marker hostile inputs are made of: a long run of it in
// the output is input printed back.
const filler = "QZXJ"

// maxEcho is the longest run of filler (in bytes) a message may quote.
const maxEcho = 300

// secret is in the file a planted link points at; no output may show it.
const secret = "root:x:0:0:hunter2"

// hostileTimeout is how long a case may take before it counts as hung.
const hostileTimeout = 60 * time.Second

// sandbox is one case's folder: in/ holds the inputs, out/ is the only
// place a command may write, outside/ what planted links point at.
type sandbox struct {
	root, in, out, outside string
	root0                  bool // running as root: device nodes can be made
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	r := t.TempDir()
	s := &sandbox{root: r, in: filepath.Join(r, "in"), out: filepath.Join(r, "out"), outside: filepath.Join(r, "outside")}
	for _, d := range []string{s.in, s.out, s.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.write(t, s.outside, "secret.txt", secret+"\nline two\n")
	s.write(t, s.outside, "victim.toml", "keep me\n")
	if err := syscall.Mkfifo(filepath.Join(s.in, "fifo"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.Symlink(filepath.Join(s.outside, "secret.txt"), filepath.Join(s.in, "secret-link")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	os.Symlink("/dev/zero", filepath.Join(s.in, "zero-link"))
	// /dev/null's numbers: what tsim config -o /dev/null would destroy.
	s.root0 = syscall.Mknod(filepath.Join(s.out, "null"), syscall.S_IFCHR|0o666, 1<<8|3) == nil
	syscall.Mkfifo(filepath.Join(s.out, "fifo"), 0o644)
	os.Symlink(filepath.Join(s.outside, "victim.toml"), filepath.Join(s.out, "link.toml"))
	return s
}

func (s *sandbox) write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// entry is what a snapshot keeps of a path.
type entry struct {
	mode    fs.FileMode
	size    int64
	mtime   time.Time
	ino     uint64
	target  string // a link's
	content string // a small regular file's
}

// snapshot records every path under root.
func snapshot(t *testing.T, root string) map[string]entry {
	t.Helper()
	m := map[string]entry{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		st, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		e := entry{mode: st.Mode(), size: st.Size(), mtime: st.ModTime()}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			e.ino = sys.Ino
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			e.target, _ = os.Readlink(p)
		}
		if st.Mode().IsRegular() && st.Size() < 4096 {
			b, _ := os.ReadFile(p)
			e.content = string(b)
		}
		m[p] = e
		return nil
	})
	return m
}

// hostileCase is one hostile command line.
type hostileCase struct {
	name   string
	setup  func(t *testing.T, s *sandbox) []string // the arguments
	status int
	want   string // in stderr, when not ""
	root   bool   // needs root (a device node)
}

// runHostile runs one case and checks everything the corpus promises.
func runHostile(t *testing.T, tc hostileCase) {
	s := newSandbox(t)
	if tc.root && !s.root0 {
		t.Skip("needs root to make a device node")
	}
	args := tc.setup(t, s)
	before := snapshot(t, s.root)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	start := time.Now()
	go func() { done <- Main(ctx, args, &stdout, &stderr) }()
	var status int
	select {
	case status = <-done:
	case <-time.After(hostileTimeout):
		cancel()
		select {
		case status = <-done:
			t.Errorf("%v: still running after %v (stopped when cancelled)", args, hostileTimeout)
		case <-time.After(2 * time.Second):
			t.Fatalf("%v: hangs, and ignores cancellation", args)
		}
	}
	took := time.Since(start)
	out, errs := stdout.String(), stderr.String()
	both := out + errs
	short := func(s string) string {
		if len(s) > 600 {
			return s[:600] + "…"
		}
		return s
	}
	if strings.Contains(both, "internal error") || strings.Contains(both, "goroutine ") || strings.Contains(both, "panic:") {
		t.Errorf("%v: crashed: %s", args, short(errs))
	}
	if status != tc.status {
		t.Errorf("%v: status %d, want %d; stderr %s", args, status, tc.status, short(errs))
	}
	if tc.want != "" && !strings.Contains(errs, tc.want) {
		t.Errorf("%v: stderr lacks %q: %s", args, tc.want, short(errs))
	}
	if n := longestRun(both, filler); n > maxEcho {
		t.Errorf("%v: printed %d bytes of its input back (at most %d)", args, n, maxEcho)
	}
	if strings.Contains(both, secret) || strings.Contains(both, "hunter2") {
		t.Errorf("%v: printed the secret a link points at", args)
	}
	if len(both) > 64<<10 {
		t.Errorf("%v: printed %d bytes", args, len(both))
	}
	after := snapshot(t, s.root)
	for p, a := range after {
		b, had := before[p]
		inOut := p == s.out || strings.HasPrefix(p, s.out+string(filepath.Separator))
		switch {
		case !had && !inOut:
			t.Errorf("%v: created %s, outside the output folder", args, p)
		case had && !b.mode.IsRegular() && !b.mode.IsDir() && (a.mode != b.mode || a.ino != b.ino || a.target != b.target):
			t.Errorf("%v: replaced %s (%v) with %v", args, p, b.mode, a.mode)
		case had && !inOut && !b.mode.IsDir() && (a.mode != b.mode || a.size != b.size || !a.mtime.Equal(b.mtime) || a.content != b.content):
			t.Errorf("%v: changed %s, outside the output folder", args, p)
		}
	}
	for p, b := range before {
		inOut := strings.HasPrefix(p, s.out+string(filepath.Separator))
		if _, ok := after[p]; !ok && (!inOut || !b.mode.IsRegular() && !b.mode.IsDir()) {
			t.Errorf("%v: removed %s", args, p)
		}
	}
	t.Logf("%v: status %d in %v", args, status, took.Round(time.Millisecond))
}

// longestRun is the length of the longest run of repetitions of unit in s.
func longestRun(s, unit string) int {
	best := 0
	for _, m := range regexp.MustCompile("(?:"+regexp.QuoteMeta(unit)+")+").FindAllStringIndex(s, -1) {
		best = max(best, m[1]-m[0])
	}
	return best
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// fill is n bytes of filler.
func fill(n int) string { return strings.Repeat(filler, n/len(filler)) }

// valid writes small (the two-variant experiment of main_test.go) into
// in/small.toml.
func valid(t *testing.T, s *sandbox) string { return s.write(t, s.in, "small.toml", small) }

// hostileFiles are the experiment-like inputs every command that reads one
// is tried with: the file argument, and what it says.
var hostileFiles = []struct {
	name string
	path func(t *testing.T, s *sandbox) string
	want string
}{
	{"/dev/zero", func(*testing.T, *sandbox) string { return "/dev/zero" }, "not a regular file"},
	{"a link to /dev/zero", func(_ *testing.T, s *sandbox) string { return filepath.Join(s.in, "zero-link") }, "not a regular file"},
	{"a FIFO", func(_ *testing.T, s *sandbox) string { return filepath.Join(s.in, "fifo") }, "named pipe"},
	{"a directory", func(_ *testing.T, s *sandbox) string { return s.in }, "directory"},
	{"missing", func(_ *testing.T, s *sandbox) string { return filepath.Join(s.in, "nope.toml") }, "no such file"},
	{"a link to a secret", func(_ *testing.T, s *sandbox) string { return filepath.Join(s.in, "secret-link") }, ""},
	{"one long line", func(t *testing.T, s *sandbox) string { return s.write(t, s.in, "long.toml", fill(1<<20)+" = 1\n") }, ""},
	{"a long string value", func(t *testing.T, s *sandbox) string {
		return s.write(t, s.in, "value.toml", "name = \""+fill(1<<20)+"\"\n[[tier]]\nname = \""+fill(4096)+"\"\n")
	}, ""},
	{"nested 10,000 deep", func(t *testing.T, s *sandbox) string {
		return s.write(t, s.in, "nested.toml", "x = "+strings.Repeat("{a=", 10000)+"1"+strings.Repeat("}", 10000)+"\n")
	}, "nesting"},
	{"too large", func(t *testing.T, s *sandbox) string {
		p := filepath.Join(s.in, "big.toml")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		f.Truncate(65 << 20) // sparse: refused by its size, never read
		f.Close()
		return p
	}, "may be at most"},
	{"binary", func(t *testing.T, s *sandbox) string {
		return s.write(t, s.in, "bin.toml", "\x00\x01\xff\xfe"+fill(4096)+"\x00")
	}, ""},
	{"names a file outside", func(t *testing.T, s *sandbox) string {
		return s.write(t, s.in, "trav.toml", "name=\"t\"\nduration=\"1m\"\n[load]\nusers=1\nthink=\"1s\"\n[[tier]]\nname=\"a\"\n[[tier.step]]\nwait=\"empirical(../outside/secret.txt)\"\n")
	}, "outside the experiment's folder"},
	{"names a FIFO", func(t *testing.T, s *sandbox) string {
		return s.write(t, s.in, "fifoname.toml", "name=\"t\"\nduration=\"1m\"\n[load]\nusers=1\nthink=\"1s\"\n[[tier]]\nname=\"a\"\n[[tier.step]]\nwait=\"empirical(fifo)\"\n")
	}, "named pipe"},
}

// experimentCommands are the commands that read an experiment file, and
// the rest of their command line.
var experimentCommands = []struct {
	cmd  string
	args func(s *sandbox) []string
}{
	{"run", func(s *sandbox) []string { return []string{"-o", s.out, "--no-plots"} }},
	{"check", func(s *sandbox) []string { return nil }},
	{"explain", func(s *sandbox) []string { return []string{"-o", s.out} }},
	{"plan", func(s *sandbox) []string {
		return []string{"--goal", "p99<1s", "--vary", "tier.fe.calls.maxconnection=1..4", "-o", s.out}
	}},
	{"validate", func(s *sandbox) []string { return []string{"--duration", "2s", "-o", s.out} }},
}

func TestHostileEveryCommand(t *testing.T) {
	var cases []hostileCase
	// Every command that reads an experiment, on every hostile file.
	for _, c := range experimentCommands {
		for _, f := range hostileFiles {
			cases = append(cases, hostileCase{name: c.cmd + "/" + f.name, status: exitFailure, want: f.want,
				setup: func(t *testing.T, s *sandbox) []string {
					return append([]string{c.cmd, f.path(t, s)}, c.args(s)...)
				}})
		}
	}
	// calibrate: the capture and the experiment.
	for _, f := range hostileFiles {
		cases = append(cases,
			hostileCase{name: "calibrate/capture " + f.name, status: exitFailure,
				setup: func(t *testing.T, s *sandbox) []string {
					return []string{"calibrate", f.path(t, s), "--experiment", crackField, "--map", crackMap, "-o", filepath.Join(s.out, "cal")}
				}},
			hostileCase{name: "calibrate/experiment " + f.name, status: exitFailure,
				setup: func(t *testing.T, s *sandbox) []string {
					return []string{"calibrate", crackCapture, "--experiment", f.path(t, s), "--map", crackMap, "-o", filepath.Join(s.out, "cal")}
				}},
			hostileCase{name: "fit/spec " + f.name, status: exitFailure,
				setup: func(t *testing.T, s *sandbox) []string {
					return []string{"fit", f.path(t, s), "--experiment", "../../fit/testdata/twotier.toml", "-o", filepath.Join(s.out, "fit")}
				}},
			hostileCase{name: "config/file " + f.name, status: exitFailure,
				setup: func(t *testing.T, s *sandbox) []string {
					return []string{"config", "--dotnet", "4.8", "machine=" + f.path(t, s)}
				}},
		)
	}
	cases = append(cases,
		hostileCase{name: "calibrate/a long cell", status: exitFailure,
			setup: func(t *testing.T, s *sandbox) []string {
				b, err := os.ReadFile(crackCapture)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.SplitN(string(b), "\n", 3)
				cells := strings.Split(lines[1], ",")
				cells[1] = `"` + fill(1<<20) + `"`
				p := s.write(t, s.in, "capture.csv", lines[0]+"\n"+strings.Join(cells, ",")+"\n"+lines[2])
				return []string{"calibrate", p, "--experiment", crackField, "--map", crackMap, "-o", filepath.Join(s.out, "cal")}
			}},
		hostileCase{name: "config/a long element", status: exitOK,
			setup: func(t *testing.T, s *sandbox) []string {
				p := s.write(t, s.in, "machine.config", "<configuration><"+fill(1<<20)+"/></configuration>")
				return []string{"config", "--dotnet", "4.8", p}
			}},
		hostileCase{name: "config/a long attribute", status: exitOK,
			setup: func(t *testing.T, s *sandbox) []string {
				p := s.write(t, s.in, "machine.config", `<configuration><system.net><connectionManagement><add address="`+fill(1<<20)+`" maxconnection="4"/></connectionManagement></system.net></configuration>`)
				return []string{"config", "--dotnet", "4.8", p}
			}},
	)
	// config -o: never over a device, a FIFO or a link; always into a
	// folder.
	cfg := func(t *testing.T, s *sandbox) string {
		return s.write(t, s.in, "machine.config", `<configuration><system.net><connectionManagement><add address="*" maxconnection="8"/></connectionManagement></system.net></configuration>`)
	}
	for _, tc := range []struct {
		name, target, want string
		root               bool
	}{
		{"a device", "null", "a character device", true},
		{"a FIFO", "fifo", "a named pipe", false},
		{"a link", "link.toml", "a symbolic link", false},
		{"a directory", ".", "", false},
		{"a missing folder", "no/such/x.toml", "no such file", false},
	} {
		cases = append(cases, hostileCase{name: "config/-o " + tc.name, status: exitFailure, want: tc.want, root: tc.root,
			setup: func(t *testing.T, s *sandbox) []string {
				return []string{"config", "--dotnet", "4.8", cfg(t, s), "-o", filepath.Join(s.out, tc.target)}
			}})
	}
	cases = append(cases, hostileCase{name: "config/-o a new file", status: exitOK,
		setup: func(t *testing.T, s *sandbox) []string {
			return []string{"config", "--dotnet", "4.8", cfg(t, s), "-o", filepath.Join(s.out, "new.toml")}
		}})
	// -o: a link planted where a command's own directory goes.
	for _, c := range []struct{ cmd, dir string }{{"run", "small"}, {"explain", "small"}, {"plan", "small"}} {
		cases = append(cases, hostileCase{name: c.cmd + "/-o over a planted link", status: exitFailure, want: "symbolic link",
			setup: func(t *testing.T, s *sandbox) []string {
				os.Symlink(s.outside, filepath.Join(s.out, c.dir))
				args := []string{c.cmd, valid(t, s), "-o", s.out}
				if c.cmd == "plan" {
					args = append(args, "--goal", "p99<1s", "--vary", "tier.fe.calls.maxconnection=1..2", "--duration", "10s")
				}
				return args
			}})
	}
	cases = append(cases,
		hostileCase{name: "run/-o with a FIFO for summary.json", status: exitFailure, want: "a named pipe",
			setup: func(t *testing.T, s *sandbox) []string {
				os.MkdirAll(filepath.Join(s.out, "small"), 0o755)
				syscall.Mkfifo(filepath.Join(s.out, "small", "summary.json"), 0o644)
				return []string{"run", valid(t, s), "-o", s.out, "--no-plots"}
			}},
		hostileCase{name: "run/a shard directory that is a link", status: exitFailure, want: "symbolic link",
			setup: func(t *testing.T, s *sandbox) []string {
				os.MkdirAll(filepath.Join(s.out, "small"), 0o755)
				os.Symlink(s.outside, filepath.Join(s.out, "small", "shard-0-of-2"))
				return []string{"run", valid(t, s), "-o", s.out, "--shard", "0/2"}
			}},
		hostileCase{name: "plan/a goal that is not a number", status: exitUsage,
			setup: func(t *testing.T, s *sandbox) []string {
				return []string{"plan", valid(t, s), "--goal", "goodput>NaN", "--vary", "tier.fe.calls.maxconnection=1..4"}
			}},
		hostileCase{name: "plan/a long goal", status: exitUsage,
			setup: func(t *testing.T, s *sandbox) []string {
				return []string{"plan", valid(t, s), "--goal", "p99<" + fill(1<<16), "--vary", "tier.fe.calls.maxconnection=1..4"}
			}},
		hostileCase{name: "plan/a long key", status: exitFailure,
			setup: func(t *testing.T, s *sandbox) []string {
				return []string{"plan", valid(t, s), "--goal", "p99<1s", "--vary", fill(1<<16) + "=1..4", "-o", s.out}
			}},
		hostileCase{name: "run/a long flag value", status: exitUsage,
			setup: func(t *testing.T, s *sandbox) []string {
				return []string{"run", valid(t, s), "--outputs", fill(1 << 16)}
			}},
		hostileCase{name: "diff/a FIFO for summary.json", status: exitFailure, want: "named pipe",
			setup: func(t *testing.T, s *sandbox) []string {
				a := filepath.Join(s.in, "a")
				os.MkdirAll(a, 0o755)
				syscall.Mkfifo(filepath.Join(a, "summary.json"), 0o644)
				return []string{"diff", a, a, "-o", filepath.Join(s.out, "diff.html")}
			}},
		hostileCase{name: "diff/a link to /dev/zero for summary.json", status: exitFailure, want: "not a regular file",
			setup: func(t *testing.T, s *sandbox) []string {
				a := filepath.Join(s.in, "a")
				os.MkdirAll(a, 0o755)
				os.Symlink("/dev/zero", filepath.Join(a, "summary.json"))
				return []string{"diff", a, a, "-o", filepath.Join(s.out, "diff.html")}
			}},
		hostileCase{name: "diff/an interrupted run of 10^12 scenarios", status: exitFailure,
			setup: func(t *testing.T, s *sandbox) []string {
				a := filepath.Join(s.in, "a")
				s.write(t, a, "summary.json", `{"experiment":"x","complete":false,"scenarios":1000000000000,"variants":[],"points":[]}`)
				return []string{"diff", a, a, "-o", filepath.Join(s.out, "diff.html")}
			}},
		// 64 calling machines permitting 10⁷ connections each once took
		// 56 bytes per permitted connection: 36 GB.
		hostileCase{name: "run/64 machines permitting 10^7 connections each", status: exitOK,
			setup: func(t *testing.T, s *sandbox) []string {
				p := s.write(t, s.in, "conns.toml", "name = \"conns\"\nduration = \"10s\"\n[load]\nusers = 20\nthink = \"100ms\"\n"+
					"[[tier]]\nname = \"web\"\nreplicas = 64\ncalls.client = \"dotnet\"\ncalls.maxconnection = 10000000\n  [[tier.step]]\n  call = \"svc\"\n"+
					"[[tier]]\nname = \"svc\"\n  [[tier.step]]\n  cpu = \"1ms\"\n")
				return []string{"run", p, "-o", s.out, "--outputs", "json"}
			}},
		// An open load at ρ = 1.5 for 30 days once grew until memory ran
		// out; it stops unstable, with its outcome, and succeeds.
		hostileCase{name: "run/an open load above capacity for 30 days", status: exitOK,
			setup: func(t *testing.T, s *sandbox) []string {
				p := s.write(t, s.in, "over.toml", "name = \"over\"\nduration = \"720h\"\n[load]\nrate = 1500\n[[tier]]\nname = \"a\"\ncores = 1\n[[tier.step]]\ncpu = \"exp(1ms)\"\n")
				return []string{"run", p, "-o", s.out, "--outputs", "json"}
			}},
	)
	cases = append(cases, mergeCases()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && strings.HasPrefix(tc.name, "validate/") {
				t.Skip("validate runs for real; the full suite runs it")
			}
			runHostile(t, tc)
		})
	}
}

// shards are two shards of small, run once for every merge case, and
// what their files say.
var shards struct {
	once sync.Once
	dir  string // holds small/shard-0-of-2 and small/shard-1-of-2
	err  error
}

// shardsOf runs small's two shards once and copies them into the
// sandbox's in/shards.
func shardsOf(t *testing.T, s *sandbox) string {
	t.Helper()
	shards.once.Do(func() {
		dir, err := os.MkdirTemp("", "tsim-hostile-shards-")
		if err != nil {
			shards.err = err
			return
		}
		f := filepath.Join(dir, "small.toml")
		os.WriteFile(f, []byte(small), 0o644)
		for _, sh := range []string{"0/2", "1/2"} {
			var out, errb bytes.Buffer
			if st := Main(context.Background(), []string{"run", f, "-o", filepath.Join(dir, "o"), "--shard", sh, "--quiet"}, &out, &errb); st != exitOK {
				shards.err = fmt.Errorf("shard %s: %s", sh, errb.String())
				return
			}
		}
		shards.dir = filepath.Join(dir, "o")
	})
	if shards.err != nil {
		t.Fatal(shards.err)
	}
	to := filepath.Join(s.in, "shards")
	if err := os.CopyFS(to, os.DirFS(shards.dir)); err != nil {
		t.Fatal(err)
	}
	return to
}

// edit rewrites a file of the sandbox's shards.
func edit(t *testing.T, path string, f func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	if err := os.WriteFile(path, []byte(f(string(b))), 0o644); err != nil {
		t.Fatal(err)
	}
}

// editManifest changes a field of shard 0's manifest.
func editManifest(t *testing.T, dir string, f func(m map[string]any)) {
	edit(t, filepath.Join(dir, "small", "shard-0-of-2", "shard.json"), func(s string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return string(b)
	})
}

func mergeCases() []hostileCase {
	manifest := func(name, want string, f func(m map[string]any)) hostileCase {
		return hostileCase{name: "merge/" + name, status: exitFailure, want: want,
			setup: func(t *testing.T, s *sandbox) []string {
				d := shardsOf(t, s)
				editManifest(t, d, f)
				return []string{"merge", d, "-o", s.out}
			}}
	}
	items := func(name, want string, f func(string) string) hostileCase {
		return hostileCase{name: "merge/" + name, status: exitFailure, want: want,
			setup: func(t *testing.T, s *sandbox) []string {
				d := shardsOf(t, s)
				edit(t, filepath.Join(d, "small", "shard-0-of-2", "items.jsonl"), f)
				return []string{"merge", d, "-o", s.out}
			}}
	}
	// rehash gives an edited items.jsonl its hash back in the manifest, so
	// that the edit itself is what merge finds.
	rehashed := func(name, want string, f func(string) string) hostileCase {
		return hostileCase{name: "merge/" + name, status: exitFailure, want: want,
			setup: func(t *testing.T, s *sandbox) []string {
				d := shardsOf(t, s)
				p := filepath.Join(d, "small", "shard-0-of-2", "items.jsonl")
				edit(t, p, f)
				b, _ := os.ReadFile(p)
				editManifest(t, d, func(m map[string]any) { m["items_sha256"] = sha256Hex(b) })
				return []string{"merge", d, "-o", s.out}
			}}
	}
	firstLine := func(f func(item map[string]any)) func(string) string {
		return func(s string) string {
			line, rest, _ := strings.Cut(s, "\n")
			var m map[string]any
			json.Unmarshal([]byte(line), &m)
			f(m)
			b, _ := json.Marshal(m)
			return string(b) + "\n" + rest
		}
	}
	run := func(m map[string]any) map[string]any { return m["run"].(map[string]any) }
	return []hostileCase{
		{name: "merge/the shards as they are", status: exitOK,
			setup: func(t *testing.T, s *sandbox) []string { return []string{"merge", shardsOf(t, s), "-o", s.out} }},
		{name: "merge/shard.json a link to /dev/zero", status: exitFailure, want: "not a regular file",
			setup: func(t *testing.T, s *sandbox) []string {
				d := shardsOf(t, s)
				p := filepath.Join(d, "small", "shard-0-of-2", "shard.json")
				os.Remove(p)
				os.Symlink("/dev/zero", p)
				return []string{"merge", d, "-o", s.out}
			}},
		{name: "merge/shard.json a FIFO", status: exitFailure, want: "named pipe",
			setup: func(t *testing.T, s *sandbox) []string {
				d := shardsOf(t, s)
				p := filepath.Join(d, "small", "shard-0-of-2", "shard.json")
				os.Remove(p)
				syscall.Mkfifo(p, 0o644)
				return []string{"merge", d, "-o", s.out}
			}},
		{name: "merge/items.jsonl a FIFO", status: exitFailure, want: "named pipe",
			setup: func(t *testing.T, s *sandbox) []string {
				d := shardsOf(t, s)
				p := filepath.Join(d, "small", "shard-0-of-2", "items.jsonl")
				os.Remove(p)
				syscall.Mkfifo(p, 0o644)
				return []string{"merge", d, "-o", s.out}
			}},
		{name: "merge/shard.json one long line", status: exitFailure, want: "shard.json",
			setup: func(t *testing.T, s *sandbox) []string {
				d := shardsOf(t, s)
				edit(t, filepath.Join(d, "small", "shard-0-of-2", "shard.json"), func(string) string { return fill(1 << 20) })
				return []string{"merge", d, "-o", s.out}
			}},
		manifest("10^15 shards", "shards; allowed", func(m map[string]any) { m["shards"] = 1e15 }),
		manifest("10^12 replications", "replications", func(m map[string]any) { m["replications"] = 1e12 }),
		manifest("negative items", "items", func(m map[string]any) { m["items_written"] = -3 }),
		manifest("a shard out of range", "out of range", func(m map[string]any) { m["shard"] = 7 }),
		manifest("an old format", "format", func(m map[string]any) { m["format"] = "tsim-shard/1" }),
		manifest("a long file name", "file", func(m map[string]any) { m["file"] = fill(1 << 20) }),
		manifest("an edited experiment", "they were changed after the shard ran", func(m map[string]any) {
			src := m["sources"].([]any)
			f := src[0].(map[string]any)
			f["content"] = strings.Replace(f["content"].(string), "users = 40", "users = 4000", 1)
		}),
		manifest("a hash that is not the files'", "they were changed after the shard ran", func(m map[string]any) {
			m["sha256"] = strings.Repeat("0", 64)
		}),
		items("edited results", "the file was changed after the shard ran", func(s string) string {
			return strings.Replace(s, `"throughput_per_s":`, `"throughput_per_s":1`, 1)
		}),
		items("a line longer than a shard can write", "", func(s string) string { return fill(1<<20) + "\n" + s }),
		rehashed("NaN throughput", "", func(s string) string {
			return strings.Replace(s, `"throughput_per_s":`, `"throughput_per_s":NaN,"x":`, 1)
		}),
		rehashed("a 1e308 s latency", "latency_s.p99", firstLine(func(m map[string]any) { run(m)["latency_s"].(map[string]any)["p99"] = 1e308 })),
		rehashed("a negative count", "requests", firstLine(func(m map[string]any) { run(m)["requests"].(map[string]any)["completed"] = -5 })),
		rehashed("a replication out of range", "belongs", firstLine(func(m map[string]any) { m["replication"] = 99 })),
		rehashed("a scenario out of range", "belongs", firstLine(func(m map[string]any) { m["scenario"] = -1 })),
		rehashed("another variant", "variant", firstLine(func(m map[string]any) { m["variant"] = "fixed" })),
		rehashed("an outcome out of range", "outcome", firstLine(func(m map[string]any) {
			m["points"] = []any{[]any{1.0, 0.1, 9.0}}
		})),
		rehashed("a sample of another run", "series", firstLine(func(m map[string]any) {
			m["series"] = []any{map[string]any{"t": 1.0, "tiers": []any{}}}
		})),
		rehashed("an item missing", "belongs", func(s string) string {
			_, rest, _ := strings.Cut(s, "\n")
			return rest
		}),
		rehashed("an item too many", "more lines", func(s string) string {
			line, _, _ := strings.Cut(s, "\n")
			return s + line + "\n"
		}),
		rehashed("the last item missing", "ends after", func(s string) string {
			lines := strings.SplitAfter(s, "\n")
			return strings.Join(lines[:len(lines)-2], "")
		}),
	}
}
