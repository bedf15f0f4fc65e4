package calibrate

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/internal/quote"
	"github.com/tsim-dev/tsim/report"
)

// MaxCaptureBytes bounds a capture file: a day of one-second samples of
// a hundred counters, the largest data file an experiment may name.
const MaxCaptureBytes = format.MaxDataBytes

// MaxCounters bounds the counters of a capture that calibrate reads (the
// processor's, ASP.NET's and WCF's: about a dozen a machine); a capture
// may have any number of others, which it skips.
const MaxCounters = 4096

// maxListed is how many machines a message lists.
const maxListed = 12

// Capture is a PerfMon log as relog, typeperf or PerfMon's "Save Data
// As" write it as text — PDH CSV or PDH TSV 4.0 — read strictly and kept
// with the positions of its fields, so that every later complaint names
// the file, the line and the column. Only the counters calibrate reads are
// kept, under their English names (names.go); the others are skipped.
type Capture struct {
	File     string
	Kind     string // "CSV" or "TSV"
	Encoding string // "UTF-8", "UTF-16LE", "UTF-16BE" or "Windows-1252"
	TimeZone string // as the header names it ("" from typeperf)
	// Bias is the time zone's bias in minutes (UTC = local time + Bias),
	// when the header gives it (hasBias).
	Bias    int
	hasBias bool
	// Counters are the counters calibrate reads, by their English names.
	Counters []report.PerfmonCounter
	Times    []time.Time
	// T is each row's time in seconds since the first row.
	T []float64
	// Notes say what reading the capture took: languages, encoding, a
	// clock set back.
	Notes []string

	vals     []float64 // vals[row*len(Counters)+k]; NaN where the capture has none
	raw      []string  // each counter's path as the capture writes it
	lang     []string  // the language each counter's names were in ("" English)
	field    []int     // each counter's field in a row
	headCol  []int     // each counter's column in the header
	fields   int       // fields in a row
	text     string    // the decoded file
	sep      byte
	rowAt    []int // offset in text of each row
	lines    []int // line of each row
	headRow  int
	machines []string // the header's machines, in order of appearance (at most maxListed+1 kept)
	nMachine int
	// machineSet is every machine of the header, in lower case.
	machineSet map[string]string
}

// ReadCapture reads the capture at path: a regular file of at most
// MaxCaptureBytes (input.ReadRegular: a FIFO, a device or a directory is
// refused before it is read), then ParseCapture.
func ReadCapture(path string) (*Capture, error) { return readCapture(path, nil) }

func readCapture(path string, user map[string]string) (*Capture, error) {
	data, err := input.ReadRegular(path, MaxCaptureBytes, "captures")
	if err != nil {
		return nil, err
	}
	return parseCapture(data, path, user)
}

// ParseCapture reads a capture from data; file names it in messages. See
// parseCapture.
func ParseCapture(data []byte, file string) (*Capture, error) { return parseCapture(data, file, nil) }

var pdhHead = regexp.MustCompile(`^\(PDH-(CSV|TSV) 4\.0\)(?: ?\(([^()]*)\)\((-?[0-9]+)\))?\s*$`)

