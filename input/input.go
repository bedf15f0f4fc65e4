package input

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/tsim-dev/tsim/format"
)

// Options say what an experiment may read. The zero Options are the safe
// defaults.
type Options struct {
	// AllowOutside lets the files an experiment names be anywhere: absolute
	// paths, "..", symbolic links leading out of its folder (the command
	// line's --allow-outside). They must still be regular files within the
	// size limits.
	AllowOutside bool
	// MaxExperimentBytes bounds the experiment file; 0 means
	// format.MaxExperimentBytes.
	MaxExperimentBytes int64
	// MaxFileBytes bounds each file the experiment names; 0 means
	// format.MaxDataBytes.
	MaxFileBytes int64
	// MaxTotalBytes bounds the files the experiment names together (each
	// counted once, however often it is named); 0 means
	// format.MaxTotalBytes.
	MaxTotalBytes int64
}

func (o Options) withDefaults() Options {
	if o.MaxExperimentBytes <= 0 {
		o.MaxExperimentBytes = format.MaxExperimentBytes
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = format.MaxDataBytes
	}
	if o.MaxTotalBytes <= 0 {
		o.MaxTotalBytes = format.MaxTotalBytes
	}
	return o
}

// Open reads the experiment file at path and returns its content and the
// ReadFile to pass to format.LoadExperiment with it: it reads the files
// the experiment names, relative to the experiment's folder, under opt.
// The path itself may be anywhere (the user named it), but it must be a
// regular file of at most opt.MaxExperimentBytes.
//
//	data, readFile, err := input.Open(path, input.Options{AllowOutside: allowOutside})
//	if err != nil { ... }
//	x, err := format.LoadExperiment(path, data, readFile)
func Open(path string, opt Options) (data []byte, readFile func(name string) ([]byte, error), err error) {
	opt = opt.withDefaults()
	data, err = ReadRegular(path, opt.MaxExperimentBytes, "experiment files")
	if err != nil {
		return nil, nil, err
	}
	return data, NewReader(filepath.Dir(path), opt).ReadFile, nil
}

// ReadRegular reads the regular file at path, of at most max bytes. what
// names the kind of file in the message of a file too large ("experiment
// files may be at most 1 MiB"). Anything but a regular file is refused
// before it is read.
func ReadRegular(path string, max int64, what string) ([]byte, error) {
	return readRegular(nil, path, path, max, what)
}

// Reader reads the files one experiment names. It is safe for use by
// several goroutines, and reads each file once.
type Reader struct {
	dir string // the experiment's folder, as given
	opt Options

	mu      sync.Mutex
	rootErr error // from opening the folder, once
	realDir string
	root    *os.Root
	opened  bool
	cache   map[string][]byte // by resolved path
	total   int64
}

// NewReader returns a Reader for the files an experiment in folder dir
// names.
func NewReader(dir string, opt Options) *Reader {
	return &Reader{dir: dir, opt: opt.withDefaults(), cache: map[string][]byte{}}
}

// ReadFile reads a file the experiment names, as written in the experiment
// ("data/latency.csv"). Its errors name the file and say what is allowed.
// The caller must not modify the returned bytes (they are shared by every
// reader of the same file).
func (r *Reader) ReadFile(name string) ([]byte, error) {
	if name == "" {
		return nil, errors.New("an empty file name")
	}
	shown := filepath.Join(r.dir, name) // the path in messages
	if filepath.IsAbs(name) {
		shown = name
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.opened {
		r.openRoot()
	}
	var root *os.Root
	var key, open string
	if r.opt.AllowOutside {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.dir, name)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, cleanPathError(err, shown)
		}
		key, open = real, real
	} else {
		if r.rootErr != nil {
			return nil, r.rootErr
		}
		if filepath.IsAbs(name) || filepath.VolumeName(name) != "" || len(name) > 0 && (name[0] == '/' || name[0] == '\\') {
			return nil, fmt.Errorf("%s: an absolute path; files an experiment names must be inside its folder %s (--allow-outside permits others)", name, r.shownDir())
		}
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("%s: outside the experiment's folder %s; files an experiment names must be inside it (--allow-outside permits others)", name, r.shownDir())
		}
		real, err := filepath.EvalSymlinks(filepath.Join(r.realDir, name))
		if err != nil {
			return nil, cleanPathError(err, shown)
		}
		rel, err := filepath.Rel(r.realDir, real)
		if err != nil || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("%s: a symbolic link that leads outside the experiment's folder %s; files an experiment names must be inside it (--allow-outside permits others)", name, r.shownDir())
		}
		root, key, open = r.root, real, rel
	}
	if b, ok := r.cache[key]; ok {
		return b, nil
	}
	b, err := readRegular(root, open, shown, r.opt.MaxFileBytes, "files an experiment names")
	if err != nil {
		return nil, err
	}
	if r.total+int64(len(b)) > r.opt.MaxTotalBytes {
		return nil, fmt.Errorf("%s: with this file the experiment's files would total %s; together they may be at most %s",
			shown, format.FormatBytes(r.total+int64(len(b))), format.FormatBytes(r.opt.MaxTotalBytes))
	}
	r.total += int64(len(b))
	r.cache[key] = b
	return b, nil
}

