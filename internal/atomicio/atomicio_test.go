package atomicio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	if err := WriteFile(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Errorf("content %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("%d entries, want only a.json", len(ents))
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir.json"), nil); err == nil {
		t.Errorf("writing into a missing directory succeeded")
	}
}

func TestLockIsExclusiveAndReleased(t *testing.T) {
	root := t.TempDir()
	a, err := Lock(root, "exp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(root, "exp"); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock: %v, want ErrBusy", err)
	}
	other, err := Lock(root, "other")
	if err != nil {
		t.Fatalf("another experiment's directory is free: %v", err)
	}
	other.Unlock()
	a.Unlock()
	b, err := Lock(root, "exp")
	if err != nil {
		t.Fatalf("after Unlock: %v", err)
	}
	b.Unlock()
}

func TestLockRemovesTempsAndChecksTheDirectory(t *testing.T) {
	root := t.TempDir()
	exp := filepath.Join(root, "exp")
	os.MkdirAll(exp, 0o755)
	for _, n := range []string{TempPrefix + "x.png.1", ".summary.json.tmp2", "keep.csv"} {
		os.WriteFile(filepath.Join(exp, n), []byte("x"), 0o644)
	}
	d, err := Lock(root, "exp")
	if err != nil {
		t.Fatal(err)
	}
	d.Unlock()
	ents, _ := os.ReadDir(exp)
	if len(ents) != 1 || ents[0].Name() != "keep.csv" {
		t.Errorf("left %v", ents)
	}
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Lock(root, "file"); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file as the experiment directory: %v", err)
	}
}
