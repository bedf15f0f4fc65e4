// Package atomicio writes files whole or not at all. It imports nothing of
// tsim.
package atomicio

import (
	"os"
	"path/filepath"
)

// TempPrefix starts the name of every temporary file WriteFile creates, so
// that the leftovers of a killed process can be recognised and removed.
const TempPrefix = ".tsim-tmp-"

// WriteFile writes data to path whole or not at all: to a temporary file in
// the same directory, then renamed over path.
func WriteFile(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, TempPrefix+base+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
