package loadtest

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the samples of testdata/ from the generator")

// The samples of testdata are one made-up test — an online shop's home
// page and product page under a ramp of five users, each thinking an
// exponential second between a reply and its next request, a reply taking
// about 100 ms, one in forty failing with a 500 — written as each tool
// writes its results, from the tools' documentation: jmeter.jtl as JMeter
// 5's CSV results (its default fields), k6.json as k6 run --out json
// (Metric declarations, then http_req_duration, http_reqs and vus points
// stamped when the response ended, in a +01:00 zone), simulation.log as
// Gatling 3.9's text log and simulation-3.3.log as Gatling 3.3's (with
// user ids).

type genReq struct {
	user           int
	start, elapsed time.Duration
	ok             bool
	label          string
}

const (
	genUsers    = 5
	genRampStep = 6 * time.Second // user i starts at i·6 s
	genEnd      = 60 * time.Second
	genThink    = time.Second
)

var genEpoch = time.Date(2024, 3, 5, 9, 0, 0, 0, time.UTC)

// generate is the test: every request, by start.
func generate() []genReq {
	rng := rand.New(rand.NewPCG(27, 2))
	var out []genReq
	for u := 0; u < genUsers; u++ {
		t := time.Duration(u) * genRampStep
		for i := 0; ; i++ {
			el := time.Duration(40+rng.ExpFloat64()*60) * time.Millisecond
			if t+el > genEnd {
				break
			}
			label := "home"
			if i%2 == 1 {
				label = "product"
			}
			out = append(out, genReq{user: u, start: t, elapsed: el, ok: rng.IntN(40) != 0, label: label})
			t += el + time.Duration(rng.ExpFloat64()*float64(genThink)).Round(time.Millisecond)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// usersAt is how many users are running at t.
func usersAt(t time.Duration) int {
	return min(genUsers, int(t/genRampStep)+1)
}

func writeJMeter(reqs []genReq) string {
	var b strings.Builder
	b.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n")
	byEnd := append([]genReq(nil), reqs...)
	sort.SliceStable(byEnd, func(i, j int) bool { return byEnd[i].start+byEnd[i].elapsed < byEnd[j].start+byEnd[j].elapsed })
	for _, q := range byEnd {
		code, msg, ok, fail := "200", "OK", "true", ""
		if !q.ok {
			code, msg, ok, fail = "500", "Internal Server Error", "false", ""
		}
		n := usersAt(q.start)
		ms := q.elapsed.Milliseconds()
		fmt.Fprintf(&b, "%d,%d,%s,%s,%s,Shop users 1-%d,text,%s,%s,%d,%d,%d,%d,https://shop.example/%s,%d,0,%d\n",
			genEpoch.Add(q.start).UnixMilli(), ms, q.label, code, msg, q.user+1, ok, fail, 5120+q.user, 131, n, n, q.label, ms-3, 2)
	}
	return b.String()
}

func writeK6(reqs []genReq) string {
	zone := time.FixedZone("", 3600)
	var b strings.Builder
	for _, m := range []struct{ name, typ, contains string }{{"vus", "gauge", "default"}, {"http_reqs", "counter", "default"}, {"http_req_duration", "trend", "time"}} {
		fmt.Fprintf(&b, `{"type":"Metric","data":{"name":"%s","type":"%s","contains":"%s","thresholds":[],"submetrics":null},"metric":"%s"}`+"\n", m.name, m.typ, m.contains, m.name)
	}
	type line struct {
		at time.Duration
		s  string
	}
	var ls []line
	stamp := func(d time.Duration) string {
		return genEpoch.Add(d).In(zone).Format("2006-01-02T15:04:05.000000-07:00")
	}
	for _, q := range reqs {
		end := q.start + q.elapsed
		status, exp := "200", "true"
		if !q.ok {
			status, exp = "500", "false"
		}
		tags := fmt.Sprintf(`{"expected_response":"%s","group":"","method":"GET","name":"https://shop.example/%s","proto":"HTTP/1.1","scenario":"default","status":"%s","tls_version":"tls1.3","url":"https://shop.example/%s"}`, exp, q.label, status, q.label)
		ls = append(ls,
			line{end, fmt.Sprintf(`{"type":"Point","data":{"time":"%s","value":1,"tags":%s},"metric":"http_reqs"}`, stamp(end), tags)},
			line{end, fmt.Sprintf(`{"type":"Point","data":{"time":"%s","value":%.6f,"tags":%s},"metric":"http_req_duration"}`, stamp(end), float64(q.elapsed)/1e6, tags)})
	}
	for s := time.Duration(0); s <= genEnd; s += time.Second {
		ls = append(ls, line{s, fmt.Sprintf(`{"type":"Point","data":{"time":"%s","value":%d,"tags":null},"metric":"vus"}`, stamp(s), usersAt(s))})
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].at < ls[j].at })
	for _, l := range ls {
		b.WriteString(l.s + "\n")
	}
	return b.String()
}

func writeGatling(reqs []genReq, v33 bool) string {
	ms := func(d time.Duration) int64 { return genEpoch.Add(d).UnixMilli() }
	type line struct {
		at time.Duration
		s  string
	}
	var ls []line
	for u := 0; u < genUsers; u++ {
		start := time.Duration(u) * genRampStep
		if v33 {
			ls = append(ls, line{start, fmt.Sprintf("USER\tShop users\t%d\tSTART\t%d\t%d", u+1, ms(start), ms(start))},
				line{genEnd, fmt.Sprintf("USER\tShop users\t%d\tEND\t%d\t%d", u+1, ms(start), ms(genEnd))})
		} else {
			ls = append(ls, line{start, fmt.Sprintf("USER\tShop users\tSTART\t%d", ms(start))}, line{genEnd, fmt.Sprintf("USER\tShop users\tEND\t%d", ms(genEnd))})
		}
	}
	for _, q := range reqs {
		status, msg := "OK", " "
		if !q.ok {
			status, msg = "KO", "status.find.in(200 to 210,...), but actually found 500"
		}
		end := q.start + q.elapsed
		if v33 {
			ls = append(ls, line{end, fmt.Sprintf("REQUEST\t%d\t\t%s\t%d\t%d\t%s\t%s", q.user+1, q.label, ms(q.start), ms(end), status, msg)})
		} else {
			ls = append(ls, line{end, fmt.Sprintf("REQUEST\t\t%s\t%d\t%d\t%s\t%s", q.label, ms(q.start), ms(end), status, msg)})
		}
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].at < ls[j].at })
	version := "3.9.5"
	if v33 {
		version = "3.3.1"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "RUN\tshop.ShopSimulation\tshopsimulation-20240305090000000\t%d\t \t%s\n", ms(0), version)
	for _, l := range ls {
		b.WriteString(l.s + "\n")
	}
	return b.String()
}

