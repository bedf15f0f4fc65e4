package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
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

// MaxManifestBytes bounds shard.json: the experiment's files it carries
// (format.MaxExperimentBytes and format.MaxTotalBytes), each of whose
// bytes JSON may write as six, and the rest.
const MaxManifestBytes = 6*(format.MaxExperimentBytes+format.MaxTotalBytes) + 1<<20

// MaxShards bounds the shards of one run.
const MaxShards = 1 << 20

// ReadManifest reads and checks a shard directory's shard.json: a regular
// file within MaxManifestBytes, in this version's format, whose counts
// agree with each other and whose recorded SHA-256 of the experiment's
// files is the hash of the files it carries. Every refusal names the file
// and what was wrong.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	path := filepath.Join(dir, "shard.json")
	b, err := input.ReadRegular(path, MaxManifestBytes, "shard manifests")
	if err != nil {
		return m, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		var head struct {
			Format string `json:"format"`
		}
		if json.Unmarshal(b, &head) == nil && head.Format != shardFormat {
			return m, fmt.Errorf("%s: format %s, want %s (written by another version of tsim; run the shards again)", path, quote(head.Format), shardFormat)
		}
		return m, fmt.Errorf("%s: not a shard manifest: %v", path, excerptErr(err))
	}
	if err := m.check(); err != nil {
		return m, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// check checks a manifest's counts against each other, and its hash
// against the files it carries.
func (m *Manifest) check() error {
	switch {
	case m.Format != shardFormat:
		return fmt.Errorf("format %s, want %s (written by another version of tsim; run the shards again)", quote(m.Format), shardFormat)
	case !plain(m.File, 4096) || !plain(m.TsimVersion, 256):
		return fmt.Errorf("file %s, tsim version %s: a path of at most 4096 bytes and a version of at most 256, printable", quote(m.File), quote(m.TsimVersion))
	case !slices.Contains(Modes, m.Mode):
		return fmt.Errorf("mode %s; allowed: %s", quote(m.Mode), strings.Join(Modes, ", "))
	case m.Shards < 1 || m.Shards > MaxShards:
		return fmt.Errorf("%d shards; allowed: 1 to %d", m.Shards, MaxShards)
	case m.Shard < 0 || m.Shard >= m.Shards:
		return fmt.Errorf("shard %d of %d is out of range (0 to %d)", m.Shard, m.Shards, m.Shards-1)
	case format.CheckReplications(m.Replications) != nil:
		return fmt.Errorf("replications: %v", format.CheckReplications(m.Replications))
	case m.Scenarios < 1 || m.Scenarios > format.MaxScenarios:
		return fmt.Errorf("%d scenarios; allowed: 1 to %d", m.Scenarios, format.MaxScenarios)
	case m.Items != m.Scenarios*m.Replications:
		return fmt.Errorf("%d items; %d scenarios of %d replications are %d", m.Items, m.Scenarios, m.Replications, m.Scenarios*m.Replications)
	case m.ItemsInShard != (Shard{m.Shard, m.Shards}).count(m.Items):
		return fmt.Errorf("%d items in shard %d/%d; of %d items it owns %d", m.ItemsInShard, m.Shard, m.Shards, m.Items, (Shard{m.Shard, m.Shards}).count(m.Items))
	case m.ItemsWritten < 0 || m.ItemsWritten > m.ItemsInShard:
		return fmt.Errorf("%d items written; the shard owns %d", m.ItemsWritten, m.ItemsInShard)
	case !isSHA256(m.SHA256) || !isSHA256(m.ItemsSHA256):
		return errors.New("sha256 and items_sha256 must be SHA-256 hashes (64 hexadecimal digits)")
	case len(m.Sources) == 0:
		return errors.New("no experiment file among its sources")
	case m.Sources[0].Name != m.File:
		return fmt.Errorf("its first source is %s, not the experiment file %s", quote(m.Sources[0].Name), quote(m.File))
	case SourcesHash(m.Sources) != m.SHA256:
		return fmt.Errorf("the experiment's files it carries have SHA-256 %.12s…, not the recorded %.12s…: they were changed after the shard ran", SourcesHash(m.Sources), m.SHA256)
	}
	return nil
}

// plain reports whether s is at most max bytes of printable UTF-8.
func plain(s string, max int) bool {
	if len(s) > max || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// quote quotes a string read from a file, cut to a short excerpt.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return strconv.Quote(s)
}

// excerptErr is err's message cut to a few hundred bytes: a decoding
// error may quote what it read.
func excerptErr(err error) string {
	const max = 200
	msg := err.Error()
	if len(msg) > max {
		msg = strings.ToValidUTF8(msg[:max], "") + "…"
	}
	return msg
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
		n := 0
		for i, s := range have {
			if s == nil {
				if n++; n <= 5 {
					missing = append(missing, fmt.Sprintf("%d/%d", i, r.Shards))
				}
			}
		}
		if n > 5 {
			missing = append(missing, fmt.Sprintf("… (%d in all)", n))
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

// MaxItemBytes bounds one line of items.jsonl.
const MaxItemBytes = 256 << 20

// shardReader reads one shard's items.jsonl, line by line, hashing what
// it reads.
type shardReader struct {
	path string
	f    *os.File
	r    *bufio.Reader
	h    hash.Hash
	line int
	want string // the manifest's items_sha256
}

// next reads the next line (without its end), at most MaxItemBytes.
func (s *shardReader) next() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		s.h.Write(chunk)
		if len(line)+len(chunk) > MaxItemBytes {
			return nil, fmt.Errorf("line %d is longer than %s; an item is at most that", s.line+1, format.FormatBytes(MaxItemBytes))
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			s.line++
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			s.line++
			return line, nil
		default:
			return nil, err
		}
	}
}

// finish checks that nothing follows the shard's last item and that the
// file is the one the shard wrote.
func (s *shardReader) finish() error {
	if _, err := s.next(); !errors.Is(err, io.EOF) {
		if err == nil {
			return fmt.Errorf("%s: more lines than the manifest's items", s.path)
		}
		return fmt.Errorf("%s: %v", s.path, err)
	}
	if got := hex.EncodeToString(s.h.Sum(nil)); got != s.want {
		return fmt.Errorf("%s: SHA-256 %.12s…, not the %.12s… its manifest recorded: the file was changed after the shard ran", s.path, got, s.want)
	}
	return nil
}

// Replay reads a group's items back in item order — item k from shard
// k mod n — checks each against the plan (its index, scenario,
// replication, variant and sweep values) and for sanity, and hands it to
// s. Each shard's items.jsonl is read as a stream, so memory does not grow
// with the number of items; its hash is checked against the manifest's
// once its last item is read. A cancelled ctx stops it.
func Replay(ctx context.Context, p *Plan, g *ShardGroup, s Sink) error {
	n := len(g.Shards)
	readers := make([]*shardReader, n)
	for i, sd := range g.Shards {
		path := filepath.Join(sd.Dir, "items.jsonl")
		f, err := input.OpenRegular(path)
		if err != nil {
			return err
		}
		defer f.Close()
		readers[i] = &shardReader{path: path, f: f, r: bufio.NewReaderSize(f, 1<<16), h: sha256.New(), want: sd.Manifest.ItemsSHA256}
	}
	var sc format.Scenario
	total := g.Shards[0].Manifest.Items
	for k := range total {
		if k%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rd := readers[k%n]
		line, err := rd.next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: ends after %d items; its manifest says %d", rd.path, rd.line, g.Shards[k%n].Manifest.ItemsInShard)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", rd.path, err)
		}
		where := fmt.Sprintf("%s:%d", rd.path, rd.line)
		var j ItemJSON
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			return fmt.Errorf("%s: not an item: %v", where, excerptErr(err))
		}
		i, rep := k/p.Reps, k%p.Reps
		if j.Item != k || j.Scenario != i || j.Replication != rep {
			return fmt.Errorf("%s: item %d (scenario %d, replication %d) where item %d (scenario %d, replication %d) belongs",
				where, j.Item, j.Scenario, j.Replication, k, i, rep)
		}
		if rep == 0 || sc.Index != i {
			if sc, err = p.Scenario(i); err != nil {
				return fmt.Errorf("%s: scenario %d: %v", p.Path, i, err)
			}
		}
		if err := sameScenario(&j, &sc); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		it, err := decodeItem(j)
		if err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		if err := Sane(it.Run); err != nil {
			return fmt.Errorf("%s: item %d: %v", where, k, err)
		}
		sc := sc
		it.Scenario = &sc
		if err := s.Take(it); err != nil {
			return err
		}
	}
	for _, rd := range readers {
		if err := rd.finish(); err != nil {
			return err
		}
	}
	return nil
}

