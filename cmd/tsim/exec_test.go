package main

import (
	"testing"

	"github.com/tsim-dev/tsim/bench"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

// failing fails every replication.
func TestMedianRow(t *testing.T) {
	rs := []bench.Result{{WallS: 3, Requests: 10}, {WallS: 1, Requests: 10}, {WallS: 2, Requests: 10, Events: 40}}
	r := bench.Median("m", rs)
	if r.WallS != 2 || r.Events != 40 || r.RequestsPerS != 5 || r.EventsPerS != 20 {
		t.Errorf("median of three: %+v", r)
	}
	r = bench.Median("m", []bench.Result{{WallS: 4, Requests: 6}, {WallS: 2, Requests: 6}})
	if r.WallS != 3 || r.RequestsPerS != 2 {
		t.Errorf("median of two: %+v", r)
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{results.FmtLatency(0), "0"},
		{results.FmtLatency(0.00085), "850 µs"},
		{results.FmtLatency(0.0453), "45.3 ms"},
		{results.FmtLatency(0.453), "453 ms"},
		{results.FmtLatency(6.5), "6.50 s"},
		{results.FmtLatency(12.34), "12.3 s"},
		{results.FmtPercent(0), "0%"},
		{results.FmtPercent(0.0004), "0.04%"},
		{results.FmtPercent(0.041), "4.1%"},
		{results.FmtPercent(0.37), "37%"},
		{results.FmtRate(13.333), "13.33"},
		{results.FmtRate(1520.4), "1520"},
		{results.MeanMax(68.94, 91), "68.9 / 91"},
		{report.FmtSeconds(300), "300 s"},
		{runner.Stem("dir/crack-throttling.toml"), "crack-throttling"},
		{results.ShortKey("tier.fe.calls.maxconnection"), "maxconnection"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
