package realmode

import (
	"errors"
	"fmt"
	"math"
	"net"
	"sync/atomic"
	"syscall"

	"github.com/tsim-dev/tsim/model"
)

// A real run holds a file descriptor for every listener and two for every
// loopback connection (the client's end and the server's). Out of them, a
// dial fails and net/http's server backs off accepting for up to a second
// at a time: a run under `ulimit -n 1024` with 2,000 users once ended with
// 0.1% timeouts and a 141 ms mean where an unlimited one measured 38% and
// 4.99 s. So the run counts what it needs before it starts (fdBudget),
// raises the soft limit toward the hard one if it must, and refuses when
// even that is not enough; and a run that meets EMFILE all the same fails
// rather than report what it measured.

// fdBudget is the descriptors a real run of rt's topology needs, roughly.
type fdBudget struct {
	listeners int // a tier's server each, and each farm's balancer
	conns     int // loopback connections, counted at both ends
	process   int // the process's own: standard files, the poller, files written
}

func (b fdBudget) total() int { return b.listeners + 2*b.conns + b.process }

func (b fdBudget) String() string {
	return fmt.Sprintf("%s, %s at two each, %d for the process", plural(b.listeners, "listener"), plural(b.conns, "loopback connection"), b.process)
}

// fdProcess is what the process itself holds besides the run's sockets.
const fdProcess = 64

// fdBudgetOf counts rt's listeners and the connections its pools may open:
// each pool up to its limit, and at most as many as requests can be under
// way through it at once — a closed load's users, an open load's peak rate
// times four times the response time with no queueing (Little's law with
// room for queueing), never more than MaxInFlight.
func (rt *runner) fdBudgetOf() fdBudget {
	b := fdBudget{listeners: len(rt.tiers), process: fdProcess}
	top := rt.top
	underWay := float64(rt.opt.MaxInFlight)
	switch l := &top.Load; l.Kind {
	case model.LoadClosed:
		underWay = min(underWay, l.Users.Max())
	case model.LoadOpen:
		rate := l.Rate.Max()
		if n := len(l.Arrivals); n > 0 && top.Duration > 0 {
			rate = max(rate, float64(n)/top.Duration.Seconds())
		}
		underWay = min(underWay, max(64, math.Ceil(4*rate*model.Analyse(top).D.Seconds())))
	}
	conns := func(limit int) int {
		if limit > 0 {
			return int(min(float64(limit), underWay))
		}
		return int(underWay)
	}
	for _, p := range rt.pools {
		b.conns += conns(p.limit)
	}
	for _, f := range rt.farms {
		if f.lb != nil {
			b.listeners++
			b.conns += conns(f.spec.Balancer.MaxConns)
		}
	}
	return b
}

// checkFDs compares rt's budget with RLIMIT_NOFILE, raises the soft limit
// to the hard one when the budget needs more, and refuses when even the
// hard limit is too low.
func (rt *runner) checkFDs() error {
	rt.fdStart = fdExhausted.Load()
	b := rt.fdBudgetOf()
	return ensureFDs(b.total(), b.String())
}

// ensureFDs makes sure need descriptors are allowed (what explains need).
func ensureFDs(need int, what string) error {
	cur, hard, ok := fdLimit()
	if !ok || uint64(need) <= cur {
		return nil // no limit to read, or enough
	}
	if uint64(need) <= hard && raiseFDLimit(hard) {
		return nil
	}
	return fmt.Errorf("realmode: real mode needs about %d file descriptors (%s); the limit is %d (hard limit %d); raise it with ulimit -n, or run fewer users or lower connection limits",
		need, what, cur, hard)
}

// fdExhausted counts the dials and accepts of the process that failed for
// want of a file descriptor (EMFILE, ENFILE); a run compares it at its end
// with its value at its start (runner.fdStart).
var fdExhausted atomic.Int64

// noteFDs counts err if it is for want of a descriptor.
func noteFDs(err error) {
	if err != nil && (errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)) {
		fdExhausted.Add(1)
	}
}

// fdListener notes the accepts that fail for want of a descriptor.
type fdListener struct{ net.Listener }

func (l fdListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	noteFDs(err)
	return c, err
}

// fdsRanOut is the error of a run that met EMFILE, nil if it did not.
func (rt *runner) fdsRanOut() error {
	n := fdExhausted.Load() - rt.fdStart
	if n <= 0 {
		return nil
	}
	cur, _, _ := fdLimit()
	b := rt.fdBudgetOf()
	return fmt.Errorf("realmode: the run ran out of file descriptors (%d dials or accepts failed with EMFILE; the limit is %d, and it needed about %d: %s), so what it measured is not the model's: raise the limit with ulimit -n, or run fewer users",
		n, cur, b.total(), b)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
