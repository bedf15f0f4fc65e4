//go:build !linux

package stallprobe

import "time"

// CPUTime is not measured here: 0.
func CPUTime() time.Duration { return 0 }
