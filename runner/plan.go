package runner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/results"
)

// Plan is one experiment to run, with the caller's options applied.
// NewPlan builds it; nothing else does.
type Plan struct {
	Path  string // the experiment file, as given
	Stem  string // file name without extension: the output subdirectory
	Out   string // output directory, DIR/<stem>; empty without one
	X     *format.Experiment
	Seed  uint64
	Reps  int
	Mode  string // "sim" or "real"
	Shard Shard  // which work items this process runs; the zero value is all
	// PerReplica: the reports show every machine of a farm (besides the
	// file's report.per_replica).
	PerReplica bool
	// Set are settings applied to every scenario on top of the file's
	// (key paths as in a sweep, such as "tier.web.calls.maxconnection");
	// the command line's and the library's overrides.
	Set []format.Param
	// Loaded is the experiment as loaded: its Sources (the file and every
	// file it read) go into a shard's manifest.
	Loaded *input.Loaded
}

// Options are what a command line or a library caller sets on top of an
// experiment file. The zero value runs the file as it is, on the
// simulator, writing nowhere.
type Options struct {
	Seed  *uint64 // nil: the file's seed
	Reps  int     // 0: the file's replications
	Mode  string  // "sim" (also when empty) or "real"
	Shard Shard
	// OutDir, if set, is where results go: OutDir/<file stem>.
	OutDir string
	// PerReplica: report every machine of a farm (tsim run --per-replica).
	PerReplica bool
	// Set: settings applied to every scenario (see Plan.Set).
	Set []format.Param
}

