package format

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"math"
	"strings"
	"testing"
	"time"
)

// presetFile is a two-tier system whose first tier uses preset on 4 cores.
func presetFile(preset string) string {
	return fmt.Sprintf(`[load]
users = 1
[[tier]]
name = "t"
preset = %q
cores = 4
  [[tier.step]]
  call = "x"
[[tier]]
name = "x"
  [[tier.step]]
  cpu = "1ms"
`, preset)
}

func TestTierPresets(t *testing.T) {
	clr := func(min, max int) model.Pool {
		return model.Pool{Min: min, Max: max, Injection: model.InjectCLR, GateDelay: 500 * time.Millisecond, IdleTimeout: 20 * time.Second}
	}
	clr4 := func(min, max int) model.Pool { // dotnet.md §3c–§3e: .NET 4.0 and later
		p := clr(min, max)
		p.Injection = model.InjectCLR4
		return p
	}
	free := func(max int) model.Pool {
		return model.Pool{Min: 0, Max: max, Injection: model.InjectNone, GateDelay: 500 * time.Millisecond, IdleTimeout: 20 * time.Second}
	}
	asp := model.Admission{ExecutionTimeout: 110 * time.Second, ExecutionCheck: 15 * time.Second}
	classic, conc35, conc4 := asp, asp, asp
	classic.Kind, classic.MinFreeThreads, classic.QueueLimit, classic.SyncModule = model.AdmitClassic, 88*4, 5000, true
	classic.ClientConnectedCheck = 5 * time.Second // dotnet.md §2a
	conc35.Kind, conc35.MaxExecuting, conc35.QueueLimit, conc35.SyncModule = model.AdmitConcurrent, 12*4, 5000, true
	conc4.Kind, conc4.MaxExecuting, conc4.QueueLimit, conc4.CountExecuting = model.AdmitConcurrent, 5000*4, 5000, true

	tests := []struct {
		preset      string
		host        model.HostKind
		worker, io  model.Pool
		adm         model.Admission
		wcf         *model.WCF
		limit       int
		callTimeout time.Duration
	}{
		{"none", model.HostSelf, free(unlimitedThreads), free(unlimitedThreads), model.Admission{}, nil, 0, 0},
		{"self-net35", model.HostSelf, clr(4, 1000), clr(4, 1000), model.Admission{}, &model.WCF{MaxCalls: 16, MaxSessions: 10, MaxInstances: 26, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle, MaxPendingSessions: 128, PendingSessionTimeout: 2 * time.Minute}, 2, time.Minute},
		{"self-net4", model.HostSelf, clr4(4, 32767), clr(4, 1000), model.Admission{}, &model.WCF{MaxCalls: 64, MaxSessions: 400, MaxInstances: 464, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle, MaxPendingSessions: 128, PendingSessionTimeout: 2 * time.Minute}, 2, time.Minute},
		{"aspnet-classic-net35", model.HostASPNetClassic, clr(4, 400), clr(4, 400), classic, nil, 48, time.Minute},
		{"iis7-net35", model.HostIISIntegrated, clr(4, 400), clr(4, 400), conc35, nil, 48, time.Minute},
		{"iis7-net4", model.HostIISIntegrated, clr4(4, 400), clr(4, 400), conc4, nil, 48, time.Minute},
		{"tomcat", model.HostThreads, free(200), free(200), model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 200, QueueLimit: 8292, CountExecuting: true}, nil, 0, 0},
		{"go", model.HostSelf, free(unlimitedThreads), free(unlimitedThreads), model.Admission{}, nil, 0, 0},
	}
	if len(tests) != len(tierPresets) {
		t.Fatalf("%d presets tested, %d exist", len(tests), len(tierPresets))
	}
	for _, tc := range tests {
		t.Run(tc.preset, func(t *testing.T) {
			topo := loadTopo(t, presetFile(tc.preset))
			tier := topo.Tiers[0]
			if tier.Host != tc.host {
				t.Errorf("host %v, want %v", tier.Host, tc.host)
			}
			if tier.Worker != tc.worker {
				t.Errorf("worker %+v, want %+v", tier.Worker, tc.worker)
			}
			if tier.IO != tc.io {
				t.Errorf("io %+v, want %+v", tier.IO, tc.io)
			}
			if tier.Admission != tc.adm {
				t.Errorf("admission %+v, want %+v", tier.Admission, tc.adm)
			}
			switch {
			case (tier.WCF == nil) != (tc.wcf == nil):
				t.Errorf("wcf %v, want %v", tier.WCF, tc.wcf)
			case tier.WCF != nil && noListener(tier.WCF) != *tc.wcf:
				t.Errorf("wcf %+v, want %+v", *tier.WCF, *tc.wcf)
			}
			call := tier.Steps[0].Call
			if call.Conn.Limit != tc.limit || call.Timeout != tc.callTimeout {
				t.Errorf("call limit %d (%s), timeout %v; want %d, %v", call.Conn.Limit, call.Conn.Resolution, call.Timeout, tc.limit, tc.callTimeout)
			}
		})
	}
}

