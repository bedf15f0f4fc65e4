package htmlreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/results"
)

// A result folder is what tsim run writes for one experiment:
// summary.json (the figures) and report.html (whose data the charts of a
// diff overlay). This file reads them back, and keeps a folder's earlier
// runs when asked (Keep).

// Folder is a result folder read back.
type Folder struct {
	Dir string
	Exp *results.Experiment // the scenarios with their aggregates; no series
	// Charts are the charts of its report.html by id; nil without one.
	Charts map[string]*Chart
	// Note says why there are no charts ("" when there are).
	Note string
}

// summaryFile is summary.json as package report writes it: what a diff
// reads of it.
type summaryFile struct {
	Experiment   string `json:"experiment"`
	Description  string `json:"description"`
	File         string `json:"file"`
	Seed         uint64 `json:"seed"`
	Replications int    `json:"replications"`
	Mode         string `json:"mode"`
	Complete     *bool  `json:"complete"`
	Scenarios    int    `json:"scenarios"`
	Sweep        []results.Axis
	Warnings     []string       `json:"warnings"`
	Variants     []scenarioFile `json:"variants"`
	Points       []scenarioFile `json:"points"`
}

type scenarioFile struct {
	Variant string        `json:"variant"`
	Params  orderedParams `json:"-"`
	results.Aggregate
}