// parseCapture reads a PDH log: the header "(PDH-CSV 4.0) (<time
// zone>)(<bias>)" (or PDH-TSV; typeperf writes neither zone nor bias),
// counter paths \\MACHINE\Object(Instance)\Counter, then one row a sample:
// its time, MM/DD/YYYY HH:MM:SS.mmm, and each counter's value or a blank.
// Fields are quoted or not, separated by commas (CSV) or tabs (TSV); the
// text is UTF-8, UTF-16 with a byte order mark, or else Windows-1252.
// user adds localized names to the built-in table (ParseNames). Only the
// counters calibrate reads are kept, each at most once; a value of theirs
// must be a number or blank. Times increase, but for the clock set back
// an hour at the end of daylight saving time. Errors are
// "FILE:LINE:COL: what; what is allowed", and quote at most a short,
// sanitised excerpt of the file.
func parseCapture(data []byte, file string, user map[string]string) (*Capture, error) {
	if strings.EqualFold(filepath.Ext(file), ".blg") {
		return nil, fmt.Errorf("%s: a binary PerfMon log (.blg); calibrate reads its text form: relog %s -f csv -o capture.csv, then calibrate capture.csv", file, filepath.Base(file))
	}
	text, enc, err := decodeText(data, file)
	if err != nil {
		return nil, err
	}
	c := &Capture{File: file, Encoding: enc, text: text}
	if enc != "UTF-8" {
		c.Notes = append(c.Notes, fmt.Sprintf("the capture is %s text, read as such", enc))
	}
	nm := builtinNames().with(user)

	// The header.
	off := skipBlank(text, 0, &c.headRow)
	c.headRow++
	if off >= len(text) {
		return nil, fmt.Errorf("%s: empty; a capture is a PDH CSV or TSV log (relog capture.blg -f csv -o capture.csv)", file)
	}
	start := strings.TrimPrefix(text[off:min(len(text), off+16)], `"`)
	switch {
	case strings.HasPrefix(start, "(PDH-CSV "):
		c.Kind, c.sep = "CSV", ','
	case strings.HasPrefix(start, "(PDH-TSV "):
		c.Kind, c.sep = "TSV", '\t'
	case strings.ContainsRune(text[off:min(len(text), off+512)], 0):
		return nil, fmt.Errorf("%s:%d:1: binary data, not a PDH log as text; a binary PerfMon log (.blg) must be converted first: relog capture.blg -f csv -o capture.csv", file, c.headRow)
	default:
		// The content is not quoted: the file may be anything the user can
		// read, and nothing of it is shown.
		return nil, fmt.Errorf("%s:%d:1: not a PDH log: the first field must be \"(PDH-CSV 4.0) (<time zone>)(<bias>)\" as relog -f csv writes it (or PDH-TSV, relog -f tsv); a binary log (.blg) must be converted first: relog capture.blg -f csv -o capture.csv", file, c.headRow)
	}
	ls := lineScanner{s: text, sep: c.sep}
	var head []string
	var headCols []int
	next, err := ls.line(off, func(k int, v string, col int) error {
		if len(head) >= 10_000_000 {
			return posErr{col, "more than 10,000,000 fields in the header"}
		}
		head = append(head, v)
		headCols = append(headCols, col)
		return nil
	})
	if err != nil {
		return nil, c.lineErr(c.headRow, err)
	}
	m := pdhHead.FindStringSubmatch(head[0])
	if m == nil || m[1] != c.Kind {
		return nil, fmt.Errorf("%s:%d:1: not a PDH %s file: the first field is %s, want \"(PDH-%s 4.0) (<time zone>)(<bias>)\"", file, c.headRow, c.Kind, quote.Excerpt(head[0], 48), c.Kind)
	}
	c.TimeZone = m[2]
	if m[3] != "" {
		c.Bias, _ = strconv.Atoi(m[3])
		c.hasBias = c.Bias >= -24*60 && c.Bias <= 24*60
	}
	if len(head) < 2 {
		return nil, fmt.Errorf("%s:%d:1: no counter in the header", file, c.headRow)
	}
	c.fields = len(head)
	keep := make([]int32, len(head)) // counter index of each field, -1 if not kept
	keep[0] = -1
	seen := map[string]int{}
	c.machineSet = map[string]string{}
	langs := map[string]bool{}
	var langOrder []string
	for j := 1; j < len(head); j++ {
		keep[j] = -1
		p, what := parsePath(head[j])
		if what != "" {
			return nil, fmt.Errorf("%s:%d:%d: counter path %s %s", file, c.headRow, headCols[j], quote.Excerpt(head[j], 80), what)
		}
		if k := strings.ToLower(p.Machine); c.machineSet[k] == "" {
			c.machineSet[k] = p.Machine
			c.nMachine++
			if len(c.machines) <= maxListed {
				c.machines = append(c.machines, p.Machine)
			}
			if c.nMachine > 100_000 {
				return nil, fmt.Errorf("%s:%d:%d: more than 100,000 machines in the header; a capture is of a few machines", file, c.headRow, headCols[j])
			}
		}
		obj, l1 := nm.object(p.Object)
		ctr, l2 := nm.counter(p.Counter)
		if !wanted(obj, ctr, p.Instance) {
			continue
		}
		p.Object, p.Counter = obj, ctr
		key := strings.ToLower(p.String())
		if k, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s:%d:%d: counter %s appears twice (also column %d of the header); each counter may appear once", file, c.headRow, headCols[j], quote.Excerpt(head[j], 120), c.headCol[k])
		}
		if len(c.Counters) == MaxCounters {
			return nil, fmt.Errorf("%s:%d:%d: more than %d counters of processors, ASP.NET and WCF; calibrate reads a few machines: keep theirs (relog capture.blg -f csv -o capture.csv -c PATH...)", file, c.headRow, headCols[j], MaxCounters)
		}
		seen[key] = len(c.Counters)
		keep[j] = int32(len(c.Counters))
		lang := l1
		if lang == "" {
			lang = l2
		}
		if lang != "" && !langs[lang] {
			langs[lang] = true
			langOrder = append(langOrder, lang)
		}
		c.Counters = append(c.Counters, p)
		c.raw = append(c.raw, head[j])
		c.lang = append(c.lang, lang)
		c.field = append(c.field, j)
		c.headCol = append(c.headCol, headCols[j])
	}
	if len(langOrder) > 0 {
		c.Notes = append(c.Notes, "counter names read in "+strings.Join(langOrder, ", ")+" (docs/field-calibrate.md lists the names tsim knows)")
	}

	// The rows.
	nk := len(c.Counters)
	line := c.headRow
	var shift time.Duration // an hour for each time the clock was set back
	for {
		off = skipBlank(text, next, &line)
		if off >= len(text) {
			break
		}
		line++
		row := len(c.Times)
		var ts time.Time
		fields := 0
		c.vals = append(c.vals, make([]float64, nk)...)
		vals := c.vals[row*nk:]
		next, err = ls.line(off, func(k int, v string, col int) error {
			fields++
			if k >= c.fields {
				return nil // counted, refused below
			}
			if k == 0 {
				t, ok := parseStamp(v)
				if !ok {
					return posErr{col, fmt.Sprintf("bad time %s (want MM/DD/YYYY HH:MM:SS.mmm)", quote.Excerpt(v, 40))}
				}
				ts = t
				return nil
			}
			i := keep[k]
			if i < 0 {
				return nil
			}
			x, what := parseValue(v)
			if what != "" {
				return posErr{col, fmt.Sprintf("%s: bad value %s; %s", c.name(int(i)), quote.Excerpt(v, 24), what)}
			}
			vals[i] = x
			return nil
		})
		if err != nil {
			return nil, c.lineErr(line, err)
		}
		if fields != c.fields {
			return nil, fmt.Errorf("%s:%d:1: wrong number of fields: %d, the header has %d", file, line, fields, c.fields)
		}
		ts = ts.Add(shift)
		if n := len(c.Times); n > 0 && !ts.After(c.Times[n-1]) {
			back := c.Times[n-1].Sub(ts)
			if back < 58*time.Minute || back >= time.Hour {
				return nil, fmt.Errorf("%s:%d:1: time %s is not after the previous row's (%s, line %d); a capture's times increase",
					file, line, ts.Add(-shift).Format(stampLayout), c.Times[n-1].Add(-shift).Format(stampLayout), c.lines[n-1])
			}
			shift += time.Hour
			ts = ts.Add(time.Hour)
			c.Notes = append(c.Notes, fmt.Sprintf("line %d: the clock goes back %s (the end of daylight saving time, taken as such): the times from there on are read an hour later", line, back.Round(time.Second)))
		}
		c.Times = append(c.Times, ts)
		c.lines = append(c.lines, line)
		c.rowAt = append(c.rowAt, off)
	}
	if len(c.Times) < 2 {
		return nil, fmt.Errorf("%s:%d:1: %d sample rows; a capture needs at least two (and calibrate about thirty after the warm-up)", file, c.headRow, len(c.Times))
	}
	c.T = make([]float64, len(c.Times))
	for i, t := range c.Times {
		c.T[i] = t.Sub(c.Times[0]).Seconds()
	}
	return c, nil
}

