package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/tsim-dev/tsim/report"
)

// Row is one model's result over several runs, as tsim bench prints it
// and writes it as JSON.
type Row struct {
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

// RunModels runs each model runs times and returns the median of each
// (Median). A cancelled ctx stops it between runs.
func RunModels(ctx context.Context, models []string, runs int) ([]Row, error) {
	var rows []Row
	for _, m := range models {
		var rs []Result
		for range runs {
			if ctx.Err() != nil {
				return rows, errors.New("interrupted")
			}
			r, err := Run(m)
			if err != nil {
				return rows, fmt.Errorf("%s: %v", m, err)
			}
			rs = append(rs, r)
		}
		rows = append(rows, Median(m, rs))
	}
	return rows, nil
}

// Median is the median of a model's runs by wall time (the mean of the
// two middle runs' wall times for an even count).
func Median(model string, rs []Result) Row {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].WallS < rs[j].WallS })
	m := rs[(len(rs)-1)/2]
	wall := m.WallS
	if len(rs)%2 == 0 {
		wall = (wall + rs[len(rs)/2].WallS) / 2
	}
	row := Row{Model: model, Requests: m.Requests, Events: m.Events, WallS: wall, LoadS: m.LoadS,
		OutputS: m.OutputS, SimCPUS: m.SimCPUS, OutputCPUS: m.OutputCPUS}
	if wall > 0 {
		row.RequestsPerS = float64(m.Requests) / wall
		row.EventsPerS = float64(m.Events) / wall
	}
	return row
}

// WriteTable prints rows as tsim bench does.
func WriteTable(w io.Writer, rows []Row) error {
	t := report.NewTable(w, 1, "model", "requests", "events", "wall s", "requests/s", "events/s", "load s", "output s", "output / sim CPU")
	for _, r := range rows {
		output, ratio := "–", "–"
		if r.OutputS > 0 {
			output = strconv.FormatFloat(r.OutputS, 'f', 3, 64)
		}
		if r.SimCPUS > 0 && r.OutputCPUS > 0 {
			ratio = strconv.FormatFloat(r.OutputCPUS/r.SimCPUS, 'f', 2, 64)
		}
		err := t.Append([]string{
			r.Model,
			strconv.FormatUint(r.Requests, 10),
			strconv.FormatUint(r.Events, 10),
			strconv.FormatFloat(r.WallS, 'f', 3, 64),
			strconv.FormatFloat(r.RequestsPerS, 'f', 0, 64),
			strconv.FormatFloat(r.EventsPerS, 'f', 0, 64),
			strconv.FormatFloat(r.LoadS, 'f', 3, 64),
			output, ratio,
		})
		if err != nil {
			return err
		}
	}
	return t.Render()
}
