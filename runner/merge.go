package runner

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// ShardDir is one shard directory and its Manifest.
type ShardDir struct {
	Dir      string
	Manifest Manifest
}

// FindShards lists the shard directories under each argument: a shard
// directory itself (it holds shard.json), an experiment's output directory
// (it holds shard-i-of-n directories) or an output root (its experiment
// directories do).
func FindShards(args []string) ([]string, error) {
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s: not a directory (give shard directories, or the -o directory of the shards)", a)
		}
		if _, err := os.Stat(filepath.Join(a, "shard.json")); err == nil {
			add(a)
			continue
		}
		var found []string
		for _, pat := range []string{"shard-*-of-*", filepath.Join("*", "shard-*-of-*")} {
			m, err := filepath.Glob(filepath.Join(a, pat, "shard.json"))
			if err != nil {
				return nil, err
			}
			found = append(found, m...)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no shards here (no shard.json in it, in shard-*-of-* or in */shard-*-of-*); was the shard interrupted?", a)
		}
		sort.Strings(found)
		for _, f := range found {
			add(filepath.Dir(f))
		}
	}
	return dirs, nil
}

func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, "shard.json"))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: %v", filepath.Join(dir, "shard.json"), err)
	}
	if m.Format != shardFormat {
		return m, fmt.Errorf("%s: format %q, want %q", filepath.Join(dir, "shard.json"), m.Format, shardFormat)
	}
	return m, nil
}

// ShardGroup is the shards of one experiment, by shard number.
type ShardGroup struct {
	Stem   string
	Shards []ShardDir // by shard number once grouped
}

