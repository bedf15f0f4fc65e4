package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

// tsimMain runs Main in-process and returns what it printed and its status.
func tsimMain(t *testing.T, ctx context.Context, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	if ctx == nil {
		ctx = context.Background()
	}
	var out, errb bytes.Buffer
	status = Main(ctx, args, &out, &errb)
	return out.String(), errb.String(), status
}

// small is a short experiment of two variants: two connections from the
// front end to the back end, and enough of them.
const small = `name = "small"
description = "Two connections, then enough."
seed = 3
replications = 2
duration = "30s"
warmup = "5s"
sample_every = "1s"

[load]
users = 40
think = "exp(1s)"
timeout = "2s"

[[tier]]
name = "fe"
cores = 4
worker.max = 64
calls.client = "dotnet"
calls.maxconnection = 2
[[tier.step]]
cpu = "exp(2ms)"
[[tier.step]]
call = "be"

[[tier]]
name = "be"
cores = 4
[[tier.step]]
cpu = "exp(20ms)"
[[tier.step]]
wait = "exp(50ms)"

[[variant]]
name = "broken"

[[variant]]
name = "fixed"
set = { "tier.fe.calls.maxconnection" = 64 }
`

// sweep is a short experiment sweeping the connection limit.
const sweep = `name = "sweep"
seed = 5
replications = 2
duration = "20s"
warmup = "2s"

[load]
users = 30
think = "exp(1s)"
timeout = "2s"

[[tier]]
name = "fe"
cores = 4
calls.client = "dotnet"
calls.maxconnection = 2
[[tier.step]]
call = "be"

[[tier]]
name = "be"
cores = 4
[[tier.step]]
cpu = "exp(20ms)"
[[tier.step]]
wait = "exp(50ms)"

[sweep]
key = "tier.fe.calls.maxconnection"
values = [1, 2, 4, 8, 16, 32]
`

// bad has an unknown key on line 3.
const bad = `name = "bad"
duration = "10s"
colour = "blue"

[[tier]]
name = "fe"
[[tier.step]]
cpu = "exp(1ms)"
`

// writeFile writes content to name in a new temporary directory and returns
// its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNoArgumentsIsUsage(t *testing.T) {
	out, errs, st := tsimMain(t, nil)
	if st != exitUsage || out != "" || !strings.Contains(errs, "Usage:") {
		t.Errorf("status %d, stdout %q, stderr %q; want 2 and the usage on stderr", st, out, errs)
	}
}

func TestHelp(t *testing.T) {
	out, _, st := tsimMain(t, nil, "help")
	if st != exitOK {
		t.Fatalf("status %d", st)
	}
	// Commands are listed in the command list's order.
	last := -1
	for _, c := range commands {
		i := strings.Index(out, "\t"+c.Name+" ")
		if i < 0 || i < last {
			t.Errorf("help lists %q out of order or not at all:\n%s", c.Name, out)
		}
		last = i
	}
	for _, c := range commands {
		out, errs, st := tsimMain(t, nil, "help", c.Name)
		if st != exitOK || !strings.HasPrefix(out, "usage: tsim "+c.Name) || errs != "" {
			t.Errorf("help %s: status %d, stdout %q, stderr %q", c.Name, st, out, errs)
		}
	}
	out, _, st = tsimMain(t, nil, "run", "-h")
	if st != exitOK || !strings.HasPrefix(out, "usage: tsim run") {
		t.Errorf("run -h: status %d, stdout %q", st, out)
	}
	_, errs, st := tsimMain(t, nil, "help", "nope")
	if st != exitUsage || !strings.HasPrefix(errs, "tsim help: unknown help topic \"nope\"") {
		t.Errorf("help nope: status %d, stderr %q", st, errs)
	}
}

