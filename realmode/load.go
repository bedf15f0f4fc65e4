package realmode

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// loadRT generates the workload with goroutines: one per closed user
// (think, request, wait, repeat), following the Users schedule
// (model.SetUsers), or one generator of open arrivals
// (model.Arrivals), each arrival on its own goroutine.
type loadRT struct {
	rt   *runner
	spec *model.Load
	cs   *callStat

	mu    sync.Mutex
	users []*user

	think    *lockedSampler
	arrivals *model.Arrivals // open arrivals: used by the generator goroutine only

	// traceSent is how many of a trace's arrivals have been counted, as
	// generated or by unsentTrace; guarded by runner.mu.
	traceSent int
}

// user is one closed-loop user. Its flags are guarded by loadRT.mu.
type user struct {
	model.User
	l     *loadRT
	id    int
	epoch int // bumped when a think is cancelled
	// from is the real instant (since the start) its next think starts:
	// the schedule's instant for a user it starts or brings back, the
	// end of its request otherwise; due is when the current think ends.
	from, due time.Duration
	cancel    context.CancelFunc
	wake      chan struct{}
	proxy     *proxyInst
}

func newLoadRT(rt *runner) *loadRT {
	l := &loadRT{rt: rt, spec: &rt.top.Load, cs: rt.callOf[&rt.top.Load.Call]}
	think := l.spec.Think
	if think.IsZero() {
		think = sim.Const(0)
	}
	l.think = &lockedSampler{s: think.Sampler(rt.streams.Stream("load/think"))}
	if l.spec.Kind == model.LoadOpen {
		l.arrivals = model.NewArrivals(l.spec, rt.streams.Stream("load/arrivals"), rt.streams.Stream("load/interarrival"))
	}
	return l
}

// start launches the generators; they stop when ctx ends.
func (l *loadRT) start(ctx context.Context) {
	l.rt.loadWG.Add(1)
	go func() {
		defer l.rt.loadWG.Done()
		switch l.spec.Kind {
		case model.LoadClosed:
			l.schedule(ctx)
		case model.LoadOpen:
			l.open(ctx)
		}
	}()
}

// schedule follows the Users schedule: at each instant the rounded user
// count changes, users are added, retired or brought back.
func (l *loadRT) schedule(ctx context.Context) {
	now := time.Duration(0)
	for {
		l.setUsers(ctx, int(math.Round(l.spec.Users.At(now))), l.rt.clk.toReal(now))
		next, ok := model.NextChange(l.spec.Users, now)
		if !ok || next > l.rt.top.Duration {
			return
		}
		if l.rt.clk.sleepUntil(ctx, l.rt.clk.toReal(next)) != nil {
			return
		}
		now = next
	}
}

// setUsers retires the newest users first and brings back retired ones
// before starting new ones (model.SetUsers), as the schedule asks at the
// real instant at. A user whose think ended by then has sent its request
// (in the model, its think's end comes first), though the process may
// run this before it when both came due during one stall: its think is
// not stopped, and it sends, then leaves. (Go runs the goroutine whose
// timer fired last first: four users retired 1 ms after their think
// ended sent 1–3 requests of 4 in 18 runs of 20 on a quiet machine; a
// busy one's stall of more than 50 ms of real time did so to a step
// table's burst.)
func (l *loadRT) setUsers(ctx context.Context, want int, at time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := model.SetUsers(len(l.users), func(i int) *model.User { return &l.users[i].User }, want,
		func(i int) {
			u := l.users[i]
			if u.due <= at {
				return
			}
			u.Thinking = false
			u.epoch++
			u.cancel()
		},
		func(i int) {
			l.users[i].from = at
			select {
			case l.users[i].wake <- struct{}{}:
			default:
			}
		})
	for range start {
		u := &user{l: l, id: len(l.users), from: at, wake: make(chan struct{}, 1)}
		l.users = append(l.users, u)
		l.rt.loadWG.Add(1)
		go u.loop(ctx)
	}
}

