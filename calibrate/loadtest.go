package calibrate

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/loadtest"
)

// A load test run while the capture was recorded (--loadtest: JMeter,
// k6, Gatling) gives what counters cannot: the users and their think
// time, with the ramp. Calibrate aligns it with the capture, writes its
// users over time and think time into the calibrated experiment's load
// (a closed load), simulates with it, and compares the simulated client
// latency over time with the one the tool measured.

// loadFromTest is what a load test puts into the calibration.
type loadFromTest struct {
	lt     *loadtest.Result // shifted: offset 0 is the capture's first sample
	offset time.Duration    // the test's first request, in the capture
	how    string           // how it was aligned
	users  []loadtest.Point // shifted, from 0
	from   string
	think  string // a distribution
	z      loadtest.Think
}

// alignLoadTest places the load test on the capture's time axis: by wall
// clock when the capture's header gives its time zone's bias and the test
// then overlaps the capture, else with its first request at the
// capture's first sample.
func alignLoadTest(c *Capture, lt *loadtest.Result) (time.Duration, string) {
	span := time.Duration(c.T[len(c.T)-1] * float64(time.Second))
	if c.hasBias {
		// PDH writes local time; UTC = local + bias (minutes).
		start := time.Date(c.Times[0].Year(), c.Times[0].Month(), c.Times[0].Day(), c.Times[0].Hour(), c.Times[0].Minute(), c.Times[0].Second(), c.Times[0].Nanosecond(), time.UTC).
			Add(time.Duration(c.Bias) * time.Minute)
		off := lt.Epoch.Sub(start)
		if off > -lt.Span() && off < span {
			return off, fmt.Sprintf("by wall clock: its first request at %s UTC is %s into the capture (whose local times are UTC %+d min)",
				lt.Epoch.Format("2006-01-02 15:04:05.000"), fmtSeconds(off.Seconds()), -c.Bias)
		}
		return 0, fmt.Sprintf("its first request (%s UTC) is not within the capture by wall clock (the capture's local times are UTC %+d min; daylight saving time?), so it is taken as the capture's first sample",
			lt.Epoch.Format("2006-01-02 15:04:05"), -c.Bias)
	}
	return 0, "the capture's header gives no time zone bias (typeperf's), so the test's first request is taken as the capture's first sample"
}

// useLoadTest reads the load test into r: aligned, its users and think
// time, and a note of each.
func (r *Result) useLoadTest(c *Capture, lt *loadtest.Result) {
	off, how := alignLoadTest(c, lt)
	l := &loadFromTest{lt: lt.Shift(off), offset: off, how: how}
	r.loadTest = l
	r.note(fmt.Sprintf("load test %s (%s, %d requests over %s): aligned %s", lt.File, lt.Tool, len(lt.Requests), fmtSeconds(lt.Span().Seconds()), how))
	users, from := l.lt.UsersSchedule()
	z, ok := l.lt.ThinkTime()
	if len(users) == 0 || !ok {
		r.note("load test: it says nothing of its users (no thread or user count or name), so the calibrated experiment keeps its load; replay its arrivals instead with [load] kind = \"trace\", trace = FILE")
		return
	}
	l.users, l.from, l.z = users, from, z
	l.think = thinkDistOf(z)
	peak := 0.0
	for _, p := range users {
		peak = math.Max(peak, p.Value)
	}
	r.note(fmt.Sprintf("load: from the load test, not the experiment: up to %.4g users (%s) thinking %s (%s), written into the calibrated experiment's [load] as users_schedule and think",
		peak, from, l.think, z.From))
}

// thinkDistOf writes a measured think time as format does for a trace
// replayed as users.
func thinkDistOf(z loadtest.Think) string {
	m := time.Duration(math.Round(z.Mean*1e6)) * time.Microsecond
	switch {
	case m <= 0:
		return "const(0s)"
	case math.IsNaN(z.CV) || math.Abs(z.CV-1) < 0.15:
		return fmt.Sprintf("exp(%v)", m)
	case z.CV < 0.05:
		return fmt.Sprintf("const(%v)", m)
	}
	return fmt.Sprintf("lognormal(mean=%v,cv=%.3g)", m, z.CV)
}

// writeLoad puts the load test's users and think time into doc's [load].
func (l *loadFromTest) writeLoad(doc map[string]any) {
	if l == nil || len(l.users) == 0 {
		return
	}
	load, _ := doc["load"].(map[string]any)
	if load == nil {
		load = map[string]any{}
		doc["load"] = load
	}
	for _, k := range []string{"kind", "users", "users_schedule", "think", "rate", "rate_schedule", "interarrival", "trace", "replay"} {
		delete(load, k)
	}
	load["kind"] = "closed"
	var sched []map[string]any
	for _, p := range l.users {
		v := math.Min(math.Round(p.Value*1000)/1000, format.MaxUsers)
		sched = append(sched, map[string]any{"at": p.At.Round(time.Millisecond).String(), "value": v})
	}
	load["users_schedule"] = sched
	load["think"] = l.think
}

// variantSetsLoad reports whether a variant of doc sets a load key: the
// load test's load is then not written, since the variant's setting
// would not fit it.
func variantSetsLoad(doc map[string]any) bool {
	for _, v := range tables(doc["variant"]) {
		set, _ := v["set"].(map[string]any)
		for k := range set {
			if strings.HasPrefix(k, "load.") {
				return true
			}
		}
	}
	return false
}
