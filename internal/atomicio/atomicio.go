// Package atomicio writes files whole or not at all, only where tsim was
// told to write, and never over anything but a regular file:
//
//   - a file is written to a temporary file in its directory and renamed
//     over its name, so a reader sees the old file or the new one, never
//     half of one;
//   - the name it replaces must be absent or a regular file: a device, a
//     FIFO, a socket, a directory or a symbolic link there is refused (tsim
//     run as root must not turn /dev/null into a regular file, nor write
//     through a link someone planted);
//   - every path tsim derives below the folder a user named (the
//     experiment's directory under -o, a shard's under it) is opened
//     through an os.Root of that folder, so no symbolic link planted there
//     leads a write outside it, and a link in place of a directory of
//     tsim's own is refused;
//   - an output directory is locked (Lock) while a process writes it.
//
// It imports nothing of tsim.
package atomicio

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// TempPrefix starts the name of every temporary file WriteFile creates, so
// that the leftovers of a killed process can be recognised and removed.
const TempPrefix = ".tsim-tmp-"

// WriteFile writes data to path whole or not at all: to a temporary file in
// the same directory, then renamed over path. The directory must exist;
// path must be absent or a regular file.
func WriteFile(path string, data []byte) error {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" || base == "." || base == ".." {
		return fmt.Errorf("%s: not a file name", path)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return writeIn(root, base, path, data)
}

// writeIn writes data as name in root; shown is its path in messages.
func writeIn(root *os.Root, name, shown string, data []byte) error {
	if err := replaceable(root, name, shown); err != nil {
		return err
	}
	f, tmp, err := createTemp(root, name)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rename(root, tmp, name, shown)
	}
	if err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// rename moves the temporary file tmp over name, once more checking that
// name is absent or a regular file.
func rename(root *os.Root, tmp, name, shown string) error {
	if err := replaceable(root, name, shown); err != nil {
		return err
	}
	return root.Rename(tmp, name)
}

// replaceable checks that name in root is absent or a regular file.
func replaceable(root *os.Root, name, shown string) error {
	st, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if msg := notRegular(st.Mode()); msg != "" {
		return fmt.Errorf("%s: %s; tsim replaces only regular files (remove it, or write elsewhere)", shown, msg)
	}
	return nil
}

// createTemp creates a new temporary file for name in root.
func createTemp(root *os.Root, name string) (*os.File, string, error) {
	for range 100 {
		var b [6]byte
		rand.Read(b[:])
		tmp := TempPrefix + name + "." + hex.EncodeToString(b[:])
		f, err := root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmp, err
	}
	return nil, "", fmt.Errorf("%s: cannot create a temporary file", name)
}

// notRegular describes a mode that is not a regular file's, or "".
func notRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}
