//go:build unix

package realmode

import "syscall"

// fdLimit is RLIMIT_NOFILE: the soft and the hard limit.
func fdLimit() (cur, hard uint64, ok bool) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, 0, false
	}
	return uint64(lim.Cur), uint64(lim.Max), true
}

// raiseFDLimit raises the soft limit to to (at most the hard limit).
func raiseFDLimit(to uint64) bool {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return false
	}
	lim.Cur = to
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) == nil
}
