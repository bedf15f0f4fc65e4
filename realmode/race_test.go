//go:build race

package realmode

// raceEnabled: the race detector slows HTTP and goroutine hand-offs about
// tenfold, so timing checks widen or skip.
const raceEnabled = true
