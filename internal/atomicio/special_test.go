//go:build unix

package atomicio

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// specials makes, in dir, each kind of file tsim must never write over:
// a FIFO, a symbolic link (to a file outside dir), a directory and, run
// as root, a character device. It returns their names.
func specials(t *testing.T, dir, outside string) []string {
	t.Helper()
	names := []string{"fifo", "link", "subdir"}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "subdir"), 0o755)
	// /dev/null's numbers (1, 3): what tsim config -o /dev/null would replace.
	if err := syscall.Mknod(filepath.Join(dir, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
		names = append(names, "null")
	} else {
		t.Logf("no device node (not root): %v", err)
	}
	return names
}

// WriteFile and Dir.WriteFile refuse to replace anything but a regular
// file, and leave it as it was.
func TestNeverOverANonRegularFile(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("keep"), 0o644)
	dir := filepath.Join(root, "exp")
	os.Mkdir(dir, 0o755)
	names := specials(t, dir, outside)
	d, err := Lock(root, "exp")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Unlock()
	for _, n := range names {
		before, _ := os.Lstat(filepath.Join(dir, n))
		for how, write := range map[string]func() error{
			"WriteFile":     func() error { return WriteFile(filepath.Join(dir, n), []byte("x")) },
			"Dir.WriteFile": func() error { return d.WriteFile(n, []byte("x")) },
			"Dir.Create": func() error {
				p, err := d.Create(n)
				if err == nil {
					p.Abort()
				}
				return err
			},
		} {
			err := write()
			if err == nil || !strings.Contains(err.Error(), "tsim replaces only regular files") {
				t.Errorf("%s over %s: %v", how, n, err)
			}
			after, _ := os.Lstat(filepath.Join(dir, n))
			if before.Mode() != after.Mode() || !os.SameFile(before, after) {
				t.Errorf("%s over %s: it was replaced (%v, now %v)", how, n, before.Mode(), after.Mode())
			}
		}
	}
	if b, _ := os.ReadFile(outside); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			t.Errorf("left %s", e.Name())
		}
	}
}

// A symbolic link planted where an output directory goes is refused, and
// nothing is written where it points.
func TestLockRefusesAPlantedLink(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	os.Symlink(elsewhere, filepath.Join(root, "exp"))
	if d, err := Lock(root, "exp"); err == nil || !strings.Contains(err.Error(), "a symbolic link, not a directory") {
		d.Unlock()
		t.Errorf("a link as the experiment directory: %v", err)
	}
	// A link in place of the experiment directory of a shard, too.
	os.Symlink(elsewhere, filepath.Join(root, "stem"))
	if d, err := Lock(root, "stem/shard-0-of-2"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		d.Unlock()
		t.Errorf("a link above a shard's directory: %v", err)
	}
	// Planted after Lock, before the first file: refused when writing.
	d, err := Lock(root, "late")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Unlock()
	os.Symlink(elsewhere, filepath.Join(root, "late"))
	if err := d.WriteFile("summary.json", []byte("{}")); err == nil {
		t.Errorf("wrote through a link planted after Lock")
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) > 0 {
		t.Errorf("wrote %s outside the output folder", ents[0].Name())
	}
}

// A file written in pieces takes its name only at Commit.
func TestCreateCommit(t *testing.T) {
	root := t.TempDir()
	d, err := Lock(root, "exp")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Unlock()
	p, err := d.Create("items.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	p.WriteString("one\n")
	if _, err := os.Stat(filepath.Join(root, "exp", "items.jsonl")); !os.IsNotExist(err) {
		t.Errorf("the file has its name before Commit: %v", err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "exp", "items.jsonl")); string(b) != "one\n" {
		t.Errorf("%q", b)
	}
}
