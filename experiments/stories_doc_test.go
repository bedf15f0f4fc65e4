package experiments

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/fit"
)

// verdictWords is docs/stories.md's vocabulary, in the order its Counts
// paragraph gives them; a row's verdict cell starts with one of them.
var verdictWords = []string{"input", "reproduced", "rule restated", "fitted", "shape only", "contradicted", "not modelled"}

// storyRow is one row of docs/stories.md's tables: a figure of a source
// document and tsim's verdict on it.
type storyRow struct {
	num, verdict string
	line         int
}

var rowNumber = regexp.MustCompile(`^[0-9]+[a-z]?$`)

// storyRows reads every numbered row of docs/stories.md's tables.
func storyRows(t *testing.T, text string) []storyRow {
	t.Helper()
	var rows []storyRow
	for i, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), " | ")
		num := strings.TrimSpace(cells[0])
		if !rowNumber.MatchString(num) {
			continue
		}
		if len(cells) != 4 {
			t.Errorf("docs/stories.md:%d: row %s has %d cells, want 4 (#, the post, tsim, verdict)", i+1, num, len(cells))
			continue
		}
		v := strings.TrimSpace(cells[3])
		w := ""
		for _, word := range verdictWords {
			if strings.HasPrefix(v, word) {
				w = word
				break
			}
		}
		if w == "" {
			t.Errorf("docs/stories.md:%d: row %s's verdict %.40q starts with none of %q", i+1, num, v, verdictWords)
			continue
		}
		rows = append(rows, storyRow{num: num, verdict: w, line: i + 1})
	}
	return rows
}

// TestStoriesCounts: docs/stories.md's Counts paragraph says what its
// table says: as many rows, inputs and figures, each verdict counted as
// the rows give it (the first words of the verdict cell, in the
// vocabulary of its introduction), the reproduced rows named, and the
// figures predicted by the fits as many as the .fit files' targets with
// use = "predict". A verdict changed in a row without its count, or a
// prediction added to a fit without the page, fails here.
func TestStoriesCounts(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "stories.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	rows := storyRows(t, text)
	if len(rows) < 90 {
		t.Fatalf("docs/stories.md: %d rows read; its tables have about a hundred (did the table format change?)", len(rows))
	}
	count := map[string]int{}
	seen := map[string]int{}
	var reproduced []string
	for _, r := range rows {
		if l, ok := seen[r.num]; ok {
			t.Errorf("docs/stories.md:%d: row %s again (first at line %d)", r.line, r.num, l)
		}
		seen[r.num] = r.line
		count[r.verdict]++
		if r.verdict == "reproduced" {
			reproduced = append(reproduced, r.num)
		}
	}

	m := regexp.MustCompile(`(\d+) rows: (\d+) inputs; of the (\d+) figures[^*]*\*\*(\d+) reproduced\*\*, (\d+) rule restated, (\d+) fitted, (\d+) shape only, (\d+) contradicted and (\d+) not modelled`).FindStringSubmatch(strings.Join(strings.Fields(text), " "))
	if m == nil {
		t.Fatal("docs/stories.md: no Counts sentence \"N rows: N inputs; of the N figures ..., **N reproduced**, N rule restated, N fitted, N shape only, N contradicted and N not modelled\"")
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	for _, c := range []struct {
		what      string
		says, has int
	}{
		{"rows", n(1), len(rows)},
		{"inputs", n(2), count["input"]},
		{"figures", n(3), len(rows) - count["input"]},
		{"reproduced", n(4), count["reproduced"]},
		{"rule restated", n(5), count["rule restated"]},
		{"fitted", n(6), count["fitted"]},
		{"shape only", n(7), count["shape only"]},
		{"contradicted", n(8), count["contradicted"]},
		{"not modelled", n(9), count["not modelled"]},
	} {
		if c.says != c.has {
			t.Errorf("docs/stories.md's Counts: %d %s, its table has %d", c.says, c.what, c.has)
		}
	}

	// "Why the five documents cannot give 20 predictions": its inventory
	// follows the counts (the computable figures are the reproduced,
	// fitted and contradicted rows; the fitted ones set inputs; the rest
	// are what a model could predict).
	flat := strings.Join(strings.Fields(text), " ")
	for _, c := range []struct {
		re   string
		want int
	}{
		{`(\d+) remain that a model computes`, count["reproduced"] + count["fitted"] + count["contradicted"]},
		{`(\d+) of those \d+ are the only source for an input`, count["fitted"]},
		{`That leaves (\d+) rows`, count["reproduced"] + count["contradicted"]},
	} {
		mm := regexp.MustCompile(c.re).FindStringSubmatch(flat)
		if mm == nil {
			t.Errorf("docs/stories.md: no %q in its inventory of predictions", c.re)
			continue
		}
		if v, _ := strconv.Atoi(mm[1]); v != c.want {
			t.Errorf("docs/stories.md's inventory says %s; its table gives %d", mm[0], c.want)
		}
	}

	// "Reproduced: rows 8, 11 and 18 (...) and 68a (...)."
	rm := regexp.MustCompile(`(?s)\nReproduced: (.*?)\.\n\n`).FindStringSubmatch(text)
	if rm == nil {
		t.Fatal("docs/stories.md: no \"Reproduced: rows ...\" paragraph")
	}
	named := regexp.MustCompile(`\b[0-9]+[a-z]?\b`).FindAllString(regexp.MustCompile(`\([^)]*\)`).ReplaceAllString(rm[1], ""), -1)
	slices.Sort(named)
	slices.Sort(reproduced)
	if !slices.Equal(named, reproduced) {
		t.Errorf("docs/stories.md's Counts names rows %v as reproduced; its table's reproduced rows are %v", named, reproduced)
	}

	// "Predicted — ... `use = "predict"`: **N**." against the fits.
	pm := regexp.MustCompile(`use = "predict"[^*]*\*\*(\d+)\*\*`).FindStringSubmatch(text)
	if pm == nil {
		t.Fatal("docs/stories.md: no \"Predicted ... use = \"predict\" ...: **N**\" sentence")
	}
	specs, err := filepath.Glob("*.fit")
	if err != nil || len(specs) == 0 {
		t.Fatalf("no experiments/*.fit (%v)", err)
	}
	predicted := 0
	for _, f := range specs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, err := fit.ParseSpec(f, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, tg := range s.Targets {
			if tg.Predict {
				predicted++
			}
		}
	}
	if says, _ := strconv.Atoi(pm[1]); says != predicted {
		t.Errorf("docs/stories.md says %d figures are predicted by the fits; the .fit files' targets with use = \"predict\" are %d", says, predicted)
	}
}
