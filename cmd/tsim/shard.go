package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/results"
)

// Sharding: "tsim run FILE --shard i/n" runs the work items k with
// k mod n = i, where item k is replication k mod reps of scenario k / reps,
// and writes each finished item as one JSON line of
// DIR/<stem>/shard-i-of-n/items.jsonl, in item order, as soon as the items
// before it are written. When the shard ends it writes shard.json, the
// manifest: the experiment's files and their hash, the seed, the number of
// replications and items, and whether the shard finished. "tsim merge"
// reads the shards of an experiment back in item order and aggregates them
// exactly as "tsim run" does, so that the merged files are the bytes an
// unsharded run writes.

// shard is which work items one process runs: those k with k mod n = i.
// The zero value (n = 0) runs every item.
type shard struct{ i, n int }

func (s shard) sharded() bool { return s.n > 1 }

func (s shard) owns(k int) bool { return s.n <= 1 || k%s.n == s.i }

// ownsAny reports whether the shard owns any of the count items from start.
func (s shard) ownsAny(start, count int) bool {
	if s.n <= 1 || count >= s.n {
		return count > 0
	}
	for k := start; k < start+count; k++ {
		if s.owns(k) {
			return true
		}
	}
	return false
}

// first is the shard's first item; after(k) the one after its item k.
func (s shard) first() int {
	if s.n <= 1 {
		return 0
	}
	return s.i
}

func (s shard) after(k int) int {
	if s.n <= 1 {
		return k + 1
	}
	return k + s.n
}

// count is the number of the first total items the shard owns.
func (s shard) count(total int) int {
	if s.n <= 1 {
		return total
	}
	if s.i >= total {
		return 0
	}
	return (total-1-s.i)/s.n + 1
}

func (s shard) dirName() string { return fmt.Sprintf("shard-%d-of-%d", s.i, s.n) }

// parseShard reads "i/n" with 0 ≤ i < n.
func parseShard(v string) (shard, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return shard{}, fmt.Errorf("--shard wants i/n with 0 ≤ i < n (the shard number counts from 0, as JOB_COMPLETION_INDEX does), got %q", v)
	}
	return shard{i, n}, nil
}

// shardFormat names the layout of shard directories; merge refuses others.
const shardFormat = "tsim-shard/1"

// manifest is shard.json.
type manifest struct {
	Format       string `json:"format"`
	TsimVersion  string `json:"tsim_version"`
	File         string `json:"file"`   // the experiment file as given to tsim run
	SHA256       string `json:"sha256"` // of the experiment file and the files it read
	Seed         uint64 `json:"seed"`
	Replications int    `json:"replications"`
	Mode         string `json:"mode"`
	Shard        int    `json:"shard"`
	Shards       int    `json:"shards"`
	Scenarios    int    `json:"scenarios"`
	Items        int    `json:"items"`          // work items of the whole experiment
	ItemsInShard int    `json:"items_in_shard"` // those this shard owns
	ItemsWritten int    `json:"items_written"`
	Complete     bool   `json:"complete"`
	// Sources are the experiment file and every file it read (topologies
	// given as paths, empirical distributions), so that merge needs
	// neither the files nor the directory the shards were run in.
	Sources []sourceFile `json:"sources"`
}

