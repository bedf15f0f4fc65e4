package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/runner"
)

// TestShardMergeIsTheUnshardedRun runs two experiments (variants with time
// series and pictures; a sweep) unsharded and in three shards, merges the
// shards and compares every file byte for byte.
func TestShardMergeIsTheUnshardedRun(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	s := writeFile(t, "sweep.toml", sweep)
	for _, reps := range []string{"2", "3"} {
		whole, shards, merged := t.TempDir(), t.TempDir(), t.TempDir()
		if _, errs, st := tsimMain(t, nil, "run", f, s, "--reps", reps, "-o", whole, "--quiet"); st != exitOK {
			t.Fatalf("unsharded: status %d, stderr %q", st, errs)
		}
		for _, i := range []string{"0", "1", "2"} {
			out, errs, st := tsimMain(t, nil, "run", f, s, "--reps", reps, "--shard", i+"/3", "-o", shards)
			if st != exitOK || errs != "" {
				t.Fatalf("shard %s: status %d, stderr %q", i, st, errs)
			}
			if !strings.Contains(out, "shard "+i+"/3") || !strings.Contains(out, "shard-"+i+"-of-3") {
				t.Errorf("shard %s says:\n%s", i, out)
			}
		}
		out, errs, st := tsimMain(t, nil, "merge", "-o", merged, shards)
		if st != exitOK || errs != "" {
			t.Fatalf("merge: status %d, stderr %q", st, errs)
		}
		if !strings.Contains(out, "merged 3 shards") || !strings.Contains(out, "small ("+f+")") {
			t.Errorf("merge says:\n%s", out)
		}
		for _, exp := range []string{"small", "sweep"} {
			names := listDir(t, filepath.Join(whole, exp))
			if got := listDir(t, filepath.Join(merged, exp)); strings.Join(got, " ") != strings.Join(names, " ") {
				t.Errorf("reps %s, %s: merged files %v, unsharded %v", reps, exp, got, names)
			}
			for _, n := range names {
				a := readFile(t, filepath.Join(whole, exp, n))
				b := readFile(t, filepath.Join(merged, exp, n))
				if !bytes.Equal(a, b) {
					t.Errorf("reps %s: %s/%s differs between the unsharded run and the merged shards", reps, exp, n)
				}
			}
		}
	}
}

