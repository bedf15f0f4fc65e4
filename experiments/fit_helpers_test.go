package experiments

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tsim-dev/tsim/fit"
	"github.com/tsim-dev/tsim/format"
)

// scoreSpec runs a story's experiment as it is with its fit
// specification's seeds and replications (fit.Score) and returns every
// target's model value and verdict, by name.
func scoreSpec(t *testing.T, specFile string) map[string]fit.TargetResult {
	t.Helper()
	data, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fit.ParseSpec(specFile, data)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(filepath.Dir(specFile), s.Experiment)
	x := loadStory(t, file)
	if err := s.Check(x); err != nil {
		t.Fatal(err)
	}
	trs, err := fit.Score(context.Background(), x, s, fit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fit.TargetResult{}
	for _, tr := range trs {
		out[tr.Target.Name] = tr
		t.Logf("%-40s %-7s figure %8.4g ± %-7.3g model %8.4g  %s", tr.Target.Name, use(tr), tr.Target.Value, tr.Target.Tolerance, tr.Model, tr.Verdict)
	}
	return out
}

// loadStory loads an experiment file of this directory.
func loadStory(t *testing.T, file string) *format.Experiment {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	x, err := format.LoadExperiment(file, data, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func use(tr fit.TargetResult) string {
	if tr.Fitted {
		return "fitted"
	}
	return "predict"
}

// verdicts asserts each named target's verdict: the FITTED TO figures
// within their tolerance, and each PREDICTS figure as the story's header
// says (a miss the header admits must stay a miss, so that a change of the
// model that mends or breaks it shows).
func verdicts(t *testing.T, got map[string]fit.TargetResult, want map[string]string) {
	t.Helper()
	for name, tr := range got {
		w, ok := want[name]
		if !ok {
			t.Errorf("%s: no verdict given in the test", name)
			continue
		}
		if tr.Verdict != w {
			t.Errorf("%s: %s (model %.4g, figure %.4g ± %.3g); the header says %s", name, tr.Verdict, tr.Model, tr.Target.Value, tr.Target.Tolerance, w)
		}
	}
	for name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: no such target in the specification", name)
		}
	}
}
