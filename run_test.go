package tsim_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/tsim-dev/tsim"
)

// Run adds to its result what RunAll (tsim run) adds: a sweep's USL fit,
// and the load test's measurement to compare with (Options.Measured).
func TestRunAddsWhatRunAllAdds(t *testing.T) {
	measured, err := tsim.ReadMeasured("loadtest/testdata/jmeter.jtl")
	if err != nil {
		t.Fatal(err)
	}
	shopExp, err := tsim.Load("loadtest/testdata/shop.toml")
	if err != nil {
		t.Fatal(err)
	}
	// A sweep of the users: a concurrency-like key, so both entry paths
	// fit the USL to its throughput.
	sweepExp, err := tsim.Load("experiments/only-two-requests.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*tsim.Experiment{sweepExp, shopExp} {
		opt := tsim.Options{Measured: measured}
		one, err := tsim.Run(context.Background(), e, opt)
		if err != nil {
			t.Fatal(err)
		}
		var all *tsim.Finished
		if err := tsim.RunAll(context.Background(), []*tsim.Experiment{e}, opt, func(f *tsim.Finished) { all = f }); err != nil {
			t.Fatal(err)
		}
		if all == nil || all.Result == nil {
			t.Fatalf("%s: RunAll finished nothing", e.Path())
		}
		if !reflect.DeepEqual(one.USL, all.Result.USL) {
			t.Errorf("%s: Run's USL %+v, RunAll's %+v", e.Path(), one.USL, all.Result.USL)
		}
		if !reflect.DeepEqual(one.Notes, all.Warnings) {
			t.Errorf("%s: Run's notes %q, RunAll's warnings %q", e.Path(), one.Notes, all.Warnings)
		}
		compared := 0
		for i, sc := range one.Done() {
			if !reflect.DeepEqual(sc.LoadTest, all.Result.Done()[i].LoadTest) {
				t.Errorf("%s: variant %d: Run's load-test comparison differs from RunAll's", e.Path(), i)
			}
			if sc.LoadTest != nil {
				compared++
			}
		}
		switch e {
		case sweepExp:
			if len(one.USL) == 0 {
				t.Errorf("sweep: Run fitted no USL")
			}
			if len(one.Notes) == 0 {
				t.Errorf("sweep: Run says nothing of the measurement it could not compare")
			}
		case shopExp:
			if compared == 0 {
				t.Errorf("shop: Run compared no variant with the measurement")
			}
		}
	}
}
