package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/tsim-dev/tsim/format"
)

var cmdCheck = &command{
	Name:      "check",
	UsageLine: "FILE...",
	Short:     "check experiment files without running them",
	Long: `Check loads and validates each experiment file, with its variants and sweep
points, without running anything. For a valid file it prints "FILE: ok";
otherwise it prints every problem found, each naming the file and line.

The exit status is 1 if any file has a problem.
`,
	Run: runCheck,
}

func runCheck(_ context.Context, c *command, e *env, args []string) int {
	fs := c.flagSet()
	files, status, ok := c.parseFlags(e, fs, args)
	if !ok {
		return status
	}
	if len(files) == 0 {
		return c.usageError(e, "no experiment files given")
	}
	status = exitOK
	for _, f := range files {
		if _, err := loadExperiment(f); err != nil {
			c.errorf(e, "%v", err)
			status = exitFailure
			continue
		}
		fmt.Fprintf(e.stdout, "%s: ok\n", f)
	}
	return status
}

// loadExperiment reads and loads one experiment file. Files it refers to
// (topologies given as paths, empirical distributions) are read relative to
// the experiment file's directory.
func loadExperiment(path string) (*format.Experiment, error) {
	x, _, err := loadExperimentSources(path)
	return x, err
}

// loadExperimentSources loads an experiment file and returns, besides, the
// file and every file it read, as they were read: a shard carries them so
// that merge can load the same experiment without them.
func loadExperimentSources(path string) (*format.Experiment, []sourceFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var mu sync.Mutex // scenarios may be resolved from several goroutines
	src := []sourceFile{{Name: filepath.ToSlash(path), Content: string(data)}}
	dir := filepath.Dir(path)
	readFile := func(name string) ([]byte, error) {
		full := name
		if !filepath.IsAbs(full) {
			full = filepath.Join(dir, name)
		}
		b, err := os.ReadFile(full)
		if err == nil {
			mu.Lock()
			if !slices.ContainsFunc(src[1:], func(f sourceFile) bool { return f.Name == name }) {
				src = append(src, sourceFile{Name: name, Content: string(b)})
			}
			mu.Unlock()
		}
		return b, err
	}
	x, err := format.LoadExperiment(path, data, readFile)
	mu.Lock()
	defer mu.Unlock()
	return x, append([]sourceFile(nil), src...), err
}

// loadSources loads an experiment from the files a shard carries.
func loadSources(src []sourceFile) (*format.Experiment, error) {
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
