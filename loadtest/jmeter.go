package loadtest

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/internal/quote"
)

// JMeter's CSV results file (.jtl), as JMeter writes it with -l FILE: a
// header line naming the fields saved (jmeter.save.saveservice.*, the
// default set being timeStamp, elapsed, label, responseCode,
// responseMessage, threadName, dataType, success, failureMessage, bytes,
// sentBytes, grpThreads, allThreads, URL, Latency, IdleTime, Connect), then
// one sample a line. timeStamp is the sample's start in milliseconds since
// the Unix epoch (sampleresult.timestamp.start=true and
// timestamp_format=ms, JMeter's defaults) or a date; elapsed is in
// milliseconds, from just before the request was sent to the last byte of
// the response. Of the fields, tsim reads timeStamp and elapsed (both
// required), success, threadName, allThreads and label; a transaction
// controller's parent samples ("Number of samples in transaction") are
// skipped, as their children are in the file too.

// jmeterHeader reports whether a first line is a JMeter CSV header.
func jmeterHeader(line []byte) bool {
	return bytes.Contains(line, []byte("timeStamp")) && bytes.Contains(line, []byte("elapsed"))
}

// dateLayouts are timestamp_format values people use, as Go layouts.
var dateLayouts = []string{
	"2006/01/02 15:04:05.000", "2006/01/02 15:04:05", "2006-01-02 15:04:05.000", "2006-01-02 15:04:05",
	"2006-01-02T15:04:05.000Z0700", "2006-01-02T15:04:05.000Z07:00", "2006-01-02T15:04:05Z07:00", "01/02/06 15:04:05",
}

func parseJMeter(data []byte, file string) (*Result, error) {
	head := firstLine(data)
	sep := byte(',')
	for _, c := range []byte{'\t', ';', '|'} {
		if bytes.Count(head, []byte{c}) > bytes.Count(head, []byte{sep}) {
			sep = c
		}
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.Comma = rune(sep)
	cr.ReuseRecord = true
	at := func() int { l, _ := cr.FieldPos(0); return l }
	hdr, err := cr.Read()
	if err != nil {
		return nil, csvErr(file, err)
	}
	col := map[string]int{}
	for i, h := range hdr {
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	get := func(name string) int {
		if i, ok := col[name]; ok {
			return i
		}
		return -1
	}
	cTime, cElapsed, cOK, cThread, cAll, cLabel, cMsg := get("timeStamp"), get("elapsed"), get("success"), get("threadName"), get("allThreads"), get("label"), get("responseMessage")
	if cTime < 0 || cElapsed < 0 {
		return nil, fmt.Errorf("%s:1: the header has no timeStamp or no elapsed field; tsim needs both (jmeter.save.saveservice.time=true and the time stamp, JMeter's defaults)", file)
	}
	cr.FieldsPerRecord = len(hdr)
	r := &Result{File: file, Tool: "JMeter"}
	var us users
	labels := map[string]bool{}
	var base int64 // the first row's time stamp, ms
	var baseSet bool
	skipped := 0
	lastUsers := -1.0
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvErr(file, err)
		}
		line := at()
		if len(r.Requests) >= MaxRequests {
			return nil, fmt.Errorf("%s:%d: more than %d samples; keep the part of the test to compare", file, line, MaxRequests)
		}
		if cMsg >= 0 && strings.HasPrefix(rec[cMsg], "Number of samples in transaction") {
			skipped++
			continue
		}
		ms, ok := jmeterStamp(rec[cTime])
		if !ok {
			return nil, fmt.Errorf("%s:%d: timeStamp %s is neither milliseconds since 1970 nor a date tsim reads; save it as milliseconds (jmeter.save.saveservice.timestamp_format=ms, JMeter's default)", file, line, quote.Excerpt(rec[cTime], 32))
		}
		if !baseSet {
			base, baseSet = ms, true
			r.Epoch = time.UnixMilli(ms).UTC()
		}
		if d := ms - base; d > MaxSpan.Milliseconds() || d < -MaxSpan.Milliseconds() {
			return nil, fmt.Errorf("%s:%d: timeStamp %s is more than 30 days from the first sample's; tsim simulates at most 30 days", file, line, quote.Excerpt(rec[cTime], 32))
		}
		el, err := strconv.ParseFloat(strings.TrimSpace(rec[cElapsed]), 64)
		d, ok := millis(el)
		if err != nil || !ok || checkElapsed(d) != "" {
			return nil, fmt.Errorf("%s:%d: elapsed %s is not a duration in milliseconds (a number from 0 to 30 days)", file, line, quote.Excerpt(rec[cElapsed], 32))
		}
		q := Request{Start: time.Duration(ms-base) * time.Millisecond, Elapsed: d, OK: true, User: -1}
		if cOK >= 0 {
			switch strings.ToLower(strings.TrimSpace(rec[cOK])) {
			case "true":
			case "false":
				q.OK = false
			default:
				return nil, fmt.Errorf("%s:%d: success %s is neither true nor false", file, line, quote.Excerpt(rec[cOK], 32))
			}
		}
		if cThread >= 0 {
			if q.User, err = us.id(rec[cThread]); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", file, line, err)
			}
		}
		if cLabel >= 0 && len(labels) < 10000 {
			labels[rec[cLabel]] = true
		}
		if cAll >= 0 {
			n, err := strconv.ParseFloat(strings.TrimSpace(rec[cAll]), 64)
			if err != nil || n < 0 || n > MaxUsers {
				return nil, fmt.Errorf("%s:%d: allThreads %s is not a count of threads", file, line, quote.Excerpt(rec[cAll], 32))
			}
			if n != lastUsers {
				r.Users = append(r.Users, UsersPoint{At: q.Start, Users: n})
				lastUsers = n
			}
		}
		r.Requests = append(r.Requests, q)
	}
	if cAll >= 0 {
		r.UsersFrom = "allThreads"
	}
	r.UserNames = us.names
	r.Labels = len(labels)
	if skipped > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d transaction controller samples skipped (their requests are in the file on their own)", skipped))
	}
	return r, nil
}

// jmeterStamp reads a timeStamp: milliseconds since the epoch, or a date.
func jmeterStamp(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, ms > 0
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UnixMilli(), true
		}
	}
	return 0, false
}

func csvErr(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d:%d: %v", file, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %v", file, err)
}
