package calibrate

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/report"
	"github.com/tsim-dev/tsim/runner"
)

var update = flag.Bool("update", false, "rewrite testdata/crack/capture.csv and testdata/*.golden from the current code")

// perfmonOf runs an experiment file's first replication of every variant
// and renders its perfmon.csv.
func perfmonOf(t *testing.T, path string) []byte {
	t.Helper()
	l, err := input.Load(path, input.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := runner.NewPlan(l, runner.Options{Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := runner.Execute(context.Background(), p, runner.Sim{}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := report.PerfmonCSV(res)
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// crackMachines renames tsim's machines to the post's and says which
// columns a real capture of the story would have: the front end and the
// WCF back end, not the further back end the post shows no counter of,
// and none of the objects only tsim writes.
var crackMachines = map[string]string{"web": "FESERVER1", "service": "BESERVER002"}

// TestCrackCapture writes testdata/crack/capture.csv from story.toml
// (with -update; otherwise it checks that the capture reads).
func TestCrackCapture(t *testing.T) {
	const path = "testdata/crack/capture.csv"
	if !*update {
		if _, err := ReadCapture(path); err != nil {
			t.Fatalf("%v (go test ./calibrate -run TestCrackCapture -update writes it)", err)
		}
		return
	}
	recs, err := csv.NewReader(bytes.NewReader(perfmonOf(t, "testdata/crack/story.toml"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var keep []int
	head := []string{recs[0][0]}
	for k, f := range recs[0][1:] {
		p, err := report.ParsePerfmonCounter(f)
		if err != nil {
			t.Fatal(err)
		}
		m, ok := crackMachines[p.Machine]
		if !ok || strings.HasPrefix(p.Object, "tsim ") {
			continue
		}
		p.Machine = m
		// WCF names the instance ServiceName@BaseAddress: the post's
		// service class at its address.
		p.Instance = strings.ReplaceAll(p.Instance, "service@http:||service|service.svc", "MyService@http:||co1wacwb201|Conversion.svc")
		keep = append(keep, k+1)
		head = append(head, p.String())
	}
	var b bytes.Buffer
	write := func(fields []string) {
		for i, f := range fields {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + strings.ReplaceAll(f, `"`, `""`) + `"`)
		}
		b.WriteString("\r\n")
	}
	write(head)
	for _, rec := range recs[1:] {
		row := []string{rec[0]}
		for _, k := range keep {
			row = append(row, rec[k])
		}
		write(row)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// crackOptions are the walk-through's: docs/field-calibrate.md.
var crackOptions = Options{
	Machines: map[string]string{"web": "FESERVER1", "co1wacwb201": "BESERVER002"},
	Warmup:   -1,
	Output:   "out/crack-calibrated/calibrated.toml",
}

// TestCrackTranscript calibrates the field model of the story against
// the story's capture and compares what tsim calibrate prints, and the
// calibrated file, with testdata/crack.golden. Refresh it with -update,
// and commit only a diff you understand.
func TestCrackTranscript(t *testing.T) {
	r, err := Run(context.Background(), "testdata/crack/capture.csv", "testdata/crack/field.toml", crackOptions)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n==> calibrated.toml <==\n")
	b.Write(r.Calibrated)
	const golden = "testdata/crack.golden"
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("output differs from %s (go test ./calibrate -run TestCrackTranscript -update to refresh):\n%s", golden, b.String())
	}

	// The story's figures: the front end's CPU (15 + 5 ms of page work) and
	// the back end's (20 + 10 ms) are recovered, and the back end's wait is
	// its call to the further back end (10 ms of CPU and a 400 ms database
	// wait there, whose machine the capture does not have).
	got := map[string]*TierEstimate{}
	for _, e := range r.Tiers {
		got[e.Tier] = e
	}
	if e := got["web"]; !within(e.StepCPU, 0.020, 0.001) {
		t.Errorf("web: steps' CPU %v, want about 20 ms", e.StepCPU)
	}
	if e := got["co1wacwb201"]; !within(e.StepCPU, 0.030, 0.0015) {
		t.Errorf("co1wacwb201: steps' CPU %v, want about 30 ms", e.StepCPU)
	}
	if e := got["co1wacwb201"]; !within(e.Wait, 0.42, 0.03) {
		t.Errorf("co1wacwb201: wait %v, want about 420 ms (10 ms of CPU and 400 ms of database at the back end, and the call)", e.Wait)
	}
	// The front end's requests wait seconds that neither its CPU nor its
	// call explains: the two connections. Nothing is written for it.
	if e := got["web"]; !(e.Wait.Value > 3) {
		t.Errorf("web: unexplained wait %v, want seconds (the connection queue)", e.Wait)
	}
	for _, ch := range r.Changes {
		if ch.Tier == "web" && ch.Key == "wait" {
			t.Errorf("a wait written into web, which calls others: %+v", ch)
		}
	}
}

// within reports whether m's interval contains want, and m is within tol
// of it.
func within(m Measure, want, tol float64) bool {
	return m.Contains(want) && m.Value > want-tol && m.Value < want+tol
}
