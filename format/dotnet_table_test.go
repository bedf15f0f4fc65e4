package format

import (
	"fmt"
	"strings"
	"testing"
)

// The resolution tables of docs/dotnet.md, checked through the loader for
// every combination they cover: each .NET version × host × autoConfig ×
// set of configuration entries. The expected values are the documents'
// rows, written here as data (first matching row wins, as in §1.1), not
// computed by the code under test.

var tableVersions = []string{"2.0", "3.0", "3.5", "4.0", "4.5", "4.6", "4.7", "4.8", "core"}

// tableHosts are the hosts of docs/dotnet.md; "core" runs self-hosted only.
var tableHosts = []string{"self", "aspnet-classic", "iis-integrated"}

// entries is one combination of what decides a call's connection limit.
type entries struct {
	star, host, code int // maxconnection, maxconnection_host, connection_limit_code; 0 = absent
	loopback         bool
	netTcp           bool
}

func (e entries) String() string {
	var s []string
	if e.star > 0 {
		s = append(s, "star")
	}
	if e.host > 0 {
		s = append(s, "host")
	}
	if e.code > 0 {
		s = append(s, "code")
	}
	if e.loopback {
		s = append(s, "loopback")
	}
	if e.netTcp {
		s = append(s, "netTcp")
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "+")
}

// tableEntries are every subset of the entries, with and without loopback,
// and the netTcp binding with every entry set.
func tableEntries() []entries {
	var out []entries
	for mask := 0; mask < 8; mask++ {
		for _, lb := range []bool{false, true} {
			e := entries{loopback: lb}
			if mask&1 != 0 {
				e.star = 5
			}
			if mask&2 != 0 {
				e.host = 7
			}
			if mask&4 != 0 {
				e.code = 9
			}
			out = append(out, e)
		}
	}
	return append(out, entries{star: 5, host: 7, code: 9, netTcp: true})
}

const tableCores = 4

// connRow is a row of docs/dotnet.md §1.1's table; a zero field matches
// anything, limit -1 means 12 × N and 0 unlimited.
type connRow struct {
	match func(v, host string, auto bool, e entries) bool
	limit func(e entries) int
	doc   string
}

func atLeastV(v, min string) bool { return dotnetAtLeast(v, min) }

var connTable = []connRow{
	{func(v, _ string, _ bool, _ entries) bool { return v == "core" }, func(entries) int { return 0 }, "core: unlimited (§1.6)"},
	{func(_, _ string, _ bool, e entries) bool { return e.netTcp }, func(entries) int { return 0 }, "netTcp: no ServicePoint (§5)"},
	{func(_, _ string, _ bool, e entries) bool { return e.host > 0 }, func(e entries) int { return e.host }, "host-specific entry"},
	{func(_, _ string, _ bool, e entries) bool { return e.code > 0 }, func(e entries) int { return e.code }, "code"},
	{func(v, h string, auto bool, _ entries) bool { return h != "self" && auto && !atLeastV(v, "4.5") }, func(entries) int { return 12 * tableCores }, "autoConfig 2.0–4.0: 12 × N"},
	{func(v, h string, auto bool, _ entries) bool { return h != "self" && auto && atLeastV(v, "4.5") }, func(entries) int { return 0 }, "autoConfig 4.5+: unlimited"},
	{func(_, _ string, _ bool, e entries) bool { return e.loopback }, func(entries) int { return 0 }, "loopback exemption"},
	{func(_, _ string, _ bool, e entries) bool { return e.star > 0 }, func(e entries) int { return e.star }, "'*' entry"},
	{func(_, h string, _ bool, _ entries) bool { return h != "self" }, func(entries) int { return 10 }, "ASP.NET default 10"},
	{func(_, _ string, _ bool, _ entries) bool { return true }, func(entries) int { return 2 }, "default 2"},
}

// presetFor is the tsim preset of a host and version.
func presetFor(host, v string) string {
	net4 := v == "core" || atLeastV(v, "4.0")
	switch {
	case host == "self" && net4:
		return "self-net4"
	case host == "self":
		return "self-net35"
	case host == "aspnet-classic":
		return "aspnet-classic-net35"
	case net4:
		return "iis7-net4"
	}
	return "iis7-net35"
}

