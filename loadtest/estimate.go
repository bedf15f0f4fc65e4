package loadtest

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Arrivals are the instants the requests were sent, in order, from 0: an
// open load replayed as it was (format's load kind "trace").
func (r *Result) Arrivals() []time.Duration {
	out := make([]time.Duration, len(r.Requests))
	for i, q := range r.Requests {
		out[i] = q.Start
	}
	return out
}

// Point is a corner of a piecewise-linear schedule (model.Schedule's).
type Point struct {
	At    time.Duration
	Value float64
}

// RateSchedule is the arrivals per second over time: their count in
// windows of a two-hundredth of the span (at least a second), each at its
// window's middle — what the bounds and the plan take of a replayed load.
func (r *Result) RateSchedule() []Point {
	span := r.Requests[len(r.Requests)-1].Start
	w := max(time.Second, span/200)
	n := int(span/w) + 1
	counts := make([]float64, n)
	for _, q := range r.Requests {
		counts[min(int(q.Start/w), n-1)]++
	}
	out := make([]Point, n)
	for i, c := range counts {
		out[i] = Point{At: time.Duration(i)*w + w/2, Value: c / w.Seconds()}
	}
	return out
}

// UsersSchedule is the users active over time — the ramp — as the tool
// reported them (JMeter's allThreads, k6's vus, Gatling's USER records),
// or else from each thread's or user's first request to its last reply;
// at most a few thousand corners (averaged in windows beyond that). It
// says where it came from; nil when the file says nothing of users.
func (r *Result) UsersSchedule() ([]Point, string) {
	pts, from := r.Users, r.UsersFrom
	if len(pts) == 0 && len(r.UserNames) > 0 {
		pts, from = r.threadLives(), "each thread's first request to its last reply"
	}
	if len(pts) == 0 {
		return nil, ""
	}
	// Users reported before the first request count from it.
	if pts[0].At < 0 {
		k := 0
		for k+1 < len(pts) && pts[k+1].At <= 0 {
			k++
		}
		pts = append([]UsersPoint{{At: 0, Users: pts[k].Users}}, pts[k+1:]...)
	}
	// A step function: each value holds until the next point, a step
	// being two corners at one instant.
	var out []Point
	span := max(r.Span(), pts[len(pts)-1].At)
	if len(pts) <= maxUserPoints {
		var raw []Point
		for i, p := range pts {
			if i > 0 {
				raw = append(raw, Point{At: p.At, Value: pts[i-1].Users})
			}
			raw = append(raw, Point{At: p.At, Value: p.Users})
		}
		for i := 0; i < len(raw); {
			j := i
			for j+1 < len(raw) && raw[j+1].At == raw[i].At {
				j++
			}
			out = append(out, raw[i])
			if j > i && raw[j].Value != raw[i].Value {
				out = append(out, raw[j])
			}
			i = j + 1
		}
		return dedupe(out), from
	}
	// Too many: the time-weighted mean in maxUserPoints windows.
	w := max(time.Millisecond, span/maxUserPoints)
	n := int(span/w) + 1
	sum := make([]float64, n)
	for i, p := range pts {
		end := span
		if i+1 < len(pts) {
			end = pts[i+1].At
		}
		for t := p.At; t < end; {
			b := min(int(t/w), n-1)
			next := min(end, time.Duration(b+1)*w)
			if b == n-1 {
				next = end
			}
			sum[b] += p.Users * (next - t).Seconds()
			t = next
		}
	}
	for b := range sum {
		out = append(out, Point{At: time.Duration(b)*w + w/2, Value: sum[b] / w.Seconds()})
	}
	return dedupe(out), from + ", averaged in windows of " + fmtDur(w)
}

// dedupe drops corners that change nothing (a value equal to the points
// on both sides).
func dedupe(p []Point) []Point {
	if len(p) < 3 {
		return p
	}
	out := []Point{p[0]}
	for i := 1; i < len(p)-1; i++ {
		if p[i].Value == p[i-1].Value && p[i].Value == p[i+1].Value {
			continue
		}
		out = append(out, p[i])
	}
	return append(out, p[len(p)-1])
}