// Every preset must give values inside the schema's ranges for every core
// count the schema allows.
func TestPresetsInRange(t *testing.T) {
	for _, pr := range tierPresets {
		for _, n := range []int{1, 2, 8, 64, 1024} {
			for k, v := range pr.keys(n) {
				d := lookupKey(scopeTier, k)
				if d == nil {
					t.Fatalf("preset %s: key %s is not in the schema", pr.name, k)
				}
				if i, ok := v.(int); ok {
					v = int64(i)
				}
				if _, err := parseValue(d, v, parseOptionsNone); err != nil {
					t.Errorf("preset %s, %d cores: %s: %v", pr.name, n, k, err)
				}
			}
		}
	}
}

func TestWCFPresetsAndOverrides(t *testing.T) {
	topo := loadTopo(t, `[load]
users = 1
[[tier]]
name = "a"
cores = 8
wcf.preset = "wcf4"
wcf.max_calls = 100
[[tier]]
name = "b"
cores = 8
dotnet = "3.5"
wcf.max_sessions = 50
[[tier]]
name = "c"
preset = "self-net4"
cores = 2
wcf.max_instances = 7
wcf.instancing = "PerCall"
wcf.concurrency = "Multiple"
[[tier]]
name = "d"
preset = "self-net35"
wcf.preset = "none"
`)
	want := []*model.WCF{
		{MaxCalls: 100, MaxSessions: 800, MaxInstances: 900, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle, MaxPendingSessions: 128, PendingSessionTimeout: 2 * time.Minute}, // unset attributes keep 100 × 8 sessions; instances = calls + sessions
		{MaxCalls: 16, MaxSessions: 50, MaxInstances: 66, Instancing: model.PerSession, Concurrency: model.ConcurrencySingle, MaxPendingSessions: 128, PendingSessionTimeout: 2 * time.Minute},    // no preset: .NET 3.5 ⇒ wcf35
		{MaxCalls: 32, MaxSessions: 200, MaxInstances: 7, Instancing: model.PerCall, Concurrency: model.ConcurrencyMultiple, MaxPendingSessions: 128, PendingSessionTimeout: 2 * time.Minute},
		nil,
	}
	for i, w := range want {
		got := topo.Tiers[i].WCF
		if (got == nil) != (w == nil) || got != nil && noListener(got) != *w {
			t.Errorf("tier %s: wcf %+v, want %+v", topo.Tiers[i].Name, got, w)
		}
	}
}

