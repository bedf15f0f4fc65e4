package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/internal/atomicio"
)

// TestConcurrentRunsIntoOneDirectory: two runs of one file into one -o at
// once either both finish with whole, identical outputs, or the second
// refuses; never a mixed set of files.
func TestConcurrentRunsIntoOneDirectory(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	refDir := t.TempDir()
	if _, errs, st := tsimMain(t, nil, "run", f, "-o", refDir, "--quiet", "--outputs", "json,csv", "--reps", "1"); st != exitOK {
		t.Fatalf("reference run: status %d: %s", st, errs)
	}
	want := readFile(t, filepath.Join(refDir, "small", "summary.json"))
	trials := 100
	if testing.Short() {
		trials = 20
	}
	refused := 0
	for i := range trials {
		dir := t.TempDir()
		var wg sync.WaitGroup
		var st [2]int
		var errs [2]string
		for k := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[k], st[k] = tsimMain(t, nil, "run", f, "-o", dir, "--quiet", "--outputs", "json,csv", "--reps", "1")
			}()
		}
		wg.Wait()
		for k := range 2 {
			switch {
			case st[k] == exitOK:
			case st[k] == exitFailure && strings.Contains(errs[k], "another tsim process is writing there"):
				refused++
			default:
				t.Fatalf("trial %d run %d: status %d: %s", i, k, st[k], errs[k])
			}
		}
		if st[0] != exitOK && st[1] != exitOK {
			t.Fatalf("trial %d: both refused: %q / %q", i, errs[0], errs[1])
		}
		if got := readFile(t, filepath.Join(dir, "small", "summary.json")); !bytes.Equal(got, want) {
			t.Fatalf("trial %d: summary.json differs from a run alone", i)
		}
		for _, n := range listDir(t, filepath.Join(dir, "small")) {
			if strings.HasPrefix(n, ".") {
				t.Fatalf("trial %d: left %s", i, n)
			}
		}
	}
	t.Logf("%d trials, %d runs refused because the other held the directory", trials, refused)
}

// A second process holding the lock makes run refuse before simulating.
func TestRunRefusesALockedDirectory(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	d, err := atomicio.Lock(dir, "small")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Unlock()
	_, errs, st := tsimMain(t, nil, "run", f, "-o", dir)
	if st != exitFailure || !strings.Contains(errs, "another tsim process is writing there") {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "small")); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote its directory: %v", err)
	}
}

// An unusable -o is an error before any simulating, and names the place.
func TestRunChecksOutputFirst(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	file := writeFile(t, "not-a-dir", "x")
	_, errs, st := tsimMain(t, nil, "run", f, "-o", file)
	if st != exitFailure || !strings.Contains(errs, "output:") || !strings.Contains(errs, file) {
		t.Fatalf("-o a file: status %d, stderr %q", st, errs)
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := t.TempDir()
		os.Chmod(ro, 0o555)
		defer os.Chmod(ro, 0o755)
		_, errs, st = tsimMain(t, nil, "run", f, "-o", ro)
		if st != exitFailure || !strings.Contains(errs, "output:") {
			t.Fatalf("-o read-only: status %d, stderr %q", st, errs)
		}
	}
}

// A file named "...toml" would write into the parent of -o; it is refused.
func TestRunRefusesNamesThatClimbOut(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "...toml")
	if err := os.WriteFile(f, []byte(small), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	_, errs, st := tsimMain(t, nil, "run", f, "-o", out)
	if st != exitFailure || !strings.Contains(errs, "no usable output directory name") {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	for _, n := range listDir(t, dir) {
		if n != "...toml" && n != "out" {
			t.Errorf("wrote %s next to -o", n)
		}
	}
}

// Temporary files of a killed run are removed by the next run.
func TestStaleTempFilesRemoved(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	exp := filepath.Join(dir, "small")
	os.MkdirAll(exp, 0o755)
	for _, n := range []string{atomicio.TempPrefix + "counters.png.123", ".summary.json.tmp456"} {
		if err := os.WriteFile(filepath.Join(exp, n), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--quiet", "--no-plots"); st != exitOK {
		t.Fatalf("status %d: %s", st, errs)
	}
	for _, n := range listDir(t, exp) {
		if strings.HasPrefix(n, ".") {
			t.Errorf("left %s", n)
		}
	}
}

// --outputs writes only the kinds asked for and removes the others.
func TestRunOutputs(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	if _, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--quiet"); st != exitOK {
		t.Fatalf("status %d: %s", st, errs)
	}
	full := readFile(t, filepath.Join(dir, "small", "summary.json"))
	if _, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--quiet", "--outputs", "json"); st != exitOK {
		t.Fatalf("status %d: %s", st, errs)
	}
	if got := strings.Join(listDir(t, filepath.Join(dir, "small")), " "); got != "summary.json" {
		t.Errorf("--outputs json left %s", got)
	}
	if !bytes.Equal(readFile(t, filepath.Join(dir, "small", "summary.json")), full) {
		t.Errorf("summary.json depends on the other outputs")
	}
	if _, _, st := tsimMain(t, nil, "run", f, "--outputs", "pdf"); st != exitUsage {
		t.Errorf("--outputs pdf: status %d, want usage", st)
	}
	if _, _, st := tsimMain(t, nil, "run", f, "--outputs", "json", "--no-plots"); st != exitUsage {
		t.Errorf("--outputs with --no-plots: status %d, want usage", st)
	}
}

