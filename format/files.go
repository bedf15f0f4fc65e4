package format

import (
	"fmt"
	"strings"
	"sync"

	"github.com/tsim-dev/tsim/sim"
)

// files is a load's access to the files an experiment names: the caller's
// ReadFile behind MaxDataBytes and MaxTotalBytes, and the distributions
// already parsed, by their string, so that a data file named in a thousand
// steps is read and parsed once. The caller's ReadFile is where paths are
// confined and reads bounded (package input); these limits make the
// library safe with any ReadFile that returns at all.
//
// One files serves an Experiment for its whole life (ScenarioWith parses
// values too), possibly from several goroutines.
type files struct {
	read func(string) ([]byte, error) // nil: no file access

	mu    sync.Mutex
	total int64                 // bytes ReadFile has returned
	dists map[string]distResult // by the distribution string as written
	// traces are the load tests' results a trace load names (trace.go).
	traces map[string]traceResult
}

type distResult struct {
	d   sim.Dist
	err error
}

func newFiles(read func(string) ([]byte, error)) *files {
	return &files{read: read, dists: map[string]distResult{}}
}

// readFile reads a named file through the caller's ReadFile and counts it.
// max is the limit for this kind of file; what names it in the message.
func (f *files) readFile(name string, max int64, what string) ([]byte, error) {
	if f == nil || f.read == nil {
		return nil, errNoFileAccess
	}
	data, err := f.read(name)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s", sizeMessage(int64(len(data)), what, max))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.total+int64(len(data)) > MaxTotalBytes {
		return nil, fmt.Errorf("with this file the experiment's files would total %s; together they may be at most %s",
			FormatBytes(f.total+int64(len(data))), FormatBytes(MaxTotalBytes))
	}
	f.total += int64(len(data))
	return data, nil
}

var errNoFileAccess = fmt.Errorf("this loader has no file access")

// parseDist parses a distribution, reading empirical files through f.
func (f *files) parseDist(s string) (sim.Dist, error) {
	if f == nil {
		return sim.ParseDist(s, sim.ParseOptions{})
	}
	if !strings.Contains(strings.ToLower(s), "empirical") {
		return sim.ParseDist(s, f.options())
	}
	// Loading is single-threaded; should two goroutines of ScenarioWith
	// parse one string at once, both results are the same.
	f.mu.Lock()
	r, ok := f.dists[s]
	f.mu.Unlock()
	if ok {
		return r.d, r.err
	}
	d, err := sim.ParseDist(s, f.options())
	f.mu.Lock()
	f.dists[s] = distResult{d, err}
	f.mu.Unlock()
	return d, err
}

func (f *files) options() sim.ParseOptions {
	if f.read == nil {
		return sim.ParseOptions{}
	}
	return sim.ParseOptions{ReadFile: func(name string) ([]byte, error) {
		return f.readFile(name, MaxDataBytes, "data files")
	}}
}
