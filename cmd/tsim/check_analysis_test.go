package main

import (
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/analysis"
)

// check warns about an open load above capacity, naming the throttle, its
// tier and by how much, and about a run whose memory no machine has (a
// hundred thousand requests a second that each wait 1,000 s: 10⁸ under
// way at once), but not about a thousand front ends each
// permitting two billion connections (the simulator makes the connections
// used, not those permitted; it once allocated them up front); a warning
// is not a failure.
func TestCheckWarnsOverloadAndMemory(t *testing.T) {
	over := writeFile(t, "over.toml", `name = "over"
duration = "100s"
[load]
rate = 200
  [load.call]
  binding = "none"
[[tier]]
name = "svc"
cores = 1
  [[tier.step]]
  cpu = "10ms"
`)
	out, errs, st := tsimMain(t, nil, "check", over)
	if st != exitOK || !strings.Contains(out, "ok (about 20000 simulated requests, about ") ||
		!strings.Contains(errs, "tsim check: warning: "+over+": variant base: the open load brings 200.0 requests/s at the peak, more than the 100.0/s CPU svc (tier svc) serves by the operational laws: ρ = 2; 100.0 requests/s too many") {
		t.Errorf("status %d\nstdout %q\nstderr %q", st, out, errs)
	}
	if analysis.MachineMemory() == 0 {
		t.Skip("the machine's memory cannot be read here (/proc/meminfo): no memory warning to check")
	}
	huge := writeFile(t, "huge.toml", `name = "huge"
duration = "1m"
[load]
users = 100
think = "1s"
[[tier]]
name = "web"
replicas = 1024
calls.client = "dotnet"
calls.maxconnection = 2147483647
  [[tier.step]]
  call = "svc"
[[tier]]
name = "svc"
  [[tier.step]]
  cpu = "1ms"
`)
	out, errs, st = tsimMain(t, nil, "check", huge)
	if st != exitOK || strings.Contains(errs, "of memory at its peak") {
		t.Errorf("status %d\nstdout %q\nstderr %q", st, out, errs)
	}
	crowd := writeFile(t, "crowd.toml", `name = "crowd"
duration = "1h"
[load]
rate = 100000
[[tier]]
name = "svc"
  [[tier.step]]
  wait = "1000s"
`)
	out, errs, st = tsimMain(t, nil, "check", crowd)
	if st != exitOK || !strings.Contains(errs, "of memory at its peak") || !strings.Contains(errs, "million requests of a load that exceeds capacity") {
		t.Errorf("status %d\nstdout %q\nstderr %q", st, out, errs)
	}
}
