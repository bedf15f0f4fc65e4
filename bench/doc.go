// Package bench holds tsim's reference benchmark models, the same two that
// bench/simpy implements in SimPy 3 and desgo (a minimal hand-written Go
// event loop the team keeps as a yardstick outside this repository)
// implements, for a speed baseline:
//
//   - mm1: an M/M/1 queue at ρ = 0.9 (λ = 0.9, μ = 1) until 1,000,000
//     customers complete, written directly on sim.Engine as lean as it can
//     be, to show the engine's own speed;
//   - pipeline: the engine issue's closed-loop two-tier model run through
//     model.Run for 3,600 simulated seconds;
//
// and whole runs that load a model from its TOML and simulate it, timing
// the two apart (Result.LoadS, Result.WallS): pipeline-10h (the pipeline
// for ten simulated hours) and crack-throttling (the story's system).
// RunExperiment does the same for any experiment file; BenchmarkExperiments
// runs it over the shipped experiments. RunWhole runs a file as `tsim run`
// does, output files included, and times the simulation and the writing of
// the files apart (wall and CPU seconds): `tsim bench --model run:pipeline`
// and run:crack-throttling, and BenchmarkRun over the shipped
// experiments/pipeline.toml and crack-throttling.toml, report them, so
// that output that grows to dominate a run shows.
//
// Run measures one model with the wall clock; `go test -bench . ./bench/`
// and `tsim bench` use it. Unlike sim and model, this package may read the
// wall clock (time.Now) and, in its tests, files: it measures the
// simulator, it is not part of it, and neither sim nor model may import it.
// No test here passes or fails on wall-clock time.
package bench