func TestUnknownCommand(t *testing.T) {
	_, errs, st := tsimMain(t, nil, "nope")
	if st != exitUsage || !strings.HasPrefix(errs, "tsim nope: unknown command\n") {
		t.Errorf("status %d, stderr %q", st, errs)
	}
	_, errs, st = tsimMain(t, nil, "--seed", "3", "run")
	if st != exitUsage || !strings.HasPrefix(errs, "tsim: flag --seed before the command") {
		t.Errorf("status %d, stderr %q", st, errs)
	}
}

func TestVersion(t *testing.T) {
	out, _, st := tsimMain(t, nil, "version")
	if st != exitOK || !strings.HasPrefix(out, "tsim version "+tsim.ReleaseVersion) {
		t.Errorf("status %d, stdout %q", st, out)
	}
	_, _, st = tsimMain(t, nil, "version", "extra")
	if st != exitUsage {
		t.Errorf("version extra: status %d, want 2", st)
	}
}

func TestRunUsageErrors(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"run"}, "tsim run: no experiment files given\nusage: tsim run FILE..."},
		{[]string{"run", f, "--bogus"}, "tsim run: flag provided but not defined: -bogus\n"},
		{[]string{"run", "--reps", "x", f}, "tsim run: invalid value \"x\" for flag -reps"},
		{[]string{"run", f, "--reps", "0"}, "tsim run: --reps must be between 1 and 10000, got 0\n"},
		{[]string{"run", f, "--mode", "fast"}, "tsim run: --mode must be one of sim, real, got \"fast\"\n"},
		{[]string{"check"}, "tsim check: no experiment files given\n"},
		{[]string{"check", "--x", f}, "tsim check: flag provided but not defined: -x\n"},
		{[]string{"bench", "--model", "nope"}, "tsim bench: unknown model \"nope\""},
		{[]string{"bench", "--runs", "0"}, "tsim bench: --runs must be at least 1, got 0\n"},
		{[]string{"bench", "extra"}, "tsim bench: unexpected argument \"extra\"\n"},
	} {
		out, errs, st := tsimMain(t, nil, tc.args...)
		if st != exitUsage || !strings.HasPrefix(errs, tc.msg) || out != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2 and %q", tc.args, st, out, errs, tc.msg)
		}
	}
}

