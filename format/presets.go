package format

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"strconv"
	"strings"
	"time"
)

// This file holds the real defaults of the runtimes tsim models. Every number
// cites its section of docs/dotnet.md ("dotnet.md §N"), which gives its
// source; where no source has a number, the comment says what was chosen
// and why.

// A tierPreset fills a tier's keys for a processor count n. Explicit keys in
// the experiment override it; keys it leaves out fall back to the schema
// default. Because presets are functions of n, changing tier.<name>.cores in a
// variant or sweep rescales every per-CPU default that was not set explicitly.
type tierPreset struct {
	name string
	doc  string
	keys func(n int) map[string]any
}

// clrPools are the CLR thread pool settings shared by the .NET presets.
func clrPools(m map[string]any, n, workerMax, ioMax int) {
	m["worker.min"] = n              // dotnet.md §3: min worker = N
	m["worker.max"] = workerMax      // per preset
	m["worker.injection"] = "clr"    // dotnet.md §3: gate thread adds threads above min
	m["worker.gate_delay"] = "500ms" // dotnet.md §3: GATE_THREAD_DELAY 500 ms
	m["worker.idle_timeout"] = "20s" // see idleTimeout below
	m["io.min"] = n                  // dotnet.md §3: min IOCP = N
	m["io.max"] = ioMax              // per preset
	m["io.injection"] = "clr"        // dotnet.md §3: legacy IOCP injection, one per 500 ms tick
	m["io.gate_delay"] = "500ms"     // dotnet.md §3
	m["io.idle_timeout"] = "20s"     // see idleTimeout below
}

// processModel adjusts an ASP.NET preset's keys to the tier's processModel
// autoConfig (dotnet.md §2a). The presets carry autoConfig's values (the
// shipped machine.config sets autoConfig="true"); with auto_config = false
// ASP.NET sets the CLR pool's maximum to maxWorkerThreads and maxIoThreads
// per CPU at their own defaults, and the classic RequestQueue takes
// httpRuntime's minFreeThreads. keys is the preset layer of c, changed in
// place; explicit settings stay above it.
func processModel(c *chain, keys map[string]any, n int) {
	host, _ := keys["host"].(string)
	if _, ok := keys["auto_config"]; !ok || !isASPNetHost(c.str(scopeTier, "host")) || host != c.str(scopeTier, "host") {
		return // not an ASP.NET preset, or its host replaced by another
	}
	if c.bool(scopeTier, "auto_config") {
		return
	}
	perCPU := maxThreadsPerCPUWithoutAutoConfig(c.str(scopeTier, "dotnet"))
	keys["worker.max"] = perCPU * n
	keys["io.max"] = perCPU * n
	if keys["admission.kind"] == "classic" {
		keys["admission.min_free_threads"] = minFreeThreadsDefault
	}
}

// clrInjection gives a CLR preset's worker pool the controller of the
// tier's .NET version (dotnet.md §3): the gate's one thread per 500 ms
// while work waits ("clr") on .NET 2.0–3.5, hill climbing with the gate's
// starvation check ("clr4") on 4.0 and later. The I/O pool keeps "clr"
// (§3g). keys is the preset layer of c, changed in place; an explicit
// worker.injection stays above it.
func clrInjection(c *chain, keys map[string]any) {
	if keys["worker.injection"] != "clr" {
		return
	}
	if v := c.str(scopeTier, "dotnet"); v != "" && dotnetAtLeast(v, "4.0") {
		keys["worker.injection"] = "clr4"
	}
}

// isASPNetHost reports whether a host key names an ASP.NET host.
func isASPNetHost(h string) bool { return h == "aspnet-classic" || h == "iis-integrated" }

// maxThreadsPerCPUWithoutAutoConfig is processModel's maxWorkerThreads and
// maxIoThreads default (dotnet.md §2a): 20 per CPU in System.Web 2.0.50727
// (.NET 2.0–3.5), 100 per CPU in System.Web 4 (ProcessModelSection's
// ConfigurationProperty default DefaultMaxThreadsPerCPU; the 4.8 reference
// source, taken for 4.0 too).
func maxThreadsPerCPUWithoutAutoConfig(dotnet string) int {
	if dotnet != "" && !dotnetAtLeast(dotnet, "4.0") {
		return 20
	}
	return 100
}