var samples = []struct {
	file, tool string
	write      func([]genReq) string
	users      bool // the file says who sent each request
}{
	{"jmeter.jtl", "JMeter", writeJMeter, true},
	{"k6.json", "k6", writeK6, false},
	{"simulation.log", "Gatling", func(r []genReq) string { return writeGatling(r, false) }, false},
	{"simulation-3.3.log", "Gatling", func(r []genReq) string { return writeGatling(r, true) }, true},
}

func readSample(t *testing.T, file string) *Result {
	t.Helper()
	data, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(data, file)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSamples: each tool's file of the one test reads as that test: its
// requests, when they started and how long they took, which failed, the
// ramp of users, and a think time near the second the users took.
func TestSamples(t *testing.T) {
	reqs := generate()
	for _, s := range samples {
		t.Run(s.file, func(t *testing.T) {
			if *update {
				if err := os.WriteFile("testdata/"+s.file, []byte(s.write(reqs)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := readSample(t, s.file)
			if r.Tool != s.tool || len(r.Requests) != len(reqs) {
				t.Fatalf("%s with %d requests, want %s with %d", r.Tool, len(r.Requests), s.tool, len(reqs))
			}
			if !r.Epoch.Equal(genEpoch) {
				t.Errorf("epoch %v, want %v", r.Epoch, genEpoch)
			}
			ko := 0
			for i, q := range r.Requests {
				w := reqs[i]
				// k6 stamps the end, in microseconds: the start is within
				// a millisecond of JMeter's.
				if (q.Start-w.start).Abs() > time.Millisecond || (q.Elapsed-w.elapsed).Abs() > time.Millisecond {
					t.Fatalf("request %d: %v for %v, want %v for %v", i, q.Start, q.Elapsed, w.start, w.elapsed)
				}
				if !q.OK {
					ko++
				}
				if q.OK != w.ok {
					t.Errorf("request %d: ok %v, want %v", i, q.OK, w.ok)
				}
			}
			if ko == 0 {
				t.Error("no failed request")
			}
			users, from := r.UsersSchedule()
			if len(users) == 0 {
				t.Fatal("no users over time")
			}
			at := func(d time.Duration) float64 {
				v := users[0].Value
				for _, p := range users {
					if p.At <= d {
						v = p.Value
					}
				}
				return v
			}
			for _, d := range []time.Duration{3 * time.Second, 15 * time.Second, 40 * time.Second} {
				if got, want := at(d), float64(usersAt(d)); math.Abs(got-want) > 1 {
					t.Errorf("users at %v: %g, want %g (from %s)", d, got, want, from)
				}
			}
			z, ok := r.ThinkTime()
			if !ok {
				t.Fatal("no think time")
			}
			// Per-thread gaps give the second within its sampling error;
			// the response time law over a ramp, roughly.
			tol := 0.15
			if !s.users {
				tol = 0.35
			}
			if math.Abs(z.Mean-1) > tol {
				t.Errorf("think %.3f s from %s, want 1 s ± %g", z.Mean, z.From, tol)
			}
			if s.users && math.Abs(z.CV-1) > 0.2 {
				t.Errorf("think CV %.3f, want about 1 (exponential)", z.CV)
			}
		})
	}
}