// UnmarshalJSON reads a scenario: its params object in its order, and
// the aggregate (with null latency where none completed).
func (s *scenarioFile) UnmarshalJSON(b []byte) error {
	type plain scenarioFile
	var p struct {
		plain
		Params  orderedParams    `json:"params"`
		Latency *results.Latency `json:"latency_s"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = scenarioFile(p.plain)
	s.Params = p.Params
	if p.Latency == nil {
		s.Latency = results.Latency{None: true}
	} else {
		s.Latency = *p.Latency
	}
	return nil
}

// orderedParams reads a JSON object of strings keeping its keys' order.
type orderedParams []results.Param

func (o *orderedParams) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return errors.New("params: not an object")
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return err
		}
		var v string
		if err := d.Decode(&v); err != nil {
			return fmt.Errorf("params: %v: %w", k, err)
		}
		*o = append(*o, results.Param{Key: k.(string), Value: v})
	}
	return nil
}

// maxResultBytes bounds each file of a result folder ReadFolder reads.
const maxResultBytes = 1 << 30

// ReadFolder reads a result folder: its summary.json, which must be
// there, and the charts of its report.html, which may not be.
func ReadFolder(dir string) (*Folder, error) {
	// Through package input: a regular file, bounded (tsim diff may be
	// given any folder).
	b, err := input.ReadRegular(filepath.Join(dir, "summary.json"), maxResultBytes, "result files")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
				return nil, fmt.Errorf("%s: no such result folder", dir)
			}
			return nil, fmt.Errorf("%s: no summary.json: not a result folder of tsim run (or run with --outputs lacking json)", dir)
		}
		return nil, err
	}
	var s summaryFile
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, "summary.json"), err)
	}
	if s.Experiment == "" || s.Complete == nil {
		return nil, fmt.Errorf("%s: not a summary.json of tsim run", filepath.Join(dir, "summary.json"))
	}
	x := &results.Experiment{Name: s.Experiment, Description: s.Description, File: s.File, Seed: s.Seed,
		Replications: s.Replications, Mode: s.Mode, Sweep: s.Sweep, Warnings: s.Warnings}
	scs := s.Variants
	if len(s.Sweep) > 0 {
		scs = s.Points
	}
	for i, sc := range scs {
		x.Scenarios = append(x.Scenarios, &results.Scenario{Index: i, Variant: sc.Variant, Params: sc.Params, Agg: sc.Aggregate})
	}
	x.Finished = len(x.Scenarios)
	if !*s.Complete {
		// The missing scenarios of an interrupted run.
		if s.Scenarios > format.MaxScenarios {
			return nil, fmt.Errorf("%s: %d scenarios; an experiment has at most %d", filepath.Join(dir, "summary.json"), s.Scenarios, format.MaxScenarios)
		}
		for len(x.Scenarios) < s.Scenarios {
			x.Scenarios = append(x.Scenarios, nil)
		}
	}
	f := &Folder{Dir: dir, Exp: x}
	page, err := input.ReadRegular(filepath.Join(dir, FileName), maxResultBytes, "result files")
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.Note = "no " + FileName + " (run with --outputs lacking html)"
	case err != nil:
		return nil, err
	default:
		charts, err := pageCharts(page)
		if err != nil {
			f.Note = FileName + ": " + err.Error()
		} else {
			f.Charts = charts
		}
	}
	return f, nil
}

var dataRe = regexp.MustCompile(`(?s)<script type="application/json" id="tsim-data">(.*?)</script>`)

// pageCharts reads the charts of a page's data.
func pageCharts(page []byte) (map[string]*Chart, error) {
	m := dataRe.FindSubmatch(page)
	if m == nil {
		return nil, errors.New("no chart data (written by another version of tsim?)")
	}
	var d struct{ Charts []*Chart }
	if err := json.Unmarshal(m[1], &d); err != nil {
		return nil, fmt.Errorf("chart data: %v", err)
	}
	out := map[string]*Chart{}
	for _, c := range d.Charts {
		out[c.ID] = c
	}
	return out, nil
}

// UnmarshalJSON reads a column, null as NaN.
func (c *Column) UnmarshalJSON(b []byte) error {
	var vs []*float64
	if err := json.Unmarshal(b, &vs); err != nil {
		return err
	}
	*c = make(Column, len(vs))
	for i, v := range vs {
		if v == nil {
			(*c)[i] = math.NaN()
		} else {
			(*c)[i] = *v
		}
	}
	return nil
}

// HistoryDir is the folder, inside a result folder, of the runs tsim run
// --keep kept (atomicio.Dir.Keep moves them): HistoryDir/1 the oldest,
// each next run's number one more. Numbers, not times: the paths are the
// same on every machine and a kept run keeps its path.
const HistoryDir = "history"

// lastKept is the highest number in dir/history (0 when there is none).
func lastKept(dir string) (int, error) {
	ents, err := os.ReadDir(filepath.Join(dir, HistoryDir))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	last := 0
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() && n > last && strconv.Itoa(n) == e.Name() {
			last = n
		}
	}
	return last, nil
}

// LastKept returns the folder of the last run kept in dir, or an error
// saying there is none.
func LastKept(dir string) (string, error) {
	n, err := lastKept(dir)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", fmt.Errorf("%s: no earlier run kept (tsim run --keep keeps the last run in %s/N before writing the next)", dir, filepath.Join(dir, HistoryDir))
	}
	return filepath.Join(dir, HistoryDir, strconv.Itoa(n)), nil
}

// Side is one side of a comparison: a result folder, and one variant of
// it or "" for all.
type Side struct {
	Dir, Variant string
}

func (s Side) String() string {
	if s.Variant == "" {
		return filepath.ToSlash(s.Dir)
	}
	return filepath.ToSlash(s.Dir) + "@" + s.Variant
}

// ParseSide reads DIR or DIR@VARIANT (the variant after the last '@',
// unless the whole is a folder).
func ParseSide(arg string) Side {
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return Side{Dir: arg}
	}
	if i := strings.LastIndexByte(arg, '@'); i > 0 && !strings.ContainsAny(arg[i+1:], `/\`) {
		return Side{Dir: arg[:i], Variant: arg[i+1:]}
	}
	return Side{Dir: arg}
}

// variants lists an experiment's variants in order.
func variants(x *results.Experiment) []string {
	var out []string
	for _, sc := range x.Done() {
		if !slices.Contains(out, sc.Variant) {
			out = append(out, sc.Variant)
		}
	}
	return out
}
