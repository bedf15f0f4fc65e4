package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"

	"github.com/tsim-dev/tsim/results"
)

// params is a scenario's sweep values, written as a JSON object in sweep
// axis order.
type params []results.Param

func (p params) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.Key)
		v, _ := json.Marshal(kv.Value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// scenarioJSON is one scenario in summary.json.
type scenarioJSON struct {
	Variant string `json:"variant"`
	Params  params `json:"params"`
	results.Aggregate
	LoadTest *results.LoadTest `json:"load_test,omitempty"`
}

// summaryJSON is summary.json. Its top-level results are those of the
// first scenario (the first variant at the first sweep point); variants
// lists every variant when the experiment has no sweep, points every
// (variant, sweep point) when it has one.
type summaryJSON struct {
	Experiment       string   `json:"experiment"`
	Description      string   `json:"description"`
	File             string   `json:"file"`
	Seed             uint64   `json:"seed"`
	Replications     int      `json:"replications"`
	ReplicationSeeds []uint64 `json:"replication_seeds"`
	Mode             string   `json:"mode"`
	// Counting says which requests the counts, rates and latencies cover.
	Counting string `json:"counting"`
	// Complete is false when the run was interrupted; the missing
	// scenarios are then absent from variants and points.
	Complete  bool            `json:"complete"`
	Scenarios int             `json:"scenarios"`
	Sweep     []sweepAxisJSON `json:"sweep"`
	// Warnings are the experiment's settings that take no effect
	// (docs/dotnet.md, "Settings that take no effect"); absent when none.
	Warnings []string `json:"warnings,omitempty"`
	scenarioJSON
	Variants []scenarioJSON `json:"variants"`
	Points   []scenarioJSON `json:"points"`
	// USL: the Universal Scalability Law fitted to a sweep's throughput
	// over a concurrency-like key (results.Experiment.USL).
	USL []*results.USL `json:"usl,omitempty"`
}

type sweepAxisJSON struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// countingNote is summary.json's "counting": the period every count, rate
// and latency covers (results.Counts).
const countingNote = "requests, rates, latencies and the tiers' and calls' counters cover the measured period, after warmup_s: " +
	"requests.generated were generated in it, requests.in_flight_at_warmup were under way when it began, " +
	"completed, timed_out, rejected and failed ended in it, in_flight were under way at its end " +
	"(generated + in_flight_at_warmup = completed + timed_out + rejected + failed + in_flight); " +
	"first_timeout_s and the time series cover the whole run"

// SummaryJSON renders summary.json. Only the finished scenarios are
// written; there is at least one.
func SummaryJSON(r *results.Experiment) ([]byte, error) {
	done := r.Done()
	s := summaryJSON{
		Experiment:       r.Name,
		Description:      r.Description,
		File:             filepath.ToSlash(r.File),
		Seed:             r.Seed,
		Replications:     r.Replications,
		ReplicationSeeds: r.ReplicationSeeds,
		Mode:             r.Mode,
		Counting:         countingNote,
		Complete:         r.Complete(),
		Scenarios:        len(r.Scenarios),
		Sweep:            []sweepAxisJSON{},
		Warnings:         r.Warnings,
		Variants:         []scenarioJSON{},
		Points:           []scenarioJSON{},
		USL:              r.USL,
	}
	for _, ax := range r.Sweep {
		s.Sweep = append(s.Sweep, sweepAxisJSON{ax.Key, ax.Values})
	}
	for i, sc := range done {
		j := scenarioJSON{Variant: sc.Variant, Params: params(sc.Params), Aggregate: sc.Agg, LoadTest: sc.LoadTest}
		if !r.PerReplica { // every machine of a farm only on request
			j.Aggregate.Replicas, j.Aggregate.ReplicaCalls = nil, nil
		}
		if j.Params == nil {
			j.Params = params{}
		}
		if i == 0 {
			s.scenarioJSON = j
		}
		if r.IsSweep() {
			s.Points = append(s.Points, j)
		} else {
			s.Variants = append(s.Variants, j)
		}
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
