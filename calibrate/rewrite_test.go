package calibrate

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/input"
	"github.com/tsim-dev/tsim/sim"
)

// TestRewriteKeepsExperiments: the calibrated file is the experiment
// written out again with its topology laid in. Without a calibrated
// value, every shipped experiment written so compiles to the same
// scenarios as the original.
func TestRewriteKeepsExperiments(t *testing.T) {
	files, _ := filepath.Glob("../experiments/*.toml")
	more, _ := filepath.Glob("../experiments/*/*.toml")
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no experiments")
	}
	for _, f := range files {
		t.Run(strings.TrimPrefix(f, "../experiments/"), func(t *testing.T) {
			data, readFile, err := input.Open(f, input.Options{})
			if err != nil {
				t.Fatal(err)
			}
			x, err := format.LoadExperiment(f, data, readFile)
			if err != nil {
				t.Skipf("does not load (someone may be editing it): %v", err)
			}
			doc, err := rawDoc(data, readFile)
			if err != nil {
				t.Fatal(err)
			}
			out := writeTOML(doc, []string{"a header"}, nil)
			y, err := format.LoadExperiment(f, out, readFile)
			if err != nil {
				t.Fatalf("the rewritten file does not load: %v\n%s", err, out)
			}
			if x.NumScenarios() != y.NumScenarios() || !reflect.DeepEqual(x.Variants, y.Variants) || !reflect.DeepEqual(x.Sweep, y.Sweep) ||
				x.Seed != y.Seed || x.Replications != y.Replications || x.Name != y.Name {
				t.Fatalf("the rewritten file differs: %d scenarios %v %v, want %d %v %v", y.NumScenarios(), y.Variants, y.Sweep, x.NumScenarios(), x.Variants, x.Sweep)
			}
			for i := range min(x.NumScenarios(), 50) {
				a, err := x.Scenario(i)
				if err != nil {
					t.Fatal(err)
				}
				b, err := y.Scenario(i)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(a, b) {
					t.Errorf("scenario %d (%s) compiles otherwise:\n%s", i, a.Variant, firstDiff(a.Topology, b.Topology))
				}
			}
		})
	}
}

// firstDiff names the first field where two values differ.
func firstDiff(a, b any) string {
	var walk func(path string, x, y reflect.Value) string
	walk = func(path string, x, y reflect.Value) string {
		if reflect.DeepEqual(x.Interface(), y.Interface()) {
			return ""
		}
		switch x.Kind() {
		case reflect.Struct:
			for i := range x.NumField() {
				if !x.Type().Field(i).IsExported() {
					continue
				}
				if d := walk(path+"."+x.Type().Field(i).Name, x.Field(i), y.Field(i)); d != "" {
					return d
				}
			}
		case reflect.Slice:
			if x.Len() == y.Len() {
				for i := range x.Len() {
					if d := walk(fmt.Sprintf("%s[%d]", path, i), x.Index(i), y.Index(i)); d != "" {
						return d
					}
				}
			}
		case reflect.Pointer:
			if !x.IsNil() && !y.IsNil() {
				return walk(path, x.Elem(), y.Elem())
			}
		}
		return fmt.Sprintf("%s: %v, rewritten %v", path, x.Interface(), y.Interface())
	}
	return walk("", reflect.ValueOf(a), reflect.ValueOf(b))
}

// TestScaledDist: a demand scaled keeps its family and shape, its spans
// rounded to four digits.
func TestScaledDist(t *testing.T) {
	for _, tc := range []struct {
		in   string
		f    float64
		want string
	}{
		{"exp(10ms)", 2.0023, "exp(20.02ms)"},
		{"exp(10ms)", 1 / 3.0, "exp(3.333ms)"},
		{"20ms", 1.5, "30ms"},
		{"lognormal(mean=400ms,cv=1.5)", 1.0337, "lognormal(mean=413.5ms,cv=1.5)"},
		{"gamma(mean=1s,cv=0.5)", 1.25, "gamma(mean=1.25s,cv=0.5)"},
		{"uniform(10ms,30ms)", 0.5, "uniform(5ms,15ms)"},
		{"normal(100ms,10ms)", 2, "normal(200ms,20ms)"},
		{"erlang(3,30ms)", 2, "erlang(3,60ms)"},
		{"pareto(mean=80ms,alpha=2.5)", 0.5, "pareto(mean=40ms,alpha=2.5)"},
		{"pareto(xm=50ms,alpha=3)", 0.5, "pareto(xm=25ms,alpha=3)"},
		{"exp(1ms)", 1e-4, "exp(100ns)"},
		{"exp(2s)", 1000, "exp(2000s)"},
	} {
		d, err := sim.ParseDist(tc.in, sim.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := scaledDist(d, tc.f, sim.ParseOptions{})
		if err != nil || got != tc.want {
			t.Errorf("scaledDist(%s, %g) = %q, %v; want %q", tc.in, tc.f, got, err, tc.want)
		}
	}
}

// TestTOMLValues: strings, numbers and keys are written so that TOML
// reads them back as they were.
func TestTOMLValues(t *testing.T) {
	doc := map[string]any{
		"name": "a \"quoted\"\tname\\", "seed": int64(3), "f": 96.0, "g": 0.5, "h": 1e21,
		"load":    map[string]any{"users_schedule": []map[string]any{{"at": "0s", "value": int64(1)}}},
		"variant": []map[string]any{{"name": "v", "set": map[string]any{"tier.web.calls.maxconnection": int64(96), "x y": true}}},
	}
	out := writeTOML(doc, nil, nil)
	back, err := rawDoc(out, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !reflect.DeepEqual(normal(back), normal(doc)) {
		t.Errorf("read back\n%#v\nwant\n%#v\nfrom\n%s", back, doc, out)
	}
}

// normal turns arrays of tables into one shape for comparison.
func normal(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normal(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normal(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normal(e)
		}
		return out
	}
	return v
}
