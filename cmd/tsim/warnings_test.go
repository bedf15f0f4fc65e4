package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// overridden is an ASP.NET 3.5 front end with autoConfig on whose '*'
// maxconnection entry (line 8) .NET overrides: autoConfig sets 12 × N.
const overridden = `name = "overridden"
duration = "5s"
[load]
users = 2
[[tier]]
name = "web"
preset = "aspnet-classic-net35"
calls.maxconnection = 12
[[tier.step]]
call = "svc"
[[tier]]
name = "svc"
[[tier.step]]
cpu = "const(1ms)"
`

// TestSettingWarnings: tsim check and tsim run name the setting that takes
// no effect, with its file, line and why, and summary.json lists it.
func TestSettingWarnings(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "overridden.toml")
	if err := os.WriteFile(file, []byte(overridden), 0o644); err != nil {
		t.Fatal(err)
	}
	want := file + ":8: tier.web.calls.maxconnection: has no effect: ASP.NET's autoConfig sets DefaultConnectionLimit"
	out, errs, st := tsimMain(t, nil, "check", file)
	if st != exitOK || !strings.Contains(out, "ok") {
		t.Fatalf("check: status %d, stdout %q, stderr %q", st, out, errs)
	}
	if !strings.Contains(errs, "tsim check: warning: "+want) {
		t.Errorf("check's stderr lacks the warning %q:\n%s", want, errs)
	}
	outDir := filepath.Join(dir, "out")
	_, errs, st = tsimMain(t, nil, "run", "--no-plots", "--quiet", "-o", outDir, file)
	if st != exitOK {
		t.Fatalf("run: status %d, stderr %q", st, errs)
	}
	if !strings.Contains(errs, "tsim run: warning: "+want) {
		t.Errorf("run's stderr lacks the warning %q:\n%s", want, errs)
	}
	b, err := os.ReadFile(filepath.Join(outDir, "overridden", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Warnings []string }
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 1 || !strings.HasPrefix(s.Warnings[0], want) {
		t.Errorf("summary.json warnings %q, want one starting %q", s.Warnings, want)
	}
}