// minFreeThreadsDefault is httpRuntime minFreeThreads without autoConfig
// (HttpRuntimeSection, dotnet.md §2a); autoConfig makes it 88 per CPU.
const minFreeThreadsDefault = 8

// idleTimeout (20 s) is dotnet.md §3f: the worker timeout of
// .NET's portable thread pool (dotnet/runtime PortableThreadPool.WorkerThread.cs,
// ThreadPoolThreadTimeoutMs = 20 s), assumed to hold for .NET Framework too:
// it only matters for how fast a pool shrinks after a burst.

var tierPresets = []tierPreset{
	{
		name: "none",
		doc:  "a plain process: unlimited threads created on demand, no admission, no WCF (the default)",
		keys: func(n int) map[string]any {
			return map[string]any{
				"host":             "self",
				"worker.min":       0,
				"worker.max":       unlimitedThreads,
				"worker.injection": "none",
				"io.min":           0,
				"io.max":           unlimitedThreads,
				"io.injection":     "none",
				"calls.client":     "none",
			}
		},
	},
	{
		name: "self-net35",
		doc:  "self-hosted WCF on .NET 3.5 (console, Windows service): CLR pool, WCF 3.5 throttles, no ASP.NET",
		keys: func(n int) map[string]any {
			m := map[string]any{
				"host":         "self",
				"dotnet":       "3.5",
				"auto_config":  false, // no ASP.NET processModel in a self-hosted process
				"wcf.preset":   "wcf35",
				"calls.client": "dotnet",
			}
			// dotnet.md §3: worker max 250 × N on .NET 2.0 SP1–3.5; IOCP max 1000.
			clrPools(m, n, 250*n, 1000)
			return m
		},
	},
	{
		name: "self-net4",
		doc:  "self-hosted WCF on .NET 4.x (64-bit): CLR pool, WCF 4 throttles, no ASP.NET",
		keys: func(n int) map[string]any {
			m := map[string]any{
				"host":         "self",
				"dotnet":       "4.0",
				"auto_config":  false,
				"wcf.preset":   "wcf4",
				"calls.client": "dotnet",
			}
			// dotnet.md §3: worker max 32767 (64-bit) on .NET 4.0+; IOCP max 1000.
			clrPools(m, n, 32767, 1000)
			return m
		},
	},
	{
		name: "aspnet-classic-net35",
		doc:  "ASP.NET 3.5 on IIS 6 or the IIS 7 classic pipeline with processModel autoConfig",
		keys: func(n int) map[string]any {
			m := map[string]any{
				"host":                        "aspnet-classic",
				"dotnet":                      "3.5",
				"auto_config":                 true, // dotnet.md §2a: autoConfig=true in the shipped machine.config
				"admission.kind":              "classic",
				"admission.min_free_threads":  88 * n, // dotnet.md §2a: minFreeThreads 88 × N (⇒ 12 executing per CPU, §2b)
				"admission.queue_limit":       5000,   // dotnet.md §2a: appRequestQueueLimit 5000
				"admission.module":            "sync", // dotnet.md §5: .NET 3.x uses the synchronous HttpModule
				"admission.execution_timeout": "110s", // dotnet.md §2a: executionTimeout 110 s
				"admission.execution_check":   "15s",  // dotnet.md §2a: RequestTimeoutManager checks every 15 s
				"calls.client":                "dotnet",
			}
			// dotnet.md §2a/§3: autoConfig sets maxWorkerThreads and maxIoThreads to 100 × N.
			clrPools(m, n, 100*n, 100*n)
			return m
		},
	},
	{
		name: "iis7-net35",
		doc:  "ASP.NET 3.5 SP1 on the IIS 7 integrated pipeline with autoConfig: MaxConcurrentRequestsPerCPU 12",
		keys: func(n int) map[string]any {
			m := map[string]any{
				"host":                        "iis-integrated",
				"dotnet":                      "3.5",
				"auto_config":                 true,
				"admission.kind":              "concurrent",
				"admission.max_per_cpu":       12,     // dotnet.md §2c: MaxConcurrentRequestsPerCPU 12 on 2.0/3.5 SP1
				"admission.queue_limit":       5000,   // dotnet.md §2a: request queue limit 5000
				"admission.module":            "sync", // dotnet.md §5: sync module is the 3.5 default (async is opt-in, SP1)
				"admission.execution_timeout": "110s", // dotnet.md §2a
				"admission.execution_check":   "15s",  // dotnet.md §2a
				"calls.client":                "dotnet",
			}
			clrPools(m, n, 100*n, 100*n) // dotnet.md §2a: autoConfig 100 × N
			return m
		},
	},
	{
		name: "iis7-net4",
		doc:  "ASP.NET 4.x on the IIS 7+ integrated pipeline with autoConfig: thread-pool limited",
		keys: func(n int) map[string]any {
			m := map[string]any{
				"host":                        "iis-integrated",
				"dotnet":                      "4.0",
				"auto_config":                 true,
				"admission.kind":              "concurrent",
				"admission.max_per_cpu":       5000, // dotnet.md §2c: maxConcurrentRequestsPerCPU 5000 (.NET 4.0+)
				"admission.queue_limit":       5000, // dotnet.md §2c: requestQueueLimit 5000 ...
				"admission.count_executing":   true, // dotnet.md §2c: ... counting queued and executing requests
				"admission.module":            "async",
				"admission.execution_timeout": "110s", // dotnet.md §2a
				"admission.execution_check":   "15s",  // dotnet.md §2a
				"calls.client":                "dotnet",
			}
			// ASSUMPTION: the async WCF module is the .NET 4.0 default; dotnet.md §5
			// marks this "believed default ... unconfirmed".
			clrPools(m, n, 100*n, 100*n) // dotnet.md §2a: autoConfig 100 × N
			return m
		},
	},
	{
		name: "tomcat",
		doc:  "Tomcat NIO HTTP connector: 200 threads; 8192 connections, then a backlog of 100",
		keys: func(n int) map[string]any {
			return map[string]any{
				"host":                    "threads",
				"worker.min":              0,
				"worker.max":              200, // dotnet.md §8: Tomcat maxThreads 200
				"worker.injection":        "none",
				"io.min":                  0,
				"io.max":                  200,
				"io.injection":            "none",
				"admission.kind":          "concurrent",
				"admission.max_executing": 200, // dotnet.md §8: maxThreads
				// dotnet.md §8: NIO accepts up to maxConnections (8192); requests
				// beyond maxThreads wait for a thread on their connection;
				// past maxConnections the OS backlog holds acceptCount (100)
				// more, then connections are refused: 8292 in all.
				"admission.queue_limit":     8192 + 100,
				"admission.count_executing": true,
				"calls.client":              "none",
			}
		},
	},
	{
		name: "go",
		doc:  "a Go net/http server: a goroutine per request, no built-in limit",
		keys: func(n int) map[string]any {
			return map[string]any{
				"host":             "self",
				"worker.min":       0,
				"worker.max":       unlimitedThreads, // dotnet.md §8: http.Server has no concurrency limit
				"worker.injection": "none",
				"io.min":           0,
				"io.max":           unlimitedThreads,
				"io.injection":     "none",
				"calls.client":     "go",
			}
		},
	},
}

