// Package bench holds tsim's reference benchmark models, the same two that
// bench/simpy implements in SimPy 3 for a speed baseline:
//
//   - mm1: an M/M/1 queue at ρ = 0.9 (λ = 0.9, μ = 1) until 1,000,000
//     customers complete, written directly on sim.Engine as lean as it can
//     be, to show the engine's own speed;
//   - pipeline: the engine issue's closed-loop two-tier model run through
//     model.Run for 3,600 simulated seconds.
//
// Run measures one model with the wall clock; `go test -bench . ./bench/`
// and `tsim bench` use it. Unlike sim and model, this package may read the
// wall clock (time.Now): it measures the simulator, it is not part of it,
// and neither sim nor model may import it. No test here passes or fails on
// wall-clock time.
package bench
