// Package report turns what a run produced (package results) into what
// people read: summary.json, summary.csv, timeseries.csv, perfmon.csv (the
// samples in the layout of PerfMon's relog), the tables tsim prints, and
// the pictures (drawn by package plots), written whole or not at all into
// an output directory.
//
// The files:
//
//   - summary.go: summary.json;
//   - csv.go: summary.csv and timeseries.csv (whose columns are
//     results.SampleColumns);
//   - perfmon.go: perfmon.csv, every tier a machine with the counters
//     PerfMon would show for it;
//   - pictures.go: which pictures an experiment gets;
//   - write.go: the kinds of output (--outputs), rendering them in
//     parallel and writing them (WriteOutputs, OutputFiles);
//   - tables.go and format.go: the terminal tables and the formats of
//     their numbers.
//
// Same results, same bytes: nothing here reads the clock or iterates a
// map where the order reaches a file. Package report knows results, not
// the engine: it must not import sim, model, format or the executors.
package report