// unlimitedThreads stands for "no thread limit" (goroutines, plain
// processes). It is also the largest thread count the schema accepts.
const unlimitedThreads = 1_000_000

func findTierPreset(name string) *tierPreset {
	for i := range tierPresets {
		if tierPresets[i].name == name {
			return &tierPresets[i]
		}
	}
	return nil
}

func tierPresetNames() []string {
	s := make([]string, len(tierPresets))
	for i, p := range tierPresets {
		s[i] = p.name
	}
	return s
}

// wcfDefaults returns the WCF service throttle defaults of a preset for n
// processors. Unset attributes keep these CPU-scaled defaults (dotnet.md §4,
// "config nuance").
func wcfDefaults(preset string, n int) (calls, sessions int) {
	switch preset {
	case "wcf35":
		return 16, 10 // dotnet.md §4: MaxConcurrentCalls 16, MaxConcurrentSessions 10 (.NET 3.0/3.5)
	default: // wcf4
		return 16 * n, 100 * n // dotnet.md §4: 16 × N and 100 × N (.NET 4.0–4.8, CoreWCF)
	}
}

// MaxConcurrentInstances defaults to calls + sessions (dotnet.md §4: 26 on 3.5,
// 116 × N on 4.0+), computed from the effective calls and sessions.

// bindingPreset is a row of the binding table.
type bindingPreset struct {
	model.Binding
	doc string
}

