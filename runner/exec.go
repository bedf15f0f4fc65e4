package runner

import (
	"context"
	"fmt"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/realmode"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/sim"
	"github.com/tsim-dev/tsim/simmode"
)

// An Executor runs one replication of one scenario. Modes are executors:
// "sim" is the discrete-event engine; "real" runs the same compiled
// topology with goroutines, sockets and timers on loopback (realmode).
type Executor interface {
	Run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error)
	// parallel reports whether replications may run side by side: real
	// runs may not, since they would compete for the machine they measure.
	Parallel() bool
}

type Sim struct{}

func (Sim) Run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	opt.Seed = seed
	return simmode.RunContext(ctx, top, opt)
}

func (Sim) Parallel() bool { return true }

// Real runs for real; timeScale is real seconds per simulated
// second (0: realmode chooses).
type Real struct {
	timeScale float64
	cpu       realmode.CPUEmulation
}

func (x Real) Run(ctx context.Context, top *model.Topology, seed uint64, opt model.Options) (*results.Run, error) {
	top, err := simmode.ResolveWarmup(ctx, top, seed) // the simulator's automatic warm-up, for both
	if err != nil {
		return nil, err
	}
	return realmode.Run(ctx, top, realmode.Options{Seed: seed, TimeScale: x.timeScale, CPU: x.cpu})
}

// CPUEmulations are the values of --cpu. The default is processor
// sharing, the simulator's own discipline, so that validate compares the
// model with itself run for real; "cores" holds a core permit per demand,
// first come first served, whose means agree for exponential demands but
// whose percentiles differ by discipline (realmode's package doc).
var CPUEmulations = map[string]realmode.CPUEmulation{"sharing": realmode.CPUSharing, "cores": realmode.CPUCores}

// ParseCPU reads a value of --cpu.
func ParseCPU(s string) (realmode.CPUEmulation, error) {
	d, ok := CPUEmulations[s]
	if !ok {
		return 0, fmt.Errorf("--cpu must be sharing or cores, got %q", s)
	}
	return d, nil
}

func (Real) Parallel() bool { return false }

// modes lists the valid values of --mode.
var Modes = []string{"sim", "real"}

// ExecutorFor returns the Executor of a mode. The mode has been checked
// against modes.
func ExecutorFor(mode string, timeScale float64, cpu realmode.CPUEmulation) (Executor, error) {
	switch mode {
	case "sim":
		return Sim{}, nil
	case "real":
		return Real{timeScale, cpu}, nil
	}
	return nil, fmt.Errorf("unknown mode %q", mode)
}

// ReplicationSeed is the master seed of replication k of an experiment
// whose seed is seed. Replication 0 uses the seed itself, so that any
// replication can be replayed alone with --seed and --reps 1; the others
// scramble (seed, k) with SplitMix64, so that the replications of nearby
// seeds do not overlap. Every variant and sweep point uses the same seeds:
// their replication k see common random numbers.
func ReplicationSeed(seed uint64, k int) uint64 { return sim.DeriveSeed(seed, uint64(k)) }

// runSafely runs one replication and turns a panic, which is a bug in
// tsim, into an error of that replication (with the seed to replay it),
// instead of a runtime dump from a worker goroutine.
func runSafely(ctx context.Context, ex Executor, top *model.Topology, seed uint64, opt model.Options) (r *results.Run, err error) {
	defer func() {
		if v := recover(); v != nil {
			r, err = nil, fmt.Errorf("internal error: %v (a bug in tsim; please report it with the file and this seed)", v)
		}
	}()
	return ex.Run(ctx, top, seed, opt)
}
