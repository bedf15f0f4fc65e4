//go:build unix

package realmode

import (
	"context"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// fdUsers is 2,000 users through an unlimited pool to a front end that
// calls a back end through another: about 8,000 descriptors.
func fdUsers() *model.Topology {
	return &model.Topology{
		Duration: 10 * time.Second,
		Tiers: []model.Tier{
			tier("fe", 8, callStep(1, model.Call{})),
			tier("be", 8, cpuExp(100*time.Millisecond)),
		},
		Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: 2000}},
			Think: sim.Exp(time.Second), Call: model.Call{Target: 0}},
	}
}

func TestFDBudgetCounts(t *testing.T) {
	rt := newRunner(fdUsers(), Options{MaxInFlight: DefaultMaxInFlight}, 1, 0)
	defer rt.shutdown()
	b := rt.fdBudgetOf()
	// Two listeners; the load's pool and fe's, 2,000 connections each.
	if b.listeners != 2 || b.conns != 4000 || b.total() != 2+8000+fdProcess {
		t.Errorf("budget %+v (%d in all), want 2 listeners and 4,000 connections", b, b.total())
	}
	limited := fdUsers()
	limited.Tiers[0].Steps[0].Call.Conn.Limit = 2
	rt2 := newRunner(limited, Options{MaxInFlight: 500}, 1, 0)
	defer rt2.shutdown()
	if b := rt2.fdBudgetOf(); b.conns != 502 {
		t.Errorf("a limit of 2 and MaxInFlight 500: %d connections, want 500 + 2", b.conns)
	}
}

// fdChild is set in the process TestFDBudget re-executes, with the limits
// it is to run under, so that lowering them affects no other test.
const fdChild = "TSIM_REALMODE_FD_CHILD"

// TestFDBudget runs itself again in a child process whose RLIMIT_NOFILE
// it lowers (soft and hard to 256: real mode must refuse, before it
// listens, with a message saying how many it needs and how to raise the
// limit; soft alone to 256 under a higher hard limit: it raises the soft
// one and goes on).
func TestFDBudget(t *testing.T) {
	switch os.Getenv(fdChild) {
	case "":
	case "refuse":
		lowerFDs(t, 256, 256)
		start := time.Now()
		_, _, err := RunWithInfo(context.Background(), fdUsers(), Options{Seed: 1})
		if err == nil || !strings.Contains(err.Error(), "real mode needs about 8066 file descriptors") || !strings.Contains(err.Error(), "the limit is 256") || !strings.Contains(err.Error(), "ulimit -n") {
			t.Fatalf("err = %v, want a refusal naming 8066 descriptors, the limit 256 and ulimit -n", err)
		}
		t.Logf("refused in %v: %v", time.Since(start), err)
		return
	case "raise":
		var lim syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Skip(err)
		}
		if lim.Max < 9000 {
			t.Skipf("the hard limit is %d: no room to raise the soft one to 8,066", lim.Max)
		}
		lowerFDs(t, 256, lim.Max)
		if err := ensureFDs(8066, "test"); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur != lim.Max {
			t.Fatalf("soft limit %d after ensureFDs, want the hard one %d (%v)", lim.Cur, lim.Max, err)
		}
		// A run that meets EMFILE all the same fails (counted process-wide,
		// hence here, alone).
		rt := newRunner(fdUsers(), Options{MaxInFlight: DefaultMaxInFlight}, 1, 0)
		defer rt.shutdown()
		rt.fdStart = fdExhausted.Load()
		noteFDs(&net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.ENOTCONN)})
		if err := rt.fdsRanOut(); err != nil {
			t.Fatalf("another error counted as EMFILE: %v", err)
		}
		noteFDs(&net.OpError{Op: "accept", Err: os.NewSyscallError("accept4", syscall.EMFILE)})
		if err := rt.fdsRanOut(); err == nil || !strings.Contains(err.Error(), "ran out of file descriptors (1 dials or accepts failed") {
			t.Fatalf("after an EMFILE: %v", err)
		}
		return
	default:
		t.Skip("another child")
	}
	for _, mode := range []string{"refuse", "raise"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestFDBudget$", "-test.v")
		cmd.Env = append(os.Environ(), fdChild+"="+mode)
		out, err := cmd.CombinedOutput()
		t.Logf("%s:\n%s", mode, out)
		if err != nil {
			t.Errorf("child %s: %v", mode, err)
		} else if !strings.Contains(string(out), "--- PASS: TestFDBudget") {
			t.Errorf("child %s did not pass", mode)
		}
	}
}

func lowerFDs(t *testing.T, cur, hard uint64) {
	lim := syscall.Rlimit{Cur: cur, Max: hard}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("lowering RLIMIT_NOFILE: %v", err)
	}
}
