package fit

import (
	"os"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/format"
)

const goodSpec = `experiment = "twotier.toml"
[[free]]
key = "tier.svc.step.1.cpu"
value = "exp({}ms)"
min = 5
max = 200
scale = "log"
[[target]]
name = "svc CPU"
metric = "tier.svc.cpu_utilisation"
value = 0.5
tolerance = "5%"
`

// TestSpecErrors: every bad specification is an error naming its line,
// what is wrong and what is allowed.
func TestSpecErrors(t *testing.T) {
	x, _ := loadTwoTier(t)
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"unknown top key", `experiment = "twotier.toml"`, "experiment = \"twotier.toml\"\nreps = 3", "s.fit:2: unknown key \"reps\""},
		{"unknown free key", `scale = "log"`, "scale = \"log\"\nmax_value = 3", "s.fit:8: free: unknown key \"max_value\""},
		{"min above max", "min = 5", "min = 500", "s.fit:6: free \"tier.svc.step.1.cpu\": max (200) must be above min (500)"},
		{"log from 0", "min = 5", "min = 0", "s.fit:5: free \"tier.svc.step.1.cpu\": a log scale needs min > 0"},
		{"no placeholder", `value = "exp({}ms)"`, `value = "exp(5ms)"`, "s.fit:4: free \"tier.svc.step.1.cpu\": value \"exp(5ms)\" must contain {} exactly once"},
		{"a string for a number", "min = 5", `min = "5ms"`, "s.fit:5: free.min: want a number, got a string"},
		{"bad scale", `scale = "log"`, `scale = "ln"`, "s.fit:7: free \"tier.svc.step.1.cpu\": scale must be linear or log"},
		{"zero tolerance", `tolerance = "5%"`, "tolerance = 0", "s.fit:12: target \"svc CPU\": tolerance must be above 0"},
		{"bad percentage", `tolerance = "5%"`, `tolerance = "five%"`, "s.fit:12: target \"svc CPU\": tolerance \"five%\": want a number or a percentage"},
		{"unknown metric", "tier.svc.cpu_utilisation", "tier.svc.cpu", "s.fit:10: target \"svc CPU\": a tier has no counter \"cpu\""},
		{"window on a tier metric", `tolerance = "5%"`, "tolerance = \"5%\"\nwindow = [\"0s\", \"1m\"]", "s.fit:13: target \"svc CPU\": window applies to clients.* metrics only"},
		{"clients without window", "tier.svc.cpu_utilisation", "clients.latency_max", "s.fit:8: target \"svc CPU\": a clients.* metric needs window"},
		{"bad use", `tolerance = "5%"`, "tolerance = \"5%\"\nuse = \"check\"", "s.fit:13: target \"svc CPU\": use must be fit or predict"},
		{"only predictions", `tolerance = "5%"`, "tolerance = \"5%\"\nuse = \"predict\"", "s.fit: every target has use = \"predict\""},
		{"syntax", "min = 5", "min = = 5", "s.fit:5: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(goodSpec, c.old, c.new, 1)
			s, err := ParseSpec("s.fit", []byte(text))
			if err == nil {
				err = s.Check(x)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %q", err, c.want)
			}
		})
	}
	// Against the experiment.
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"no such tier", "tier.svc.cpu_utilisation", "tier.db.cpu_utilisation", "s.fit:8: target \"svc CPU\": metric \"tier.db.cpu_utilisation\": no tier \"db\" (tiers: web, svc)"},
		{"no such variant", `tolerance = "5%"`, "tolerance = \"5%\"\nvariant = \"fixed\"", "s.fit:8: target \"svc CPU\": variant \"fixed\": the experiment has base"},
		{"no such key", "tier.svc.step.1.cpu", "tier.svc.step.3.cpu", "s.fit:2: free \"tier.svc.step.3.cpu\": key \"tier.svc.step.3.cpu\": tier svc has steps 1 to 2"},
		{"a value the key refuses", `value = "exp({}ms)"`, `value = "{}"`, "s.fit:2: free \"tier.svc.step.1.cpu\": "},
		{"a free input of no such variant", `scale = "log"`, "scale = \"log\"\nvariant = \"rerun\"", "s.fit:2: free \"tier.svc.step.1.cpu\": variant \"rerun\": the experiment has base"},
		{"a bad setting", `tolerance = "5%"`, "tolerance = \"5%\"\nset = { \"load.userz\" = 5 }", "s.fit:8: target \"svc CPU\": unknown key \"load.userz\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseSpec("s.fit", []byte(strings.Replace(goodSpec, c.old, c.new, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Check(x); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v\nwant %q", err, c.want)
			}
		})
	}
}

