package format

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsim-dev/tsim/topologies"
)

// FuzzLoad checks that no input makes LoadExperiment or Scenario panic, and
// that failures are well-formed LoadErrors. Crashers found by
// `go test -fuzz=FuzzLoad ./format/` are kept in testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(sweepFile))
	for _, tc := range badCases {
		f.Add([]byte(tc.file))
	}
	for _, n := range topologies.Names() {
		b, _ := topologies.Get(n)
		f.Add(b)
	}
	if b, err := os.ReadFile("../experiments/pipeline.toml"); err == nil {
		f.Add(b)
	}
	// The hostile corpus (see package input's tests).
	hostile, _ := filepath.Glob("../input/testdata/hostile/*.toml")
	for _, p := range hostile {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	readFile := func(name string) ([]byte, error) {
		if name == "sub.toml" {
			return []byte(minimal), nil
		}
		return nil, errors.New("no such file")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := LoadExperiment("fuzz.toml", data, readFile)
		if err != nil {
			var le LoadErrors
			if !errors.As(err, &le) || len(le) == 0 || len(le) > maxErrors+1 {
				t.Fatalf("bad error value %T %v", err, err)
			}
			return
		}
		n := x.NumScenarios()
		if n < 1 {
			t.Fatalf("%d scenarios", n)
		}
		for i := 0; i < n && i < 20; i++ {
			x.Scenario(i)
		}
	})
}