// sameScenario checks an item's variant and sweep values against its
// scenario's.
func sameScenario(j *ItemJSON, sc *format.Scenario) error {
	same := j.Variant == sc.Variant && len(j.Params) == len(sc.Params)
	for i := 0; same && i < len(j.Params); i++ {
		same = j.Params[i].Key == sc.Params[i].Key && j.Params[i].Value == sc.Params[i].Value
	}
	if !same {
		return fmt.Errorf("item of variant %s where scenario %d is variant %s", quote(j.Variant), sc.Index, quote(sc.Variant))
	}
	return nil
}

// Merge loads the experiment a group of shards carries and aggregates
// their items exactly as an unsharded run does, after checking the
// manifests' counts against the experiment and every item as it is read
// (Replay). The plan's Out is empty: the caller chooses where to write.
func Merge(ctx context.Context, g *ShardGroup) (*Plan, *results.Experiment, error) {
	m := g.Shards[0].Manifest
	where := filepath.Join(g.Shards[0].Dir, "shard.json")
	l, err := input.LoadSources(m.Sources)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: the experiment it carries: %v", where, err)
	}
	seed := m.Seed
	p, err := NewPlan(l, Options{Seed: &seed, Reps: m.Replications, Mode: m.Mode})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", where, err)
	}
	if l.X.NumScenarios() != m.Scenarios {
		return nil, nil, fmt.Errorf("%s: %d scenarios; the experiment it carries has %d", where, m.Scenarios, l.X.NumScenarios())
	}
	agg := NewAggregator(p)
	if err := Replay(ctx, p, g, agg); err != nil {
		return nil, nil, err
	}
	res := agg.Result()
	if !res.Complete() {
		return nil, nil, fmt.Errorf("%s: %s", g.Stem, DescribeMissing(p, res))
	}
	return p, res, nil
}
