// Package htmlreport writes tsim's pages: report.html, the results of a
// run in one self-contained file that opens from disk with no network,
// and diff.html, two result folders compared (Diff). A page holds the
// summary and tier tables, the connection-limit resolutions, the
// warnings, what binds, and interactive charts drawn in the browser by
// uPlot (vendor/uplot, MIT; its version and hashes in vendor/uplot/VERSION),
// embedded with go:embed: every tier's counters over time under their
// PerfMon names, each request's latency, the latency distributions, and a
// sweep's curves with their confidence bars. Charts zoom (drag; double-click
// zooms out; the time axes of a page zoom together), show the values under
// the cursor, and hide a series when its legend entry is clicked.
//
// Diff compares two result folders (two runs, two variants of one as
// DIR@VARIANT, a run and the one before it that tsim run --keep kept in
// DIR/history/N, see Keep): every headline figure side by side with its
// change, judged against the 95% half-width of the difference from both
// runs' intervals, the limits that bind in each, and diff.html with both
// runs' charts overlaid, read back from their report.html.
//
// A sweep's report also shows the Universal Scalability Law fitted to its
// throughput (a table and a chart of the measured points, the law, linear
// scaling and the peak), and a run compared with a load test (tsim run
// --measured) the measured latency quantiles and failures window by
// window against the simulated.
//
// The other commands' pages are built from their own results, which the
// command hands over in this package's types (it knows nothing of
// analysis, calibrate, fit or realmode): PlanPage (plan.html: the goal,
// every evaluated point, a chart per clause), ValidatePage (validate.html:
// the verdicts, the figures simulated and real, both runs' charts
// overlaid), CalibrationPage (calibration.html: the estimates, what was
// written, every compared counter measured against simulated) and FitPage
// (fit.html: the fitted inputs, every target in tolerances, the
// sensitivities).
//
// A command builds a Page (Experiment for a run's results) and may add
// sections of its own (Page.Add, Section, Block): explain its diagnosis,
// fit its fit. The page's bytes depend only on what it holds: no time,
// no map order, no random ids, so the same seed gives the same page.
//
// A page stays bounded whatever the run: a run keeps at most 4,096
// samples of each counter and 20,000 latency points; the page draws at
// most DefaultBudget chart values, thinning time series where there are
// more (each bucket of consecutive samples becomes its lowest and highest
// value, in order, so a spike of one sample survives), and draws a
// latency scatter of more than 5,000 points as one point per cell of a
// grid over time and log latency (isolated points always stay). Tiers
// after the first twelve start folded, their charts drawn when opened.
//
// Like plots, it knows the result types of package results and nothing of
// the engine: it must not import sim, model, format, runner or report
// (report calls it).
package htmlreport
