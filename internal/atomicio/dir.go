package atomicio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// LockDir is the directory, under an output root, of the lock files of
// the runs writing there.
const LockDir = ".tsim-locks"

// ErrBusy is returned by Lock when another process holds the directory.
var ErrBusy = errors.New("another tsim process is writing there")

// Dir is an output directory that this process owns until Unlock: every
// file it writes there goes through it.
type Dir struct {
	Path string // root/name, for messages

	top  *os.Root // the root the user named
	name string   // the directory in top, slash-separated
	sub  *os.Root // the directory, once it exists
	f    *os.File // the lock
}

// Lock takes the lock of the output directory root/name: an advisory lock
// on root/.tsim-locks/name.lock, which the kernel releases when the process
// ends, however it ends, so a killed run never leaves a directory locked.
// root is the folder the user named, created if needed; name is a
// directory of tsim's own below it (an experiment's stem, or
// "stem/shard-i-of-n"), which must be absent or a real directory: a
// symbolic link or a file in its place is refused, and it is reached
// through an os.Root of root, so nothing planted there leads outside root.
// Lock checks that files can be created in root and, if it exists, in
// root/name, so that a read-only directory or a full disk is found before
// any work is done; root/name itself is created when the first file is
// written. While it holds the lock it removes the temporary files that a
// killed run may have left in root/name. A directory another process
// holds gives an error wrapping ErrBusy.
func Lock(root, name string) (*Dir, error) {
	shown := filepath.Join(root, name)
	name = filepath.ToSlash(name)
	if !filepath.IsLocal(name) || name == "." {
		return nil, fmt.Errorf("%s: not a directory name below %s", name, root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	top, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: shown, top: top, name: name}
	lock := LockDir + "/" + name + ".lock"
	if err := top.MkdirAll(path.Dir(lock), 0o755); err != nil {
		d.Unlock()
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, LockDir), unwrapPath(err))
	}
	f, err := top.OpenFile(lock, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		d.Unlock()
		return nil, fmt.Errorf("%s: %w", filepath.Join(root, filepath.FromSlash(lock)), unwrapPath(err))
	}
	if err := lockFile(f); err != nil {
		f.Close()
		d.Unlock()
		if errors.Is(err, ErrBusy) {
			return nil, fmt.Errorf("%s: %w (wait for it, or choose another -o)", shown, ErrBusy)
		}
		return nil, fmt.Errorf("%s: %v", shown, err)
	}
	d.f = f
	if err := probe(top, root); err != nil {
		d.Unlock()
		return nil, err
	}
	exists, err := d.check()
	if err != nil {
		d.Unlock()
		return nil, err
	}
	if exists {
		if err := d.open(); err != nil {
			d.Unlock()
			return nil, err
		}
		if err := probe(d.sub, shown); err != nil {
			d.Unlock()
			return nil, err
		}
		if err := removeTemps(d.sub); err != nil {
			d.Unlock()
			return nil, err
		}
	}
	return d, nil
}

// check reports whether the directory exists, after checking that each
// part of its name is absent or a real directory.
func (d *Dir) check() (bool, error) {
	parts := strings.Split(d.name, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		st, err := d.top.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !st.IsDir() {
			what := notRegular(st.Mode())
			if what == "" {
				what = "a file"
			}
			return false, fmt.Errorf("%s: %s, not a directory; tsim writes only into directories of its own (remove it, or choose another -o)",
				filepath.Join(filepath.Dir(d.Path), filepath.FromSlash(p)), what)
		}
	}
	return true, nil
}

// open creates the directory if needed and opens it.
func (d *Dir) open() error {
	if d.sub != nil {
		return nil
	}
	if d.top == nil {
		return fmt.Errorf("%s: not locked", d.Path)
	}
	if _, err := d.check(); err != nil {
		return err
	}
	if err := d.top.MkdirAll(d.name, 0o755); err != nil {
		return fmt.Errorf("%s: %w", d.Path, unwrapPath(err))
	}
	if _, err := d.check(); err != nil { // nothing swapped in meanwhile
		return err
	}
	sub, err := d.top.OpenRoot(d.name)
	if err != nil {
		return fmt.Errorf("%s: %w", d.Path, unwrapPath(err))
	}
	d.sub = sub
	return nil
}

// WriteFile writes data as the file name of the directory, whole or not
// at all, creating the directory if needed. name must be absent or a
// regular file.
func (d *Dir) WriteFile(name string, data []byte) error {
	if err := localName(name); err != nil {
		return err
	}
	if err := d.open(); err != nil {
		return err
	}
	return writeIn(d.sub, name, filepath.Join(d.Path, name), data)
}

