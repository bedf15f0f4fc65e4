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
// (think, request, wait, repeat), following the Users schedule, or one
// generator of open arrivals following the Rate schedule, each arrival on
// its own goroutine. The rules mirror model/loadrt.go.
type loadRT struct {
	rt   *runner
	spec *model.Load
	cs   *callStat

	mu    sync.Mutex
	users []*user

	think  *lockedSampler
	arrive *sim.Stream // open arrivals: used by the generator goroutine only
	shape  *sim.Sampler

	// traceSent is how many of a trace's arrivals have been counted, as
	// generated or by unsentTrace; guarded by runner.mu.
	traceSent int
}

// user is one closed-loop user. Its flags are guarded by loadRT.mu.
type user struct {
	l        *loadRT
	id       int
	retired  bool // asked to stop: leaves after its current request
	busy     bool
	thinking bool
	epoch    int // bumped when a think is cancelled
	cancel   context.CancelFunc
	wake     chan struct{}
	proxy    *proxyInst
}

func newLoadRT(rt *runner) *loadRT {
	l := &loadRT{rt: rt, spec: &rt.top.Load, cs: rt.callOf[&rt.top.Load.Call]}
	think := l.spec.Think
	if think.IsZero() {
		think = sim.Const(0)
	}
	l.think = &lockedSampler{s: think.Sampler(rt.streams.Stream("load/think"))}
	l.arrive = rt.streams.Stream("load/arrivals")
	if !l.spec.Interarrival.IsZero() {
		s := l.spec.Interarrival.Sampler(rt.streams.Stream("load/interarrival"))
		l.shape = &s
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
		l.setUsers(ctx, int(math.Round(l.spec.Users.At(now))))
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
// before starting new ones (model loadRT.setUsers).
func (l *loadRT) setUsers(ctx context.Context, want int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, u := range l.users {
		if !u.retired {
			n++
		}
	}
	for i := len(l.users) - 1; i >= 0 && n > want; i-- {
		u := l.users[i]
		if !u.retired {
			u.retired = true
			n--
			if !u.busy && u.thinking {
				u.thinking = false
				u.epoch++
				u.cancel()
			}
		}
	}
	for _, u := range l.users {
		if n >= want {
			break
		}
		if u.retired && !u.busy && !u.thinking {
			u.retired = false
			n++
			select {
			case u.wake <- struct{}{}:
			default:
			}
		}
	}
	for n < want {
		u := &user{l: l, id: len(l.users), wake: make(chan struct{}, 1)}
		l.users = append(l.users, u)
		n++
		l.rt.loadWG.Add(1)
		go u.loop(ctx)
	}
}

func (u *user) loop(ctx context.Context) {
	l := u.l
	defer l.rt.loadWG.Done()
	for {
		l.mu.Lock()
		for u.retired {
			l.mu.Unlock()
			select {
			case <-u.wake:
			case <-ctx.Done():
				return
			}
			l.mu.Lock()
		}
		tctx, cancel := context.WithCancel(ctx)
		u.cancel, u.thinking = cancel, true
		epoch := u.epoch
		d := l.think.sample()
		l.mu.Unlock()

		err := l.rt.clk.sleep(tctx, d)
		cancel()
		if ctx.Err() != nil {
			return
		}
		l.mu.Lock()
		if err != nil || u.epoch != epoch || u.retired {
			// The think was cancelled (retired); start over.
			u.thinking = false
			l.mu.Unlock()
			continue
		}
		u.thinking = false
		u.busy = true
		l.mu.Unlock()

		l.request(ctx, u)

		l.mu.Lock()
		u.busy = false
		l.mu.Unlock()
	}
}

// open generates arrivals following the Rate schedule: Poisson by thinning
// (Lewis & Shedler) at the peak rate, or a renewal process with the given
// shape rescaled to the current rate (model loadRT.scheduleArrival).
func (l *loadRT) open(ctx context.Context) {
	rt := l.rt
	if l.spec.Arrivals != nil {
		l.traced(ctx)
		return
	}
	peak := l.spec.Rate.Max()
	if peak <= 0 {
		return
	}
	now := time.Duration(0)
	for {
		var at time.Duration
		if l.shape != nil {
			rate := l.spec.Rate.At(now)
			if rate <= 0 {
				next, ok := model.NextPositive(l.spec.Rate, now)
				if !ok {
					return
				}
				at = next
			} else {
				at = now + time.Duration(float64(l.shape.Sample())/(l.spec.Interarrival.Mean().Seconds()*rate))
			}
		} else {
			at = now + sim.FromSeconds(l.arrive.ExpFloat64()/peak)
		}
		if at > rt.top.Duration {
			return
		}
		// Absolute instants: a late wake-up does not shift later arrivals.
		if rt.clk.sleepUntil(ctx, rt.clk.toReal(at)) != nil {
			return
		}
		now = at
		if l.shape != nil || l.arrive.Float64()*peak < l.spec.Rate.At(now) {
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
