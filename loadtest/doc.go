// Package loadtest reads the results of the load-test tools people run
// when they suspect a throttle — a JMeter results file (.jtl, CSV), a k6
// JSON output (k6 run --out json=FILE) and a Gatling simulation.log (the
// text log of Gatling 3.0 to 3.9) — into one list of requests: when each
// started, how long it took, whether it succeeded, which thread or user
// sent it. From them it derives what tsim needs on both sides of a
// simulation:
//
//   - the load: the arrival instants, replayed as an open load (a format
//     load of kind "trace"), or the users over time (the ramp) and their
//     think time, for a closed load;
//   - the measurement: the latency distribution over time, compared with
//     a simulated run's (Compare) as data of package results.
//
// Parsing is bounded and hostile-input safe: the caller reads the file
// (through package input, bounded, regular files only) and hands the
// bytes to Parse; every line is bounded, every count capped, every error
// names FILE:LINE and quotes at most a short, sanitised excerpt. Package
// loadtest imports only results of tsim: package format uses it to
// resolve a trace load, and reads no file itself.
package loadtest