// wanted reports whether calibrate reads counter ctr of object obj
// (English names) with that instance.
func wanted(obj, ctr, inst string) bool {
	switch {
	case obj == objProcessor || obj == objProcessorInfo:
		return ctr == cProcessor && inst == "_Total"
	case isASPNetApps(obj):
		return ctr == cReqPerSec || ctr == cExecuting
	case isASPNet(obj):
		return inst == "" && (ctr == cExecTime || ctr == cWaitTime || ctr == cRejected || ctr == cCurrent)
	case isWCF(obj):
		return ctr == cCallsPerSec || ctr == cCallsDur || ctr == cOutstanding
	case obj == "tsim Connections":
		return ctr == cConnWaiting
	}
	return false
}

// parsePath parses \\MACHINE\Object(Instance)\Counter or
// \\MACHINE\Object\Counter; what says what is wrong ("" if nothing).
func parsePath(s string) (p report.PerfmonCounter, what string) {
	rest, ok := strings.CutPrefix(s, `\\`)
	if !ok {
		return p, `does not start with \\MACHINE\`
	}
	machine, rest, ok := strings.Cut(rest, `\`)
	k := strings.LastIndexByte(rest, '\\')
	if !ok || machine == "" || k <= 0 || k == len(rest)-1 {
		return p, `is not \\MACHINE\Object(Instance)\Counter`
	}
	obj, counter := rest[:k], rest[k+1:]
	p = report.PerfmonCounter{Machine: machine, Object: obj, Counter: counter}
	if strings.HasSuffix(obj, ")") {
		i := strings.IndexByte(obj, '(')
		if i <= 0 {
			return p, "has an instance without an object"
		}
		p.Object, p.Instance = obj[:i], obj[i+1:len(obj)-1]
	} else if strings.ContainsAny(obj, "()") {
		return p, "has unbalanced parentheses in its object"
	}
	return p, ""
}

// stampLayout is relog's timestamp.
const stampLayout = "01/02/2006 15:04:05.000"

func parseStamp(v string) (time.Time, bool) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{stampLayout, "01/02/2006 15:04:05"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// parseValue reads a counter's value: a number, or blank (PerfMon's
// first sample of a rate, a machine out of reach) as NaN.
func parseValue(v string) (float64, string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return math.NaN(), ""
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, "a value is a finite number with a decimal point, or blank"
	}
	return x, ""
}

// skipBlank returns the offset of the first non-blank line at or after
// off, adding the blank lines skipped to *line.
func skipBlank(s string, off int, line *int) int {
	for off < len(s) {
		switch {
		case s[off] == '\n':
			off++
		case s[off] == '\r' && off+1 < len(s) && s[off+1] == '\n':
			off += 2
		default:
			return off
		}
		*line++
	}
	return off
}

// posErr is a problem at a column of the line being read.
type posErr struct {
	col int
	msg string
}

func (e posErr) Error() string { return e.msg }

func (c *Capture) lineErr(line int, err error) error {
	if pe, ok := err.(posErr); ok {
		return fmt.Errorf("%s:%d:%d: %s", c.File, line, pe.col, pe.msg)
	}
	return fmt.Errorf("%s:%d: %v", c.File, line, err)
}

// lineScanner splits the lines of a PDH log into fields: quoted ("" a
// quote inside) or not, separated by sep; a line ends at \n or \r\n, and a
// quoted field may not span lines.
type lineScanner struct {
	s   string
	sep byte
}

// line calls f with each field of the line at off: its index, its text
// and its column (a byte offset in the line, from 1). It returns the
// offset of the next line.
func (ls lineScanner) line(off int, f func(k int, v string, col int) error) (int, error) {
	s := ls.s
	i := off
	eol := strings.IndexByte(s[off:], '\n')
	if eol < 0 {
		eol = len(s)
	} else {
		eol += off
	}
	for k := 0; ; k++ {
		col := i - off + 1
		var v string
		if i < len(s) && s[i] == '"' {
			j, doubled := i+1, false
			q := -1
			for {
				n := strings.IndexByte(s[j:], '"')
				if n < 0 {
					break
				}
				q = j + n
				if q+1 < len(s) && s[q+1] == '"' {
					doubled, j, q = true, q+2, -1
					continue
				}
				break
			}
			if q < 0 || q > eol {
				return 0, posErr{col, "a quote that is not closed on its line; a field is quoted whole, \"\" for a quote inside"}
			}
			v = s[i+1 : q]
			if doubled {
				v = strings.ReplaceAll(v, `""`, `"`)
			}
			i = q + 1
			if i < len(s) && s[i] != ls.sep && s[i] != '\n' && !(s[i] == '\r' && (i+1 == len(s) || s[i+1] == '\n')) {
				return 0, posErr{i - off + 1, "text after a closing quote; a field is quoted whole, \"\" for a quote inside"}
			}
		} else {
			j := i
			for j < len(s) && s[j] != ls.sep && s[j] != '\n' {
				j++
			}
			v = s[i:j]
			if j < len(s) && s[j] == '\n' {
				v = strings.TrimSuffix(v, "\r")
			} else if j == len(s) {
				v = strings.TrimSuffix(v, "\r")
			}
			if q := strings.IndexByte(v, '"'); q >= 0 {
				return 0, posErr{col + q, "a quote inside a field that is not quoted; a field is quoted whole, \"\" for a quote inside"}
			}
			i = j
		}
		if err := f(k, v, col); err != nil {
			return 0, err
		}
		switch {
		case i >= len(s):
			return len(s), nil
		case s[i] == ls.sep:
			i++
		case s[i] == '\r':
			return min(len(s), i+2), nil
		default: // '\n'
			return i + 1, nil
		}
	}
}

