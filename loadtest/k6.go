package loadtest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/internal/quote"
)

// k6's JSON output (k6 run --out json=FILE): one JSON object a line,
// {"type":"Metric",...} declaring a metric, then {"type":"Point",
// "metric":NAME,"data":{"time":RFC3339,"value":V,"tags":{...}}} for every
// sample. An HTTP request's samples are all stamped with the time its
// response ended (k6's httpext.Trail.SaveSamples: Time: EndTime); tsim
// reads http_req_duration (milliseconds: sending, waiting and receiving)
// as the request, started that long before, failed when its
// expected_response tag is "false" (or, without that tag, its status is 0
// or 400 and above), and sent by the virtual user of its vu tag when k6
// was run with --system-tags including vu; and vus, the virtual users
// active, reported once a second.

type k6Line struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Time  string            `json:"time"`
		Value *float64          `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}

func parseK6(data []byte, file string) (*Result, error) {
	r := &Result{File: file, Tool: "k6"}
	var us users
	labels := map[string]bool{}
	var base time.Time
	baseSet := false
	rel := func(t time.Time) (time.Duration, bool) {
		if !baseSet {
			base, baseSet = t, true
			r.Epoch = t.UTC()
		}
		d := t.Sub(base)
		return d, d <= MaxSpan && d >= -MaxSpan
	}
	points := 0
	err := lines(data, file, func(n int, line []byte) error {
		if len(strings.TrimSpace(string(line))) == 0 {
			return nil
		}
		var l k6Line
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("%s:%d: not a JSON object as k6 writes one a line (%s)", file, n, jsonWhat(err))
		}
		if l.Type != "Point" {
			return nil
		}
		if l.Metric != "http_req_duration" && l.Metric != "vus" {
			return nil
		}
		points++
		if l.Data.Value == nil {
			return fmt.Errorf("%s:%d: a %s point without a value", file, n, l.Metric)
		}
		t, err := time.Parse(time.RFC3339Nano, l.Data.Time)
		if err != nil {
			return fmt.Errorf("%s:%d: time %s is not an RFC 3339 time as k6 writes it", file, n, quote.Excerpt(l.Data.Time, 40))
		}
		end, ok := rel(t)
		if !ok {
			return fmt.Errorf("%s:%d: time %s is more than 30 days from the first point's; tsim simulates at most 30 days", file, n, quote.Excerpt(l.Data.Time, 40))
		}
		v := *l.Data.Value
		if l.Metric == "vus" {
			if v < 0 || v > MaxUsers {
				return fmt.Errorf("%s:%d: vus %g is not a count of virtual users", file, n, v)
			}
			r.Users = append(r.Users, UsersPoint{At: end, Users: v})
			return nil
		}
		d, ok := millis(v)
		if !ok || checkElapsed(d) != "" {
			return fmt.Errorf("%s:%d: http_req_duration %g is not a duration in milliseconds (from 0 to 30 days)", file, n, v)
		}
		if len(r.Requests) >= MaxRequests {
			return fmt.Errorf("%s:%d: more than %d requests; keep the part of the test to compare", file, n, MaxRequests)
		}
		q := Request{Start: end - d, Elapsed: d, OK: k6OK(l.Data.Tags), User: -1}
		if vu := l.Data.Tags["vu"]; vu != "" {
			if q.User, err = us.id(vu); err != nil {
				return fmt.Errorf("%s:%d: %v", file, n, err)
			}
		}
		if name := l.Data.Tags["name"]; len(labels) < 10000 {
			labels[name] = true
		}
		r.Requests = append(r.Requests, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(r.Users) > 0 {
		r.UsersFrom = "vus"
	}
	r.UserNames = us.names
	r.Labels = len(labels)
	return r, nil
}

// k6OK says whether a request succeeded, by its tags.
func k6OK(tags map[string]string) bool {
	if e, ok := tags["expected_response"]; ok {
		return e == "true"
	}
	s := tags["status"]
	if s == "" {
		return true
	}
	return s != "0" && s < "400" && len(s) == 3
}

// jsonWhat says what is wrong with a line, without quoting it.
func jsonWhat(err error) string {
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("a syntax error at byte %d", e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("%s is a JSON %s", e.Field, e.Value)
	}
	return "not JSON"
}