type sourceFile struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// sourcesHash is the SHA-256 of the experiment file and the files it read,
// each as its name and content.
func sourcesHash(src []sourceFile) string {
	h := sha256.New()
	for _, f := range src {
		fmt.Fprintf(h, "%d:%s%d:", len(f.Name), f.Name, len(f.Content))
		io.WriteString(h, f.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// itemJSON is one line of items.jsonl: a finished work item with the parts
// of its run that summary.json leaves out.
type itemJSON struct {
	Item        int              `json:"item"`
	Scenario    int              `json:"scenario"`
	Replication int              `json:"replication"`
	Variant     string           `json:"variant"`
	Params      []paramJSON      `json:"params"`
	Run         *results.Run     `json:"run"`
	TierNames   []string         `json:"tier_names,omitempty"`
	Series      []results.Sample `json:"series,omitempty"`
	// Points are [t, latency, outcome] triples.
	Points    [][3]float64 `json:"points,omitempty"`
	Quantiles []float64    `json:"quantiles,omitempty"`
}

type paramJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func encodeItem(it item) itemJSON {
	r := it.run
	j := itemJSON{Item: it.index, Scenario: it.sc.Index, Replication: it.rep, Variant: it.sc.Variant,
		Params: []paramJSON{}, Run: r, TierNames: r.TierNames, Series: r.Series, Quantiles: r.Quantiles}
	for _, kv := range it.sc.Params {
		j.Params = append(j.Params, paramJSON{kv.Key, kv.Value})
	}
	for _, p := range r.Points {
		j.Points = append(j.Points, [3]float64{p.T, p.Latency, float64(p.Outcome)})
	}
	return j
}

func decodeItem(j itemJSON) (item, error) {
	r := j.Run
	if r == nil {
		return item{}, errors.New("no run")
	}
	r.TierNames, r.Series, r.Quantiles = j.TierNames, j.Series, j.Quantiles
	for _, p := range j.Points {
		o := results.Outcome(p[2])
		if p[2] != float64(o) || o > results.Failed {
			return item{}, fmt.Errorf("bad outcome %v", p[2])
		}
		r.Points = append(r.Points, results.Point{T: p[0], Latency: p[1], Outcome: o})
	}
	sc := &format.Scenario{Index: j.Scenario, Variant: j.Variant}
	for _, kv := range j.Params {
		sc.Params = append(sc.Params, format.Param{Key: kv.Key, Value: kv.Value})
	}
	return item{index: j.Item, sc: sc, rep: j.Replication, run: r}, nil
}

// shardWriter is the sink of a sharded run: it appends each item to
// items.jsonl as it comes.
type shardWriter struct {
	f       *os.File
	w       *bufio.Writer
	enc     *json.Encoder
	written int
}

// openShard prepares a shard's directory: the manifest and items of an
// earlier run are removed first, so that a shard that does not finish is
// never taken for one that did.
func openShard(dir string) (*shardWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, n := range []string{"shard.json", "items.jsonl"} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	f, err := os.Create(filepath.Join(dir, "items.jsonl"))
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	return &shardWriter{f: f, w: w, enc: json.NewEncoder(w)}, nil
}

func (s *shardWriter) take(it item) error {
	if err := s.enc.Encode(encodeItem(it)); err != nil {
		return fmt.Errorf("writing item %d: %w", it.index, err)
	}
	s.written++
	// Each line reaches the file when it is written: a shard's memory
	// does not grow with its number of items.
	return s.w.Flush()
}

func (s *shardWriter) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// runShard runs one shard of an experiment and writes its directory. It
// returns the directory and whether every item of the shard finished.
func runShard(ctxRun func(sink) error, p *plan, src []sourceFile) (dir string, complete bool, err error) {
	dir = filepath.Join(p.out, p.shard.dirName())
	w, err := openShard(dir)
	if err != nil {
		return dir, false, err
	}
	runErr := ctxRun(w)
	if err := w.close(); err != nil && runErr == nil {
		runErr = err
	}
	m := manifest{
		Format:       shardFormat,
		TsimVersion:  versionString(),
		File:         filepath.ToSlash(p.path),
		SHA256:       sourcesHash(src),
		Seed:         p.seed,
		Replications: p.reps,
		Mode:         p.mode,
		Shard:        p.shard.i,
		Shards:       p.shard.n,
		Scenarios:    p.x.NumScenarios(),
		Items:        p.items(),
		ItemsInShard: p.shard.count(p.items()),
		ItemsWritten: w.written,
		Sources:      src,
	}
	m.Complete = runErr == nil && m.ItemsWritten == m.ItemsInShard
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return dir, false, err
	}
	if err := writeAtomic(filepath.Join(dir, "shard.json"), append(b, '\n')); err != nil && runErr == nil {
		runErr = err
	}
	return dir, m.Complete, runErr
}

// ---------------------------------------------------------------------------
// reading shards back

// shardDir is one shard directory and its manifest.
type shardDir struct {
	dir string
	m   manifest
}

// findShards lists the shard directories under each argument: a shard
// directory itself (it holds shard.json), an experiment's output directory
// (it holds shard-i-of-n directories) or an output root (its experiment
// directories do).
func findShards(args []string) ([]string, error) {
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

func readManifest(dir string) (manifest, error) {
	var m manifest
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

// shardGroup is the shards of one experiment, by shard number.
type shardGroup struct {
	stem   string
	shards []shardDir
}

// groupShards groups shard directories by experiment (the output
// directory's name) and checks that each group is one whole run: the same
// experiment files, seed, replications, mode, tsim version and number of
// shards, every shard present once and finished.
func groupShards(dirs []string) ([]*shardGroup, error) {
	var groups []*shardGroup
	var errs []string
	byStem := map[string]*shardGroup{}
	for _, d := range dirs {
		m, err := readManifest(d)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		st := stem(m.File)
		g := byStem[st]
		if g == nil {
			g = &shardGroup{stem: st}
			byStem[st] = g
			groups = append(groups, g)
		}
		g.shards = append(g.shards, shardDir{d, m})
	}
	for _, g := range groups {
		ref := g.shards[0]
		r := ref.m
		for _, s := range g.shards[1:] {
			m := s.m
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
					s.dir, ref.dir, strings.Join(diff, "; ")))
			}
		}
		if len(errs) > 0 {
			continue
		}
		have := make([]*shardDir, r.Shards)
		for i := range g.shards {
			s := &g.shards[i]
			switch {
			case s.m.Shard < 0 || s.m.Shard >= r.Shards:
				errs = append(errs, fmt.Sprintf("%s: shard %d of %d is out of range", s.dir, s.m.Shard, r.Shards))
			case have[s.m.Shard] != nil:
				errs = append(errs, fmt.Sprintf("%s and %s are both shard %d/%d", have[s.m.Shard].dir, s.dir, s.m.Shard, r.Shards))
			default:
				have[s.m.Shard] = s
			}
			if !s.m.Complete || s.m.ItemsWritten != s.m.ItemsInShard {
				errs = append(errs, fmt.Sprintf("%s: shard %d/%d did not finish (%d of %d items written); run it again",
					s.dir, s.m.Shard, s.m.Shards, s.m.ItemsWritten, s.m.ItemsInShard))
			}
		}
		var missing []string
		for i, s := range have {
			if s == nil {
				missing = append(missing, fmt.Sprintf("%d/%d", i, r.Shards))
			}
		}
		if len(missing) > 0 {
			errs = append(errs, fmt.Sprintf("%s: missing shards %s (tsim run %s --shard %s)", g.stem, strings.Join(missing, ", "), r.File, missing[0]))
		}
		if len(errs) == 0 {
			sorted := make([]shardDir, len(have))
			for i, s := range have {
				sorted[i] = *s
			}
			g.shards = sorted
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return groups, nil
}

// replay reads a group's items back in item order — item k from shard
// k mod n — and hands them to s. Each shard's items.jsonl is read as a
// stream, so memory does not grow with the number of items.
func replay(g *shardGroup, s sink) error {
	n := len(g.shards)
	decs := make([]*json.Decoder, n)
	for i, sd := range g.shards {
		f, err := os.Open(filepath.Join(sd.dir, "items.jsonl"))
		if err != nil {
			return err
		}
		defer f.Close()
		decs[i] = json.NewDecoder(bufio.NewReaderSize(f, 1<<16))
	}
	total := g.shards[0].m.Items
	for k := range total {
		sd := g.shards[k%n]
		var j itemJSON
		if err := decs[k%n].Decode(&j); err != nil {
			if err == io.EOF {
				err = errors.New("ends early")
			}
			return fmt.Errorf("%s: item %d: %v", filepath.Join(sd.dir, "items.jsonl"), k, err)
		}
		if j.Item != k {
			return fmt.Errorf("%s: item %d where item %d belongs", filepath.Join(sd.dir, "items.jsonl"), j.Item, k)
		}
		it, err := decodeItem(j)
		if err != nil {
			return fmt.Errorf("%s: item %d: %v", filepath.Join(sd.dir, "items.jsonl"), k, err)
		}
		if err := s.take(it); err != nil {
			return err
		}
	}
	return nil
}
