package format

import (
	"os"
	"strings"
	"testing"
)

// TestDocsCoverKeys fails when a key of the schema is not documented in
// docs/experiment-format.md (as `key` in backquotes).
func TestDocsCoverKeys(t *testing.T) {
	b, err := os.ReadFile("../docs/experiment-format.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	var x Experiment
	prefixes := []string{"tier.<name>.step.<n>.", "tier.<name>.call.<target>.", "tier.<name>.calls.", "load.call.", "tier.<name>."}
	check := func(k string) {
		short := k
		for _, p := range prefixes {
			if s, ok := strings.CutPrefix(k, p); ok {
				short = s
				break
			}
		}
		if !strings.Contains(doc, "`"+short+"`") {
			t.Errorf("docs/experiment-format.md does not document %s (as `%s`)", k, short)
		}
	}
	for _, k := range x.Keys() {
		check(k)
	}
	for _, k := range structuralKeys {
		check(k)
	}
	for _, p := range tierPresets {
		check(p.name)
	}
	for _, b := range bindings {
		check(b.Name)
	}
}
