package main

import (
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// crackFile is the story's experiment file, relative to this package.
const crackFile = "../../experiments/crack-throttling.toml"

// TestExplainCrack is the done-when of explain: before simulating it names
// the two-connection limit as the binding throttle, with the .NET rule that
// decided it; the simulation attributes most of the misconfigured
// variant's response time to waiting for a connection; and it says what to
// change and what binds once that is fixed.
func TestExplainCrack(t *testing.T) {
	dir := t.TempDir()
	out, errs, st := tsimMain(t, nil, "explain", crackFile, "-o", dir)
	if st != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	before, after, ok := strings.Cut(out, "2. Simulated")
	if !ok {
		t.Fatalf("no simulated part:\n%s", out)
	}
	mis, fixed, ok := strings.Cut(before, "variant fixed")
	if !ok {
		t.Fatalf("no bounds of variant fixed:\n%s", before)
	}
	// Part 1: the binding throttle, marked first in the table, with the
	// asymptotic bounds and the limit's resolution.
	for _, s := range []string{
		"→ connections web→service                       │     2 │",
		"binds first: connections web→service (2 connections",
		"saturating at 69.9 users (4.52/s); the load peaks at 100 users: SATURATED",
		"throughput X ≤ min(N/(D+Z), 1/D_max)",
		"response time R ≥ max(D, N·D_max − Z)",
		"web→service: 2: the '*' maxconnection entry (no host-specific entry for service)",
	} {
		if !strings.Contains(unwrap(mis), s) {
			t.Errorf("the misconfigured bounds lack %q:\n%s", s, mis)
		}
	}
	for _, s := range []string{"→ ASP.NET request queue web", "web→service: 96: the '*' maxconnection entry", "3.1% of the way"} {
		if !strings.Contains(unwrap(fixed), s) {
			t.Errorf("the fixed bounds lack %q:\n%s", s, fixed)
		}
	}

	// Part 2 and 3: most of the misconfigured response time is connection
	// waiting, in the table and in the diagnosis.
	row := regexp.MustCompile(`waiting for a connection +│ +([0-9.]+) s +([0-9]+)% │ +0 +0%`).FindStringSubmatch(after)
	if row == nil {
		t.Fatalf("no connection-wait row with seconds for misconfigured and 0 for fixed:\n%s", after)
	}
	if share, _ := strconv.Atoi(row[2]); share < 80 {
		t.Errorf("connection waiting is %d%% of the misconfigured response time; want most of it", share)
	}
	diag := regexp.MustCompile(`Waiting for a connection is ([0-9]+)% of the response time`).FindStringSubmatch(after)
	if diag == nil {
		t.Fatalf("the diagnosis does not attribute the response time:\n%s", after)
	}
	for _, s := range []string{
		"variant misconfigured: connections web→service binds (2 connections).",
		"Simulated: 2.0 of 2 connections in use on average",
		"— idle: the requests wait, they do not work.",
		// N ≥ X·H = 6.47/s × 442 ms = 2.86 → 3; 75% busy → 4.
		"raise maxconnection web→service from 2 to ≥ 3 (tier.web.calls.maxconnection = 3)",
		// The same change as the .NET configuration to paste.
		`In .NET: <add address="*" maxconnection="3"/> inside <system.net><connectionManagement>`,
		"≥ 4 keep them under 75% busy",
		// 207.6/s × 442 ms = 91.8 → 92, then the ASP.NET queue binds.
		"with maxconnection web→service ≥ 92 (tier.web.calls.maxconnection = 92), connections web→service no longer binds first; next binds ASP.NET request queue web (96 requests)",
		"variant fixed: no limit binds at the peak of 100 users.",
		"The response time (469 ms) is mostly external waits",
	} {
		if !strings.Contains(unwrap(after), s) {
			t.Errorf("the diagnosis lacks %q:\n%s", s, after)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > 120 {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	f, err := os.Open(filepath.Join(dir, "crack-throttling", "breakdown.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || cfg.Width != 1200 {
		t.Errorf("breakdown.png: %v, %+v", err, cfg)
	}
}

// unwrap joins wrapped lines, so that a test can look for a sentence.
func unwrap(s string) string {
	return regexp.MustCompile(`\n +`).ReplaceAllString(s, " ")
}

// An open load with a serialising WCF service: the instance lock binds, the
// bounds are those of an open load, and the change proposed is
// ConcurrencyMode Multiple.
const singleLock = `name = "single"
seed = 2
duration = "1m"

[load]
rate = 30

[[tier]]
name = "svc"
preset = "self-net4"
cores = 4
  [tier.wcf]
  preset = "wcf4"
  instancing = "Single"
  concurrency = "Single"
  [[tier.step]]
  cpu = "exp(5ms)"
  [[tier.step]]
  wait = "exp(40ms)"
`

func TestExplainOpenLoadInstanceLock(t *testing.T) {
	f := writeFile(t, "single.toml", singleLock)
	out, errs, st := tsimMain(t, nil, "explain", f, "-o", t.TempDir(), "--quiet")
	if st != exitOK || errs != "" {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	for _, s := range []string{
		"load: open, 30.00 requests/s at peak",
		"→ instance lock svc (Single/Single)",
		"throughput X ≤ 1/D_max",
		"binds first: instance lock svc (Single/Single) (1 instance",
		"SATURATED, its queue grows while the peak lasts",
		"Waiting for a lock is",
		`tier.svc.wcf.concurrency = "Multiple"`,
	} {
		if !strings.Contains(unwrap(out), s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if strings.Contains(out, "wrote ") {
		t.Errorf("--quiet still says where it wrote")
	}
}

func TestExplainUsage(t *testing.T) {
	f := writeFile(t, "small.toml", small)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"explain"}, "tsim explain: no experiment file given\nusage: tsim explain FILE"},
		{[]string{"explain", f, f}, "tsim explain: one experiment file at a time, got 2\n"},
		{[]string{"explain", f, "--seed", "x"}, "tsim explain: invalid value \"x\" for flag -seed"},
	} {
		out, errs, st := tsimMain(t, nil, tc.args...)
		if st != exitUsage || !strings.HasPrefix(errs, tc.msg) || out != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2 and %q", tc.args, st, out, errs, tc.msg)
		}
	}
	_, errs, st := tsimMain(t, nil, "explain", filepath.Join(t.TempDir(), "none.toml"))
	if st != exitFailure || !strings.Contains(errs, "no such file") {
		t.Errorf("missing file: status %d, stderr %q", st, errs)
	}
}
