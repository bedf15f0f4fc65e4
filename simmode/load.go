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
	arrivals   *model.Arrivals // open arrivals

	generated int64
	openLive  int64
}

// user is one closed-loop user: think, request, wait, repeat.
type user struct {
	model.User // Thinking while thinkEv is scheduled
	l          *loadRT
	id         int
	thinkEv    sim.EventID
	proxy      *proxyInst
	root       rootRef
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
	if l.spec.Kind == model.LoadOpen {
		l.arrivals = model.NewArrivals(l.spec, r.e.Stream("load/arrivals"), r.e.Stream("load/interarrival"))
	}
	return l
}

func (l *loadRT) start() {
	switch l.spec.Kind {
	case model.LoadClosed:
		l.OnEvent(l.r.e, lkSchedule, nil)
	case model.LoadOpen:
		l.scheduleArrival()
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
	case lkArrival, lkTraced:
		if l.arrivals.Keep(time.Duration(e.Now())) {
			l.openRequest()
		}
		l.scheduleArrival()
	}
}

// scheduleArrival schedules the next candidate arrival (model.Arrivals).
func (l *loadRT) scheduleArrival() {
	now := time.Duration(l.r.e.Now())
	at, ok := l.arrivals.Next(now)
	if !ok {
		return
	}
	kind := lkArrival
	if l.spec.Arrivals != nil {
		kind = lkTraced // a replayed trace's arrival
	}
	l.r.e.Schedule(at-now, sim.ClassArrival, l, kind, nil)
}

// setUsers brings the active users to want (model.SetUsers).
func (l *loadRT) setUsers(want int) {
	l.active = want
	start := model.SetUsers(len(l.users), func(i int) *model.User { return &l.users[i].User }, want,
		func(i int) {
			u := l.users[i]
			l.r.e.Cancel(u.thinkEv)
			u.thinkEv, u.Thinking = sim.EventID{}, false
		},
		func(i int) { l.users[i].think() })
	for range start {
		u := &user{l: l, id: len(l.users)}
		l.users = append(l.users, u)
		u.think()
	}
}

func (u *user) think() {
	u.Thinking = true
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
	u.thinkEv, u.Thinking = sim.EventID{}, false
	if u.Retired {
		return
	}
	l := u.l
	l.generated++
	l.r.generated(l.generated)
	u.Busy = true
	u.root = l.r.newRoot()
	c := l.r.newCall(&l.spec.Call, nil, nil, u, u.root)
	c.begin()
}

func (u *user) callDone(c *call) {
	u.Busy = false
	root := u.root
	u.root = rootRef{}
	o := c.outcome
	u.l.r.releaseCall(c)
	u.l.r.rootDone(root, o)
	if !u.Retired {
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
