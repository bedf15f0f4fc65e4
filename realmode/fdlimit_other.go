//go:build !unix

package realmode

// fdLimit: no RLIMIT_NOFILE to read here.
func fdLimit() (cur, hard uint64, ok bool) { return 0, 0, false }

func raiseFDLimit(to uint64) bool { return false }
