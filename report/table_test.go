package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/tsim-dev/tsim/results"
)

// wideTable is a table of a name column and many number columns, the
// width of a tier table with long names.
func wideTable(w *bytes.Buffer, width int) *Table {
	header := []string{"tier"}
	for i := range 14 {
		header = append(header, fmt.Sprintf("counter %d", i))
	}
	t := NewTable(WithWidth(w, width), 1, header...)
	for _, name := range []string{"web", "a-service-with-a-long-name", "db"} {
		row := []string{name}
		for i := range 14 {
			row = append(row, fmt.Sprintf("%d.5 / %d", i*37, i*91))
		}
		t.Append(row)
	}
	return t
}

// Without a width, or wide enough, a table is printed whole, as it always
// was: one header line, one rule, a line per row.
func TestTableWhole(t *testing.T) {
	var a, b bytes.Buffer
	wideTable(&a, 0).Render()
	wideTable(&b, 10000).Render()
	if a.String() != b.String() {
		t.Errorf("a width it fits changed the table:\n%s\n%s", a.String(), b.String())
	}
	if n := strings.Count(a.String(), "\n"); n != 5 {
		t.Errorf("%d lines, want 5:\n%s", n, a.String())
	}
}

// Narrower than the table: parts one under the other, each line within
// the width, the name column in every part, every cell somewhere.
func TestTableWrapsToTheWidth(t *testing.T) {
	for _, width := range []int{40, 80, 120} {
		var b bytes.Buffer
		if err := wideTable(&b, width).Render(); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
			if w := twwidth.Width(line); w > width {
				t.Errorf("width %d: a line of %d: %q", width, w, line)
			}
		}
		parts := strings.Count(out, "\n\n") + 1
		if parts < 2 || strings.Count(out, "a-service-with-a-") != parts {
			t.Errorf("width %d: %d parts, the long name %d times:\n%s", width, parts, strings.Count(out, "a-service-with-a-"), out)
		}
		for i := range 14 {
			if !strings.Contains(out, fmt.Sprintf("counter %d ", i)) || !strings.Contains(out, fmt.Sprintf("%d.5 / %d", i*37, i*91)) {
				t.Errorf("width %d: column %d lost:\n%s", width, i, out)
			}
		}
	}
}

// A cell too wide for the window even alone is cut with "…".
func TestTableCutsWhatCannotFit(t *testing.T) {
	var b bytes.Buffer
	tb := NewTable(WithWidth(&b, 30), 1, "call", "resolution")
	tb.Append([]string{"web → svc", strings.Repeat("the '*' maxconnection entry ", 5)})
	tb.Render()
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		if w := twwidth.Width(line); w > 30 {
			t.Errorf("a line of %d: %q", w, line)
		}
	}
	if !strings.Contains(b.String(), "…") || !strings.Contains(b.String(), "web → svc") {
		t.Errorf("%s", b.String())
	}
}

// tsim run's report on an 80-column terminal: every line fits, the
// description on one line.
func TestPrintReportFitsATerminal(t *testing.T) {
	tier := results.Tier{Name: "front-end-web-farm", Cores: 8, Host: "aspnet-classic", WCF: true, CPUUtil: 0.5,
		ExecutingMean: 68.9, ExecutingMax: 91, PipelinesMean: 91.2, PipelinesMax: 100, Arrived: 10, Completed: 10}
	sc := &results.Scenario{Variant: "misconfigured", Agg: results.Aggregate{Tiers: []results.Tier{tier, tier},
		Calls:       []results.Call{{From: "front-end-web-farm", To: "back", Limit: 2, Resolution: "2: the System.Net default", Calls: 5}},
		GoodputPerS: 1, ThroughputPerS: 1}}
	r := &results.Experiment{Name: "x", File: "x.toml", Description: strings.Repeat("a long description ", 20), Replications: 1,
		Scenarios: []*results.Scenario{sc}, Finished: 1}
	var b bytes.Buffer
	if err := PrintReport(WithWidth(&b, 80), r); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if w := twwidth.Width(line); w > 80 {
			t.Errorf("a line of %d: %q", w, line)
		}
	}
}
