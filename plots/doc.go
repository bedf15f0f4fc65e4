// Package plots draws the results of tsim runs as PNG, SVG or PDF pictures
// with gonum/plot: counters over time in the style of a PerfMon capture, in
// pages of a few tiers, client latency of each request over time, latency
// distributions and sweep curves.
//
// It knows the result types of package results and nothing else of tsim: it
// must not import sim, model or cmd/tsim, so that a picture can be drawn from
// any run, simulated or real. Every constructor checks its data and returns
// an error on NaN, Inf or missing data instead of drawing a misleading
// picture; drawing itself is deterministic, so the same data give the same
// bytes in every format.
//
// Drawing takes about the same time whatever the number of samples: time
// series are reduced to what each column of pixels can show (its first,
// lowest, highest and last sample, so a spike of one sample survives) and
// stroked in short pieces, and latency dots are capped at a few per pixel.
// The plots are gonum/plot's, drawn on rgbaCanvas: vgimg's canvas with
// strokes, fills and upright text done by golang.org/x/image/vector and
// image/draw at a cost that follows the shapes (glyphs are kept for
// every picture, pixels for the next), and PNGs compressed by
// klauspost/compress's DEFLATE at its fastest level, in strips of rows
// compressed at once on every core into one stream whose bytes do not
// depend on how many. `go test -bench . ./plots/` measures it; `go test
// -bench BenchmarkRun ./bench/` and `tsim bench --model
// run:crack-throttling` measure a whole run's output against its
// simulation.
package plots
