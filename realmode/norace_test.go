//go:build !race

package realmode

const raceEnabled = false
