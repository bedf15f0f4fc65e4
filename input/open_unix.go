//go:build unix

package input

import "syscall"

// openFlags makes opening a FIFO return at once instead of waiting for a
// writer, should one replace a regular file between Stat and open. Reads
// of a regular file ignore it.
const openFlags = syscall.O_NONBLOCK
