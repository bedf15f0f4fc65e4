package simmode

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// startUpTop: users calling a service that takes 1 s to open, each call
// 100 ms, the users thinking 1 s between calls.
func startUpTop(users int, startUp time.Duration) *model.Topology {
	svc := tier("svc", wait(100*time.Millisecond))
	svc.StartUp = startUp
	return &model.Topology{
		Duration: 4500 * time.Millisecond, SampleEvery: time.Second, Tiers: []model.Tier{svc},
		Load: model.Load{Kind: model.LoadClosed, Users: model.Schedule{{At: 0, Value: float64(users)}}, Think: cnst(time.Second), Call: model.Call{Target: 0}},
	}
}

// latencies is "T:latency" of every request, in completion order.
func latencies(t *testing.T, top *model.Topology) (string, *results.Run) {
	t.Helper()
	res, err := Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pts := append([]results.Point(nil), res.Points...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].T < pts[j].T })
	var b []string
	for _, p := range pts {
		b = append(b, fmt.Sprintf("%g:%g", roundMS(p.T), roundMS(p.Latency)))
	}
	return strings.Join(b, " "), res
}

func TestStartUpFirstCallWaits(t *testing.T) {
	// The first call, at 1 s, opens the host (1 s) and then runs: 2.1 s
	// it ends, 1.1 s after it was sent; the next ones, at 3.1 and 4.2 s,
	// find it open.
	got, _ := latencies(t, startUpTop(1, time.Second))
	expect(t, "one user", got, "2.1:1.1 3.2:0.1 4.3:0.1")
	got, _ = latencies(t, startUpTop(1, 0))
	expect(t, "no start-up", got, "1.1:0.1 2.2:0.1 3.3:0.1 4.4:0.1")
	// Two users: both wait for the one opening, not one each.
	got, res := latencies(t, startUpTop(2, time.Second))
	expect(t, "two users", got, "2.1:1.1 2.1:1.1 3.2:0.1 3.2:0.1 4.3:0.1 4.3:0.1")
	if s := res.Tiers[0]; s.Arrived != 6 || s.PWait != 1.0/3 {
		t.Errorf("arrived %d, P(wait) %.3f; want 6 and 1/3 (the two that waited for the host)", s.Arrived, s.PWait)
	}
}
