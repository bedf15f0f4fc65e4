package report

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/tsim-dev/tsim/htmlreport"
	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/plots"
	"github.com/tsim-dev/tsim/results"
)

// WriteFigure renders fig and writes it whole as name in the locked
// directory d, and returns its path; explain, plan and validate draw their
// one picture with it.
func WriteFigure(d *atomicio.Dir, name string, fig *plots.Figure) (string, error) {
	var png bytes.Buffer
	if err := fig.WritePNG(&png); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return filepath.Join(d.Path, name), d.WriteFile(name, png.Bytes())
}

// OutputFiles are the files tsim writes into an experiment's directory,
// as patterns of filepath.Match (counters-*.png: the pages of counters
// after the first); those a run does not write again are removed so that
// no stale picture outlives the run it came from.
var OutputFiles = outputFiles()

func outputFiles() []string {
	out := []string{"summary.json", "summary.csv", "timeseries.csv", "perfmon.csv", "loadtest.csv"}
	for _, f := range plots.Formats {
		for _, stem := range []string{"counters", "counters-*", "latency", "latency-cdf", "sweep-throughput", "sweep-p99", "sweep-timeouts", "loadtest", "usl", "usl-*"} {
			out = append(out, plots.FileName(stem, f))
		}
	}
	return append(out, htmlreport.FileName)
}

// output is one file to write.
type output struct {
	name string
	data []byte
}

// Outputs chooses the kinds of file WriteOutputs writes; the zero value
// writes none, All every kind.
type Outputs struct {
	JSON bool // summary.json
	CSV  bool // summary.csv, timeseries.csv, perfmon.csv
	PNG  bool // the pictures
	HTML bool // report.html
	// Formats are the pictures' formats, as plots.ParseFormats reads them
	// ("png,svg,pdf"); "" is PNG alone.
	Formats string
}

// All is every kind of output file.
var All = Outputs{JSON: true, CSV: true, PNG: true, HTML: true}

// ParseOutputs reads a comma-separated list of json, csv, png and html.
func ParseOutputs(s string) (Outputs, error) {
	var o Outputs
	for _, k := range strings.Split(s, ",") {
		switch strings.TrimSpace(k) {
		case "json":
			o.JSON = true
		case "csv":
			o.CSV = true
		case "png":
			o.PNG = true
		case "html":
			o.HTML = true
		case "":
		default:
			return o, fmt.Errorf("unknown output kind %q (allowed: json, csv, png, html)", strings.TrimSpace(k))
		}
	}
	if o == (Outputs{}) {
		return o, errors.New("no output kind given (allowed: json, csv, png, html)")
	}
	return o, nil
}

// Render produces the bytes of an experiment's files of the kinds in
// kinds, in the order of OutputFiles. Pictures are drawn in parallel, each
// on its own goroutine; a picture's bytes do not depend on the others, so
// the files are the same as drawn one by one. Pictures that cannot be
// drawn (no request completed, say) are skipped with a note in warnings.
func render(r *results.Experiment, kinds Outputs) (outs []output, warnings []string, err error) {
	// The pictures are drawn while the JSON and CSV files are written: a
	// run's output takes the time of its longest picture, not the sum.
	var pics []picture
	formats := []plots.Format{plots.PNG}
	if kinds.PNG {
		pics = pictures(r)
		if kinds.Formats != "" {
			if formats, err = plots.ParseFormats(kinds.Formats); err != nil {
				return nil, nil, err
			}
		}
	}
	// Each picture in each format, at most GOMAXPROCS drawn at once: a
	// long chain has many pages of counters, each megabytes of pixels.
	nf := len(formats)
	data := make([][]byte, len(pics)*nf)
	errs := make([]error, len(pics)*nf)
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, pic := range pics {
		if pic.err != nil {
			continue
		}
		for j, format := range formats {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slots <- struct{}{}
				defer func() { <-slots }()
				defer func() {
					if v := recover(); v != nil {
						errs[i*nf+j] = fmt.Errorf("internal error drawing it: %v (a bug in tsim)", v)
					}
				}()
				var buf bytes.Buffer
				errs[i*nf+j] = pic.fig.Write(&buf, format)
				data[i*nf+j] = buf.Bytes()
			}()
		}
	}
	defer wg.Wait() // on an error too: no goroutine outlives the call

	add := func(name string, data []byte, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		outs = append(outs, output{name, data})
		return nil
	}
	if kinds.JSON {
		b, err := SummaryJSON(r)
		if err := add("summary.json", b, err); err != nil {
			return nil, nil, err
		}
	}
	if kinds.CSV {
		b, err := SummaryCSV(r)
		if err := add("summary.csv", b, err); err != nil {
			return nil, nil, err
		}
		if !r.IsSweep() {
			b, err = TimeseriesCSV(r)
			if err := add("timeseries.csv", b, err); err != nil {
				return nil, nil, err
			}
			b, err = PerfmonCSV(r)
			if err := add("perfmon.csv", b, err); err != nil {
				return nil, nil, err
			}
		}
		if hasLoadTest(r) {
			b, err = LoadTestCSV(r)
			if err := add("loadtest.csv", b, err); err != nil {
				return nil, nil, err
			}
		}
	}
	wg.Wait()
	for i, pic := range pics {
		if pic.err != nil {
			warnings = append(warnings, fmt.Sprintf("%s: %s not drawn: %v", r.File, pic.name, pic.err))
			continue
		}
		for j, format := range formats {
			name := plots.FileName(strings.TrimSuffix(pic.name, ".png"), format)
			if errs[i*nf+j] != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, errs[i*nf+j])
			}
			outs = append(outs, output{name, data[i*nf+j]})
		}
	}
	if kinds.HTML {
		b, err := htmlreport.Report(r, htmlreport.Options{Warnings: warnings})
		if err := add(htmlreport.FileName, b, err); err != nil {
			return nil, nil, err
		}
	}
	return outs, warnings, nil
}

// WriteOutputs writes an experiment's results of the kinds in kinds into
// the locked directory d, creating it, and returns the names written. Every file is
// written whole or not at all. The files of a kind not written, and the
// pictures a run could not draw, are removed, so that no stale file
// outlives the run it came from.
func WriteOutputs(d *atomicio.Dir, r *results.Experiment, kinds Outputs) (written, warnings []string, err error) {
	outs, warnings, err := render(r, kinds)
	if err != nil {
		return nil, warnings, err
	}
	for _, o := range outs {
		if err := d.WriteFile(o.name, o.data); err != nil {
			return written, warnings, err
		}
		written = append(written, o.name)
	}
	entries, err := d.Entries()
	if err != nil {
		return written, warnings, err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || slices.Contains(written, name) || !slices.ContainsFunc(OutputFiles, func(p string) bool {
			ok, _ := filepath.Match(p, name)
			return ok
		}) {
			continue
		}
		if err := d.Remove(name); err != nil {
			return written, warnings, err
		}
	}
	return written, warnings, nil
}
