package atomicio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// LockDir is the directory, under an output root, of the lock files of
// the runs writing there.
const LockDir = ".tsim-locks"

// ErrBusy is returned by Lock when another process holds the directory.
var ErrBusy = errors.New("another tsim process is writing there")

// Dir is an output directory that this process owns until Unlock.
type Dir struct {
	Path string
	f    *os.File
}

// Lock takes the lock of the output directory root/name: an advisory lock
// on root/.tsim-locks/name.lock, which the kernel releases when the process
// ends, however it ends, so a killed run never leaves a directory locked.
// It creates root if needed and checks that files can be created in root
// and, if it exists, in root/name, so that a read-only directory or a full
// disk is found before any work is done; root/name itself is created when
// the first file is written. While it holds the lock it removes the
// temporary files that a killed run may have left in root/name. A
// directory another process holds gives an error wrapping ErrBusy.
func Lock(root, name string) (*Dir, error) {
	if err := os.MkdirAll(filepath.Join(root, LockDir), 0o755); err != nil {
		return nil, err
	}
	dir := filepath.Join(root, name)
	f, err := os.OpenFile(filepath.Join(root, LockDir, name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		if errors.Is(err, ErrBusy) {
			return nil, fmt.Errorf("%s: %w (wait for it, or choose another -o)", dir, ErrBusy)
		}
		return nil, fmt.Errorf("%s: %v", dir, err)
	}
	d := &Dir{Path: dir, f: f}
	if err := probe(root); err != nil {
		d.Unlock()
		return nil, err
	}
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			d.Unlock()
			return nil, fmt.Errorf("%s: not a directory", dir)
		}
		if err := probe(dir); err != nil {
			d.Unlock()
			return nil, err
		}
		if err := RemoveTemps(dir); err != nil {
			d.Unlock()
			return nil, err
		}
	}
	return d, nil
}

// probe writes and removes a small file, so that a read-only directory or a
// full disk is found before any work is done.
func probe(dir string) error {
	f, err := os.CreateTemp(dir, TempPrefix+"probe.*")
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %w", dir, err)
	}
	name := f.Name()
	_, err = f.Write(make([]byte, 4096))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	os.Remove(name)
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %w", dir, err)
	}
	return nil
}

// Unlock releases the directory. The lock file stays; it is empty.
func (d *Dir) Unlock() {
	if d == nil || d.f == nil {
		return
	}
	unlockFile(d.f)
	d.f.Close()
	d.f = nil
}

// RemoveTemps removes the temporary files of WriteFile (and of tsim
// versions before it, ".NAME.tmp*") left in dir by a process that was
// killed while writing. Only call it while holding dir's lock.
func RemoveTemps(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		old := strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp") && !e.IsDir()
		if strings.HasPrefix(n, TempPrefix) || old {
			if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