// bindings are the per-message costs of WCF bindings and plain HTTP.
//
// The facts file has no CPU-per-message table (dotnet.md §7: "unconfirmed"). These
// numbers are calibrated to the story's ratios, not measured: with an
// operation that itself uses 1 ms of server CPU, a 2 KB request, and a server
// doing nothing else, the binary encoder gives ≈ +24 % peak throughput over
// text for a ~20-object (5 KB) reply and ≈ +72 % for a ~100-object (25 KB)
// reply; wsHttp (message security + security session) costs about five times
// basicHttp per message (dotnet.md §7: "considerably" more CPU and bytes). netTcp
// and named pipes are binary and cheap (dotnet.md §7: ≈ equal to basicHttp for
// small messages, cheaper for big ones). TestBindingRatios checks the ratios.
// Every field is overridable per call (binding_cpu_base, binding_cpu_per_kb,
// binding_overhead, binding_factor, binding_sessionful, binding_session_cpu,
// binding_session_round_trips).
var bindings = []bindingPreset{
	{model.Binding{Name: "none"}, "no encoding cost and no bytes: an idealised link (benchmarks, theory checks)"},
	{model.Binding{Name: "http", CPUBase: 30 * time.Microsecond, CPUPerKB: 20 * time.Microsecond, Overhead: 200, Factor: 1},
		"plain HTTP with a JSON body (Go, Tomcat, load clients)"},
	{model.Binding{Name: "basicHttp", CPUBase: 70 * time.Microsecond, CPUPerKB: 45 * time.Microsecond, Overhead: 700, Factor: 1},
		"WCF basicHttpBinding, text (SOAP 1.1) encoder, no security"},
	{model.Binding{Name: "basicHttp-binary", CPUBase: 50 * time.Microsecond, CPUPerKB: 10 * time.Microsecond, Overhead: 400, Factor: 0.6},
		"basicHttp transport with the binary message encoder (custom binding)"},
	// wsHttp's security session runs over HTTP: the service never sees a
	// client abort, so an aborted session waits for its receiveTimeout
	// (10 min, dotnet.md §5) before it is dropped (SessionIdleTimeout).
	{model.Binding{Name: "wsHttp", CPUBase: 600 * time.Microsecond, CPUPerKB: 150 * time.Microsecond, Overhead: 3000, Factor: 1.4,
		Sessionful: true, SessionCPU: 20 * time.Millisecond, SessionRoundTrips: 2, SessionIdleTimeout: 10 * time.Minute},
		"WCF wsHttpBinding defaults: message security and a security session (2 extra round trips per new proxy; an aborted session lingers 10 min)"},
	{model.Binding{Name: "netTcp", CPUBase: 30 * time.Microsecond, CPUPerKB: 8 * time.Microsecond, Overhead: 100, Factor: 0.6,
		Sessionful: true, SessionCPU: 500 * time.Microsecond, SessionRoundTrips: 1, Listener: true},
		"WCF netTcpBinding: binary encoder, transport session"},
	{model.Binding{Name: "namedPipe", CPUBase: 20 * time.Microsecond, CPUPerKB: 6 * time.Microsecond, Overhead: 50, Factor: 0.6,
		Sessionful: true, SessionCPU: 200 * time.Microsecond, SessionRoundTrips: 1},
		"WCF netNamedPipeBinding: same machine, binary, cheapest"},
}

func findBinding(name string) (model.Binding, bool) {
	for _, b := range bindings {
		if b.Name == name {
			return b.Binding, true
		}
	}
	return model.Binding{}, false
}

func bindingNames() []string {
	s := make([]string, len(bindings))
	for i, b := range bindings {
		s[i] = b.Name
	}
	return s
}

