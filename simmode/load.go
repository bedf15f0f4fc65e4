package simmode

import (
	"github.com/tsim-dev/tsim/model"
	"math"
	"time"

	"github.com/tsim-dev/tsim/sim"
)

// loadRT generates the workload: closed users following a schedule of
// user counts, or open arrivals following a schedule of rates.
type loadRT struct {
	r      *runner
	spec   *model.Load
	target int

	users  []*user // all users ever started, in order
	active int     // users wanted now
	think  sim.Sampler
	// thinkConst, for a constant think time, schedules every user's think
	// in one lane.
	thinkFixed fixedDelay
	thinkConst bool
	// thinkGroup, for a think time that varies, holds the users' thinks
	// out of the calendar's heap (see sim.Group), all but the next.
	thinkGroup *sim.Group
	arrive     *sim.Stream
	shape      sim.Sampler
	hasShape   bool

	generated int64
	openLive  int64
	traced    int // the next arrival of a replayed trace (Load.Arrivals)
}

// user is one closed-loop user: think, request, wait, repeat.
type user struct {
	l       *loadRT
	id      int
	retired bool // asked to stop: leaves after its current request
	busy    bool
	thinkEv sim.EventID
	proxy   *proxyInst
	root    rootRef
}

const (
	lkSchedule int32 = iota
	lkArrival
	ukThinkDone
	lkTraced // after the others: their values are in the trace hash
)

func newLoadRT(r *runner) *loadRT {
	l := &loadRT{r: r, spec: &r.top.Load, target: r.top.Load.Call.Target}
	if !l.spec.Think.IsZero() {
		l.think = l.spec.Think.Sampler(r.e.Stream("load/think"))
	} else {
		l.think = sim.Const(0).Sampler(r.e.Stream("load/think"))
	}
	if d, ok := l.think.Const(); ok {
		l.thinkFixed, l.thinkConst = r.fixedDelay(d, sim.ClassArrival), true
	} else if useGroups {
		l.thinkGroup = r.e.NewGroup(sim.ClassArrival)
	}
	l.arrive = r.e.Stream("load/arrivals")
	if !l.spec.Interarrival.IsZero() {
		l.shape = l.spec.Interarrival.Sampler(r.e.Stream("load/interarrival"))
		l.hasShape = true
	}
	return l
}

func (l *loadRT) start() {
	switch l.spec.Kind {
	case model.LoadClosed:
		l.OnEvent(l.r.e, lkSchedule, nil)
	case model.LoadOpen:
		if l.spec.Arrivals != nil {
			l.nextTraced()
			return
		}
		l.scheduleArrival()
	}
}

// nextTraced schedules a replayed trace's next arrival.
func (l *loadRT) nextTraced() {
	if l.traced < len(l.spec.Arrivals) {
		l.r.e.ScheduleAt(sim.Time(l.spec.Arrivals[l.traced]), sim.ClassArrival, l, lkTraced, nil)
		l.traced++
	}
}

// live returns the requests generated and not yet ended.
func (l *loadRT) live() int64 {
	n := l.openLive
	for _, u := range l.users {
		if u.root.r != nil {
			n++
		}
	}
	return n
}

func (l *loadRT) OnEvent(e *sim.Engine, kind int32, arg any) {
	switch kind {
	case lkSchedule:
		now := time.Duration(e.Now())
		want := int(math.Round(l.spec.Users.At(now)))
		l.setUsers(want)
		if next, ok := model.NextChange(l.spec.Users, now); ok {
			e.ScheduleAt(sim.Time(next), sim.ClassArrival, l, lkSchedule, nil)
		}
	case lkTraced:
		l.openRequest()
		l.nextTraced()
	case lkArrival:
		now := time.Duration(e.Now())
		rate := l.spec.Rate.At(now)
		max := l.spec.Rate.Max()
		// Thinning (Lewis & Shedler): candidates at the peak rate are kept
		// with probability rate(t)/peak.
		if l.hasShape || l.arrive.Float64()*max < rate {
			l.openRequest()
		}
		l.scheduleArrival()
	}
}

func (l *loadRT) scheduleArrival() {
	now := time.Duration(l.r.e.Now())
	max := l.spec.Rate.Max()
	if max <= 0 {
		return
	}
	var gap time.Duration
	if l.hasShape {
		rate := l.spec.Rate.At(now)
		if rate <= 0 {
			next, ok := model.NextPositive(l.spec.Rate, now)
			if !ok {
				return
			}
			l.r.e.ScheduleAt(sim.Time(next), sim.ClassArrival, l, lkArrival, nil)
			return
		}
		// A renewal process with the given shape, its mean rescaled to 1/rate.
		gap = time.Duration(float64(l.shape.Sample()) / (l.spec.Interarrival.Mean().Seconds() * rate))
	} else {
		gap = sim.FromSeconds(l.arrive.ExpFloat64() / max)
	}
	l.r.e.Schedule(gap, sim.ClassArrival, l, lkArrival, nil)
}

func (l *loadRT) setUsers(want int) {
	l.active = want
	n := 0
	for _, u := range l.users {
		if !u.retired {
			n++
		}
	}
	// Retire the newest users first; bring back retired ones before new.
	for i := len(l.users) - 1; i >= 0 && n > want; i-- {
		u := l.users[i]
		if !u.retired {
			u.retired = true
			n--
			if !u.busy && u.thinkEv.Valid() {
				l.r.e.Cancel(u.thinkEv)
				u.thinkEv = sim.EventID{}
			}
		}
	}
	for _, u := range l.users {
		if n >= want {
			break
		}
		if u.retired && !u.busy && !u.thinkEv.Valid() {
			u.retired = false
			n++
			u.think()
		}
	}
	for n < want {
		u := &user{l: l, id: len(l.users)}
		l.users = append(l.users, u)
		n++
		u.think()
	}
}

func (u *user) think() {
	if u.l.thinkConst {
		u.thinkEv = u.l.thinkFixed.schedule(u.l.r.e, u, ukThinkDone)
		return
	}
	if g := u.l.thinkGroup; g != nil {
		u.thinkEv = g.Schedule(u.l.think.Sample(), u, ukThinkDone, nil)
		return
	}
	u.thinkEv = u.l.r.e.Schedule(u.l.think.Sample(), sim.ClassArrival, u, ukThinkDone, nil)
}

func (u *user) OnEvent(e *sim.Engine, kind int32, arg any) {
	u.thinkEv = sim.EventID{}
	if u.retired {
		return
	}
	l := u.l
	l.generated++
	l.r.generated(l.generated)
	u.busy = true
	u.root = l.r.newRoot()
	c := l.r.newCall(&l.spec.Call, nil, nil, u, u.root)
	c.begin()
}

func (u *user) callDone(c *call) {
	u.busy = false
	root := u.root
	u.root = rootRef{}
	o := c.outcome
	u.l.r.releaseCall(c)
	u.l.r.rootDone(root, o)
	if !u.retired {
		u.think()
	}
}

func (l *loadRT) openRequest() {
	l.generated++
	l.openLive++
	l.r.generated(l.generated)
	c := l.r.newCall(&l.spec.Call, nil, nil, nil, l.r.newRoot())
	c.begin()
}

func (l *loadRT) openDone(c *call) {
	l.openLive--
	root, o := c.root, c.outcome
	l.r.releaseCall(c)
	l.r.rootDone(root, o)
}
