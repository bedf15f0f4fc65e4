package model

// Options tune one run.
type Options struct {
	Seed uint64
	// MaxPoints bounds the latency points kept for plots (default 20,000).
	MaxPoints int
	// NoSeries skips the time series (sweeps that only need summaries).
	NoSeries bool
}