// TestWriteFitted: values are written over the lines that set them, or
// added to their table, and the result compiles to the same scenarios.
func TestWriteFitted(t *testing.T) {
	x, text := loadTwoTier(t)
	set := []format.Param{
		{Key: "tier.svc.step.1.cpu", Value: "exp(33ms)"},       // over its line
		{Key: "tier.svc.calls.max_conns_per_host", Value: "3"}, // into the tier's body
		{Key: "tier.web.calls.max_conns_per_host", Value: "5"}, // over its line, in a sub-table
		{Key: "load.users", Value: "70"},                       // over its line in [load]
		{Key: "tier.web.call.svc.timeout", Value: "5s"},        // into the step that calls svc
		{Key: "duration", Value: "4m"},                         // a top-level key
	}
	free := make([]Free, len(set))
	out, err := writeFitted(x, text, nil, free, set, []string{"a header"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# a header\n", `cpu = "exp(33ms)"  # fitted (was "exp(40ms)")`, "max_conns_per_host = 5  # fitted (was 8)", "users = 70  # fitted (was 60)", "calls.max_conns_per_host = 3  # fitted\n", "call = \"svc\"\n  timeout = \"5s\"  # fitted\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the fitted text lacks %q:\n%s", want, out)
		}
	}
}

// TestWriteFittedVariant: an input of a variant is written into that
// variant's set — over a value spanning lines, as a new entry of the set,
// as a set of a variant that had none — and the result compiles to the
// same scenarios (writeFitted checks it).
func TestWriteFittedVariant(t *testing.T) {
	data, err := os.ReadFile("testdata/rerun.toml")
	if err != nil {
		t.Fatal(err)
	}
	x, err := format.LoadExperiment("rerun.toml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	free := []Free{{Variant: "rerun"}, {Variant: "rerun"}, {Variant: "quiet"}, {}}
	set := []format.Param{
		{Key: "load.users_schedule", Value: `[ {at = "0s", value = 40}, {at = "1m", value = 40}, {at = "2m", value = 175} ]`},
		{Key: "load.think", Value: "exp(300ms)"},
		{Key: "load.users_schedule", Value: `[ {at = "0s", value = 55} ]`},
		{Key: "tier.svc.step.1.cpu", Value: "exp(12ms)"},
	}
	out, err := writeFitted(x, data, nil, free, set, []string{"a header"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# load.users_schedule: fitted\n# load.think: fitted\nset = { \"load.think\" = \"exp(300ms)\", \"tier.web.calls.max_conns_per_host\" = 64,\n",
		`"load.users_schedule" = [ {at = "0s", value = 40}, {at = "1m", value = 40}, {at = "2m", value = 175} ] }` + "\n",
		"description = \"a variant with no set\"\nset = { \"load.users_schedule\" = [ {at = \"0s\", value = 55} ] }  # fitted\n",
		`cpu = "exp(12ms)"  # fitted (was "exp(10ms)")`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the fitted text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "value = 120") {
		t.Errorf("the old schedule is still there:\n%s", out)
	}
	// An input of a variant the file lacks.
	if _, err := writeFitted(x, data, nil, []Free{{Variant: "after"}}, set[:1], nil); err == nil || !strings.Contains(err.Error(), `no [[variant]] named "after"`) {
		t.Errorf("a missing variant: got %v", err)
	}
}
