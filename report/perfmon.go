package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// perfmon.csv: the samples of timeseries.csv in the layout PerfMon's relog
// writes ("relog capture.blg -f CSV"), so that a tsim run opens in the tools
// that read a real capture, next to one. docs/counters.md lists every
// counter path and what it means.
//
// The layout (PDH CSV 4.0): every field quoted, lines ending in CRLF; the
// first header field "(PDH-CSV 4.0) (<time zone>)(<bias in minutes>)", the
// others counter paths \\MACHINE\Object(Instance)\Counter; then one row per
// sampling instant, its time first ("MM/DD/YYYY HH:MM:SS.mmm") and each
// counter's value, or " " where the capture has none (a variant sampled at
// other instants).

// PerfmonEpoch is the wall-clock instant at which a run's t = 0 is written:
// midnight, 1 January 2024, in the file's time zone, GMT Standard Time,
// whose bias is 0 in January (a fixed instant, so that the same run gives
// the same bytes).
var PerfmonEpoch = time.Date(2024, time.January, 1, 0, 0, 0, 0, time.UTC)

// perfmonHeader is the first header field: PDH CSV 4.0, the time zone and
// its bias in minutes.
const perfmonHeader = "(PDH-CSV 4.0) (GMT Standard Time)(0)"

// perfmonTime is relog's timestamp layout.
const perfmonTime = "01/02/2006 15:04:05.000"

// PerfmonCounter is one counter path, \\Machine\Object(Instance)\Counter
// (Instance empty for an object without instances).
type PerfmonCounter struct {
	Machine, Object, Instance, Counter string
}

