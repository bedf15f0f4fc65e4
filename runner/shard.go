package runner

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/internal/atomicio"
	"github.com/tsim-dev/tsim/results"
)

// shard is which work items one process runs: those k with k mod n = i.
// The zero value (n = 0) runs every Item.
type Shard struct{ i, n int }

func (s Shard) sharded() bool { return s.n > 1 }

// Sharded reports whether s runs only some of the items.
func (s Shard) Sharded() bool { return s.sharded() }

// Index and Of are i and n of shard i/n.
func (s Shard) Index() int { return s.i }

// Of is n of shard i/n.
func (s Shard) Of() int { return s.n }

// Count is the number of the first total items the shard owns.
func (s Shard) Count(total int) int { return s.count(total) }

func (s Shard) owns(k int) bool { return s.n <= 1 || k%s.n == s.i }

// ownsAny reports whether the shard owns any of the count items from start.
func (s Shard) ownsAny(start, count int) bool {
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

// first is the shard's first Item; after(k) the one after its Item k.
func (s Shard) first() int {
	if s.n <= 1 {
		return 0
	}
	return s.i
}

func (s Shard) after(k int) int {
	if s.n <= 1 {
		return k + 1
	}
	return k + s.n
}

// count is the number of the first total items the shard owns.
func (s Shard) count(total int) int {
	if s.n <= 1 {
		return total
	}
	if s.i >= total {
		return 0
	}
	return (total-1-s.i)/s.n + 1
}

func (s Shard) dirName() string { return fmt.Sprintf("shard-%d-of-%d", s.i, s.n) }

// ParseShard reads "i/n" with 0 ≤ i < n.
func ParseShard(v string) (Shard, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard wants i/n with 0 ≤ i < n (the shard number counts from 0, as JOB_COMPLETION_INDEX does), got %q", v)
	}
	return Shard{i, n}, nil
}

// shardFormat names the layout of shard directories; merge refuses others.
const shardFormat = "tsim-shard/2"

// Manifest is shard.json.
type Manifest struct {
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
	// ItemsSHA256 is the SHA-256 of items.jsonl as written.
	ItemsSHA256 string `json:"items_sha256"`
	Complete    bool   `json:"complete"`
	// Sources are the experiment file and every file it read (topologies
	// given as paths, empirical distributions), so that merge needs
	// neither the files nor the directory the shards were run in.
	Sources []input.Source `json:"sources"`
}

