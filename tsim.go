package tsim

import (
	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/results"
	"github.com/tsim-dev/tsim/runner"
)

// Experiment is a loaded, validated experiment file: one system under one
// load, with its variants and sweep points.
type Experiment struct {
	l *input.Loaded
}

// LoadOptions say what loading may read: see input.Options. The zero
// value is the safe default: the experiment file and the files it names
// must be regular files within the size limits, and named files must lie
// inside the experiment's folder.
type LoadOptions = input.Options

// Load reads and validates the experiment file at path, with the safe
// LoadOptions: LoadFile(path, LoadOptions{}).
func Load(path string) (*Experiment, error) { return LoadFile(path, LoadOptions{}) }

// LoadFile reads and validates the experiment file at path. Files it
// names (topologies given as paths, empirical distributions) are read
// relative to the file's directory, as opt allows. The error, if any,
// names the file and line of every problem found.
//
// Every command that reads an experiment reads it here: this is the one
// way an experiment is loaded (LoadBytes is the same from memory).
func LoadFile(path string, opt LoadOptions) (*Experiment, error) {
	l, err := input.Load(path, opt)
	if err != nil {
		return nil, err
	}
	return &Experiment{l: l}, nil
}

// LoadBytes validates an experiment given as TOML text; name is used in
// messages and as the experiment's file name. An experiment loaded so may
// not name other files (an empirical distribution, a topology by path); a
// topology by name, such as topology = "pipeline", is fine.
func LoadBytes(name string, data []byte) (*Experiment, error) {
	l, err := input.LoadSources([]input.Source{{Name: name, Content: string(data)}})
	if err != nil {
		return nil, err
	}
	return &Experiment{l: l}, nil
}

// Path is the experiment's file, as given to Load.
func (e *Experiment) Path() string { return e.l.Path }

// Stem is the file's name without directory and extension: the name of
// the experiment's output directory.
func (e *Experiment) Stem() string { return runner.Stem(e.l.Path) }

// Name is the experiment's name: its name key, or the file's stem.
func (e *Experiment) Name() string {
	if e.l.X.Name != "" {
		return e.l.X.Name
	}
	return e.Stem()
}

// Description is the experiment's description key.
func (e *Experiment) Description() string { return e.l.X.Description }

// Variants lists the names of the experiment's variants, "base" when the
// file has none.
func (e *Experiment) Variants() []string { return append([]string(nil), e.l.X.Variants...) }

// Warnings are the settings of the experiment that take no effect, each
// with its file, line and why (docs/dotnet.md).
func (e *Experiment) Warnings() []string {
	var out []string
	for _, w := range e.l.X.Warnings {
		out = append(out, w.String())
	}
	return out
}

// Format is the experiment as package format holds it, for the lower
// layers (runner, analysis, model).
func (e *Experiment) Format() *format.Experiment { return e.l.X }

// Param is one setting: a key path of the experiment format and its value,
// written as in TOML or bare ("8", "0.5", "150ms", "exp(1s)").
type Param = results.Param
