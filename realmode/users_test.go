package realmode

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// TestUserSendsBeforeItLeaves: a user whose think ends before the Users
// schedule retires it sends its request, as in the simulator, however
// late the process runs the two: four users send at t0 and are retired
// 1 ms (simulated, 50 µs of real time) later. Every request is sent
// whatever the machine's load; whether each ends before the run does
// (2 s, 100 ms of real time, after) is not judged. (Before the user
// kept its think's instant, 18 runs of 20 sent 1–3 of the 4 on a quiet
// machine: Go ran the schedule's goroutine, whose timer fired last,
// first.)
func TestUserSendsBeforeItLeaves(t *testing.T) {
	t.Parallel() // mostly asleep
	top := modeltest.Burst(4, 0, 3*time.Second, tier("svc", 8, waitFor(time.Second)))
	top.Load.Users = model.Schedule{{At: 0, Value: 4}, {At: t0 + time.Millisecond, Value: 4}, {At: t0 + time.Millisecond, Value: 0}}
	top.Load.Think = sim.Const(t0)
	s, err := simmode.Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests.Generated != 4 {
		t.Fatalf("simulated: requests %+v, want 4 generated", s.Requests)
	}
	for i := range 10 {
		r, err := Run(t.Context(), top, Options{Seed: 1, TimeScale: stepScale})
		if err != nil {
			t.Fatal(err)
		}
		if q := r.Requests; q.Generated != 4 || !q.Conserved() {
			t.Errorf("run %d: requests %+v, want 4 generated, every one accounted for", i, q)
		}
	}
}