// Where no request completed, JSON has null latency and CSV empty cells,
// as the table shows "–", not zeros.
func TestNoCompletionsHaveNoLatency(t *testing.T) {
	f := writeFile(t, "stuck.toml", `name = "stuck"
duration = "20s"
[load]
users = 5
think = "1s"
timeout = "1s"
[[tier]]
name = "fe"
[[tier.step]]
wait = "10s"
`)
	dir := t.TempDir()
	out, errs, st := tsimMain(t, nil, "run", f, "-o", dir, "--outputs", "json,csv")
	if st != exitOK {
		t.Fatalf("status %d: %s", st, errs)
	}
	if !strings.Contains(out, "–") {
		t.Errorf("table shows a latency:\n%s", out)
	}
	var s struct {
		Latency *struct{ Mean float64 } `json:"latency_s"`
	}
	b := readFile(t, filepath.Join(dir, "stuck", "summary.json"))
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Latency != nil {
		t.Errorf("latency_s = %+v, want null", *s.Latency)
	}
	rows, err := csv.NewReader(bytes.NewReader(readFile(t, filepath.Join(dir, "stuck", "summary.csv")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if v := rows[1][col["latency_mean_s"]]; v != "" {
		t.Errorf("latency_mean_s = %q, want empty", v)
	}
	if v := rows[1][col["complete"]]; v != "true" {
		t.Errorf("complete = %q", v)
	}
}

func TestVersionFlag(t *testing.T) {
	for _, a := range []string{"--version", "-version"} {
		out, _, st := tsimMain(t, nil, a)
		if st != exitOK || !strings.HasPrefix(out, "tsim version ") {
			t.Errorf("%s: status %d, %q", a, st, out)
		}
	}
}

// Hostile files end at once with a clear error, exit 1 and no output.
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	nested := filepath.Join(dir, "nested.toml")
	os.WriteFile(nested, []byte("x = "+strings.Repeat("{a=", 10000)+"1"+strings.Repeat("}", 10000)+"\n"), 0o644)
	trav := filepath.Join(dir, "trav.toml")
	os.WriteFile(trav, []byte("name=\"t\"\nduration=\"1m\"\n[load]\nusers=1\nthink=\"1s\"\n[[tier]]\nname=\"a\"\n[[tier.step]]\nwait=\"empirical(../../etc/passwd)\"\n"), 0o644)
	abs := filepath.Join(dir, "abs.toml")
	os.WriteFile(abs, []byte("name=\"t\"\nduration=\"1m\"\n[load]\nusers=1\nthink=\"1s\"\n[[tier]]\nname=\"a\"\n[[tier.step]]\nwait=\"empirical(/etc/shadow)\"\n"), 0o644)
	for _, tc := range []struct{ file, want string }{
		{"/dev/zero", "not a regular file"},
		{nested, "nesting deeper than 32 levels"},
		{trav, "outside the experiment's folder"},
		{abs, "empirical(/etc/shadow)"},
	} {
		out := filepath.Join(dir, "out")
		_, errs, st := tsimMain(t, nil, "run", tc.file, "-o", out)
		if st != exitFailure || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: status %d, stderr %q; want 1 and %q", tc.file, st, errs, tc.want)
		}
		if strings.Contains(errs, "root:") {
			t.Errorf("%s: the message shows a line of a file it read: %q", tc.file, errs)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: wrote %s", tc.file, out)
		}
	}
}

// The command line obeys the file format's limits.
func TestFlagsObeyTheFormatsLimits(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	for _, args := range [][]string{
		{"run", f, "--reps", "10001"},
		{"validate", f, "--duration", "1000h"},
		{"plan", f, "--goal", "p99<1s", "--vary", "tier.fe.calls.maxconnection=1..4", "--reps", "10001"},
	} {
		if _, errs, st := tsimMain(t, nil, args...); st != exitUsage {
			t.Errorf("%v: status %d, stderr %q", args, st, errs)
		}
	}
	out, _, st := tsimMain(t, nil, "check", f)
	if st != exitOK || !strings.Contains(out, "simulated requests") {
		t.Errorf("check: status %d, %q", st, out)
	}
}

// Cancelling (Ctrl-C) reaches inside a replication: a run of 30 simulated
// days at 10^5 requests/s stops, says so and exits 1.
func TestInterruptReachesInsideAReplication(t *testing.T) {
	f := writeFile(t, "long.toml", "name = \"long\"\nduration = \"720h\"\n[load]\nrate = 100000\n[[tier]]\nname = \"a\"\ncores = 128\n[[tier.step]]\ncpu = \"exp(1ms)\"\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, errs, st := tsimMain(t, ctx, "run", f, "-o", t.TempDir(), "--no-plots")
		if st != exitFailure || !strings.Contains(errs, "interrupted") || !strings.Contains(errs, "not finished") {
			t.Errorf("status %d, stderr %q", st, errs)
		}
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	<-done // without the engine's check this would take days
}