func TestResolveConnLimit(t *testing.T) {
	asp35 := ConnInput{Client: "dotnet", Target: "be", DotNet: "3.5", ASPNet: true, AutoConfig: true, Cores: 8}
	with := func(in ConnInput, f func(*ConnInput)) ConnInput { f(&in); return in }
	self := ConnInput{Client: "dotnet", Target: "be", DotNet: "3.5", Cores: 8}
	tests := []struct {
		name  string
		in    ConnInput
		limit int
		why   string
	}{
		{"host-specific wins over autoConfig", with(asp35, func(c *ConnInput) { c.MaxConnectionHost = 48; c.MaxConnection = 2 }),
			48, "48: host-specific maxconnection entry for be"},
		{"host-specific wins over code and loopback", with(self, func(c *ConnInput) { c.MaxConnectionHost = 3; c.CodeLimit = 50; c.Loopback = true }),
			3, "3: host-specific maxconnection entry for be"},
		{"code", with(asp35, func(c *ConnInput) { c.CodeLimit = 50; c.Loopback = true }),
			50, "50: ServicePointManager.DefaultConnectionLimit set in code"},
		{"loopback", with(self, func(c *ConnInput) { c.Loopback = true; c.MaxConnection = 2 }),
			0, "unlimited: be is on the same machine (System.Net's loopback exemption; only a limit set in code or a host-specific entry applies)"},
		{"autoConfig 3.5", with(asp35, func(c *ConnInput) { c.MaxConnection = 2 }),
			96, "96: ASP.NET autoConfig on .NET 3.5 sets 12 × 8 CPUs; the '*' maxconnection entry is overridden"},
		{"autoConfig 4.0", with(asp35, func(c *ConnInput) { c.DotNet = "4.0"; c.Cores = 2 }),
			24, "24: ASP.NET autoConfig on .NET 4.0 sets 12 × 2 CPUs"},
		{"autoConfig 4.5", with(asp35, func(c *ConnInput) { c.DotNet = "4.5" }),
			0, "unlimited: ASP.NET autoConfig on .NET 4.5 (4.5+) lifts the limit"},
		{"ASP.NET no autoConfig, star", with(asp35, func(c *ConnInput) { c.AutoConfig = false; c.MaxConnection = 20 }),
			20, "20: the '*' maxconnection entry (no host-specific entry for be)"},
		{"ASP.NET 4.0 no autoConfig", with(asp35, func(c *ConnInput) { c.AutoConfig = false; c.DotNet = "4.0" }),
			10, "10: System.Net default inside ASP.NET (.NET 4.0) without autoConfig; no maxconnection entry"},
		{"ASP.NET 3.5 no autoConfig", with(asp35, func(c *ConnInput) { c.AutoConfig = false }),
			10, "10: System.Net default inside ASP.NET (.NET 3.5) without autoConfig; no maxconnection entry"},
		{"autoConfig 3.5 defeats the loopback exemption", with(asp35, func(c *ConnInput) { c.Loopback = true }),
			96, "96: ASP.NET autoConfig on .NET 3.5 sets 12 × 8 CPUs"},
		{"autoConfig 4.5 on loopback", with(asp35, func(c *ConnInput) { c.DotNet = "4.8"; c.Loopback = true; c.MaxConnection = 4 }),
			0, "unlimited: ASP.NET autoConfig on .NET 4.8 (4.5+) lifts the limit; the '*' maxconnection entry is overridden"},
		{"self-hosted, star", with(self, func(c *ConnInput) { c.MaxConnection = 64 }),
			64, "64: the '*' maxconnection entry (no host-specific entry for be)"},
		{"self-hosted default", self,
			2, "2: System.Net default for a self-hosted process on .NET 3.5; no host-specific entry for be"},
		{"netTcp bypasses System.Net", with(self, func(c *ConnInput) { c.Binding = "netTcp"; c.MaxConnectionHost = 2 }),
			0, "unlimited: netTcp does not use System.Net's per-host limit (maxConnections only sizes the idle pool)"},
		{".NET Core", with(self, func(c *ConnInput) { c.DotNet = "core"; c.MaxConnection = 2 }),
			0, "unlimited: the .NET Core WCF client (HttpClientHandler) sets no per-server limit"},
		{"go default", ConnInput{Client: "go"},
			0, "unlimited: Go http.Transport MaxConnsPerHost = 0 (MaxIdleConnsPerHost 2 bounds only idle connections)"},
		{"go set", ConnInput{Client: "go", MaxConnsPerHost: 2}, 2, "2: Go http.Transport MaxConnsPerHost"},
		{"envoy default", ConnInput{Client: "envoy"}, 1024, "1024: Envoy circuit breaker default max_connections"},
		{"envoy set", ConnInput{Client: "envoy", MaxConnections: 10}, 10, "10: Envoy circuit breaker max_connections"},
		{"hikari default", ConnInput{Client: "hikari"}, 10, "10: HikariCP default maximumPoolSize"},
		{"hikari set", ConnInput{Client: "hikari", PoolSize: 30}, 30, "30: HikariCP maximumPoolSize"},
		{"none", ConnInput{Client: "none", MaxConnection: 2}, 0, "unlimited: the client has no connection limit"},
	}
	for _, tc := range tests {
		limit, why := ResolveConnLimit(tc.in)
		if limit != tc.limit || why != tc.why {
			t.Errorf("%s: got %d %q, want %d %q", tc.name, limit, why, tc.limit, tc.why)
		}
	}
}

