//go:build !unix

package input

// openFlags: elsewhere there is no FIFO to block on.
const openFlags = 0
