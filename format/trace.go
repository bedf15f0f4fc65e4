package format

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tsim-dev/tsim/loadtest"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// A load of kind "trace" is a load test's results (package loadtest: a
// JMeter CSV results file, a k6 JSON output, a Gatling simulation.log),
// named by load.trace and read through the caller's ReadFile like any
// data file. load.replay says how it drives the model:
//
//   - "arrivals" (the default): an open load, each request of the file
//     sent at the instant the tool sent it (model.Load.Arrivals), whatever
//     the model answers — a replay of the test's arrivals;
//   - "users": a closed load of the users the tool ran over time (its
//     ramp: JMeter's allThreads, k6's vus, Gatling's USER records), each
//     thinking the think time measured between a reply and its next
//     request (or load.think, when given).

// traceResult is a trace file read and parsed once per experiment.
type traceResult struct {
	r   *loadtest.Result
	err error
}

// readTrace reads and parses a trace file through f, once.
func (f *files) readTrace(name string) (*loadtest.Result, error) {
	f.mu.Lock()
	t, ok := f.traces[name]
	f.mu.Unlock()
	if ok {
		return t.r, t.err
	}
	data, err := f.readFile(name, MaxDataBytes, "trace files")
	var r *loadtest.Result
	if err == nil {
		r, err = loadtest.Parse(data, name)
	}
	f.mu.Lock()
	if f.traces == nil {
		f.traces = map[string]traceResult{}
	}
	f.traces[name] = traceResult{r, err}
	f.mu.Unlock()
	return r, err
}

// resolveTrace fills l from the trace file load.trace names.
func (p *loader) resolveTrace(top *chain, get func(string) (setting, bool), l *model.Load) {
	s, ok := get("load.trace")
	if !ok {
		top.errAt("load", "a trace load needs load.trace = \"FILE\": a JMeter CSV results file, a k6 JSON output or a Gatling simulation.log")
		return
	}
	r, err := p.files.readTrace(s.v.(string))
	if err != nil {
		top.errAt("load.trace", "%v", err)
		return
	}
	replay := "arrivals"
	if s, ok := get("load.replay"); ok {
		replay = s.v.(string)
	}
	if _, ok := get("load.think"); ok && replay != "users" {
		top.errAt("load.think", "applies to a trace replayed as users (load.replay = \"users\"); the arrivals are replayed as they were")
	}
	switch replay {
	case "arrivals":
		l.Kind = model.LoadOpen
		l.Arrivals = r.Arrivals()
		for _, pt := range r.RateSchedule() {
			l.Rate = append(l.Rate, model.Point{At: pt.At, Value: math.Min(pt.Value, MaxRate)})
		}
	case "users":
		users, _ := r.UsersSchedule()
		if len(users) == 0 {
			top.errAt("load.replay", "%s says nothing of its users (no thread, user or virtual user count or name): replay its arrivals (load.replay = \"arrivals\")", r.File)
			return
		}
		l.Kind = model.LoadClosed
		for _, pt := range users {
			l.Users = append(l.Users, model.Point{At: pt.At, Value: math.Min(pt.Value, MaxUsers)})
		}
		if !(l.Users.Max() > 0) {
			top.errAt("load.trace", "%s has no user active at any time", r.File)
		}
		if s, ok := get("load.think"); ok {
			l.Think = s.v.(sim.Dist)
			return
		}
		z, ok := r.ThinkTime()
		if !ok {
			top.errAt("load.think", "%s gives no think time; give load.think", r.File)
			return
		}
		d, err := p.files.parseDist(thinkDist(z))
		if err != nil {
			top.errAt("load.trace", "the think time measured, %s: %v", thinkDist(z), err)
			return
		}
		l.Think = d
	}
}

// thinkDist writes a measured think time as a distribution: constant
// when it barely varies, exponential when its coefficient of variation is
// near 1 or unknown, a lognormal of that mean and variation otherwise.
func thinkDist(z loadtest.Think) string {
	m := time.Duration(math.Round(z.Mean*1e6)) * time.Microsecond
	switch {
	case m <= 0:
		return "const(0s)"
	case math.IsNaN(z.CV) || math.Abs(z.CV-1) < 0.15:
		return fmt.Sprintf("exp(%v)", m)
	case z.CV < 0.05:
		return fmt.Sprintf("const(%v)", m)
	}
	return fmt.Sprintf("lognormal(mean=%v,cv=%s)", m, strconv.FormatFloat(z.CV, 'g', 3, 64))
}

// loadKindOf names the load kind a load key belongs to, for messages.
func loadKindOf(key string) string {
	switch key {
	case "load.trace", "load.replay":
		return "trace"
	case "load.users", "load.users_schedule", "load.think":
		return "closed"
	}
	return "open"
}