// String writes the path as PerfMon does.
func (c PerfmonCounter) String() string {
	obj := c.Object
	if c.Instance != "" {
		obj += "(" + c.Instance + ")"
	}
	return `\\` + c.Machine + `\` + obj + `\` + c.Counter
}

// A PerfmonColumn is one counter of one tier of perfmon.csv, the
// timeseries.csv column whose values it has, and how to read it from a
// sample.
type PerfmonColumn struct {
	Path   PerfmonCounter
	Column string // the timeseries.csv column with the same values
	get    func(*results.TierSample) *float64
}

// perfmonDef is a counter of an object kind and the timeseries.csv column
// (results.SampleColumns) whose values it has.
type perfmonDef struct{ counter, column string }

// The counters of each object, in file order, with the timeseries.csv
// column each equals (TimeseriesCSV writes these names).
var (
	processorCounters = []perfmonDef{
		{"% Processor Time", "cpu_percent"},
	}
	aspnetCounters = []perfmonDef{ // the ASP.NET object (the process's, no instance)
		{"Requests Current", "requests_current"},
		{"Requests Queued", "requests_queued"},
		{"Requests Rejected", "requests_rejected"},
		{"Request Execution Time", "request_execution_time_ms"},
		{"Request Wait Time", "request_wait_time_ms"},
	}
	aspnetAppCounters = []perfmonDef{ // ASP.NET Apps(__Total__)
		{"Pipeline Instance Count", "pipeline_instance_count"},
		{"Requests Executing", "requests_executing"},
		{"Requests In Application Queue", "requests_in_application_queue"},
		{"Requests/Sec", "requests_per_s"},
	}
	wcfCounters = []perfmonDef{ // ServiceModelService(service@address)
		{"Calls", "calls"},
		{"Calls Duration", "calls_duration_s"},
		{"Calls Outstanding", "calls_outstanding"},
		{"Calls Per Second", "calls_per_s"},
		{"Instances", "instances"},
	}
	clrThreadCounters = []perfmonDef{ // .NET CLR LocksAndThreads(process)
		{"# of current physical Threads", "threads"},
	}
	poolCounters = []perfmonDef{ // tsim Thread Pool(process): no PerfMon counter has these
		{"I/O Threads", "io_threads"},
		{"I/O Threads Busy", "io_threads_busy"},
		{"Work Items Queued", "thread_queue"},
		{"Worker Threads", "worker_threads"},
		{"Worker Threads Busy", "worker_threads_busy"},
	}
	connCounters = []perfmonDef{ // tsim Connections(_Total_): the tier's outbound connection pools
		{"Connections In Use", "connections_in_use"},
		{"Requests Waiting For A Connection", "connections_waiting"},
	}
)

// aspnetHost reports whether a results.Tier's Host is an ASP.NET host.
func aspnetHost(host string) bool { return host == "aspnet-classic" || host == "iis-integrated" }

// legacyDotNet reports whether a .NET version is of the 2.0.50727 line
// (model.LegacyASPNet).
func legacyDotNet(v string) bool { return v == "2.0" || v == "3.0" || v == "3.5" }

// PerfmonObjects names the counter objects of a tier by its .NET version:
// ASP.NET 2.0–3.5 (System.Web 2.0.50727) and WCF 3.0/3.5 register
// "ASP.NET v2.0.50727", "ASP.NET Apps v2.0.50727" and "ServiceModelService
// 3.0.0.0"; .NET 4.x "ASP.NET v4.0.30319", "ASP.NET Apps v4.0.30319" and
// "ServiceModelService 4.0.0.0". A tier without a version (a preset-less
// WCF tier, "core") gets the 4.x names.
func PerfmonObjects(dotnet string) (aspnet, aspnetApps, wcf string) {
	if legacyDotNet(dotnet) {
		return "ASP.NET v2.0.50727", "ASP.NET Apps v2.0.50727", "ServiceModelService 3.0.0.0"
	}
	return "ASP.NET v4.0.30319", "ASP.NET Apps v4.0.30319", "ServiceModelService 4.0.0.0"
}

// PerfmonColumns returns the counters perfmon.csv has for tier t on the
// given machine: Processor for every tier; ASP.NET and ASP.NET Apps on an
// ASP.NET host; ServiceModelService for a WCF service; .NET CLR
// LocksAndThreads for a .NET process; tsim Thread Pool for every tier and
// tsim Connections for one that calls others (hasCalls). The process is
// w3wp on an ASP.NET host, the tier's name elsewhere.
func PerfmonColumns(machine string, t results.Tier, hasCalls bool) []PerfmonColumn {
	process := t.Name
	if aspnetHost(t.Host) {
		process = "w3wp"
	}
	aspnet, apps, wcf := PerfmonObjects(t.DotNet)
	var out []PerfmonColumn
	add := func(object, instance string, defs []perfmonDef) {
		for _, d := range defs {
			out = append(out, PerfmonColumn{PerfmonCounter{machine, object, instance, d.counter}, d.column, results.SampleColumn(d.column).F})
		}
	}
	add("Processor", "_Total", processorCounters)
	if aspnetHost(t.Host) {
		add(aspnet, "", aspnetCounters)
		add(apps, "__Total__", aspnetAppCounters)
	}
	if t.WCF {
		// ServiceName@BaseAddress with '/' as '|', as WCF names the instance.
		add(wcf, t.Name+"@http:||"+t.Name+"|"+t.Name+".svc", wcfCounters)
	}
	if t.DotNet != "" || aspnetHost(t.Host) || t.WCF {
		add(".NET CLR LocksAndThreads", process, clrThreadCounters)
	}
	add("tsim Thread Pool", process, poolCounters)
	if hasCalls {
		add("tsim Connections", "_Total_", connCounters)
	}
	return out
}

// machineName is a variant's tier as a machine: the tier's name alone
// with one variant, "<tier>-<variant>" with several (letters, digits, '-',
// '_' and '.' kept, anything else as '-').
func machineName(tier, variant string, variants int) string {
	if variants <= 1 {
		return tier
	}
	b := []byte(tier + "-" + variant)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '-'
		}
	}
	return string(b)
}

// PerfmonCSV renders perfmon.csv: the samples of each variant's first
// replication (those of timeseries.csv), every tier a machine; one row per
// sampling instant of any variant. Sweeps have none.
func PerfmonCSV(r *results.Experiment) ([]byte, error) {
	type source struct {
		cols []PerfmonColumn
		tier int
		idx  map[float64]int // sample time → index in the series
		run  *results.Run
	}
	var srcs []source
	var header []string
	times := map[float64]bool{}
	var runs []*results.Scenario
	for _, sc := range r.Done() {
		if sc.First != nil {
			runs = append(runs, sc)
		}
	}
	seen := map[string]bool{}
	for _, sc := range runs {
		idx := map[float64]int{}
		for i, s := range sc.First.Series {
			idx[s.T] = i
			times[s.T] = true
		}
		for ti, t := range sc.Agg.Tiers {
			hasCalls := false
			for _, c := range sc.Agg.Calls {
				hasCalls = hasCalls || c.From == t.Name
			}
			m := machineName(t.Name, sc.Variant, len(runs))
			for seen[m] {
				m += "_"
			}
			seen[m] = true
			cols := PerfmonColumns(m, t, hasCalls)
			for _, c := range cols {
				header = append(header, c.Path.String())
			}
			srcs = append(srcs, source{cols, ti, idx, sc.First})
		}
	}
	ts := make([]float64, 0, len(times))
	for t := range times {
		ts = append(ts, t)
	}
	sort.Float64s(ts)
	var b bytes.Buffer
	writeQuoted(&b, append([]string{perfmonHeader}, header...))
	// The rows are appended in place, as writeQuoted writes them: neither
	// a time nor a number holds a quote.
	row := make([]byte, 0, 64+16*len(header))
	for _, t := range ts {
		row = append(row[:0], '"')
		row = PerfmonEpoch.Add(time.Duration(math.Round(t*1000))*time.Millisecond).AppendFormat(row, perfmonTime)
		row = append(row, '"')
		for _, s := range srcs {
			i, ok := s.idx[t]
			for _, c := range s.cols {
				if !ok || s.tier >= len(s.run.Series[i].Tiers) {
					row = append(row, `," "`...)
					continue
				}
				row = append(row, ',', '"')
				row = appendCSVFloat(row, *c.get(&s.run.Series[i].Tiers[s.tier]))
				row = append(row, '"')
			}
		}
		row = append(row, '\r', '\n')
		b.Write(row)
	}
	return b.Bytes(), nil
}

// writeQuoted writes one record as relog does: every field in double
// quotes (a quote doubled), commas between, CRLF at the end.
func writeQuoted(b *bytes.Buffer, fields []string) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(f, `"`, `""`))
		b.WriteByte('"')
	}
	b.WriteString("\r\n")
}

