package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// signalWithin is how soon after the first Ctrl-C or SIGTERM (here, the
// context cancelled as Main's signal handler cancels it) a command must
// have stopped.
const signalWithin = time.Second

// interrupt runs args, cancels it after `after`, and returns what it
// printed, its status and how long it took to stop after the cancel.
func interrupt(t *testing.T, after time.Duration, args ...string) (stdout, stderr string, status int, stopped time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() { done <- Main(ctx, args, &out, &errb) }()
	select {
	case st := <-done:
		t.Fatalf("%v: finished (status %d) before it could be interrupted: %s", args, st, errb.String())
	case <-time.After(after):
	}
	cancel()
	at := time.Now()
	select {
	case status = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%v: still running 10 s after the signal", args)
	}
	return out.String(), errb.String(), status, time.Since(at)
}

// long is an experiment that would simulate for days.
const long = "name = \"long\"\nduration = \"720h\"\n[load]\nrate = 100000\n[[tier]]\nname = \"a\"\ncores = 128\n[[tier.step]]\ncpu = \"exp(1ms)\"\n"

// Every command stops within a second of the first signal, exits 1 and
// says so; what it finished is printed (check: the files checked; plan:
// the points evaluated).
func TestEveryCommandHonoursTheFirstSignal(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "long.toml")
	os.WriteFile(f, []byte(long), 0o644)
	s := filepath.Join(dir, "small.toml")
	os.WriteFile(s, []byte(small), 0o644)
	many := []string{"check"}
	for range 5000 {
		many = append(many, s)
	}
	for _, tc := range []struct {
		args []string
		want []string // in stdout or stderr
	}{
		{[]string{"run", f, "-o", dir, "--no-plots"}, []string{"interrupted", "not finished"}},
		{many, []string{"interrupted", "files checked", s + ": ok"}},
		{[]string{"explain", f, "-o", dir}, []string{"interrupted"}},
		{[]string{"plan", s, "--goal", "p99<1s", "--vary", "load.users=1..100000", "--duration", "200h", "-o", dir}, []string{"interrupted"}},
	} {
		out, errs, st, took := interrupt(t, 300*time.Millisecond, tc.args...)
		name := tc.args[0]
		if st != exitFailure {
			t.Errorf("%s: status %d, want 1; stderr %q", name, st, errs)
		}
		if took > signalWithin {
			t.Errorf("%s: stopped %v after the signal, more than %v", name, took, signalWithin)
		}
		for _, w := range tc.want {
			if !strings.Contains(out+errs, w) {
				t.Errorf("%s: says nothing of %q:\n%s%s", name, w, out, errs)
			}
		}
		if strings.Contains(errs, "stopped before it finished") {
			t.Errorf("%s: did not stop by itself; tsim stopped it after %v", name, graceAfterSignal)
		}
		t.Logf("%s: stopped %v after the signal", name, took.Round(time.Millisecond))
	}
}

// A command that does not look at the signal is stopped anyway: within a
// second, exit 1, and nothing it prints afterwards reaches the output.
func TestBusyCommandStoppedAfterTheSignal(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	busy := &command{Name: "busy", Run: func(_ context.Context, c *command, e *env, _ []string) int {
		c.out(e, "started\n")
		<-release // a library call that never looks at ctx
		c.out(e, "too late\n")
		return exitOK
	}}
	commands = append(commands, busy)
	defer func() { commands = commands[:len(commands)-1] }()
	out, errs, st, took := interrupt(t, 100*time.Millisecond, "busy")
	if st != exitFailure || took > signalWithin || !strings.Contains(errs, "tsim busy: interrupted; stopped before it finished") {
		t.Errorf("status %d after %v, stderr %q", st, took, errs)
	}
	if out != "started\n" {
		t.Errorf("stdout %q", out)
	}
}

// syncBuffer is a bytes.Buffer safe for the goroutine a stopped command
// leaves behind.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
