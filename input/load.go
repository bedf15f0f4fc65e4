package input

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tsim-dev/tsim/format"
)

// Source is one file an experiment was loaded from, as it was read: the
// experiment file first, then every file it named, in the order they were
// read. A shard's manifest carries them, so that merge loads the same
// experiment without the files.
type Source struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// Loaded is an experiment loaded from its file and the files it names:
// the one way tsim loads an experiment (Load from disk, LoadSources from
// files already read, LoadData from memory).
type Loaded struct {
	X    *format.Experiment
	Path string // the experiment file, as given

	mu       sync.Mutex // scenarios may be resolved from several goroutines
	src      []Source
	readFile func(string) ([]byte, error)
}

// Load reads the experiment file at path and loads it: the file and every
// file it names are read as Open says (regular files, bounded, named
// inside the experiment's folder unless opt.AllowOutside), and recorded
// as Sources. Every problem is an error naming the file and line.
func Load(path string, opt Options) (*Loaded, error) {
	data, readFile, err := Open(path, opt)
	if err != nil {
		return nil, err
	}
	return LoadData(path, data, readFile)
}

// LoadSources loads an experiment from files already read: src[0] is the
// experiment file, the others the files it names (a shard's manifest, or
// an experiment given as text). Nothing is read from disk.
func LoadSources(src []Source) (*Loaded, error) {
	if len(src) == 0 {
		return nil, errors.New("no experiment file")
	}
	readFile := func(name string) ([]byte, error) {
		for _, f := range src[1:] {
			if f.Name == name {
				return []byte(f.Content), nil
			}
		}
		return nil, fmt.Errorf("%s: not among the files given with the experiment %s", name, src[0].Name)
	}
	return LoadData(src[0].Name, []byte(src[0].Content), readFile)
}

// LoadData loads an experiment given as data, named path in messages,
// whose named files read reads (nil: it may name none). Load and
// LoadSources are LoadData with the reader of the experiment's folder and
// of the files given.
func LoadData(path string, data []byte, read func(string) ([]byte, error)) (*Loaded, error) {
	l := &Loaded{Path: path, src: []Source{{Name: filepath.ToSlash(path), Content: string(data)}}}
	l.readFile = func(name string) ([]byte, error) {
		b, err := read(name)
		if err == nil {
			l.mu.Lock()
			if !slices.ContainsFunc(l.src[1:], func(f Source) bool { return f.Name == name }) {
				l.src = append(l.src, Source{Name: name, Content: string(b)})
			}
			l.mu.Unlock()
		}
		return b, err
	}
	readFile := l.readFile
	if read == nil {
		readFile, l.readFile = nil, func(name string) ([]byte, error) {
			return nil, fmt.Errorf("%s: %s was given without files", name, path)
		}
	}
	x, err := format.LoadExperiment(path, data, readFile)
	if err != nil {
		return nil, err
	}
	l.X = x
	return l, nil
}

// Sources are the experiment file and every file it has read so far.
func (l *Loaded) Sources() []Source {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.src)
}

// Data is the experiment file's content.
func (l *Loaded) Data() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return []byte(l.src[0].Content)
}

// ReadFile reads a file the experiment names, as loading it did (and
// records it among the Sources).
func (l *Loaded) ReadFile(name string) ([]byte, error) { return l.readFile(name) }