// ConnInput is what decides a caller's connection limit towards one target.
type ConnInput struct {
	Client  string // dotnet | go | envoy | hikari | none
	Target  string // target tier name, for the explanation
	Binding string // the call's binding; netTcp and namedPipe bypass System.Net

	// The caller process (client "dotnet").
	DotNet     string // "2.0" … "4.8", or "core" (.NET Core / .NET 5+)
	ASPNet     bool   // hosted by ASP.NET (classic or integrated pipeline)
	AutoConfig bool   // processModel autoConfig (ASP.NET only)
	Cores      int    // processors the caller's runtime sees (N)

	MaxConnection     int  // the "*" connectionManagement entry; 0 = absent
	MaxConnectionHost int  // a host-specific entry for the target; 0 = absent
	CodeLimit         int  // ServicePointManager.DefaultConnectionLimit set in code; 0 = not set
	Loopback          bool // the target is on the caller's machine

	MaxConnsPerHost int // client "go": http.Transport.MaxConnsPerHost; 0 = unlimited
	MaxConnections  int // client "envoy": circuit breaker max_connections; 0 = default
	PoolSize        int // client "hikari": maximumPoolSize; 0 = default
}

// ResolveConnLimit decides the client-side connection limit of a call and
// says why, the way a person would check it. 0 means no limit.
func ResolveConnLimit(in ConnInput) (limit int, why string) {

	switch in.Client {
	case "go":
		if in.MaxConnsPerHost > 0 {
			return in.MaxConnsPerHost, fmt.Sprintf("%d: Go http.Transport MaxConnsPerHost", in.MaxConnsPerHost)
		}
		// dotnet.md §8: MaxConnsPerHost 0 = unlimited; MaxIdleConnsPerHost (2) only bounds idle connections.
		return 0, "unlimited: Go http.Transport MaxConnsPerHost = 0 (MaxIdleConnsPerHost 2 bounds only idle connections)"
	case "envoy":
		if in.MaxConnections > 0 {
			return in.MaxConnections, fmt.Sprintf("%d: Envoy circuit breaker max_connections", in.MaxConnections)
		}
		return envoyDefaultMax, fmt.Sprintf("%d: Envoy circuit breaker default max_connections", envoyDefaultMax) // dotnet.md §8
	case "hikari":
		if in.PoolSize > 0 {
			return in.PoolSize, fmt.Sprintf("%d: HikariCP maximumPoolSize", in.PoolSize)
		}
		return hikariDefaultPool, fmt.Sprintf("%d: HikariCP default maximumPoolSize", hikariDefaultPool) // dotnet.md §8
	case "dotnet":
		limit, why, _ = resolveDotNet(in)
		return limit, why
	}
	return 0, "unlimited: the client has no connection limit"
}

// connRule names the step of System.Net's order that decided a .NET
// call's limit (dotnet.md §1.1).
type connRule uint8

const (
	ruleCore       connRule = iota // .NET Core: no limit
	ruleBinding                    // netTcp, namedPipe: no ServicePoint
	ruleHost                       // a host-specific entry
	ruleCode                       // DefaultConnectionLimit set in code
	ruleAutoConfig                 // ASP.NET's autoConfig assignment
	ruleLoopback                   // the loopback exemption
	ruleStar                       // the '*' entry
	ruleDefault                    // the host's default (10 or 2)
)

const (
	envoyDefaultMax     = 1024 // dotnet.md §8: max_connections / max_pending_requests 1024
	hikariDefaultPool   = 10   // dotnet.md §8: maximumPoolSize 10
	hikariDefaultWait   = 30 * time.Second
	dotnetPlainDefault  = 2  // dotnet.md §1: DefaultPersistentConnectionLimit 2 (non-ASP.NET)
	dotnetASPNetDefault = 10 // dotnet.md §1: DefaultAspPersistentConnectionLimit 10 (every Framework version)
)