// Remove removes the file name from the directory, if it is there: a file
// a run no longer writes. A directory there is left alone.
func (d *Dir) Remove(name string) error {
	if err := localName(name); err != nil {
		return err
	}
	if d.sub == nil {
		exists, err := d.check()
		if err != nil || !exists {
			return err
		}
		if err := d.open(); err != nil {
			return err
		}
	}
	st, err := d.sub.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.IsDir() {
		return nil
	}
	if err := d.sub.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Entries lists the directory (nothing when it does not exist yet).
func (d *Dir) Entries() ([]fs.DirEntry, error) {
	if d.sub == nil {
		exists, err := d.check()
		if err != nil || !exists {
			return nil, err
		}
		if err := d.open(); err != nil {
			return nil, err
		}
	}
	f, err := d.sub.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Keep moves the files of the directory whose names match patterns
// (filepath.Match) into a new numbered directory under sub — sub/1,
// sub/2, ..., one more than the highest there — and returns its path, or
// "" when there was nothing to keep. Only regular files move; everything
// stays inside the directory.
func (d *Dir) Keep(sub string, patterns []string) (string, error) {
	if err := localName(sub); err != nil {
		return "", err
	}
	ents, err := d.Entries()
	if err != nil || len(ents) == 0 {
		return "", err
	}
	var move []string
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		for _, p := range patterns {
			if ok, _ := filepath.Match(p, e.Name()); ok {
				move = append(move, e.Name())
				break
			}
		}
	}
	if len(move) == 0 {
		return "", nil
	}
	last := 0
	if f, err := d.sub.Open(sub); err == nil {
		kept, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return "", err
		}
		for _, e := range kept {
			if n, err := strconv.Atoi(e.Name()); err == nil && e.IsDir() && n > last && strconv.Itoa(n) == e.Name() {
				last = n
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	to := sub + "/" + strconv.Itoa(last+1)
	if err := d.sub.MkdirAll(to, 0o755); err != nil {
		return "", err
	}
	for _, n := range move {
		if err := d.sub.Rename(n, to+"/"+n); err != nil {
			return "", err
		}
	}
	return filepath.Join(d.Path, filepath.FromSlash(to)), nil
}

// Pending is a file being written piece by piece: it takes its name, in
// one rename, at Commit.
type Pending struct {
	*os.File
	d         *Dir
	tmp, name string
}

// Create starts writing the file name of the directory, creating the
// directory if needed. Until Commit the file is a temporary one.
func (d *Dir) Create(name string) (*Pending, error) {
	if err := localName(name); err != nil {
		return nil, err
	}
	if err := d.open(); err != nil {
		return nil, err
	}
	shown := filepath.Join(d.Path, name)
	if err := replaceable(d.sub, name, shown); err != nil {
		return nil, err
	}
	f, tmp, err := createTemp(d.sub, name)
	if err != nil {
		return nil, err
	}
	return &Pending{File: f, d: d, tmp: tmp, name: name}, nil
}

// Commit closes the file and gives it its name.
func (p *Pending) Commit() error {
	err := p.File.Chmod(0o644)
	if cerr := p.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rename(p.d.sub, p.tmp, p.name, filepath.Join(p.d.Path, p.name))
	}
	if err != nil {
		p.d.sub.Remove(p.tmp)
	}
	return err
}

// Abort closes the file and removes it.
func (p *Pending) Abort() {
	p.File.Close()
	p.d.sub.Remove(p.tmp)
}

func localName(name string) error {
	if !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) {
		return fmt.Errorf("%q: not a file name", name)
	}
	return nil
}

// probe writes and removes a small file, so that a read-only directory or a
// full disk is found before any work is done.
func probe(root *os.Root, shown string) error {
	f, name, err := createTemp(root, "probe")
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %w", shown, unwrapPath(err))
	}
	_, err = f.Write(make([]byte, 4096))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	root.Remove(name)
	if err != nil {
		return fmt.Errorf("%s: cannot write there: %w", shown, unwrapPath(err))
	}
	return nil
}

// Unlock releases the directory. The lock file stays; it is empty.
func (d *Dir) Unlock() {
	if d == nil {
		return
	}
	if d.f != nil {
		unlockFile(d.f)
		d.f.Close()
		d.f = nil
	}
	if d.sub != nil {
		d.sub.Close()
		d.sub = nil
	}
	if d.top != nil {
		d.top.Close()
		d.top = nil
	}
}

// RemoveTemps removes the temporary files of WriteFile (and of tsim
// versions before it, ".NAME.tmp*") left in dir by a process that was
// killed while writing. Only call it while holding dir's lock.
func RemoveTemps(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return removeTemps(root)
}

func removeTemps(root *os.Root) error {
	f, err := root.Open(".")
	if err != nil {
		return err
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		old := strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp") && !e.IsDir()
		if strings.HasPrefix(n, TempPrefix) && !e.IsDir() || old {
			if err := root.Remove(n); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
