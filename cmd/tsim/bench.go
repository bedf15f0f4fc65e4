package main

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/bench"
	"github.com/tsim-dev/tsim/report"
)

var cmdBench = &command{
	Name:      "bench",
	UsageLine: "[--json] [--model NAME] [--runs N]",
	Short:     "measure how fast the simulator runs",
	Long:      helpText("bench"),
	Run:       runBench,
}

// benchRow is one model's result, as printed and as JSON.
type benchRow struct {
	Model        string  `json:"model"`
	Requests     uint64  `json:"requests"`
	Events       uint64  `json:"events"`
	WallS        float64 `json:"wall_s"` // the simulation proper
	LoadS        float64 `json:"load_s"` // loading the model
	RequestsPerS float64 `json:"requests_per_s"`
	EventsPerS   float64 `json:"events_per_s"`
	// The whole runs (run:NAME) only: writing the output files, wall and
	// CPU seconds, and the simulation's CPU seconds.
	OutputS    float64 `json:"output_s,omitempty"`
	SimCPUS    float64 `json:"sim_cpu_s,omitempty"`
	OutputCPUS float64 `json:"output_cpu_s,omitempty"`
}

func runBench(ctx context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	asJSON := fs.Bool("json", false, "")
	only := fs.String("model", "", "")
	runs := fs.Int("runs", 1, "")
	pos, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	if len(pos) > 0 {
		return c.usageError(e, "unexpected argument %q", pos[0])
	}
	if *runs < 1 {
		return c.usageError(e, "--runs must be at least 1, got %d", *runs)
	}
	models := bench.Models()
	if *only != "" {
		if !slices.Contains(models, *only) {
			return c.usageError(e, "unknown model %q (models: %s)", *only, strings.Join(models, ", "))
		}
		models = []string{*only}
	}

	var rows []benchRow
	for _, m := range models {
		var rs []bench.Result
		for range *runs {
			if ctx.Err() != nil {
				c.errorf(e, "interrupted")
				return exitFailure
			}
			r, err := bench.Run(m)
			if err != nil {
				c.errorf(e, "%s: %v", m, err)
				return exitFailure
			}
			rs = append(rs, r)
		}
		rows = append(rows, medianRow(m, rs))
	}

	if *asJSON {
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			c.errorf(e, "%v", err)
			return exitFailure
		}
		e.stdout.Write(append(b, '\n'))
		return exitOK
	}
	t := report.NewTable(e.stdout, 1, "model", "requests", "events", "wall s", "requests/s", "events/s", "load s", "output s", "output / sim CPU")
	for _, r := range rows {
		out, ratio := "–", "–"
		if r.OutputS > 0 {
			out = strconv.FormatFloat(r.OutputS, 'f', 3, 64)
		}
		if r.SimCPUS > 0 && r.OutputCPUS > 0 {
			ratio = strconv.FormatFloat(r.OutputCPUS/r.SimCPUS, 'f', 2, 64)
		}
		t.Append([]string{
			r.Model,
			strconv.FormatUint(r.Requests, 10),
			strconv.FormatUint(r.Events, 10),
			strconv.FormatFloat(r.WallS, 'f', 3, 64),
			strconv.FormatFloat(r.RequestsPerS, 'f', 0, 64),
			strconv.FormatFloat(r.EventsPerS, 'f', 0, 64),
			strconv.FormatFloat(r.LoadS, 'f', 3, 64),
			out, ratio,
		})
	}
	if err := t.Render(); err != nil {
		c.errorf(e, "%v", err)
		return exitFailure
	}
	return exitOK
}

// medianRow reports the median of a model's runs by wall time (the mean of
// the two middle runs' wall times for an even count).
func medianRow(model string, rs []bench.Result) benchRow {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].WallS < rs[j].WallS })
	m := rs[(len(rs)-1)/2]
	wall := m.WallS
	if len(rs)%2 == 0 {
		wall = (wall + rs[len(rs)/2].WallS) / 2
	}
	row := benchRow{Model: model, Requests: m.Requests, Events: m.Events, WallS: wall, LoadS: m.LoadS,
		OutputS: m.OutputS, SimCPUS: m.SimCPUS, OutputCPUS: m.OutputCPUS}
	if wall > 0 {
		row.RequestsPerS = float64(m.Requests) / wall
		row.EventsPerS = float64(m.Events) / wall
	}
	return row
}