// TestBindingRatios checks the calibration of the binding table: peak server
// throughput ∝ 1 / (server CPU per request), where the server CPU is the
// operation's own CPU plus receiving the request and sending the reply:
// op + 2·CPUBase + CPUPerKB·(requestKB + replyKB).
func TestBindingRatios(t *testing.T) {
	const op = time.Millisecond // the operation's own CPU ("the server doing little else")
	const reqKB = 2.0
	serverCPU := func(name string, replyKB float64) float64 {
		b, ok := findBinding(name)
		if !ok {
			t.Fatalf("no binding %s", name)
		}
		return op.Seconds() + 2*b.CPUBase.Seconds() + b.CPUPerKB.Seconds()*(reqKB+replyKB)
	}
	for _, c := range []struct {
		replyKB, gain float64
	}{{5, 0.24}, {25, 0.71}} { // ~20 and ~100 objects
		got := serverCPU("basicHttp", c.replyKB)/serverCPU("basicHttp-binary", c.replyKB) - 1
		if math.Abs(got-c.gain) > 0.02 {
			t.Errorf("%g KB reply: binary over text throughput gain %.3f, want %.2f ± 0.02", c.replyKB, got, c.gain)
		}
	}
	encode := func(name string) float64 { return serverCPU(name, 5) - op.Seconds() }
	if r := encode("wsHttp") / encode("basicHttp"); r < 3 {
		t.Errorf("wsHttp costs %.1f× basicHttp per message, want several times", r)
	}
	if !(encode("namedPipe") < encode("netTcp") && encode("netTcp") < encode("basicHttp")) {
		t.Errorf("want namedPipe < netTcp < basicHttp in CPU per message")
	}
	if b, _ := findBinding("none"); b != (model.Binding{Name: "none"}) {
		t.Errorf("binding none is %+v, want all zero", b)
	}
}

// TestInjectionByVersion: a CLR preset's worker pool takes the controller
// of the tier's .NET version (dotnet.md §3): the gate's rule ("clr") on
// 2.0–3.5, hill climbing with starvation ("clr4") on 4.0 and later, so a
// variant that changes dotnet changes it; the I/O pool keeps "clr", and an
// explicit worker.injection wins.
func TestInjectionByVersion(t *testing.T) {
	for _, tc := range []struct {
		preset, extra string
		worker, io    model.Injection
	}{
		{"self-net35", "", model.InjectCLR, model.InjectCLR},
		{"self-net35", `dotnet = "4.0"`, model.InjectCLR4, model.InjectCLR},
		{"self-net35", `dotnet = "core"`, model.InjectCLR4, model.InjectCLR},
		{"self-net4", `dotnet = "3.5"`, model.InjectCLR, model.InjectCLR},
		{"iis7-net4", `worker.injection = "clr"`, model.InjectCLR, model.InjectCLR},
		{"aspnet-classic-net35", `dotnet = "4.8"`, model.InjectCLR4, model.InjectCLR},
		{"none", `dotnet = "4.8"`, model.InjectNone, model.InjectNone}, // not a CLR pool
	} {
		file := strings.Replace(presetFile(tc.preset), "cores = 4\n", "cores = 4\n"+tc.extra+"\n", 1)
		tier := loadTopo(t, file).Tiers[0]
		if tier.Worker.Injection != tc.worker || tier.IO.Injection != tc.io {
			t.Errorf("%s %s: worker %v, io %v; want %v, %v", tc.preset, tc.extra, tier.Worker.Injection, tier.IO.Injection, tc.worker, tc.io)
		}
	}
}