// resolveDotNet follows System.Net's order (dotnet.md §1.1): a host-specific
// entry, then DefaultConnectionLimit as the process last set it (the
// application's code after ASP.NET's autoConfig, which sets it at start-up
// and so overrides the '*' entry), then the loopback exemption (which only
// a host-specific entry or a set DefaultConnectionLimit defeats), then the
// '*' entry, then the default of the host.
func resolveDotNet(in ConnInput) (int, string, connRule) {
	if in.DotNet == "core" {
		// dotnet.md §6: the .NET Core WCF client builds an HttpClientHandler
		// without MaxConnectionsPerServer; ServicePointManager does not apply.
		return 0, "unlimited: the .NET Core WCF client (HttpClientHandler) sets no per-server limit", ruleCore
	}
	if in.Binding == "netTcp" || in.Binding == "namedPipe" {
		// dotnet.md §5: these transports do not use System.Net's ServicePoint;
		// netTcp's client maxConnections only sizes the idle pool.
		return 0, fmt.Sprintf("unlimited: %s does not use System.Net's per-host limit (maxConnections only sizes the idle pool)", in.Binding), ruleBinding
	}
	if in.MaxConnectionHost > 0 {
		// dotnet.md §1.1: a host-specific entry wins over DefaultConnectionLimit and autoConfig.
		return in.MaxConnectionHost, fmt.Sprintf("%d: host-specific maxconnection entry for %s", in.MaxConnectionHost, in.Target), ruleHost
	}
	if in.CodeLimit > 0 {
		return in.CodeLimit, fmt.Sprintf("%d: ServicePointManager.DefaultConnectionLimit set in code", in.CodeLimit), ruleCode
	}
	if in.ASPNet && in.AutoConfig {
		// dotnet.md §1.1, §2a: autoConfig assigns DefaultConnectionLimit,
		// which counts as a limit the user set: the loopback exemption no
		// longer applies.
		over := ""
		if in.MaxConnection > 0 {
			over = "; the '*' maxconnection entry is overridden"
		}
		if dotnetAtLeast(in.DotNet, "4.5") {
			return 0, fmt.Sprintf("unlimited: ASP.NET autoConfig on .NET %s (4.5+) lifts the limit%s", in.DotNet, over), ruleAutoConfig
		}
		n := 12 * in.Cores
		return n, fmt.Sprintf("%d: ASP.NET autoConfig on .NET %s sets 12 × %d CPUs%s", n, in.DotNet, in.Cores, over), ruleAutoConfig
	}
	if in.Loopback {
		// dotnet.md §1.3: loopback targets get Int32.MaxValue unless a
		// host-specific entry or an assignment to DefaultConnectionLimit set the limit.
		return 0, fmt.Sprintf("unlimited: %s is on the same machine (System.Net's loopback exemption; only a limit set in code or a host-specific entry applies)", in.Target), ruleLoopback
	}
	if in.MaxConnection > 0 {
		return in.MaxConnection, fmt.Sprintf("%d: the '*' maxconnection entry (no host-specific entry for %s)", in.MaxConnection, in.Target), ruleStar
	}
	if in.ASPNet {
		// dotnet.md §1.1: ServicePointManager.PersistentConnectionLimit is
		// 10 in an ASP.NET application domain, on 2.0–3.5 as on 4.x.
		return dotnetASPNetDefault, fmt.Sprintf("%d: System.Net default inside ASP.NET (.NET %s) without autoConfig; no maxconnection entry", dotnetASPNetDefault, orUnknown(in.DotNet)), ruleDefault
	}
	return dotnetPlainDefault, fmt.Sprintf("%d: System.Net default for a self-hosted process on .NET %s; no host-specific entry for %s",
		dotnetPlainDefault, orUnknown(in.DotNet), in.Target), ruleDefault
}

func orUnknown(v string) string {
	if v == "" {
		return "Framework"
	}
	return v
}

// dotnetVersions are the accepted values of a tier's dotnet key, in order.
var dotnetVersions = []string{"2.0", "3.0", "3.5", "4.0", "4.5", "4.6", "4.7", "4.8", "core"}

// dotnetAtLeast compares two .NET Framework versions; "core" is newest.
func dotnetAtLeast(v, min string) bool {
	vi, mi := -1, -1
	for i, s := range dotnetVersions {
		if s == v {
			vi = i
		}
		if s == min {
			mi = i
		}
	}
	return vi >= 0 && vi >= mi
}

// defaultCallTimeout is a client's own per-call timeout when none is given.
func defaultCallTimeout(client, binding string) (time.Duration, string) {
	switch client {
	case "dotnet":
		if binding == "http" {
			return 100 * time.Second, "HttpWebRequest.Timeout 100 s" // dotnet.md §1
		}
		return time.Minute, "WCF SendTimeout 1 min" // dotnet.md §5
	}
	// Go's http.Client.Timeout is 0 = none (dotnet.md §8); Envoy, HikariCP and
	// "none" get no call timeout of their own here.
	return 0, "none"
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
