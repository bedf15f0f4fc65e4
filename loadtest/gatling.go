package loadtest

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/tsim-dev/tsim/internal/quote"
)

// Gatling's simulation.log, the text log of Gatling 3.0 to 3.9 (3.10 made
// it binary): one record a line, its fields separated by tabs, times in
// milliseconds since the Unix epoch.
//
//	RUN      simulation class, id, start, description, Gatling version
//	USER     scenario, START|END, time                (3.4 to 3.9)
//	USER     scenario, user id, START|END, start, end (3.0 to 3.3)
//	REQUEST  groups, name, start, end, OK|KO, message          (3.4 to 3.9)
//	REQUEST  user id, groups, name, start, end, OK|KO, message (3.0 to 3.3)
//	GROUP, ERROR, ASSERTION: not read
//
// A REQUEST's start is when it was sent and its end when the response was
// in; USER records give the users active over time.

func parseGatling(data []byte, file string) (*Result, error) {
	r := &Result{File: file, Tool: "Gatling"}
	var us users
	labels := map[string]bool{}
	var base int64
	baseSet := false
	active := 0.0
	stamp := func(s []byte, n int, what string) (time.Duration, error) {
		ms, err := strconv.ParseInt(string(bytes.TrimSpace(s)), 10, 64)
		if err != nil || ms <= 0 {
			return 0, fmt.Errorf("%s:%d: %s %s is not milliseconds since 1970", file, n, what, quote.Excerpt(string(s), 32))
		}
		if !baseSet {
			base, baseSet = ms, true
			r.Epoch = time.UnixMilli(ms).UTC()
		}
		d := ms - base
		if d > MaxSpan.Milliseconds() || d < -MaxSpan.Milliseconds() {
			return 0, fmt.Errorf("%s:%d: %s %s is more than 30 days from the first record's; tsim simulates at most 30 days", file, n, what, quote.Excerpt(string(s), 32))
		}
		return time.Duration(d) * time.Millisecond, nil
	}
	err := lines(data, file, func(n int, line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		f := bytes.Split(line, []byte("\t"))
		switch string(f[0]) {
		case "RUN":
			if len(f) < 4 {
				return fmt.Errorf("%s:%d: a RUN record of %d fields; Gatling writes class, id, start, description, version", file, n, len(f))
			}
			_, err := stamp(f[3], n, "the run's start")
			return err
		case "USER":
			var ev, at []byte
			switch len(f) {
			case 4: // scenario, START|END, time
				ev, at = f[2], f[3]
			case 6: // scenario, user id, START|END, start, end
				ev, at = f[3], f[4]
				if string(ev) == "END" {
					at = f[5]
				}
			default:
				return fmt.Errorf("%s:%d: a USER record of %d fields; Gatling 3.0 to 3.9 write 4 or 6", file, n, len(f))
			}
			t, err := stamp(at, n, "the user's time")
			if err != nil {
				return err
			}
			switch string(ev) {
			case "START":
				active++
			case "END":
				active = max(active-1, 0)
			default:
				return fmt.Errorf("%s:%d: a USER record neither START nor END", file, n)
			}
			r.Users = append(r.Users, UsersPoint{At: t, Users: active})
			return nil
		case "REQUEST":
			var user, name, start, end, status []byte
			switch len(f) {
			case 7: // groups, name, start, end, status, message
				name, start, end, status = f[2], f[3], f[4], f[5]
			case 8: // user id, groups, name, start, end, status, message
				user, name, start, end, status = f[1], f[3], f[4], f[5], f[6]
			default:
				return fmt.Errorf("%s:%d: a REQUEST record of %d fields; Gatling 3.0 to 3.9 write 7 or 8", file, n, len(f))
			}
			s, err := stamp(start, n, "the request's start")
			if err != nil {
				return err
			}
			e, err := stamp(end, n, "the request's end")
			if err != nil {
				return err
			}
			if what := checkElapsed(e - s); what != "" {
				return fmt.Errorf("%s:%d: the request ends before it starts or lasts %s; %s", file, n, fmtDur(e-s), what)
			}
			if len(r.Requests) >= MaxRequests {
				return fmt.Errorf("%s:%d: more than %d requests; keep the part of the test to compare", file, n, MaxRequests)
			}
			q := Request{Start: s, Elapsed: e - s, User: -1}
			switch string(status) {
			case "OK":
				q.OK = true
			case "KO":
			default:
				return fmt.Errorf("%s:%d: a request's status %s is neither OK nor KO", file, n, quote.Excerpt(string(status), 16))
			}
			if user != nil {
				if q.User, err = us.id(string(user)); err != nil {
					return fmt.Errorf("%s:%d: %v", file, n, err)
				}
			}
			if len(labels) < 10000 {
				labels[string(name)] = true
			}
			r.Requests = append(r.Requests, q)
		case "GROUP", "ERROR", "ASSERTION":
		default:
			return fmt.Errorf("%s:%d: a record %s; a Gatling simulation.log has RUN, USER, REQUEST, GROUP, ERROR and ASSERTION records", file, n, quote.Excerpt(string(f[0]), 16))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(r.Users) > 0 {
		r.UsersFrom = "USER records"
	}
	r.UserNames = us.names
	r.Labels = len(labels)
	return r, nil
}