// PerfmonLog is a PDH CSV file read back: its time zone, its counters and
// one row of values per sample, NaN where a sample has no value (" ").
type PerfmonLog struct {
	TimeZone string
	Bias     int // minutes
	Counters []PerfmonCounter
	Times    []time.Time
	Values   [][]float64 // Values[row][counter]
}

// Column returns the values of the counter whose path is path, or nil.
func (l *PerfmonLog) Column(path string) []float64 {
	for k, c := range l.Counters {
		if c.String() == path {
			out := make([]float64, len(l.Values))
			for i, row := range l.Values {
				out[i] = row[k]
			}
			return out
		}
	}
	return nil
}

var pdhHeaderRE = regexp.MustCompile(`^\(PDH-CSV 4\.0\) \(([^()]*)\)\((-?[0-9]+)\)$`)

// ParsePerfmonCounter parses a counter path \\Machine\Object(Instance)\Counter
// or \\Machine\Object\Counter.
func ParsePerfmonCounter(s string) (PerfmonCounter, error) {
	rest, ok := strings.CutPrefix(s, `\\`)
	if !ok {
		return PerfmonCounter{}, fmt.Errorf(`counter path %q does not start with \\MACHINE\`, s)
	}
	machine, rest, ok := strings.Cut(rest, `\`)
	k := strings.LastIndexByte(rest, '\\')
	if !ok || machine == "" || k <= 0 || k == len(rest)-1 {
		return PerfmonCounter{}, fmt.Errorf(`counter path %q is not \\MACHINE\Object(Instance)\Counter`, s)
	}
	obj, counter := rest[:k], rest[k+1:]
	c := PerfmonCounter{Machine: machine, Object: obj, Counter: counter}
	if strings.HasSuffix(obj, ")") {
		i := strings.IndexByte(obj, '(')
		if i <= 0 {
			return PerfmonCounter{}, fmt.Errorf("counter path %q: instance without an object", s)
		}
		c.Object, c.Instance = obj[:i], obj[i+1:len(obj)-1]
	} else if strings.ContainsAny(obj, "()") {
		return PerfmonCounter{}, fmt.Errorf("counter path %q: unbalanced parentheses in the object", s)
	}
	return c, nil
}

// ReadPerfmonCSV reads a PDH CSV file (relog's, or tsim's perfmon.csv)
// strictly: well-formed CSV with the same number of fields on every line,
// the PDH header, counter paths, relog's timestamps and numbers (or " " for
// none). Errors name the file, the line and the column (a byte offset in
// the line, from 1) and, for a value, its counter.
func ReadPerfmonCSV(rd io.Reader, file string) (*PerfmonLog, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	cr := csv.NewReader(bytes.NewReader(data))
	cr.ReuseRecord = false
	at := func(field int) string {
		line, col := cr.FieldPos(field)
		return fmt.Sprintf("%s:%d:%d", file, line, col)
	}
	head, err := cr.Read()
	if err != nil {
		return nil, csvError(file, err)
	}
	m := pdhHeaderRE.FindStringSubmatch(head[0])
	if m == nil {
		return nil, fmt.Errorf(`%s: not a PDH CSV file: the first field is %q, want "(PDH-CSV 4.0) (<time zone>)(<bias>)"`, at(0), head[0])
	}
	l := &PerfmonLog{TimeZone: m[1]}
	l.Bias, _ = strconv.Atoi(m[2])
	if len(head) < 2 {
		return nil, fmt.Errorf("%s: no counter in the header", at(0))
	}
	for i, f := range head[1:] {
		c, err := ParsePerfmonCounter(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", at(i+1), err)
		}
		l.Counters = append(l.Counters, c)
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(file, err)
		}
		ts, err := time.Parse(perfmonTime, rec[0])
		if err != nil {
			return nil, fmt.Errorf("%s: bad time %q (want MM/DD/YYYY HH:MM:SS.mmm)", at(0), rec[0])
		}
		if n := len(l.Times); n > 0 && !ts.After(l.Times[n-1]) {
			return nil, fmt.Errorf("%s: time %s is not after the previous row's", at(0), rec[0])
		}
		row := make([]float64, len(l.Counters))
		for i, f := range rec[1:] {
			if strings.TrimSpace(f) == "" {
				row[i] = math.NaN()
				continue
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: %s: bad value %q", at(i+1), l.Counters[i], f)
			}
			row[i] = v
		}
		l.Times = append(l.Times, ts)
		l.Values = append(l.Values, row)
	}
	return l, nil
}

// csvError puts the file in front of a CSV syntax error, which names the
// line and column.
func csvError(file string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d:%d: %v", file, pe.Line, pe.Column, pe.Err)
	}
	return fmt.Errorf("%s: %w", file, err)
}