// NewPlan is the plan of running the loaded experiment l with o. It
// refuses a file whose name gives no output directory of its own, and
// settings in o.Set that do not apply.
func NewPlan(l *input.Loaded, o Options) (*Plan, error) {
	p := &Plan{Path: l.Path, Stem: Stem(l.Path), X: l.X, Seed: l.X.Seed, Reps: l.X.Replications, Mode: o.Mode,
		Shard: o.Shard, PerReplica: o.PerReplica, Set: o.Set, Loaded: l}
	if p.Mode == "" {
		p.Mode = "sim"
	}
	if !slices.Contains(Modes, p.Mode) {
		return nil, fmt.Errorf("unknown mode %q (allowed: %s)", p.Mode, strings.Join(Modes, ", "))
	}
	if err := CheckStem(p.Stem); err != nil {
		return nil, fmt.Errorf("%s: %v", l.Path, err)
	}
	if o.Seed != nil {
		p.Seed = *o.Seed
	}
	if o.Reps > 0 {
		p.Reps = o.Reps
	}
	if o.OutDir != "" {
		p.Out = filepath.Join(o.OutDir, p.Stem)
	}
	if len(p.Set) > 0 {
		if _, err := p.Scenario(0); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// SameOutputs says which plans would write to one directory: a message
// for each pair.
func SameOutputs(plans []*Plan) []error {
	var errs []error
	for i, p := range plans {
		for _, q := range plans[:i] {
			if p.Out != "" && q.Out == p.Out {
				errs = append(errs, fmt.Errorf("%s and %s would both write to %s; rename one or run them separately", q.Path, p.Path, p.Out))
			}
		}
	}
	return errs
}

// Lock takes the plan's output directory (its shard's, for a shard) for
// this process, before anything runs; see atomicio.Lock.
func (p *Plan) Lock() (*atomicio.Dir, error) {
	root, name := filepath.Dir(p.Out), p.Stem
	if p.Shard.Sharded() {
		name = p.Stem + "/" + p.Shard.DirName()
	}
	d, err := atomicio.Lock(root, name)
	if err != nil {
		return nil, fmt.Errorf("%s: output: %v", p.Path, err)
	}
	return d, nil
}

// Scenario resolves scenario i of the plan: the file's, with Set applied.
func (p *Plan) Scenario(i int) (format.Scenario, error) {
	sc, err := p.X.Scenario(i)
	if err != nil || len(p.Set) == 0 {
		return sc, err
	}
	set := append(append([]format.Param(nil), sc.Params...), p.Set...)
	over, err := p.X.ScenarioWith(sc.Variant, set, nil)
	if err != nil {
		return sc, err
	}
	over.Index, over.Params = sc.Index, sc.Params
	return over, nil
}

func (p *Plan) sweep() bool { return len(p.X.Sweep) > 0 }

// seeds returns the master seed of every replication.
func (p *Plan) Seeds() []uint64 {
	s := make([]uint64, p.Reps)
	for k := range s {
		s[k] = ReplicationSeed(p.Seed, k)
	}
	return s
}

// items is the number of work items: every replication of every scenario.
// Item k is replication k mod reps of scenario k / reps, so items are in
// scenario order, and each scenario's replications in order.
func (p *Plan) Items() int { return p.X.NumScenarios() * p.Reps }

// newExperiment is the empty result of p: its description, seeds and
// sweep axes, with no scenario finished.
func (p *Plan) newExperiment() *results.Experiment {
	r := &results.Experiment{
		Name:             p.X.Name,
		Description:      p.X.Description,
		File:             filepath.ToSlash(p.Path),
		Stem:             p.Stem,
		Seed:             p.Seed,
		Replications:     p.Reps,
		ReplicationSeeds: p.Seeds(),
		Mode:             p.Mode,
		PerReplica:       p.X.PerReplica || p.PerReplica,
		Scenarios:        make([]*results.Scenario, p.X.NumScenarios()),
	}
	if r.Name == "" {
		r.Name = p.Stem
	}
	for _, w := range p.X.Warnings {
		r.Warnings = append(r.Warnings, w.String())
	}
	for _, ax := range p.X.Sweep {
		r.Sweep = append(r.Sweep, results.Axis{Key: ax.Key, Values: ax.Values})
	}
	return r
}

// Stem is a file's name without its directory and extension: the name of
// an experiment's output directory.
func Stem(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// ScenarioName names a scenario in messages: the variant and its sweep
// values, as "fixed, tier.fe.calls.maxconnection=8".
func ScenarioName(variant string, params []format.Param) string {
	parts := []string{"variant " + variant}
	for _, kv := range params {
		parts = append(parts, kv.Key+"="+kv.Value)
	}
	return strings.Join(parts, ", ")
}

// Name is the experiment's name, or its file's stem.
func (p *Plan) Name() string {
	if p.X.Name != "" {
		return p.X.Name
	}
	return p.Stem
}

// DescribeMissing says which scenarios of an interrupted run of p did not
// finish.
func DescribeMissing(p *Plan, r *results.Experiment) string {
	var names []string
	missing := 0
	for i, s := range r.Scenarios {
		if s != nil {
			continue
		}
		missing++
		if len(names) < 3 {
			sc, err := p.Scenario(i)
			if err == nil {
				names = append(names, ScenarioName(sc.Variant, sc.Params))
			}
		}
	}
	more := ""
	if missing > len(names) {
		more = ", ..."
	}
	return fmt.Sprintf("%s: %d of %d scenarios not finished (%s%s)", p.Path, missing, len(r.Scenarios), strings.Join(names, "; "), more)
}

// CheckStem refuses an output directory name that would not be a directory
// of its own under -o: empty, ".", "..", or one that holds a separator.
func CheckStem(stem string) error {
	if stem == "" || stem == "." || stem == ".." || strings.ContainsAny(stem, `/\`) || strings.HasPrefix(stem, TempPrefixForStem) {
		return fmt.Errorf("its name gives no usable output directory name (%q); rename the file", stem)
	}
	return nil
}

// TempPrefixForStem is the prefix of temporary files in an output
// directory; no experiment may be named with it.
const TempPrefixForStem = atomicio.TempPrefix
