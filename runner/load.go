package runner

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
)

// LoadFile reads and loads one experiment file. Files it refers to
// (topologies given as paths, empirical distributions) are read relative to
// the experiment file's directory.
func LoadFile(path string, opt input.Options) (*format.Experiment, error) {
	x, _, err := LoadSourcesFrom(path, opt)
	return x, err
}

// LoadSourcesFrom loads an experiment file and returns, besides, the
// file and every file it read, as they were read: a shard carries them so
// that merge can load the same experiment without them. Reading is
// bounded and confined as package input says: only regular files, within
// the size limits, named inside the experiment's folder unless
// opt.AllowOutside.
func LoadSourcesFrom(path string, opt input.Options) (*format.Experiment, []SourceFile, error) {
	data, read, err := input.Open(path, opt)
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex // scenarios may be resolved from several goroutines
	src := []SourceFile{{Name: filepath.ToSlash(path), Content: string(data)}}
	readFile := func(name string) ([]byte, error) {
		b, err := read(name)
		if err == nil {
			mu.Lock()
			if !slices.ContainsFunc(src[1:], func(f SourceFile) bool { return f.Name == name }) {
				src = append(src, SourceFile{Name: name, Content: string(b)})
			}
			mu.Unlock()
		}
		return b, err
	}
	x, err := format.LoadExperiment(path, data, readFile)
	mu.Lock()
	defer mu.Unlock()
	return x, append([]SourceFile(nil), src...), err
}

// LoadSources loads an experiment from the files a shard carries.
func LoadSources(src []SourceFile) (*format.Experiment, error) {
	if len(src) == 0 {
		return nil, errors.New("no experiment file in the shard")
	}
	readFile := func(name string) ([]byte, error) {
		for _, f := range src[1:] {
			if f.Name == name {
				return []byte(f.Content), nil
			}
		}
		return nil, fmt.Errorf("%s: not among the files the shard carries", name)
	}
	return format.LoadExperiment(src[0].Name, []byte(src[0].Content), readFile)
}