func tableFile(v, host string, auto bool, e entries) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[load]\nusers = 1\n\n[[tier]]\nname = \"caller\"\npreset = %q\ncores = %d\ndotnet = %q\n", presetFor(host, v), tableCores, v)
	if host != "self" {
		fmt.Fprintf(&b, "auto_config = %v\n", auto)
	}
	b.WriteString("[[tier.step]]\ncall = \"svc\"\n")
	if e.netTcp {
		b.WriteString("binding = \"netTcp\"\n")
	}
	if e.star > 0 {
		fmt.Fprintf(&b, "maxconnection = %d\n", e.star)
	}
	if e.host > 0 {
		fmt.Fprintf(&b, "maxconnection_host = %d\n", e.host)
	}
	if e.code > 0 {
		fmt.Fprintf(&b, "connection_limit_code = %d\n", e.code)
	}
	if e.loopback {
		b.WriteString("loopback = true\n")
	}
	b.WriteString("\n[[tier]]\nname = \"svc\"\nwcf.preset = \"wcf4\"\n[[tier.step]]\ncpu = \"const(1ms)\"\n")
	return b.String()
}

func TestDotNetResolutionTable(t *testing.T) {
	n := 0
	for _, v := range tableVersions {
		for _, host := range tableHosts {
			if v == "core" && host != "self" {
				continue // ASP.NET (System.Web) is .NET Framework only
			}
			for _, auto := range []bool{false, true} {
				if host == "self" && auto {
					continue // autoConfig is ASP.NET's
				}
				for _, e := range tableEntries() {
					n++
					name := fmt.Sprintf("%s/%s/autoConfig=%v/%s", v, host, auto, e)
					x, err := LoadExperiment("table.toml", []byte(tableFile(v, host, auto, e)), nil)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					sc, err := x.Scenario(0)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					call := sc.Topology.Tiers[0].Steps[0].Call
					var row connRow
					for _, r := range connTable {
						if r.match(v, host, auto, e) {
							row = r
							break
						}
					}
					if want := row.limit(e); call.Conn.Limit != want {
						t.Errorf("%s: limit %d (%s), want %d (%s)", name, call.Conn.Limit, call.Conn.Resolution, want, row.doc)
					}
					// Every entry that did not decide the limit is a warning.
					for _, k := range []struct {
						set  bool
						key  string
						rule string
					}{{e.star > 0, "maxconnection", "'*' entry"}, {e.host > 0, "maxconnection_host", "host-specific entry"}, {e.code > 0, "connection_limit_code", "code"}} {
						if !k.set {
							continue
						}
						warned := false
						for _, w := range x.Warnings {
							if w.Key == "tier.caller.step.1."+k.key {
								warned = true
							}
						}
						if decided := row.doc == k.rule; warned == decided {
							t.Errorf("%s: %s decided the limit: %v, warned: %v (%v)", name, k.key, decided, warned, x.Warnings)
						}
					}
				}
			}
		}
	}
	if n != 8*5*17+1*17 {
		t.Errorf("%d combinations checked", n)
	}
}

// TestDotNetThreadsTable checks docs/dotnet.md §2a and §3a: the thread
// pool and RequestQueue of every preset by version and autoConfig.
func TestDotNetThreadsTable(t *testing.T) {
	const n = tableCores
	for _, v := range tableVersions {
		for _, host := range tableHosts {
			if v == "core" && host != "self" {
				continue
			}
			for _, auto := range []bool{false, true} {
				if host == "self" && auto {
					continue
				}
				name := fmt.Sprintf("%s/%s/autoConfig=%v", v, host, auto)
				topo := loadTopo(t, tableFile(v, host, auto, entries{}))
				tier := topo.Tiers[0]
				var workerMax, ioMax, minFree int
				switch {
				case host == "self" && presetFor(host, v) == "self-net35":
					workerMax, ioMax = 250*n, 1000 // §3a
				case host == "self":
					workerMax, ioMax = 32767, 1000 // §3a
				case auto:
					workerMax, ioMax, minFree = 100*n, 100*n, 88*n // §2a, autoConfig
				case atLeastV(v, "4.0"):
					workerMax, ioMax, minFree = 100*n, 100*n, 8 // §2a, System.Web 4 defaults
				default:
					workerMax, ioMax, minFree = 20*n, 20*n, 8 // §2a, System.Web 2.0 defaults
				}
				if host != "aspnet-classic" {
					minFree = 0 // only the classic RequestQueue has one (§2b)
				}
				if tier.Worker.Min != n || tier.IO.Min != n {
					t.Errorf("%s: min %d/%d, want %d (§3a)", name, tier.Worker.Min, tier.IO.Min, n)
				}
				if tier.Worker.Max != workerMax || tier.IO.Max != ioMax || tier.Admission.MinFreeThreads != minFree {
					t.Errorf("%s: max %d/%d, minFreeThreads %d; want %d/%d, %d", name, tier.Worker.Max, tier.IO.Max, tier.Admission.MinFreeThreads, workerMax, ioMax, minFree)
				}
			}
		}
	}
}