// TestRunModeReal runs the small experiment for real on loopback, at a
// time scale that makes its 30 simulated seconds about 1.5 real ones.
func TestRunModeReal(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	out, errs, st := tsimMain(t, nil, "run", f, "--mode", "real", "--time-scale", "0.05", "--reps", "1", "-o", dir, "--json")
	if st != exitOK {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	var sum struct {
		Mode     string
		Requests results.Counts
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("summary: %v\n%s", err, out)
	}
	if sum.Mode != "real" || sum.Requests.Generated == 0 || !sum.Requests.Conserved() {
		t.Errorf("mode %q, requests %+v", sum.Mode, sum.Requests)
	}
	_, errs, st = tsimMain(t, nil, "run", f, "--time-scale", "0.05")
	if st != exitUsage || !strings.Contains(errs, "--time-scale needs --mode real") {
		t.Errorf("--time-scale without --mode real: status %d, stderr %q", st, errs)
	}
}

func TestRunMissingFile(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "x.toml")
	_, errs, st := tsimMain(t, nil, "run", missing, "-o", dir)
	if want := "tsim run: open " + missing + ": no such file or directory\n"; st != exitFailure || errs != want {
		t.Errorf("status %d, stderr %q; want 1 and %q", st, errs, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("an output directory was made for a missing file: %v", err)
	}
}

func TestInvalidExperimentNamesFileAndLine(t *testing.T) {
	f := writeFile(t, "bad.toml", bad)
	good := writeFile(t, "small.toml", small)
	for _, args := range [][]string{{"run", "-o", t.TempDir()}, {"check"}} {
		cmd := args[0]
		out, errs, st := tsimMain(t, nil, append(args, good, f)...)
		if st != exitFailure {
			t.Errorf("%s: status %d, want 1", cmd, st)
		}
		prefix := "tsim " + cmd + ": " + f + ":3: "
		if !strings.HasPrefix(errs, prefix) || !strings.Contains(errs, "colour") {
			t.Errorf("%s: stderr %q, want it to start %q and name the key", cmd, errs, prefix)
		}
		// Nothing runs when any file is invalid.
		if cmd == "run" && out != "" {
			t.Errorf("run printed results although a file was invalid:\n%s", out)
		}
		if cmd == "check" && !strings.HasPrefix(out, good+": ok (about ") {
			t.Errorf("check: stdout %q, want %q", out, good+": ok (about …)")
		}
	}
}

func TestCheck(t *testing.T) {
	a := writeFile(t, "small.toml", small)
	b := writeFile(t, "sweep.toml", sweep)
	out, errs, st := tsimMain(t, nil, "check", a, b)
	if st != exitOK || !strings.HasPrefix(out, a+": ok (about ") || !strings.Contains(out, "\n"+b+": ok (about ") || errs != "" {
		t.Errorf("status %d, stdout %q, stderr %q", st, out, errs)
	}
	_, errs, st = tsimMain(t, nil, "check", filepath.Join(t.TempDir(), "none.toml"))
	if st != exitFailure || !strings.Contains(errs, "no such file or directory") {
		t.Errorf("missing file: status %d, stderr %q", st, errs)
	}
}

func TestRunWritesResults(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	out, errs, st := tsimMain(t, nil, "run", f, "-o", dir)
	if st != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	for _, s := range []string{"small (" + f + ")", "seed 3, 2 replications", "broken", "fixed", "fe → be", "wrote " + filepath.Join(dir, "small")} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 120 && !strings.HasPrefix(line, "wrote ") {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	exp := filepath.Join(dir, "small")
	want := []string{"counters.png", "latency-cdf.png", "latency.png", "perfmon.csv", "report.html", "summary.csv", "summary.json", "timeseries.csv"}
	if got := listDir(t, exp); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", got, want)
	}

	var s map[string]any
	if err := json.Unmarshal(readFile(t, filepath.Join(exp, "summary.json")), &s); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"experiment", "file", "seed", "replications", "mode", "requests", "throughput_per_s",
		"goodput_per_s", "latency_s", "timeout_rate", "tiers", "calls", "ci", "variants", "points"} {
		if _, ok := s[k]; !ok {
			t.Errorf("summary.json lacks %q", k)
		}
	}
	if s["experiment"] != "small" || s["seed"] != 3.0 || s["replications"] != 2.0 || s["mode"] != "sim" || s["variant"] != "broken" {
		t.Errorf("summary.json header: %v %v %v %v %v", s["experiment"], s["seed"], s["replications"], s["mode"], s["variant"])
	}
	vs := s["variants"].([]any)
	if len(vs) != 2 || vs[1].(map[string]any)["variant"] != "fixed" {
		t.Errorf("variants: %v", vs)
	}
	req := s["requests"].(map[string]any)
	var sum float64
	for _, k := range []string{"completed", "timed_out", "rejected", "failed", "in_flight"} {
		sum += req[k].(float64)
	}
	// Counts cover the measured period: those under way at the end of the
	// warm-up are added to what was generated in it.
	if sum != req["generated"].(float64)+req["in_flight_at_warmup"].(float64) {
		t.Errorf("requests do not add up: %v", req)
	}

	csv := string(readFile(t, filepath.Join(exp, "summary.csv")))
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], "broken,") {
		t.Errorf("summary.csv:\n%s", csv)
	}
	ts := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(exp, "timeseries.csv")))), "\n")
	// 31 samples (0..30 s) × 2 tiers × 2 variants, and the header.
	if len(ts) != 1+31*2*2 || !strings.HasPrefix(ts[1], "broken,0,fe,") {
		t.Errorf("timeseries.csv has %d lines, starting %q", len(ts), ts[:2])
	}
}

