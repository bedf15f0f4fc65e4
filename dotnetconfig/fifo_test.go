//go:build unix

package dotnetconfig

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFIFORefused: a FIFO named web.config, or given as KIND=PATH, is
// refused before it is opened (opening it would block until a writer
// comes; issue 22, item 8).
func TestFIFORefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "web.config")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	for _, arg := range []string{p, "machine=" + p, dir} {
		_, err := ReadArgs([]string{arg})
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("ReadArgs(%s): %v, want a refusal naming the pipe", arg, err)
		}
	}
}
