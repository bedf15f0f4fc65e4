package simmode

import (
	"reflect"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
)

// Fixed delays (constant think times and waits, a call site's transfers,
// handshakes) wait in the calendar's lanes rather than its heap
// (fixedDelay). Lanes keep every event's place among the others, so a run
// with them is the run without them: the same trace of events and the same
// result, field for field. The topology has a constant of every kind, and
// client timeouts that fire.
func TestLanesChangeNothing(t *testing.T) {
	top := modeltest.Pipeline(3*time.Second, 10*time.Minute)
	top.Load.Think = sim.Const(200 * time.Millisecond)
	link := model.Network{Latency: time.Millisecond, Bandwidth: 1 << 20}
	top.Load.Call.Network = link
	top.Load.Call.Binding.SessionRoundTrips = 2
	top.Load.Call.Proxy.Kind = model.ProxyPerCall
	top.Load.Call.RequestKB, top.Load.Call.ReplyKB = 2, 5
	fe := top.Tiers[0].Steps[0].Call
	fe.Network = link
	fe.ReplyKB = 20
	top.Tiers[1].Steps[1].Demand = sim.Const(100 * time.Millisecond)

	results := make([]any, 2)
	for i, lanes := range []bool{false, true} {
		useLanes = lanes
		res, err := Run(top, model.Options{Seed: 7})
		useLanes = true
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests.TimedOut == 0 || res.Requests.Completed == 0 {
			t.Fatalf("lanes %v: %+v, want both completions and timeouts", lanes, res.Requests)
		}
		results[i] = res
	}
	if !reflect.DeepEqual(results[0], results[1]) {
		t.Fatal("the run with lanes differs from the run without")
	}
}

// The users' think times that vary wait in a sim.Group rather than the
// calendar's heap. A group keeps every event's place among the others, so
// a run with it is the run without: the same trace of events and the same
// result, field for field. The users come and go (a schedule retires some
// while they think), and client timeouts fire.
func TestGroupsChangeNothing(t *testing.T) {
	top := modeltest.Pipeline(3*time.Second, 10*time.Minute)
	top.Load.Users = model.Schedule{{At: 0, Value: 100}, {At: 2 * time.Minute, Value: 30}, {At: 4 * time.Minute, Value: 120}, {At: 6 * time.Minute, Value: 10}}
	runs := make([]*results.Run, 2)
	for i, groups := range []bool{false, true} {
		useGroups = groups
		res, err := Run(top, model.Options{Seed: 7})
		useGroups = true
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests.TimedOut == 0 || res.Requests.Completed == 0 {
			t.Fatalf("groups %v: %+v, want both completions and timeouts", groups, res.Requests)
		}
		runs[i] = res
	}
	if runs[0].Events != runs[1].Events || runs[0].TraceHash != runs[1].TraceHash {
		t.Errorf("events %d, trace %x without groups; %d, %x with", runs[0].Events, runs[0].TraceHash, runs[1].Events, runs[1].TraceHash)
	}
	if !reflect.DeepEqual(runs[0], runs[1]) {
		t.Fatal("the run with groups differs from the run without")
	}
}
