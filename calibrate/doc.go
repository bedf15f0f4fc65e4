// Package calibrate fits an experiment's demands to a PerfMon capture: it
// reads the CSV relog writes (PDH CSV 4.0, \\MACHINE\Object(Instance)\Counter
// columns, the counters docs/counters.md lists), estimates each tier's CPU
// demand per request by the utilisation law (D = U·cores/X, less what the
// experiment's bindings spend) and the wait its operation spends neither
// at the CPU nor in calls (the operation's time less both; Little's law
// for the waits tsim's own captures count), with 95% confidence intervals
// from batch means over the capture's time series. It writes the estimates
// into the experiment (the topology laid in, the cpu and wait steps
// scaled), simulates that, and compares the simulated counters with the
// measured ones, per counter and over time (calibration.png).
//
// Counters give means. What they cannot give — the demands' shapes, the
// split between steps, what a wait is, a closed load's users — is kept
// from the experiment and said so; docs/field-calibrate.md walks through
// the Crack Throttling capture.
//
// Every problem of a capture is an error "FILE:LINE:COL: what; what is
// allowed", and nothing is returned to write. Package calibrate builds on
// runner, format, model, report and plots; it must not import analysis,
// the root package or cmd/tsim, and it writes no file itself.
package calibrate
