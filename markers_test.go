package tsim

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoConflictMarkers: a merge that left "<<<<<<< " and ">>>>>>> " lines
// in a file the compiler never reads (a doc, a script, an experiment) would
// otherwise land unnoticed.
func TestNoConflictMarkers(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") && n != ".ci" || n == "vendor" || n == "out") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".toml", ".txt", ".sh", ".fit", ".xml", ".config", ".csv", ".json", ".html", ".js", ".css", "":
		default:
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > 4<<20 {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for line := 1; sc.Scan(); line++ {
			if l := sc.Text(); strings.HasPrefix(l, "<<<<<<< ") || strings.HasPrefix(l, ">>>>>>> ") {
				t.Errorf("%s:%d: a merge's conflict marker: %q", path, line, l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
