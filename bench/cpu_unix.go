//go:build unix

package bench

import "syscall"

// cpuSeconds is the CPU time the process has used so far, user and
// system, on every core.
func cpuSeconds() float64 {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return float64(u.Utime.Nano()+u.Stime.Nano()) / 1e9
}