// SourcesHash is the SHA-256 of the experiment file and the files it read,
// each as its name and content.
func SourcesHash(src []input.Source) string {
	h := sha256.New()
	for _, f := range src {
		fmt.Fprintf(h, "%d:%s%d:", len(f.Name), f.Name, len(f.Content))
		io.WriteString(h, f.Content)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ItemJSON is one line of items.jsonl: a finished work Item with the parts
// of its run that summary.json leaves out.
type ItemJSON struct {
	Item        int              `json:"Item"`
	Scenario    int              `json:"scenario"`
	Replication int              `json:"replication"`
	Variant     string           `json:"variant"`
	Params      []paramJSON      `json:"params"`
	Run         *results.Run     `json:"run"`
	TierNames   []string         `json:"tier_names,omitempty"`
	Series      []results.Sample `json:"series,omitempty"`
	// ReplicaNames are the machines of the farms (Run.ReplicaNames).
	ReplicaNames []string `json:"replica_names,omitempty"`
	// Points are [t, latency, outcome] triples.
	Points    [][3]float64 `json:"points,omitempty"`
	Quantiles []float64    `json:"quantiles,omitempty"`
}

type paramJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func encodeItem(it Item) ItemJSON {
	r := it.Run
	j := ItemJSON{Item: it.Index, Scenario: it.Scenario.Index, Replication: it.Rep, Variant: it.Scenario.Variant,
		Params: []paramJSON{}, Run: r, TierNames: r.TierNames, Series: r.Series, Quantiles: r.Quantiles, ReplicaNames: r.ReplicaNames}
	for _, kv := range it.Scenario.Params {
		j.Params = append(j.Params, paramJSON{kv.Key, kv.Value})
	}
	for _, p := range r.Points {
		j.Points = append(j.Points, [3]float64{p.T, p.Latency, float64(p.Outcome)})
	}
	return j
}

func decodeItem(j ItemJSON) (Item, error) {
	r := j.Run
	if r == nil {
		return Item{}, errors.New("no run")
	}
	r.TierNames, r.Series, r.Quantiles, r.ReplicaNames = j.TierNames, j.Series, j.Quantiles, j.ReplicaNames
	for _, p := range j.Points {
		o := results.Outcome(p[2])
		if p[2] != float64(o) || o > results.Failed {
			return Item{}, fmt.Errorf("bad outcome %v", p[2])
		}
		r.Points = append(r.Points, results.Point{T: p[0], Latency: p[1], Outcome: o})
	}
	sc := &format.Scenario{Index: j.Scenario, Variant: j.Variant}
	for _, kv := range j.Params {
		sc.Params = append(sc.Params, format.Param{Key: kv.Key, Value: kv.Value})
	}
	return Item{Index: j.Item, Scenario: sc, Rep: j.Replication, Run: r}, nil
}

// shardWriter is the Sink of a sharded run: it appends each Item to
// items.jsonl as it comes, and hashes what it writes.
type shardWriter struct {
	f       *atomicio.Pending
	w       *bufio.Writer
	h       hash.Hash
	enc     *json.Encoder
	written int
}

func (s *shardWriter) Take(it Item) error {
	if err := s.enc.Encode(encodeItem(it)); err != nil {
		return fmt.Errorf("writing item %d: %w", it.Index, err)
	}
	s.written++
	// Each line reaches the file when it is written: a shard's memory
	// does not grow with its number of items.
	return s.w.Flush()
}

// RunShard runs one shard of an experiment with run and writes it into
// the locked shard directory d: items.jsonl, each finished item as it
// comes, then shard.json, the manifest. The manifest of an earlier run is
// removed first, so that a shard that does not finish is never taken for
// one that did. It reports whether every item of the shard finished.
//
// version is tsim's version, recorded in the manifest: merge refuses to
// combine shards of different versions.
func RunShard(d *atomicio.Dir, p *Plan, version string, run func(Sink) error) (complete bool, err error) {
	if err := d.Remove("shard.json"); err != nil {
		return false, err
	}
	f, err := d.Create("items.jsonl")
	if err != nil {
		return false, err
	}
	h := sha256.New()
	w := bufio.NewWriterSize(io.MultiWriter(f, h), 1<<16)
	sw := &shardWriter{f: f, w: w, h: h, enc: json.NewEncoder(w)}
	runErr := run(sw)
	if err := w.Flush(); err != nil {
		f.Abort()
		return false, err
	}
	if err := f.Commit(); err != nil {
		return false, err
	}
	src := p.Loaded.Sources()
	m := Manifest{
		Format:       shardFormat,
		TsimVersion:  version,
		File:         filepath.ToSlash(p.Path),
		SHA256:       SourcesHash(src),
		Seed:         p.Seed,
		Replications: p.Reps,
		Mode:         p.Mode,
		Shard:        p.Shard.i,
		Shards:       p.Shard.n,
		Scenarios:    p.X.NumScenarios(),
		Items:        p.Items(),
		ItemsInShard: p.Shard.count(p.Items()),
		ItemsWritten: sw.written,
		ItemsSHA256:  hex.EncodeToString(h.Sum(nil)),
		Sources:      src,
	}
	m.Complete = runErr == nil && m.ItemsWritten == m.ItemsInShard
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return false, err
	}
	if err := d.WriteFile("shard.json", append(b, '\n')); err != nil && runErr == nil {
		runErr = err
	}
	return m.Complete, runErr
}

// ---------------------------------------------------------------------------
// reading shards back

// DirName is the name of a shard's directory: shard-i-of-n.
func (s Shard) DirName() string { return s.dirName() }
