package loadtest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits. MaxSpan is tsim's longest run (format.MaxDuration, which this
// package cannot import: format imports it); a request longer than that
// is not a request a tool measured.
const (
	MaxSpan       = 30 * 24 * time.Hour
	MaxLineBytes  = 256 << 10
	MaxRequests   = 20_000_000
	MaxUsers      = 1_000_000
	maxUserPoints = 4000
)

// Request is one request a load-test tool sent and measured.
type Request struct {
	// Start is when it was sent, since Result.Epoch; Elapsed how long it
	// took until the whole reply was in.
	Start, Elapsed time.Duration
	OK             bool
	// User is the thread (JMeter), virtual user (k6's vu tag) or user
	// (Gatling 3.0–3.3) that sent it, an index into Result.UserNames; -1
	// when the file does not say.
	User int32
}

// End is when the request's reply was in.
func (r Request) End() time.Duration { return r.Start + r.Elapsed }

// UsersPoint is how many users (threads, virtual users) were active at an
// instant, as the tool reported it.
type UsersPoint struct {
	At    time.Duration
	Users float64
}

// Result is a load test's requests.
type Result struct {
	File string
	Tool string // "JMeter", "k6" or "Gatling"
	// Epoch is the wall-clock instant of offset 0: the first request's
	// start.
	Epoch    time.Time
	Requests []Request // in order of Start
	// Users is the active users over time as the tool reported them
	// (JMeter's allThreads, k6's vus, Gatling's USER records); nil when
	// the file has none. UsersFrom says which.
	Users     []UsersPoint
	UsersFrom string
	UserNames []string
	Labels    int // distinct request names
	Notes     []string
}

// Span is from the first request's start to the last reply.
func (r *Result) Span() time.Duration {
	var end time.Duration
	for _, q := range r.Requests {
		end = max(end, q.End())
	}
	return end
}

// Parse reads a load test's results from data; file names it in messages
// (and a name ending in simulation.log or .jtl helps say what a file that
// is none of them was meant to be). The tool is recognised by the
// content: a header line with JMeter's timeStamp and elapsed, a JSON
// object a line (k6), or a RUN record first (Gatling).
func Parse(data []byte, file string) (*Result, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first := firstLine(data)
	base := strings.ToLower(filepath.Base(file))
	var r *Result
	var err error
	switch {
	case len(data) == 0 || len(bytes.TrimSpace(data)) == 0:
		return nil, fmt.Errorf("%s: empty; a load test's results are a JMeter CSV results file, a k6 JSON output or a Gatling simulation.log", file)
	case bytes.HasPrefix(first, []byte("<?xml")) || bytes.HasPrefix(first, []byte("<testResults")):
		return nil, fmt.Errorf("%s:1: JMeter's XML results; tsim reads the CSV results file (jmeter.save.saveservice.output_format=csv, JMeter's default): run again with -l results.jtl -Jjmeter.save.saveservice.output_format=csv", file)
	case bytes.HasPrefix(first, []byte("{")):
		r, err = parseK6(data, file)
	case bytes.HasPrefix(first, []byte("RUN\t")):
		r, err = parseGatling(data, file)
	case bytes.IndexByte(data[:min(len(data), 512)], 0) >= 0 || !utf8.Valid(data[:min(len(data), 512)]) && base == "simulation.log":
		if strings.HasSuffix(base, ".log") {
			return nil, fmt.Errorf("%s: a binary simulation.log (Gatling 3.10 and later write it so); tsim reads the text log of Gatling 3.0 to 3.9, or a JMeter CSV or k6 JSON output", file)
		}
		return nil, fmt.Errorf("%s: binary data, not a load test's results as text (a JMeter CSV results file, a k6 JSON output, a Gatling simulation.log)", file)
	case jmeterHeader(first):
		r, err = parseJMeter(data, file)
	default:
		// Nothing of the file is quoted: it may be anything the user can read.
		return nil, fmt.Errorf("%s:1: not a load test's results: a JMeter CSV results file starts with a header naming timeStamp and elapsed (jmeter.save.saveservice.print_field_names=true, JMeter's default), a k6 JSON output (k6 run --out json=FILE) with a JSON object, a Gatling simulation.log with a RUN record", file)
	}
	if err != nil {
		return nil, err
	}
	return r, r.finish()
}

