package analysis

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps analysis where doc.go puts it: on format, model,
// runner, results, sim and report (for its tables and number formats),
// and dotnetconfig (a proposed change as the .NET configuration to paste),
// never on the command, the root package or plots directly.
func TestImports(t *testing.T) {
	allowed := []string{"format", "model", "runner", "results", "sim", "report", "dotnetconfig"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if rel, ok := strings.CutPrefix(p, "github.com/tsim-dev/tsim"); ok && !slices.Contains(allowed, strings.TrimPrefix(rel, "/")) {
				t.Errorf("%s imports %q; analysis may import only %v of tsim", f, p, allowed)
			}
		}
	}
}
