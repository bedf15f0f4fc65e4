package format

import (
	"os"
	"strings"
	"testing"
)

// TestDocsExampleLoads loads the complete example of
// docs/experiment-format.md, which must stay a valid experiment.
func TestDocsExampleLoads(t *testing.T) {
	b, err := os.ReadFile("../docs/experiment-format.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "## A complete example\n")
	if !ok {
		t.Fatal("docs/experiment-format.md has no \"## A complete example\"")
	}
	_, rest, ok = strings.Cut(rest, "```toml\n")
	example, _, ok2 := strings.Cut(rest, "```\n")
	if !ok || !ok2 {
		t.Fatal("no ```toml block after \"## A complete example\"")
	}
	x, err := LoadExperiment("experiment-format.md", []byte(example), nil)
	if err != nil {
		t.Fatalf("the complete example does not load:\n%v", err)
	}
	for i := range x.NumScenarios() {
		if _, err := x.Scenario(i); err != nil {
			t.Errorf("scenario %d: %v", i, err)
		}
	}
}

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
