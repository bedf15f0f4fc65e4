// Package runner runs an experiment: every scenario (a variant at a sweep
// point) its number of times, on an executor, and aggregates the
// replications into a results.Experiment.
//
// The files:
//
//   - plan.go: a Plan, the one description of a run (the experiment, the
//     seed, replications, mode, shard, output directory and overrides),
//     built by NewPlan and nowhere else;
//   - exec.go: the executors (the simulator, real mode) and the seed of
//     each replication;
//   - run.go: execution — the bounded, in-order dispatcher of work items
//     (RunItems), Execute and the pipelined ExecuteAll;
//   - aggregate.go: the Aggregator, which averages a scenario's
//     replications as results' column tables say, with 95% Student t
//     half-widths;
//   - shard.go and merge.go: sharded runs and their merge.
//
// Replication k of every scenario uses the seed ReplicationSeed(seed, k),
// so variants are compared on common random numbers; each replication has
// its own engine and nothing is shared, so results do not depend on the
// number of workers or the order in which replications finish.
//
// Sharding: "tsim run FILE --shard i/n" runs the work items k with
// k mod n = i, where item k is replication k mod reps of scenario k / reps,
// and writes each finished item as one JSON line of
// DIR/<stem>/shard-i-of-n/items.jsonl, in item order, as soon as the items
// before it are written. When the shard ends it writes shard.json, the
// Manifest: the experiment's files and their hash, the seed, the number of
// replications and items, and whether the shard finished. "tsim merge"
// reads the shards of an experiment back in item order and aggregates them
// exactly as "tsim run" does, so that the merged files are the bytes an
// unsharded run writes.
//
// Package runner must not import report, plots or analysis: it produces
// results, others show them.
package runner
