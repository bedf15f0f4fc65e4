// Package analysis answers the two questions tsim is asked after "what
// happens": why is it slow, and what must change.
//
// Explain takes each variant of an experiment through three steps. First
// the operational laws, before simulating: every throttle's capacity
// bound L/H, the load's asymptotic bounds and the limit that binds first
// (model.Analyse computes them from the compiled topology; it lives in
// model because it reads the model's own cost rules). Then one simulation,
// for where the response time went. Then a diagnosis: how busy the binding
// limit was, what is idle, the smallest change that moves the bottleneck
// (a knob, the key path that sets it and its value, from Little's law) and
// what binds once it is out of the way, each change checked by applying it
// to the variant and analysing again.
//
// Plan searches by simulating: the smallest setting that meets a goal
// (ParseGoal reads "p99<4s,timeouts<0.1%"), by bisection on a capacity
// setting or over a grid, the most load a configuration holds (up to a
// cap, LoadCap), or the setting that maximises goodput. It streams each
// point as it is judged (PlanOptions.OnPoint) and, interrupted, returns
// those that finished with ErrInterrupted. Every point is replicated
// with the seeds of 'tsim run' (runner.ReplicationSeed) on a
// runner.Executor, and a goal holds when its one-sided 95% Student t
// bound across the replications does.
//
// Check answers, before anything runs, what a run of a file will take:
// its peak memory (its machines, users, requests under way, connection
// pools and time series, by constants measured on the simulator, times
// the replications run at once), against the machine's (MachineMemory);
// and whether a load arrives faster than the configuration serves it by
// the operational laws (ρ > 1 at the binding throttle), for how long, and
// whether the excess is kept or refused by a bounded queue.
//
// FitUSL fits the Universal Scalability Law (Gunther) to throughput at
// several concurrencies, with intervals, and AttachUSL fits it to every
// line of a sweep over a concurrency-like key for tsim run's report and
// usl.png. Mechanisms is where the contention mechanisms that make
// throughput fall past its peak will register, for explain to name the
// one that dominates.
//
// All of them return typed results — bounds, points, answers, proposed changes —
// and write their text (WriteText) with report's tables and number
// formats; the command line only parses flags, calls, prints and draws.
//
// Package analysis builds on format, model, runner, results, sim,
// report (for its formats and tables only) and dotnetconfig (to write a
// proposed change as the .NET configuration that makes it). It must not import cmd/tsim or
// the root package tsim, and it draws no picture: plots are reached, if at
// all, through report, and the pictures of explain and plan are drawn by
// their callers from the typed results.
package analysis
