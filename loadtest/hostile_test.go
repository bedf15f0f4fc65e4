package loadtest

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// TestHostile: whatever the file, Parse returns a result or an error that
// names the file (and the line where there is one), quotes at most a short
// excerpt, and never panics.
func TestHostile(t *testing.T) {
	jtl, _ := os.ReadFile("testdata/jmeter.jtl")
	k6, _ := os.ReadFile("testdata/k6.json")
	glog, _ := os.ReadFile("testdata/simulation.log")
	huge := strings.Repeat("7", 3<<20)
	secret := "root:$y$j9T$SECRETHASH:19000:0:99999:7:::\n"
	lines := func(s []byte, n int) string { return strings.Join(strings.SplitAfter(string(s), "\n")[:n], "") }
	for _, tc := range []struct {
		name, file, data, want string
	}{
		{"empty", "r.jtl", "", "r.jtl: empty"},
		{"a password file", "r.jtl", secret, "r.jtl:1: not a load test's results"},
		{"JMeter XML", "r.jtl", `<?xml version="1.0" encoding="UTF-8"?>` + "\n<testResults version=\"1.2\">\n", "JMeter's XML results"},
		{"binary Gatling", "simulation.log", "\x00\x01\x02RUN", "a binary simulation.log (Gatling 3.10"},
		{"a huge timeStamp", "r.jtl", lines(jtl, 1) + huge + ",1,a,200,OK,t,text,true,,1,1,1,1,u,1,0,1\n", "r.jtl:2: timeStamp \"777"},
		{"negative elapsed", "r.jtl", lines(jtl, 1) + "1709629200000,-5,a,200,OK,t,text,true,,1,1,1,1,u,1,0,1\n", "r.jtl:2: elapsed \"-5\""},
		{"NaN elapsed", "r.jtl", lines(jtl, 1) + "1709629200000,NaN,a,200,OK,t,text,true,,1,1,1,1,u,1,0,1\n", "r.jtl:2: elapsed \"NaN\""},
		{"a hundred years", "r.jtl", lines(jtl, 2) + "4865302800000,5,a,200,OK,t,text,true,,1,1,1,1,u,1,0,1\n", "r.jtl:3: timeStamp \"4865302800000\" is more than 30 days"},
		{"success maybe", "r.jtl", lines(jtl, 1) + "1709629200000,5,a,200,OK,t,text,maybe,,1,1,1,1,u,1,0,1\n", "r.jtl:2: success \"maybe\""},
		{"a short row", "r.jtl", lines(jtl, 1) + "1709629200000,5\n", "r.jtl:2:"},
		{"no timeStamp", "r.jtl", "time,elapsed\n1,2\n", "r.jtl:1: not a load test's results"},
		{"header only", "r.jtl", lines(jtl, 1), "no request"},
		{"a k6 line not JSON", "k6.json", lines(k6, 3) + "{\"type\":\"Point\", oops\n", "k6.json:4: not a JSON object"},
		{"a k6 bad time", "k6.json", `{"type":"Point","data":{"time":"yesterday","value":1,"tags":null},"metric":"vus"}` + "\n", `k6.json:1: time "yesterday"`},
		{"a k6 line too long", "k6.json", `{"type":"Point","data":{"time":"` + huge + "\"}}\n", "k6.json:1: a line of more than 256 KiB"},
		{"a k6 duration of 1e300", "k6.json", `{"type":"Point","data":{"time":"2024-01-01T00:00:00Z","value":1e300,"tags":null},"metric":"http_req_duration"}` + "\n", "k6.json:1: http_req_duration 1e+300"},
		{"a Gatling record unknown", "simulation.log", lines(glog, 2) + "EVIL\tx\n", `simulation.log:3: a record "EVIL"`},
		{"a Gatling request backwards", "simulation.log", lines(glog, 2) + "REQUEST\t\thome\t1709629200500\t1709629200100\tOK\t \n", "simulation.log:3: the request ends before it starts"},
		{"a Gatling status", "simulation.log", lines(glog, 2) + "REQUEST\t\thome\t1709629200100\t1709629200500\tMAYBE\t \n", `a request's status "MAYBE"`},
		{"a Gatling USER of 5 fields", "simulation.log", lines(glog, 1) + "USER\ta\tb\tc\td\n", "a USER record of 5 fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Parse([]byte(tc.data), tc.file)
			if err == nil {
				t.Fatalf("no error: %d requests", len(r.Requests))
			}
			msg := err.Error()
			if len(msg) > 500 || strings.Contains(msg, "SECRET") || strings.ContainsRune(msg, 0) {
				t.Errorf("message of %d bytes: %.300q", len(msg), msg)
			}
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%s\ndoes not say %q", msg, tc.want)
			}
		})
	}
}

// TestCompareItself: a run whose points are the measured requests
// compares equal to them, window by window.
func TestCompareItself(t *testing.T) {
	r := readSample(t, "jmeter.jtl")
	run := &results.Run{Duration: 60}
	for _, q := range r.Requests {
		o := results.Completed
		if !q.OK {
			o = results.Failed
		}
		run.Points = append(run.Points, results.Point{T: q.End().Seconds(), Latency: q.Elapsed.Seconds(), Outcome: o})
	}
	c := r.Compare(run, 6)
	if len(c.Windows) != 5 || c.Overall.FromS != 6 {
		t.Fatalf("%d windows from %g, want 5 from 6 s", len(c.Windows), c.Overall.FromS)
	}
	for _, w := range append(c.Windows, c.Overall) {
		if w.Measured != w.Simulated || w.Measured.Requests == 0 || math.IsNaN(w.Measured.P99S) {
			t.Errorf("%g–%g s: measured %+v, simulated %+v", w.FromS, w.ToS, w.Measured, w.Simulated)
		}
	}
	if p := c.Overall.Measured.P50S; p < 0.05 || p > 0.15 {
		t.Errorf("median %v, want about 80 ms", p)
	}
	_ = time.Second
}

// FuzzParse: no input panics Parse, and an accepted one's requests are
// in order from 0 within the span.
func FuzzParse(f *testing.F) {
	for _, s := range samples {
		data, _ := os.ReadFile("testdata/" + s.file)
		f.Add(data[:min(len(data), 4000)], s.file)
	}
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		r, err := Parse(data, name)
		if err != nil {
			return
		}
		for i, q := range r.Requests {
			if q.Start < 0 || q.Elapsed < 0 || i > 0 && q.Start < r.Requests[i-1].Start || q.End() > MaxSpan {
				t.Fatalf("request %d: %+v", i, q)
			}
		}
		r.UsersSchedule()
		r.ThinkTime()
		r.RateSchedule()
	})
}