// A merge accepts shard directories one by one too.
func TestMergeShardDirectories(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	shards, merged := t.TempDir(), t.TempDir()
	for _, i := range []string{"1", "0"} {
		if _, errs, st := tsimMain(t, nil, "run", f, "--shard", i+"/2", "-o", shards, "--quiet"); st != exitOK {
			t.Fatalf("status %d, stderr %q", st, errs)
		}
	}
	d := filepath.Join(shards, "small")
	_, errs, st := tsimMain(t, nil, "merge", "-o", merged, "--quiet", filepath.Join(d, "shard-1-of-2"), filepath.Join(d, "shard-0-of-2"))
	if st != exitOK {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	if _, err := os.Stat(filepath.Join(merged, "small", "summary.json")); err != nil {
		t.Error(err)
	}
}

func TestMergeRefusesMismatchedShards(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	shard := func(dir string, args ...string) {
		t.Helper()
		if _, errs, st := tsimMain(t, nil, append([]string{"run", f, "-o", dir, "--quiet"}, args...)...); st != exitOK {
			t.Fatalf("%q: status %d, stderr %q", args, st, errs)
		}
	}
	merge := func(dir, want string) {
		t.Helper()
		_, errs, st := tsimMain(t, nil, "merge", "-o", t.TempDir(), dir)
		if st != exitFailure || !strings.Contains(errs, want) {
			t.Errorf("status %d, stderr %q; want 1 and %q", st, errs, want)
		}
	}

	// The file changed between shards.
	dir := t.TempDir()
	shard(dir, "--shard", "0/2")
	if err := os.WriteFile(f, []byte(strings.Replace(small, "users = 40", "users = 41", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	shard(dir, "--shard", "1/2")
	merge(dir, "the file changed between shards")
	os.WriteFile(f, []byte(small), 0o644)

	// Another seed.
	dir = t.TempDir()
	shard(dir, "--shard", "0/2")
	shard(dir, "--shard", "1/2", "--seed", "4")
	merge(dir, "seed 4, not 3")

	// Other replications, another shard count.
	dir = t.TempDir()
	shard(dir, "--shard", "0/2")
	shard(dir, "--shard", "1/3")
	merge(dir, "3 shards, not 2")

	// A shard missing.
	dir = t.TempDir()
	shard(dir, "--shard", "0/3")
	shard(dir, "--shard", "2/3")
	merge(dir, "missing shards 1/3 (tsim run "+filepath.ToSlash(f)+" --shard 1/3)")

	// A shard that did not finish.
	dir = t.TempDir()
	sw := writeFile(t, "sweep.toml", sweep)
	if _, errs, st := tsimMain(t, nil, "run", sw, "-o", dir, "--shard", "0/2", "--quiet"); st != exitOK {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runner.TestHookJobDone = cancel
	_, errs, st := tsimMain(t, ctx, "run", sw, "-o", dir, "--shard", "1/2", "--quiet")
	runner.TestHookJobDone = nil
	if st != exitFailure || !strings.Contains(errs, "shard 1/2 not finished") {
		t.Errorf("interrupted shard: status %d, stderr %q", st, errs)
	}
	merge(dir, "shard 1/2 did not finish")

	// Nothing there.
	merge(t.TempDir(), "no shards here")
}

func TestShardUsage(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"run", f, "--shard", "3/3"}, "tsim run: --shard wants i/n with 0 ≤ i < n"},
		{[]string{"run", f, "--shard", "x"}, "tsim run: --shard wants i/n"},
		{[]string{"run", f, "--shard", "0/2", "--json"}, "tsim run: --json and --shard"},
		{[]string{"merge"}, "tsim merge: no shard directories given"},
	} {
		out, errs, st := tsimMain(t, nil, tc.args...)
		if st != exitUsage || !strings.HasPrefix(errs, tc.msg) || out != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2 and %q", tc.args, st, out, errs, tc.msg)
		}
	}
}

// slow runs replications that take longer the lower their seed's
// replication number, so that they finish out of order, and counts how
// many are out at once.
// TestRunItemsInOrder checks that items reach the sink in item order
// whatever order they finish in, and that no more than the window are out
// at once: memory does not grow with the sweep.
// The manifest carries what merge needs to check and to load the
// experiment without the file.
func TestShardManifest(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	dir := t.TempDir()
	if _, errs, st := tsimMain(t, nil, "run", f, "--shard", "1/3", "--reps", "4", "--seed", "11", "-o", dir, "--quiet"); st != exitOK {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	var m runner.Manifest
	if err := json.Unmarshal(readFile(t, filepath.Join(dir, "small", "shard-1-of-3", "shard.json")), &m); err != nil {
		t.Fatal(err)
	}
	// 2 variants × 4 replications = 8 items; shard 1 of 3 owns 1, 4, 7.
	if m.Seed != 11 || m.Replications != 4 || m.Items != 8 || m.ItemsInShard != 3 || m.ItemsWritten != 3 || !m.Complete ||
		m.Shard != 1 || m.Shards != 3 || len(m.Sources) != 1 || m.Sources[0].Content != small || m.SHA256 != runner.SourcesHash(m.Sources) {
		t.Errorf("manifest %+v", m)
	}
	lines := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(dir, "small", "shard-1-of-3", "items.jsonl")))), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines in items.jsonl", len(lines))
	}
	var it runner.ItemJSON
	if err := json.Unmarshal([]byte(lines[1]), &it); err != nil {
		t.Fatal(err)
	}
	if it.Item != 4 || it.Scenario != 1 || it.Replication != 0 || it.Variant != "fixed" || it.Run == nil || len(it.Series) == 0 || len(it.Points) == 0 {
		t.Errorf("item 4: %d %d %d %q, series %d, points %d", it.Item, it.Scenario, it.Replication, it.Variant, len(it.Series), len(it.Points))
	}
}