// threadLives counts the users alive over time, each from its first
// request's start to its last reply.
func (r *Result) threadLives() []UsersPoint {
	first := make([]time.Duration, len(r.UserNames))
	last := make([]time.Duration, len(r.UserNames))
	seen := make([]bool, len(r.UserNames))
	for _, q := range r.Requests {
		if q.User < 0 {
			continue
		}
		u := q.User
		if !seen[u] {
			first[u], seen[u] = q.Start, true
		}
		last[u] = max(last[u], q.End())
	}
	type ev struct {
		at time.Duration
		d  float64
	}
	var evs []ev
	for u := range first {
		if seen[u] {
			evs = append(evs, ev{first[u], 1}, ev{last[u], -1})
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at < evs[j].at })
	var out []UsersPoint
	n := 0.0
	for _, e := range evs {
		n += e.d
		out = append(out, UsersPoint{At: e.at, Users: n})
	}
	return out
}

// Think is an estimate of the users' think time: the mean and the
// coefficient of variation of the time between a reply and the same
// user's next request, and how it was reached.
type Think struct {
	Mean, CV float64 // seconds; CV NaN when not known
	N        int     // gaps measured
	From     string
}

// ThinkTime estimates the think time: from each thread's or user's gaps
// between a reply and its next request when the file names who sent each
// request; else by the response time law, Z = N/X − R, over the span,
// with N the mean users, X the requests per second and R their mean
// latency. ok is false when neither is possible.
func (r *Result) ThinkTime() (Think, bool) {
	if len(r.UserNames) > 0 {
		last := make([]time.Duration, len(r.UserNames))
		seen := make([]bool, len(r.UserNames))
		var sum, sum2 float64
		n := 0
		for _, q := range r.Requests {
			if q.User < 0 {
				continue
			}
			if seen[q.User] {
				g := (q.Start - last[q.User]).Seconds()
				if g < 0 {
					g = 0 // a user with requests in parallel (embedded resources)
				}
				sum += g
				sum2 += g * g
				n++
			}
			last[q.User], seen[q.User] = q.End(), true
		}
		if n > 0 {
			m := sum / float64(n)
			cv := math.NaN()
			if m > 0 && n > 1 {
				cv = math.Sqrt(math.Max(0, sum2/float64(n)-m*m)) / m
			}
			return Think{Mean: m, CV: cv, N: n, From: fmt.Sprintf("the %d gaps between a reply and the same thread's next request", n)}, true
		}
	}
	users, _ := r.UsersSchedule()
	span := r.Span().Seconds()
	if len(users) == 0 || span <= 0 {
		return Think{}, false
	}
	var area float64
	for i, p := range users {
		end := r.Span()
		if i+1 < len(users) {
			end = users[i+1].At
		}
		if end > p.At {
			area += p.Value * (end - p.At).Seconds()
		}
	}
	n := area / span
	x := float64(len(r.Requests)) / span
	var rsum float64
	for _, q := range r.Requests {
		rsum += q.Elapsed.Seconds()
	}
	rt := rsum / float64(len(r.Requests))
	z := n/x - rt
	return Think{Mean: math.Max(0, z), CV: math.NaN(), From: fmt.Sprintf("the response time law Z = N/X − R: %.4g users on average, %.4g requests/s, %.4g s response time", n, x, rt)}, true
}

// Shift returns a copy of r whose instants are d later (offset 0 becomes
// d): to put a test on another measurement's time axis.
func (r *Result) Shift(d time.Duration) *Result {
	c := *r
	c.Requests = make([]Request, len(r.Requests))
	for i, q := range r.Requests {
		q.Start += d
		c.Requests[i] = q
	}
	c.Users = make([]UsersPoint, len(r.Users))
	for i, u := range r.Users {
		u.At += d
		c.Users[i] = u
	}
	c.Epoch = r.Epoch.Add(-d)
	return &c
}