// GroupShards groups shard directories by experiment (the output
// directory's name) and checks that each group is one whole run: the same
// experiment files, seed, replications, mode, tsim version and number of
// shards, every shard present once and finished.
func GroupShards(dirs []string) ([]*ShardGroup, error) {
	var groups []*ShardGroup
	var errs []string
	byStem := map[string]*ShardGroup{}
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		st := Stem(m.File)
		g := byStem[st]
		if g == nil {
			g = &ShardGroup{Stem: st}
			byStem[st] = g
			groups = append(groups, g)
		}
		g.Shards = append(g.Shards, ShardDir{Dir: d, Manifest: m})
	}
	for _, g := range groups {
		ref := g.Shards[0]
		r := ref.Manifest
		for _, s := range g.Shards[1:] {
			m := s.Manifest
			var diff []string
			if m.File != r.File {
				diff = append(diff, fmt.Sprintf("file %s, not %s", m.File, r.File))
			}
			if m.SHA256 != r.SHA256 {
				diff = append(diff, fmt.Sprintf("experiment files with SHA-256 %.12s…, not %.12s… (the file changed between shards)", m.SHA256, r.SHA256))
			}
			if m.Seed != r.Seed {
				diff = append(diff, fmt.Sprintf("seed %d, not %d", m.Seed, r.Seed))
			}
			if m.Replications != r.Replications {
				diff = append(diff, fmt.Sprintf("%d replications, not %d", m.Replications, r.Replications))
			}
			if m.Mode != r.Mode {
				diff = append(diff, fmt.Sprintf("mode %s, not %s", m.Mode, r.Mode))
			}
			if m.Shards != r.Shards {
				diff = append(diff, fmt.Sprintf("%d shards, not %d", m.Shards, r.Shards))
			}
			if m.TsimVersion != r.TsimVersion {
				diff = append(diff, fmt.Sprintf("tsim version %s, not %s", m.TsimVersion, r.TsimVersion))
			}
			if len(diff) > 0 {
				errs = append(errs, fmt.Sprintf("%s does not match %s: it was run with %s; shards of one run must share the experiment, seed, replications, mode and shard count",
					s.Dir, ref.Dir, strings.Join(diff, "; ")))
			}
		}
		if len(errs) > 0 {
			continue
		}
		have := make([]*ShardDir, r.Shards)
		for i := range g.Shards {
			s := &g.Shards[i]
			switch {
			case s.Manifest.Shard < 0 || s.Manifest.Shard >= r.Shards:
				errs = append(errs, fmt.Sprintf("%s: shard %d of %d is out of range", s.Dir, s.Manifest.Shard, r.Shards))
			case have[s.Manifest.Shard] != nil:
				errs = append(errs, fmt.Sprintf("%s and %s are both shard %d/%d", have[s.Manifest.Shard].Dir, s.Dir, s.Manifest.Shard, r.Shards))
			default:
				have[s.Manifest.Shard] = s
			}
			if !s.Manifest.Complete || s.Manifest.ItemsWritten != s.Manifest.ItemsInShard {
				errs = append(errs, fmt.Sprintf("%s: shard %d/%d did not finish (%d of %d items written); run it again",
					s.Dir, s.Manifest.Shard, s.Manifest.Shards, s.Manifest.ItemsWritten, s.Manifest.ItemsInShard))
			}
		}
		var missing []string
		for i, s := range have {
			if s == nil {
				missing = append(missing, fmt.Sprintf("%d/%d", i, r.Shards))
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Sprintf("%s: missing shards %s (tsim run %s --shard %s)", g.Stem, strings.Join(missing, ", "), r.File, missing[0]))
		}
		if len(errs) == 0 {
			sorted := make([]ShardDir, len(have))
			for i, s := range have {
				sorted[i] = *s
			}
			g.Shards = sorted
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return groups, nil
}

// replay reads a group's items back in Item order — Item k from shard
// k mod n — and hands them to s. Each shard's items.jsonl is read as a
// stream, so memory does not grow with the number of items.
func Replay(g *ShardGroup, s Sink) error {
	n := len(g.Shards)
	decs := make([]*json.Decoder, n)
	for i, sd := range g.Shards {
		f, err := os.Open(filepath.Join(sd.Dir, "items.jsonl"))
		if err != nil {
			return err
		}
		defer f.Close()
		decs[i] = json.NewDecoder(bufio.NewReaderSize(f, 1<<16))
	}
	total := g.Shards[0].Manifest.Items
	for k := range total {
		sd := g.Shards[k%n]
		var j ItemJSON
		if err := decs[k%n].Decode(&j); err != nil {
			if err == io.EOF {
				err = errors.New("ends early")
			}
			return fmt.Errorf("%s: Item %d: %v", filepath.Join(sd.Dir, "items.jsonl"), k, err)
		}
		if j.Item != k {
			return fmt.Errorf("%s: Item %d where Item %d belongs", filepath.Join(sd.Dir, "items.jsonl"), j.Item, k)
		}
		it, err := decodeItem(j)
		if err != nil {
			return fmt.Errorf("%s: Item %d: %v", filepath.Join(sd.Dir, "items.jsonl"), k, err)
		}
		if err := s.Take(it); err != nil {
			return err
		}
	}
	return nil
}

// Merge loads the experiment a group of shards carries and aggregates
// their items exactly as an unsharded run does. The plan's Out is empty:
// the caller chooses where to write.
func Merge(g *ShardGroup) (*Plan, *results.Experiment, error) {
	m := g.Shards[0].Manifest
	x, err := LoadSources(m.Sources)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", g.Shards[0].Dir, err)
	}
	p := &Plan{Path: filepath.FromSlash(m.File), Stem: g.Stem, X: x, Seed: m.Seed, Reps: m.Replications, Mode: m.Mode}
	if p.Items() != m.Items || x.NumScenarios() != m.Scenarios {
		return nil, nil, fmt.Errorf("%s: the shards have %d items of %d scenarios; their experiment file has %d scenarios", g.Shards[0].Dir, m.Items, m.Scenarios, x.NumScenarios())
	}
	agg := NewAggregator(p)
	if err := Replay(g, agg); err != nil {
		return nil, nil, err
	}
	res := agg.Result()
	if !res.Complete() {
		return nil, nil, fmt.Errorf("%s: %s", g.Stem, DescribeMissing(p, res))
	}
	return p, res, nil
}
