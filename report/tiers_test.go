package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/results"
)

// Tiers on one shared machine are named under the tier table with the
// machine's CPU, the sum of their shares; a tier on a machine of its own
// is not.
func TestPrintTiersSharedMachine(t *testing.T) {
	tiers := []results.Tier{
		{Name: "client", Cores: 2, CPUUtil: 0.25, Machine: 1},
		{Name: "svc", Cores: 2, CPUUtil: 0.5, Machine: 1},
		{Name: "db", Cores: 4, CPUUtil: 0.1},
	}
	var b bytes.Buffer
	if err := PrintTiers(&b, tiers); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := "(client and svc share one machine of 2 cores: each CPU % is its share; the machine's is 75.0 %)"
	if !strings.Contains(out, want) {
		t.Errorf("want %q in:\n%s", want, out)
	}
	if strings.Count(out, "share one machine") != 1 {
		t.Errorf("one shared machine, got:\n%s", out)
	}
	b.Reset()
	if err := PrintTiers(&b, tiers[2:]); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "share one machine") {
		t.Errorf("no shared machine, got:\n%s", b.String())
	}
}