func (u *user) loop(ctx context.Context) {
	l := u.l
	defer l.rt.loadWG.Done()
	for {
		l.mu.Lock()
		for u.Retired {
			l.mu.Unlock()
			select {
			case <-u.wake:
			case <-ctx.Done():
				return
			}
			l.mu.Lock()
		}
		tctx, cancel := context.WithCancel(ctx)
		u.cancel, u.Thinking = cancel, true
		epoch := u.epoch
		due := u.from + l.rt.clk.toReal(l.think.sample())
		u.due = due
		l.mu.Unlock()

		err := l.rt.clk.sleepUntil(tctx, due)
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		if err != nil || u.epoch != epoch {
			// The think was cancelled (retired); start over. (A user
			// retired after its think ended was not: it sends.)
			u.Thinking = false
			l.mu.Unlock()
			continue
		}
		u.Thinking = false
		u.Busy = true
		l.mu.Unlock()

		l.request(ctx, u)

		l.mu.Lock()
		u.Busy = false
		u.from = l.rt.clk.now()
		l.mu.Unlock()
	}
}

// open generates the open load's arrivals (model.Arrivals) at their
// absolute instants, so that a late wake-up does not shift later ones; a
// trace's, counted one by one, by traced.
func (l *loadRT) open(ctx context.Context) {
	rt := l.rt
	if l.spec.Arrivals != nil {
		l.traced(ctx)
		return
	}
	now := time.Duration(0)
	for {
		at, ok := l.arrivals.Next(now)
		if !ok || at > rt.top.Duration {
			return
		}
		if rt.clk.sleepUntil(ctx, rt.clk.toReal(at)) != nil {
			return
		}
		now = at
		if l.arrivals.Keep(now) {
			rt.loadWG.Add(1)
			go func() {
				defer rt.loadWG.Done()
				l.request(ctx, nil)
			}()
		}
	}
}

// traced replays a trace's arrivals (model.Load.Arrivals) at their
// instants, each counted as generated when the generator reaches it. One
// the process reached too late, after the run had ended, is counted by
// unsentTrace.
func (l *loadRT) traced(ctx context.Context) {
	rt := l.rt
	for i, at := range l.spec.Arrivals {
		if at > rt.top.Duration {
			return
		}
		if rt.clk.sleepUntil(ctx, rt.clk.toReal(at)) != nil {
			return
		}
		rt.mu.Lock()
		if rt.closed {
			rt.mu.Unlock()
			return
		}
		l.traceSent = i + 1
		rt.mu.Unlock()
		root := rt.newRoot()
		if root == nil {
			continue // shed (or the run ended just now: in flight)
		}
		rt.loadWG.Add(1)
		go func() {
			defer rt.loadWG.Done()
			o, _ := rt.doCall(ctx, l.cs, nil, nil, nil, root)
			rt.rootDone(root, o)
		}()
	}
}

// unsentTrace returns how many of a trace's arrivals were due by end, the
// run's end in simulated time, but not reached by the generator before
// the run ended (its goroutine woke late on a busy machine), and marks
// them counted. They were generated, in the model's time, and are in
// flight at the end, as in the simulator. rt.mu is held.
func (l *loadRT) unsentTrace(end time.Duration) int64 {
	n := 0
	for _, at := range l.spec.Arrivals[l.traceSent:] {
		if at > end {
			break
		}
		n++
	}
	l.traceSent += n
	return int64(n)
}

// request sends one top-level request and records how it ended.
func (l *loadRT) request(ctx context.Context, u *user) {
	rt := l.rt
	root := rt.newRoot()
	if root == nil {
		return
	}
	o, _ := rt.doCall(ctx, l.cs, nil, nil, u, root)
	rt.rootDone(root, o)
}

// userByID returns user id, or nil (an agent's job names its user).
func (l *loadRT) userByID(id int) *user {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id >= 0 && id < len(l.users) {
		return l.users[id]
	}
	return nil
}