func TestRunSweep(t *testing.T) {
	f := writeFile(t, "sweep.toml", sweep)
	dir := t.TempDir()
	out, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--reps", "1")
	if st != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	if strings.Contains(out, "tier ") {
		t.Errorf("a sweep printed per-tier tables:\n%s", out)
	}
	exp := filepath.Join(dir, "sweep")
	// A sweep over a connection limit is fitted with the USL: usl.png.
	want := []string{"latency-cdf.png", "report.html", "summary.csv", "summary.json", "sweep-p99.png", "sweep-throughput.png", "sweep-timeouts.png", "usl.png"}
	if got := listDir(t, exp); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files %v, want %v", got, want)
	}
	if !strings.Contains(out, "Universal Scalability Law fitted to throughput over tier.fe.calls.maxconnection") {
		t.Errorf("no USL fit printed:\n%s", out)
	}
	var s struct {
		Points []struct {
			Params map[string]string `json:"params"`
		} `json:"points"`
		CI  any `json:"ci"`
		USL []struct {
			Line   string           `json:"line"`
			Points []map[string]any `json:"points"`
			Sigma  float64          `json:"sigma"`
			R2     float64          `json:"r2"`
		} `json:"usl"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(exp, "summary.json")), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Points) != 6 || s.Points[2].Params["tier.fe.calls.maxconnection"] != "4" {
		t.Errorf("points: %+v", s.Points)
	}
	if s.CI != nil {
		t.Errorf("ci with one replication: %v", s.CI)
	}
	if len(s.USL) != 1 || s.USL[0].Line != "variant base" || len(s.USL[0].Points) != 6 || !(s.USL[0].R2 > 0) {
		t.Errorf("summary.json usl: %+v", s.USL)
	}
}

func TestRunJSON(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	out, errs, st := tsimMain(t, nil, "run", "--json", f, "-o", dir)
	if st != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	if want := string(readFile(t, filepath.Join(dir, "small", "summary.json"))); out != want {
		t.Errorf("--json printed something else than summary.json:\n%s", out)
	}
}

func TestFlagsBeforeAndAfterFiles(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	for _, args := range [][]string{
		{"run", "-o", a, "--seed", "9", "--reps", "1", "--quiet", f},
		{"run", f, "-o", b, "--seed=9", "--reps", "1", "--quiet"},
		{"run", "--seed", "9", f, "--reps=1", "-o", c, "--quiet", "--"},
	} {
		if _, errs, st := tsimMain(t, nil, args...); st != exitOK {
			t.Fatalf("%q: status %d, stderr %q", args, st, errs)
		}
	}
	ref := readFile(t, filepath.Join(a, "small", "summary.json"))
	if !bytes.Contains(ref, []byte(`"seed": 9,`)) || !bytes.Contains(ref, []byte(`"replications": 1,`)) {
		t.Errorf("--seed and --reps not applied:\n%.300s", ref)
	}
	for _, d := range []string{b, c} {
		if got := readFile(t, filepath.Join(d, "small", "summary.json")); !bytes.Equal(got, ref) {
			t.Errorf("flag placement changed the result")
		}
	}
	// After "--" everything is a file.
	_, errs, st := tsimMain(t, nil, "run", "-o", a, "--", "--seed")
	if st != exitFailure || !strings.Contains(errs, "open --seed: no such file") {
		t.Errorf("after --: status %d, stderr %q", st, errs)
	}
}

func TestRunDeterministic(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	s := writeFile(t, "sweep.toml", sweep)
	a, b := t.TempDir(), t.TempDir()
	if _, errs, st := tsimMain(t, nil, "run", f, s, "-o", a); st != exitOK {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	// The second run is sequential: parallel replications must not change
	// a byte.
	defer func(n func() int) { numWorkers = n }(numWorkers)
	numWorkers = func() int { return 1 }
	if _, errs, st := tsimMain(t, nil, "run", f, s, "-o", b); st != exitOK {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	for _, exp := range []string{"small", "sweep"} {
		names := listDir(t, filepath.Join(a, exp))
		if got := listDir(t, filepath.Join(b, exp)); strings.Join(got, " ") != strings.Join(names, " ") {
			t.Errorf("%s: files %v and %v", exp, names, got)
		}
		for _, n := range names {
			x := readFile(t, filepath.Join(a, exp, n))
			y := readFile(t, filepath.Join(b, exp, n))
			if !bytes.Equal(x, y) {
				t.Errorf("%s/%s differs between two runs of the same file and seed", exp, n)
			}
		}
	}
}

func TestRunInterrupted(t *testing.T) {
	f := writeFile(t, "sweep.toml", sweep)
	other := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	jobs := 0
	runner.TestHookJobDone = func() {
		jobs++
		if jobs == 3 {
			cancel()
		}
	}
	defer func() { runner.TestHookJobDone = nil }()
	_, errs, st := tsimMain(t, ctx, "run", f, other, "-o", dir)
	if st != exitFailure {
		t.Errorf("status %d, want 1", st)
	}
	for _, s := range []string{"tsim run: interrupted", f + ": ", "scenarios not finished", other + ": not run"} {
		if !strings.Contains(errs, s) {
			t.Errorf("stderr lacks %q:\n%s", s, errs)
		}
	}
	// What finished is written, whole; nothing else is left behind.
	exp := filepath.Join(dir, "sweep")
	for _, n := range listDir(t, exp) {
		if strings.HasPrefix(n, ".") || strings.Contains(n, "tmp") {
			t.Errorf("left behind %s", n)
		}
	}
	var s struct {
		Complete bool  `json:"complete"`
		Points   []any `json:"points"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(exp, "summary.json")), &s); err != nil {
		t.Fatal(err)
	}
	if s.Complete || len(s.Points) == 0 || len(s.Points) >= 6 {
		t.Errorf("complete %v with %d of 6 points", s.Complete, len(s.Points))
	}
	if _, err := os.Stat(filepath.Join(dir, "small")); !os.IsNotExist(err) {
		t.Errorf("the experiment after the interruption was run: %v", err)
	}
}

