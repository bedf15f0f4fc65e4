package runner

import (
	"context"
	"fmt"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/realmode"
	sim "github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// Validate runs top on the simulator and for real with the same seed and
// compares them with tol, scaled to the time scale the real run used.
// When the real run fails (a topology real mode cannot run, an
// interruption), the error comes with a Validation that holds only the
// simulated run; when the simulation fails, with none.
func Validate(ctx context.Context, top *model.Topology, seed uint64, opt realmode.Options, tol realmode.Tolerances) (*realmode.Validation, error) {
	simRes, err := simmode.Run(top, model.Options{Seed: seed})
	if err != nil {
		return nil, fmt.Errorf("simulation: %w", err)
	}
	opt.Seed = seed
	if top.Warmup < 0 {
		// Both executors discard the initial period the simulator picked.
		t := *top
		t.Warmup = sim.FromSeconds(simRes.Warmup)
		top = &t
	}
	real, info, err := realmode.RunWithInfo(ctx, top, opt)
	if err != nil {
		return &realmode.Validation{Sim: simRes}, err
	}
	return &realmode.Validation{Sim: simRes, Real: real, Info: info, Report: realmode.Compare(simRes, real, tol.ForScale(info.Scale))}, nil
}
