package plots

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsOnlyResults keeps plots away from the engine and the model: a
// picture is drawn from results alone, whichever executor made them
// (DESIGN.md "Layers").
func TestImportsOnlyResults(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if strings.HasPrefix(p, "github.com/tsim-dev/tsim/") && p != "github.com/tsim-dev/tsim/results" && p != "github.com/tsim-dev/tsim/plots" {
				t.Errorf("%s imports %q; plots may import only results", f, p)
			}
		}
	}
}