func TestStaleOutputsRemoved(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "small")
	os.MkdirAll(exp, 0o755)
	os.WriteFile(filepath.Join(exp, "sweep-p99.png"), []byte("old"), 0o644)
	os.WriteFile(filepath.Join(exp, "notes.txt"), []byte("mine"), 0o644)
	f := writeFile(t, "small.toml", small)
	if _, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--quiet"); st != exitOK {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	if _, err := os.Stat(filepath.Join(exp, "sweep-p99.png")); !os.IsNotExist(err) {
		t.Errorf("a stale sweep picture survived a run without a sweep")
	}
	if _, err := os.Stat(filepath.Join(exp, "notes.txt")); err != nil {
		t.Errorf("a file tsim does not write was removed: %v", err)
	}
}

func TestSameStemTwice(t *testing.T) {
	a := writeFile(t, "small.toml", small)
	b := writeFile(t, "small.toml", small)
	_, errs, st := tsimMain(t, nil, "run", a, b, "-o", t.TempDir())
	if st != exitFailure || !strings.Contains(errs, "would both write to") {
		t.Errorf("status %d, stderr %q", st, errs)
	}
}

func TestBench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a benchmark model")
	}
	out, errs, st := tsimMain(t, nil, "bench", "--json", "--model", "mm1")
	if st != exitOK {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(rows) != 1 || rows[0]["model"] != "mm1" {
		t.Fatalf("rows %v", rows)
	}
	for _, k := range []string{"model", "requests", "events", "wall_s", "requests_per_s", "events_per_s"} {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("no key %q in %v", k, rows[0])
		}
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}