// name is counter k as the capture writes it, quoted short enough for a
// message.
func (c *Capture) name(k int) string {
	s := c.raw[k]
	if len([]rune(s)) <= 160 {
		return s
	}
	return quote.Excerpt(s, 160)
}

// head is "FILE:LINE:COL" of counter k's header field.
func (c *Capture) head(k int) string {
	return fmt.Sprintf("%s:%d:%d", c.File, c.headRow, c.headCol[k])
}

// at is "FILE:LINE:COL" of counter k's field in row i (k = -1: the time).
func (c *Capture) at(i, k int) string {
	col := 1
	if k >= 0 {
		want := c.field[k]
		ls := lineScanner{s: c.text, sep: c.sep}
		ls.line(c.rowAt[i], func(j int, _ string, cl int) error {
			if j == want {
				col = cl
				return posErr{}
			}
			return nil
		})
	}
	return fmt.Sprintf("%s:%d:%d", c.File, c.lines[i], col)
}

// Machines lists the machines of the capture, in the order their first
// counter appears (at most maxListed+1 of them).
func (c *Capture) Machines() []string { return c.machines }

// machineList is the machines for a message: their names, short, and
// how many more there are.
func (c *Capture) machineList() string {
	var out []string
	for i, m := range c.machines {
		if i == maxListed {
			break
		}
		out = append(out, shortName(m))
	}
	s := strings.Join(out, ", ")
	if c.nMachine > maxListed {
		s += fmt.Sprintf(" and %d more", c.nMachine-maxListed)
	}
	return s
}

// shortName is a name from the file, as it is if it is short and plain,
// else an excerpt.
func shortName(s string) string {
	if len(s) <= 64 && strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '"' }) < 0 {
		return s
	}
	return quote.Excerpt(s, 48)
}

// value is counter k in row i (NaN where the capture has none).
func (c *Capture) value(i, k int) float64 { return c.vals[i*len(c.Counters)+k] }

// interval is the usual interval between the rows given: the median.
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

// stamp is row i's time as the file writes it.
func (c *Capture) stamp(i int) string { return c.Times[i].Format(stampLayout) }

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
