package tsim

import (
	"context"
	"errors"

	"github.com/tsim-dev/tsim/analysis"
	"github.com/tsim-dev/tsim/runner"
)

// Merged is one experiment's result merged from its shards.
type Merged struct {
	*Result
	Stem   string // its output directory's name
	Shards int
}

// Merge finds the shards under dirs (shard directories, the -o directory
// of an experiment's shards, or of several experiments), groups them by
// experiment and merges each group exactly as an unsharded run aggregates,
// after checking everything it reads: every shard.json a regular file of
// bounded size whose recorded hash of the experiment's files is theirs,
// whose counts agree with the experiment, and every item in place, its
// hash the manifest's, its numbers sane. It returns the experiments it
// merged and, joined, the refusals of those it did not, each naming the
// file and what was wrong.
func Merge(ctx context.Context, dirs []string) ([]*Merged, error) {
	found, err := runner.FindShards(dirs)
	if err != nil {
		return nil, err
	}
	groups, err := runner.GroupShards(found)
	if err != nil {
		return nil, err
	}
	var out []*Merged
	var errs []error
	for _, g := range groups {
		if err := ctx.Err(); err != nil {
			errs = append(errs, errors.New(g.Stem+": not merged: interrupted"))
			continue
		}
		p, res, err := runner.Merge(ctx, g)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		analysis.AttachUSL(res) // as RunAll: a sweep over a concurrency-like key gets its USL fit
		out = append(out, &Merged{Result: &Result{Experiment: res, path: p.Path}, Stem: p.Stem, Shards: len(g.Shards)})
	}
	return out, errors.Join(errs...)
}
