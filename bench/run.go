package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/runner"
)

// wholeRuns are the experiments `tsim bench --model run:NAME` runs as
// `tsim run` does, output files included. Their text is that of the
// shipped experiments/NAME.toml without its comments (a test keeps the
// two the same), so that the binary needs no data directory.
var wholeRuns = []struct{ name, text string }{
	{"pipeline", "name = \"pipeline\"\nseed = 1\ntopology = \"pipeline\"\n"},
	{"crack-throttling", `name = "crack-throttling"
topology = "crack-throttling"
seed = 1

[[variant]]
name = "misconfigured"
description = "maxconnection entry ignored: System.Net's default of 2 per host"

[[variant]]
name = "fixed"
description = "the entry in <connectionManagement> where it belongs: maxconnection = 96 (12 per CPU)"
set = { "tier.web.calls.maxconnection" = 96 }
`},
}

// RunWhole runs an experiment file the way `tsim run FILE` does: every
// scenario and replication on workers goroutines (0: GOMAXPROCS), then every
// output file written into a temporary directory, removed afterwards.
// name is the file's name in messages and results, data its text, readFile
// as for format.LoadExperiment. It measures the loading (LoadS), the
// simulation (WallS, and SimCPUS) and the writing of the files (OutputS,
// OutputCPUS) apart, one after the other as `tsim run` of one file does.
func RunWhole(name string, data []byte, readFile func(string) ([]byte, error), workers int) (Result, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r := Result{Model: "run:" + filepath.Base(name)}
	start := time.Now()
	l, err := input.LoadData(name, data, readFile)
	r.LoadS = time.Since(start).Seconds()
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	dir, err := os.MkdirTemp("", "tsim-bench-")
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	defer os.RemoveAll(dir)
	p, err := runner.NewPlan(l, runner.Options{OutDir: dir})
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	out, err := p.Lock()
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	defer out.Unlock()

	cpu0, start := cpuSeconds(), time.Now()
	res, err := runner.Execute(context.Background(), p, runner.Sim{}, workers, nil)
	r.WallS, r.SimCPUS = time.Since(start).Seconds(), cpuSeconds()-cpu0
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	for _, sc := range res.Scenarios {
		if sc == nil {
			continue
		}
		a := sc.Agg.Requests
		r.Requests += uint64(a.Generated)
		r.Events += sc.Agg.Events
	}
	if sc := res.Scenarios[0]; sc != nil {
		r.MeanResponseS = sc.Agg.Latency.Mean
	}

	cpu0, start = cpuSeconds(), time.Now()
	written, _, err := report.WriteOutputs(out, res, report.All)
	r.OutputS, r.OutputCPUS = time.Since(start).Seconds(), cpuSeconds()-cpu0
	if err != nil {
		return Result{}, fmt.Errorf("bench: %s: writing results: %w", name, err)
	}
	for _, f := range written {
		if fi, err := os.Stat(filepath.Join(p.Out, f)); err == nil {
			r.OutputBytes += fi.Size()
		}
	}
	r.OutputFiles = len(written)
	return r, nil
}

// runWhole runs the named entry of wholeRuns.
func runWhole(name, text string) (Result, error) {
	return RunWhole(name+".toml", []byte(text), nil, 0)
}
