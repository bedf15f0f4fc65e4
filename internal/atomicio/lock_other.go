//go:build !unix

package atomicio

import "os"

// Elsewhere the lock is the exclusive creation of a second file; a killed
// run leaves it behind, and the message says which file to remove.
func lockFile(f *os.File) error {
	g, err := os.OpenFile(f.Name()+".held", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		if os.IsExist(err) {
			return ErrBusy
		}
		return err
	}
	return g.Close()
}

func unlockFile(f *os.File) { os.Remove(f.Name() + ".held") }