// TestDotNetWCFTable checks docs/dotnet.md §4's throttle defaults by
// version.
func TestDotNetWCFTable(t *testing.T) {
	const n = tableCores
	for _, v := range tableVersions {
		file := fmt.Sprintf("[load]\nusers = 1\n[[tier]]\nname = \"svc\"\ncores = %d\ndotnet = %q\nwcf.instancing = \"PerCall\"\n[[tier.step]]\ncpu = \"const(1ms)\"\n", n, v)
		w := loadTopo(t, file).Tiers[0].WCF
		calls, sessions := 16*n, 100*n
		if !atLeastV(v, "4.0") {
			calls, sessions = 16, 10
		}
		if w == nil || w.MaxCalls != calls || w.MaxSessions != sessions || w.MaxInstances != calls+sessions {
			t.Errorf("%s: throttles %+v, want %d/%d/%d", v, w, calls, sessions, calls+sessions)
		}
	}
}

// TestWarnings checks the other warnings of docs/dotnet.md's "Settings
// that take no effect": each names the file, its line and the key.
func TestWarnings(t *testing.T) {
	for _, tc := range []struct {
		name, file, key string
		line            int
	}{
		{"autoConfig overrides minFreeThreads", "[load]\nusers = 1\n[[tier]]\nname = \"web\"\npreset = \"aspnet-classic-net35\"\ncores = 2\nadmission.min_free_threads = 8\n[[tier.step]]\ncpu = \"const(1ms)\"\n",
			"tier.web.admission.min_free_threads", 7},
		{"auto_config on a self-hosted tier", "[load]\nusers = 1\n[[tier]]\nname = \"app\"\npreset = \"self-net35\"\nauto_config = true\n[[tier.step]]\ncpu = \"const(1ms)\"\n",
			"tier.app.auto_config", 6},
		{"clientConnectedCheck on the integrated pipeline", "[load]\nusers = 1\n[[tier]]\nname = \"web\"\npreset = \"iis7-net4\"\nadmission.client_connected_check = \"3s\"\n[[tier.step]]\ncpu = \"const(1ms)\"\n",
			"tier.web.admission.client_connected_check", 6},
		{"gate_delay without injection", "[load]\nusers = 1\n[[tier]]\nname = \"app\"\nworker.gate_delay = \"1s\"\n[[tier.step]]\ncpu = \"const(1ms)\"\n",
			"tier.app.worker.gate_delay", 5},
		{"module on a self-hosted tier", "[load]\nusers = 1\n[[tier]]\nname = \"app\"\npreset = \"self-net35\"\nadmission.module = \"async\"\n[[tier.step]]\ncpu = \"const(1ms)\"\n",
			"tier.app.admission.module", 6},
		{"max_sessions on a sessionless service", "[load]\nusers = 1\n[[tier]]\nname = \"svc\"\npreset = \"self-net35\"\nwcf.max_sessions = 50\n[[tier.step]]\ncpu = \"const(1ms)\"\n",
			"tier.svc.wcf.max_sessions", 6},
		{"listener keys with port sharing", "[load]\nusers = 1\n[load.call]\nbinding = \"netTcp\"\nclient = \"dotnet\"\n[[tier]]\nname = \"svc\"\npreset = \"self-net35\"\nnettcp.port_sharing = true\nnettcp.max_connections = 50\n[[tier.step]]\ncpu = \"const(1ms)\"\n",
			"tier.svc.nettcp.max_connections", 10},
		{"tier-level '*' entry under autoConfig", "[load]\nusers = 1\n[[tier]]\nname = \"web\"\npreset = \"iis7-net4\"\ndotnet = \"4.5\"\ncalls.maxconnection = 12\n[[tier.step]]\ncall = \"svc\"\n[[tier]]\nname = \"svc\"\n[[tier.step]]\ncpu = \"const(1ms)\"\n",
			"tier.web.calls.maxconnection", 7},
		{"load client without a version", "[load]\nusers = 1\n[load.call]\nclient = \"dotnet\"\nmaxconnection = 3\n[[tier]]\nname = \"svc\"\n[[tier.step]]\ncpu = \"const(1ms)\"\n",
			"load.call.maxconnection", -1}, // the load's client has no version: '*' decides, no warning
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := LoadExperiment("w.toml", []byte(tc.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			found := false
			for _, w := range x.Warnings {
				got = append(got, w.String())
				if w.Key == tc.key && w.Line == tc.line && w.File == "w.toml" && strings.Contains(w.Msg, "has no effect") {
					found = true
				}
			}
			if tc.line < 0 {
				if len(got) > 0 {
					t.Errorf("warnings %q, want none", got)
				}
				return
			}
			if !found {
				t.Errorf("no warning w.toml:%d %s; got %q", tc.line, tc.key, got)
			}
		})
	}
}
