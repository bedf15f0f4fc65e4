package tsim

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tsim-dev/tsim"

// layers lists, for every package of the module, the packages of the
// module it may import (docs/architecture.md draws them). Arrows point
// down: the engine knows nothing of tsim; the model builds on the engine;
// the format and the two executors (simmode, realmode) on the model, and
// neither executor on the other (TestExecutorsApart); the replication driver and
// the analysis on those; reporting and pictures know results, not the
// engine; the library surface and the command sit on top. A package that
// is not listed fails the test, so a new one gets its place on purpose.
var layers = map[string][]string{
	"sim":                 {},
	"results":             {},
	"loadtest":            {"results", "internal/quote"}, // load tests' results: format reads a trace through it
	"topologies":          {},
	"internal/atomicio":   {},
	"internal/termui":     {}, // cmd/tsim's progress bar and terminal width
	"internal/quote":      {}, // a short, sanitised excerpt of what a user's file held, for messages
	"internal/stallprobe": {}, // tests only: realmode's and cmd/tsim's real runs
	"input":               {"format"},
	"model":               {"sim", "results"},
	"model/modeltest":     {"model", "sim", "results"}, // tests only: builders and the step tables of both executors
	"simmode":             {"model", "sim", "results"},
	"format":              {"model", "results", "sim", "topologies", "loadtest"},
	"realmode":            {"model", "results", "sim"},
	"plots":               {"results"},
	"htmlreport":          {"results", "input", "format"},
	"report":              {"results", "plots", "htmlreport", "internal/atomicio"},
	"runner":              {"format", "model", "simmode", "realmode", "results", "sim", "internal/atomicio", "input"},
	"analysis":            {"format", "model", "runner", "results", "sim", "report", "plots", "dotnetconfig"},
	"dotnetconfig":        {"format", "model", "results", "sim", "input"},
	"calibrate":           {"format", "model", "runner", "results", "sim", "report", "plots", "input", "topologies", "loadtest", "internal/quote"},
	"bench":               {"format", "model", "simmode", "sim", "topologies", "results", "runner", "report", "input"},
	"fit":                 {"format", "model", "simmode", "runner", "results", "sim", "plots"},
	"experiments":         {},
	"":                    {"format", "model", "simmode", "runner", "analysis", "report", "results", "realmode", "sim", "internal/atomicio", "input", "plots", "fit", "loadtest", "dotnetconfig", "calibrate", "htmlreport"},
	"cmd/tsim":            nil, // the command may import anything
}

// executors are the two ways of running a model.Topology. Each builds on
// model alone, so that what they share is written once there and
// cross-validation compares the model with itself, not two copies.
var executors = []string{"simmode", "realmode"}

// TestExecutorsApart keeps either executor from importing the other (the
// table below enforces it; this keeps the table from being loosened).
func TestExecutorsApart(t *testing.T) {
	for _, a := range executors {
		for _, b := range executors {
			if a != b && slices.Contains(layers[a], b) {
				t.Errorf("executor %s may import executor %s: what they share belongs in model", a, b)
			}
		}
	}
}

// TestLayering keeps the arrows pointing down, from the sources' imports
// (tests may import more: they exercise a package from above).
func TestLayering(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "docs") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		allowed, known := layers[pkg]
		if !known {
			if strings.HasPrefix(pkg, "bench/") {
				return nil // the SimPy comparison's helpers
			}
			t.Errorf("package %q is not in the layering table of arch_test.go; give it its place", pkg)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			rel, ok := strings.CutPrefix(p, module+"/")
			if !ok || allowed == nil {
				continue
			}
			if !slices.Contains(allowed, rel) {
				t.Errorf("%s imports %s: package %q may import only %v", path, rel, pkg, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
