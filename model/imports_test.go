package model

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayering keeps the engine, the model and the simulator's runtime free of the wall clock, the
// global random source, the file system and the network, and keeps sim from
// importing the rest of tsim (STYLE.md, DESIGN.md "Layers").
func TestLayering(t *testing.T) {
	for _, dir := range []string{"../sim", ".", "../simmode"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			fs := token.NewFileSet()
			af, err := parser.ParseFile(fs, f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range af.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				switch {
				case p == "os", p == "net", strings.HasPrefix(p, "net/"), p == "math/rand", p == "os/exec":
					t.Errorf("%s imports %q", f, p)
				case dir == "../sim" && strings.HasPrefix(p, "github.com/tsim-dev/tsim/"):
					t.Errorf("%s: sim must not import %q", f, p)
				}
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"time.Now(", "time.Sleep(", "time.After(", "time.Since(", "rand.Float64()", "rand.Int()", "rand.IntN(", "rand.ExpFloat64()"} {
				if strings.Contains(string(src), bad) {
					// Methods on a *rand.Rand (r.Float64()) are fine; the
					// package-level functions are not.
					if strings.Contains(string(src), " "+bad) || strings.Contains(string(src), "\t"+bad) || strings.Contains(string(src), "("+bad) || strings.Contains(string(src), "= "+bad) {
						t.Errorf("%s calls %s", f, strings.TrimSuffix(bad, "("))
					}
				}
			}
		}
	}
}