// finish sorts the requests, makes their instants offsets from the first
// start and checks the span.
func (r *Result) finish() error {
	if len(r.Requests) == 0 {
		return fmt.Errorf("%s: no request in the file; a load test's results have at least one", r.File)
	}
	sort.SliceStable(r.Requests, func(i, j int) bool { return r.Requests[i].Start < r.Requests[j].Start })
	t0 := r.Requests[0].Start
	for i := range r.Requests {
		r.Requests[i].Start -= t0
	}
	for i := range r.Users {
		r.Users[i].At -= t0
	}
	r.Epoch = r.Epoch.Add(t0)
	if s := r.Span(); s > MaxSpan {
		return fmt.Errorf("%s: the requests span %s (from %s); tsim simulates at most %s: keep the part of the test to compare (its requests between two instants)",
			r.File, fmtDur(s), r.Epoch.UTC().Format(time.RFC3339), fmtDur(MaxSpan))
	}
	// Users reported before the first request, or after the last reply,
	// are kept at the ends.
	sort.SliceStable(r.Users, func(i, j int) bool { return r.Users[i].At < r.Users[j].At })
	return nil
}

// firstLine is data's first non-empty line, at most 512 bytes of it.
func firstLine(data []byte) []byte {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		l := bytes.TrimRight(data[:i], "\r")
		if len(bytes.TrimSpace(l)) > 0 {
			return l[:min(len(l), 512)]
		}
		if i == len(data) {
			break
		}
		data = data[i+1:]
	}
	return nil
}

// lines calls f with each line of data (without its end) and its number,
// refusing a line longer than MaxLineBytes.
func lines(data []byte, file string, f func(n int, line []byte) error) error {
	n := 0
	for len(data) > 0 {
		n++
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if i > MaxLineBytes {
			return fmt.Errorf("%s:%d: a line of more than %d KiB; a load test's results have one request a line", file, n, MaxLineBytes>>10)
		}
		if err := f(n, bytes.TrimRight(data[:i], "\r")); err != nil {
			return err
		}
		if i == len(data) {
			break
		}
		data = data[i+1:]
	}
	return nil
}

// users maps user names to indexes, capped.
type users struct {
	idx   map[string]int32
	names []string
}

func (u *users) id(name string) (int32, error) {
	if name == "" {
		return -1, nil
	}
	if u.idx == nil {
		u.idx = map[string]int32{}
	}
	if i, ok := u.idx[name]; ok {
		return i, nil
	}
	if len(u.names) >= MaxUsers {
		return -1, fmt.Errorf("more than %d distinct users or threads", MaxUsers)
	}
	i := int32(len(u.names))
	u.idx[name] = i
	u.names = append(u.names, name)
	return i, nil
}

// checkElapsed refuses a duration no tool measured.
func checkElapsed(d time.Duration) string {
	switch {
	case d < 0:
		return "a negative duration"
	case d > MaxSpan:
		return "a duration of more than 30 days"
	}
	return ""
}

// millis turns milliseconds into a duration, or fails.
func millis(v float64) (time.Duration, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, false
	}
	return time.Duration(math.Round(v * float64(time.Millisecond))), true
}

var errStop = errors.New("stop")

func fmtDur(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s >= 2*365.25*86400:
		return fmt.Sprintf("%.3g years", s/(365.25*86400))
	case s >= 2*86400:
		return fmt.Sprintf("%.3g days", s/86400)
	case s >= 1:
		return fmt.Sprintf("%.3g s", s)
	}
	return fmt.Sprintf("%.3g ms", s*1e3)
}