func (r *Reader) shownDir() string {
	if r.dir == "" || r.dir == "." {
		return "./"
	}
	return r.dir + string(filepath.Separator)
}

// openRoot resolves the experiment's folder and opens it as an os.Root.
func (r *Reader) openRoot() {
	r.opened = true
	if r.opt.AllowOutside {
		return
	}
	abs, err := filepath.Abs(r.dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err == nil {
		r.root, err = os.OpenRoot(abs)
	}
	if err != nil {
		r.rootErr = fmt.Errorf("%s: cannot open the experiment's folder: %w", r.shownDir(), unwrapPath(err))
		return
	}
	r.realDir = abs
}

// OpenRegular opens the regular file at path for reading, as a stream:
// anything but a regular file is refused before it is opened, as
// ReadRegular refuses it. The caller bounds what it reads.
func OpenRegular(path string) (*os.File, error) {
	return openRegular(nil, path, path)
}

// openRegular opens a regular file (in root when root is not nil): open
// is the name to open, shown the path for messages.
func openRegular(root *os.Root, open, shown string) (*os.File, error) {
	stat := os.Stat
	openFile := os.OpenFile
	if root != nil {
		stat, openFile = root.Stat, root.OpenFile
	}
	// The mode first: opening a FIFO would block, and reading /dev/zero
	// never ends.
	st, err := stat(open)
	if err != nil {
		return nil, cleanPathError(err, shown)
	}
	if msg := notRegular(st.Mode()); msg != "" {
		return nil, fmt.Errorf("%s: %s; only regular files are read", shown, msg)
	}
	f, err := openFile(open, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, cleanPathError(err, shown)
	}
	// The file opened may not be the one examined (replaced meanwhile).
	fst, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, cleanPathError(err, shown)
	}
	if msg := notRegular(fst.Mode()); msg != "" {
		f.Close()
		return nil, fmt.Errorf("%s: %s; only regular files are read", shown, msg)
	}
	if !os.SameFile(st, fst) {
		f.Close()
		return nil, fmt.Errorf("%s: the file changed while it was opened", shown)
	}
	return f, nil
}

// readRegular reads a regular file of at most max bytes: open (in root
// when root is not nil) is the name to open, shown the path for messages.
func readRegular(root *os.Root, open, shown string, max int64, what string) ([]byte, error) {
	f, err := openRegular(root, open, shown)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, cleanPathError(err, shown)
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s: file is %s; %s may be at most %s", shown, format.FormatBytes(st.Size()), what, format.FormatBytes(max))
	}
	// Bounded, so a file that grows while it is read cannot pass max.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, cleanPathError(err, shown)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: file is more than %s; %s may be at most %s", shown, format.FormatBytes(max), what, format.FormatBytes(max))
	}
	return b, nil
}

// notRegular describes a mode that is not a regular file's, or "".
func notRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory, not a file"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO), not a regular file"
	case m&fs.ModeSocket != 0:
		return "a socket, not a regular file"
	case m&fs.ModeCharDevice != 0:
		return "a character device, not a regular file"
	case m&fs.ModeDevice != 0:
		return "a device, not a regular file"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link, not a regular file"
	}
	return "not a regular file"
}

// cleanPathError words an fs error with the path as the user knows it:
// "data/x.csv: no such file or directory", not the resolved or
// root-relative name the call used.
func cleanPathError(err error, shown string) error {
	return &fs.PathError{Op: "open", Path: shown, Err: unwrapPath(err)}
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
