package tsim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim"
)

// TestLoadFitMissingExperiment: a specification whose experiment key names
// no file says so from the specification's side, so that the user knows
// which file to correct.
func TestLoadFitMissingExperiment(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "own.fit")
	text := "experiment = \"gone.toml\"\n\n[[free]]\nkey = \"load.think\"\nmin = 1\nmax = 2\n\n[[target]]\nname = \"a\"\nmetric = \"goodput_per_s\"\nvalue = 1\ntolerance = 1\n"
	if err := os.WriteFile(spec, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := tsim.LoadFit(spec, "")
	if err == nil || !strings.Contains(err.Error(), spec+`: its experiment "gone.toml": `) || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("LoadFit of a specification naming a missing experiment: %v", err)
	}
}
