package simmode

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
)

// Cancelling the context of a run that would take hours of wall time (a
// 30-day open load at 10,000 requests per second: some 10¹¹ events) stops it
// promptly: RunContext returns an error that wraps context.Canceled, having
// executed a tiny fraction of the events. No wall-clock time is asserted.
func TestRunContextCancelStopsRun(t *testing.T) {
	top := modeltest.Pipeline(20*time.Second, 30*24*time.Hour)
	top.Load = model.Load{Kind: model.LoadOpen, Rate: model.Schedule{{At: 0, Value: 10000}}, Call: model.Call{Target: 0, Timeout: 20 * time.Second}}
	top.Tiers[0].Steps[0].Call.Conn.Limit = 0 // unlimited connections: every request runs
	const full = 30 * 24 * 3600 * 10000 * 4   // requests × (at least) 4 events each
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	res, err := RunContext(ctx, top, model.Options{Seed: 1, NoSeries: true})
	if err == nil {
		t.Fatalf("RunContext returned no error (a result of %d events)", res.Events)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v does not wrap context.Canceled", err)
	}
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("error %T is not an *InterruptedError", err)
	}
	if res != nil {
		t.Fatal("an interrupted run returned a result")
	}
	if ie.Events == 0 || ie.Events > full/1000 {
		t.Fatalf("interrupted after %d events, want some but far fewer than the %d of the full run", ie.Events, full)
	}
	t.Logf("%v", err)

	// A context done before the start runs nothing.
	if _, err := RunContext(ctx, top, model.Options{Seed: 1}); !errors.As(err, &ie) || ie.Events != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("RunContext with a cancelled context: %v", err)
	}
}

// A context that is never done changes nothing: RunContext and Run give the
// same result, event for event.
func TestRunContextSameAsRun(t *testing.T) {
	top := modeltest.Pipeline(20*time.Second, 10*time.Minute)
	a, err := Run(top, model.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b, err := RunContext(ctx, top, model.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if a.TraceHash != b.TraceHash || a.Events != b.Events || a.Requests != b.Requests {
		t.Fatalf("Run: %d events hash %x %+v; RunContext: %d events hash %x %+v", a.Events, a.TraceHash, a.Requests, b.Events, b.TraceHash, b.Requests)
	}
}
