package calibrate

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/report"
)

// MaxCaptureBytes bounds a capture file: a day of one-second samples of
// a hundred counters, the largest data file an experiment may name.
const MaxCaptureBytes = format.MaxDataBytes

// Capture is a PerfMon capture in the CSV layout relog writes (PDH CSV
// 4.0), read strictly and kept with the positions of its fields, so that
// every later complaint names the file, the line and the column.
type Capture struct {
	File string
	Log  *report.PerfmonLog
	// T is each row's time in seconds since the first row.
	T []float64

	data    []byte // the file without a byte order mark, for positions
	lines   []int  // line of each row (its time field)
	headCol []int  // column of each header field; [0] is the PDH field
	headRow int    // line of the header
}

// ReadCapture reads the capture at path: a regular file of at most
// MaxCaptureBytes, then ParseCapture.
func ReadCapture(path string) (*Capture, error) {
	data, err := input.ReadRegular(path, MaxCaptureBytes, "captures")
	if err != nil {
		return nil, err
	}
	return ParseCapture(data, path)
}

// ParseCapture reads a capture from data; file names it in messages. The
// file must be PDH CSV as relog writes it (report.ReadPerfmonCSV: the
// header, counter paths, timestamps in order, numbers or " "), each
// counter at most once, with at least two rows. Errors are
// "FILE:LINE:COL: what; what is allowed".
func ParseCapture(data []byte, file string) (*Capture, error) {
	log, err := report.ReadPerfmonCSV(bytes.NewReader(data), file)
	if err != nil {
		return nil, err
	}
	c := &Capture{File: file, Log: log, data: bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))}
	if err := c.positions(); err != nil {
		return nil, err
	}
	seen := map[string]int{}
	for k, p := range log.Counters {
		key := strings.ToLower(p.String())
		if j, ok := seen[key]; ok {
			return nil, fmt.Errorf("%s: counter %s appears twice (also column %d of the header); each counter may appear once", c.head(k), p, c.headCol[j+1])
		}
		seen[key] = k
	}
	if len(log.Times) < 2 {
		return nil, fmt.Errorf("%s:%d:1: %d sample rows; a capture needs at least two (and calibrate about thirty after the warm-up)", file, c.headRow, len(log.Times))
	}
	c.T = make([]float64, len(log.Times))
	for i, t := range log.Times {
		c.T[i] = t.Sub(log.Times[0]).Seconds()
	}
	return c, nil
}

// positions records the line of every row and the column of every header
// field, reading the CSV again as report.ReadPerfmonCSV read it.
func (c *Capture) positions() error {
	cr := csv.NewReader(bytes.NewReader(c.data))
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: %v", c.File, err) // ReadPerfmonCSV read it: unreachable
	}
	c.headRow, _ = cr.FieldPos(0)
	c.headCol = make([]int, len(head))
	for i := range head {
		_, c.headCol[i] = cr.FieldPos(i)
	}
	for {
		if _, err := cr.Read(); err != nil {
			break
		}
		line, _ := cr.FieldPos(0)
		c.lines = append(c.lines, line)
	}
	if len(c.lines) != len(c.Log.Times) {
		return fmt.Errorf("%s: %d rows read, %d positions: the file changed under the reader", c.File, len(c.Log.Times), len(c.lines))
	}
	return nil
}

// head is "FILE:LINE:COL" of counter k's header field.
func (c *Capture) head(k int) string {
	return fmt.Sprintf("%s:%d:%d", c.File, c.headRow, c.headCol[k+1])
}

// at is "FILE:LINE:COL" of counter k's field in row i (k = -1: the time).
func (c *Capture) at(i, k int) string {
	line := c.lines[i]
	col := 1
	cr := csv.NewReader(bytes.NewReader(c.data))
	cr.ReuseRecord = true
	for n := 0; ; n++ {
		if _, err := cr.Read(); err != nil {
			break
		}
		if n == i+1 {
			line, col = cr.FieldPos(k + 1)
			break
		}
	}
	return fmt.Sprintf("%s:%d:%d", c.File, line, col)
}

// Machines lists the machines of the capture, in the order their first
// counter appears.
func (c *Capture) Machines() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range c.Log.Counters {
		if k := strings.ToLower(p.Machine); !seen[k] {
			seen[k] = true
			out = append(out, p.Machine)
		}
	}
	return out
}

// value is counter k in row i (NaN where the capture has none).
func (c *Capture) value(i, k int) float64 { return c.Log.Values[i][k] }

// Interval is the capture's usual sample interval: the median of the
// intervals between the rows given.
func interval(t []float64, rows []int) float64 {
	if len(rows) < 2 {
		return 0
	}
	d := make([]float64, 0, len(rows)-1)
	for j := 1; j < len(rows); j++ {
		d = append(d, t[rows[j]]-t[rows[j-1]])
	}
	sort.Float64s(d)
	return d[len(d)/2]
}

// checkGaps refuses rows whose interval is far from the usual one: a
// capture stopped and restarted, two captures joined, a sample lost.
// Rates and durations are per interval, and the simulation is compared
// with the capture on one time axis, so the samples must be evenly spaced.
func (c *Capture) checkGaps(rows []int) (float64, error) {
	every := interval(c.T, rows)
	if every <= 0 {
		return 0, nil
	}
	for j := 1; j < len(rows); j++ {
		d := c.T[rows[j]] - c.T[rows[j-1]]
		if d > 1.5*every || d < 0.5*every {
			what := "a gap in time"
			if d < 0.5*every {
				what = "samples too close in time"
			}
			return 0, fmt.Errorf("%s: %s: %s is %s after the previous sample (%s, line %d); the capture's samples are %s apart, and calibrate needs them evenly spaced (between half and one and a half times that): cut the capture at the gap (relog -b, -e) and calibrate one piece",
				c.at(rows[j], -1), what, c.stamp(rows[j]), fmtSeconds(d), c.stamp(rows[j-1]), c.lines[rows[j-1]], fmtSeconds(every))
		}
	}
	return every, nil
}

// stamp is row i's time as the file writes it.
func (c *Capture) stamp(i int) string { return c.Log.Times[i].Format("01/02/2006 15:04:05.000") }

// fmtSeconds writes a span of seconds the way a person reads it.
func fmtSeconds(s float64) string {
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return fmt.Sprint(s)
	}
	d := time.Duration(math.Round(s * 1e9))
	switch {
	case s == 0:
		return "0 s"
	case math.Abs(s) >= 1:
		return fmt.Sprintf("%.3g s", s)
	case math.Abs(s) >= 1e-3:
		return fmt.Sprintf("%.3g ms", s*1e3)
	default:
		return fmt.Sprintf("%.3g µs", float64(d)/1e3)
	}
}
