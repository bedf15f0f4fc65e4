package format

import (
	"errors"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/topologies"
)

func mut(old, new string) string {
	if !strings.Contains(minimal, old) {
		panic("mut: " + old)
	}
	return strings.Replace(minimal, old, new, 1)
}

// minimal is a valid experiment the bad cases below break one way each.
const minimal = `name = "crack"
duration = "5m"

[load]
users = 10
think = "exp(1s)"

[[tier]]
name = "web"
preset = "aspnet-classic-net35"
cores = 8

  [[tier.step]]
  cpu = "exp(5ms)"
  [[tier.step]]
  call = "be"
  timeout = "20s"

[[tier]]
name = "be"
preset = "self-net35"
cores = 4

  [[tier.step]]
  cpu = "exp(10ms)"
`

// badCases are broken files and the exact errors LoadExperiment reports.
var badCases = []struct {
	name string
	file string
	want []string // a line ending in "…" matches as a prefix
}{
	{"malformed", "name = \"x\"\nduration = 20 s\n", []string{
		`crack.toml:2: TOML syntax: expected a top-level item to end with a newline, comment, or EOF, but got 's' instead`,
	}},
	{"unknown-key", mut("cores = 8", "cores = 8\ncoers = 2"), []string{
		"crack.toml:12: tier.web.coers: unknown key; did you mean tier.web.cores?",
	}},
	{"unknown-nested", mut("cores = 8", "cores = 8\n[tier.worker]\nmaxx = 3"), []string{
		"crack.toml:13: tier.web.worker.maxx: unknown key; did you mean tier.web.worker.max?",
	}},
	{"wrong-type", mut("cores = 8", `cores = "8"`), []string{
		"crack.toml:11: tier.web.cores: want an integer, got string \"8\"",
	}},
	{"zero-limit", mut("cores = 4", "cores = 4\nworker.max = 0"), []string{
		"crack.toml:23: tier.be.worker.max: must be > 0, got 0",
	}},
	{"unknown-tier", mut(`call = "be"`, `call = "bee"`), []string{
		"crack.toml:16: tier.web.step.2.call: unknown tier \"bee\" (tiers: web, be)",
	}},
	{"cycle", minimal + "  [[tier.step]]\n  call = \"web\"\n", []string{
		"crack.toml:27: tier.be.step.2.call: call cycle web → be → web (synchronous calls must not come back to a caller)",
	}},
	{"bad-sweep-key", minimal + "[sweep]\nkey = \"tier.web.coers\"\nvalues = [1,2]\n", []string{
		"crack.toml:27: sweep.key: unknown key \"tier.web.coers\"; did you mean \"tier.web.cores\"?",
	}},
	{"bad-variant-key", minimal + "[[variant]]\nname = \"v\"\nset = { \"tier.bee.cores\" = 2 }\n", []string{
		"crack.toml:28: variant \"v\".set: key \"tier.bee.cores\": no tier \"bee\" (tiers: web, be)",
	}},
	{"bad-dist", mut(`cpu = "exp(10ms)"`, `cpu = "expo(10ms)"`), []string{
		"crack.toml:25: tier.be.step.1.cpu: bad distribution \"expo(10ms)\": …",
	}},
	{"bad-duration", mut(`duration = "5m"`, `duration = "20 s"`), []string{
		"crack.toml:2: duration: bad duration \"20 s\": use Go duration syntax such as \"20s\", \"150ms\", \"2m\", \"1h30m\"",
	}},
	{"absurd-cores", mut("cores = 8", "cores = 2000"), []string{
		"crack.toml:11: tier.web.cores: must be ≤ 1024 cores (more is not a plausible setting), got 2000",
	}},
	{"absurd-users", mut("users = 10", "users = 2000000"), []string{
		"crack.toml:5: load.users: must be ≤ 1000000 users (more is not a plausible setting), got 2000000",
	}},
	{"absurd-duration", mut(`duration = "5m"`, `duration = "800h"`), []string{
		"crack.toml:2: duration: must be ≤ 720h (more is not a plausible setting), got 800h",
	}},
	{"absurd-threads", mut("cores = 4", "cores = 4\nio.max = 2000000"), []string{
		"crack.toml:23: tier.be.io.max: must be ≤ 1000000 threads (more is not a plausible setting), got 2000000",
	}},
	{"multi", mut("cores = 4", "cores = 0\nworker.min = -1\nasync = 1"), []string{
		"crack.toml:22: tier.be.cores: must be > 0, got 0",
		"crack.toml:23: tier.be.worker.min: must be ≥ 0, got -1",
		"crack.toml:24: tier.be.async: want true or false, got integer 1",
	}},
	{"variant-zero", minimal + "[[variant]]\nname = \"v\"\nset = { \"tier.be.worker.max\" = 1 }\n", []string{
		"crack.toml:28: variant \"v\": tier.be.worker.max: worker.min (4) must not exceed worker.max (1)",
	}},
	{"variant-ok-but-min", minimal + "[[variant]]\nname = \"v\"\nset = { \"tier.be.worker.min\" = 5000 }\n[[variant]]\nname = \"w\"\n", []string{
		"crack.toml:28: variant \"v\": tier.be.worker.min: worker.min (5000) must not exceed worker.max (1000)",
	}},
	{"sweep-bad-val", minimal + "[sweep]\nkey = \"tier.web.cores\"\nvalues = [1,2,0]\n", []string{
		"crack.toml:28: sweep.values[3]: tier.web.cores: must be > 0, got 0",
	}},
	{"sweep-min", minimal + "[sweep]\nkey = \"tier.be.worker.min\"\nfrom = 1\nto = 100000\nfactor = 10\n", []string{
		"crack.toml:28: sweep tier.be.worker.min = 10000: tier.be.worker.min: worker.min (10000) must not exceed worker.max (1000)",
		"crack.toml:28: sweep tier.be.worker.min = 100000: tier.be.worker.min: worker.min (100000) must not exceed worker.max (1000)",
	}},
	{"maxconn-go", mut(`timeout = "20s"`, "timeout = \"20s\"\nclient = \"go\"\nmaxconnection = 2"), []string{
		"crack.toml:19: tier.web.step.2.maxconnection: applies to client \"dotnet\"; this call's client is \"go\" (for Go use max_conns_per_host)",
	}},
	{"no-name", mut(`name = "be"`, ``), []string{
		"crack.toml:19: tier[2]: needs a name (name = \"web\")",
	}},
	{"dup", mut(`name = "be"`, `name = "web"`), []string{
		"crack.toml:20: tier.web: a second tier named \"web\"; tier names must be unique",
	}},
	{"enum", mut(`preset = "self-net35"`, `preset = "self-net5"`), []string{
		"crack.toml:21: tier.be.preset: unknown value \"self-net5\" (allowed: \"none\", \"self-net35\", \"self-net4\", \"aspnet-classic-net35\", \"iis7-net35\", \"iis7-net4\", \"tomcat\", \"go\")",
	}},
	{"enum-case", mut(`preset = "self-net35"`, `preset = "Self-Net35"`), []string{
		"crack.toml:21: tier.be.preset: unknown value \"Self-Net35\"; did you mean \"self-net35\"? (allowed: \"none\", \"self-net35\", \"self-net4\", \"aspnet-classic-net35\", \"iis7-net35\", \"iis7-net4\", \"tomcat\", \"go\")",
	}},
	{"call-key-on-cpu", mut(`cpu = "exp(10ms)"`, "cpu = \"exp(10ms)\"\ntimeout = \"1s\""), []string{
		"crack.toml:26: tier.be.step.1.timeout: applies only to call steps (this step is cpu)",
	}},
	{"two-actions", mut(`cpu = "exp(10ms)"`, "cpu = \"exp(10ms)\"\nwait = \"1s\""), []string{
		"crack.toml:26: tier.be.step.1: has both cpu and wait; give one action per step",
	}},
	{"lock", mut(`cpu = "exp(10ms)"`, "lock = \"c\""), []string{
		"crack.toml:25: tier.be.step.1.lock: lock \"c\" is never released (add a step unlock = \"c\")",
	}},
	{"no-users", mut("users = 10", ""), []string{
		"crack.toml:4: load.users: a closed load needs users = N or users_schedule = [{at = \"0s\", value = N}, ...]",
	}},
	{"topo-unknown", "topology = \"four-tier\"\n", []string{
		"crack.toml:1: topology: unknown topology \"four-tier\" (known: " + quoteList(topologies.Names()) + "; or give a path ending in .toml)",
	}},
	{"step-key-in-tier", mut("cores = 8", "cores = 8\ntimeout = \"3s\""), []string{
		"crack.toml:12: tier.web.timeout: unknown key; timeout is a step key: put it in a [[tier.step]], or use calls.timeout for every call of the tier",
	}},
	{"load-call-timeout", minimal + "[load.call]\ntimeout = \"1s\"\n", []string{
		"crack.toml:27: load.call.timeout: unknown key; the load client's timeout is load.timeout",
	}},
	{"warmup", mut(`duration = "5m"`, "duration = \"5m\"\nwarmup = \"10m\""), []string{
		"crack.toml:3: warmup: must be shorter than duration (5m0s), got 10m0s",
	}},
	{"desc-multiline", strings.Replace(minimal, `duration = "5m"`, "description = \"\"\"\nline\nline\n\"\"\"\nduration = \"5 m\"", 1), []string{
		"crack.toml:6: duration: bad duration \"5 m\": use Go duration syntax such as \"20s\", \"150ms\", \"2m\", \"1h30m\"",
	}},
	{"cache-setting-before-4.5", mut(`timeout = "20s"`, "timeout = \"20s\"\ncache_setting = \"always-on\""), []string{
		`crack.toml:18: tier.web.step.2.cache_setting: ClientBase<T>.CacheSetting is a .NET 4.5 property; the caller's dotnet is "3.5" (allowed before 4.5: "default")`,
	}},
	{"endpoints-shared-proxy", mut(`timeout = "20s"`, "timeout = \"20s\"\nendpoints = 40"), []string{
		`crack.toml:18: tier.web.step.2.endpoints: more than one endpoint applies to proxy "per-call" (a new proxy for each call's endpoint), not "shared"`,
	}},
	{"endpoint-pick-one-endpoint", mut(`timeout = "20s"`, "timeout = \"20s\"\nendpoint_pick = \"round-robin\""), []string{
		`crack.toml:18: tier.web.step.2.endpoint_pick: applies to a call with endpoints > 1; this one has 1`,
	}},
	{"proxy-construction", mut(`timeout = "20s"`, "timeout = \"20s\"\nproxy_construction = \"bindin\""), []string{
		`crack.toml:18: tier.web.step.2.proxy_construction: unknown value "bindin" (allowed: "config", "binding", "touched", "channel-factory")`,
	}},
	{"async-module-on-3.0", mut("cores = 8", "cores = 8\ndotnet = \"3.0\"\nadmission.module = \"async\""), []string{
		`crack.toml:13: tier.web.admission.module: the asynchronous WCF HTTP module came with .NET 3.5 SP1; this tier's dotnet is "3.0" (allowed: "sync")`,
	}},
	{"negotiation-sessionless", mut(`timeout = "20s"`, "timeout = \"20s\"\nbinding_negotiation_legs = 3"), []string{
		"crack.toml:18: tier.web.step.2.binding_negotiation_legs: needs a sessionful binding; basicHttp has no session (allowed with wsHttp, netTcp, namedPipe, or binding_sessionful = true)",
	}},
	{"close-timeout-alone", mut(`timeout = "20s"`, "timeout = \"20s\"\nbinding = \"wsHttp\"\nbinding_close_timeout = \"5s\""), []string{
		"crack.toml:19: tier.web.step.2.binding_close_timeout: is set but closing sends no message (set binding_close_message = true)",
	}},
	{"inline-steps", `[load]
users = 1
[[tier]]
name = "a"
step = [{cpu = "1ms"}, {call = "zz"}]
`, []string{
		"crack.toml:5: tier.a.step.2.call: unknown tier \"zz\" (tiers: a)",
	}},
}

func TestLoadBad(t *testing.T) {
	for _, tc := range badCases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadExperiment("crack.toml", []byte(tc.file), nil)
			if err == nil {
				t.Fatalf("no error; want:\n%s", strings.Join(tc.want, "\n"))
			}
			var le LoadErrors
			if !errors.As(err, &le) {
				t.Fatalf("error is %T, want LoadErrors", err)
			}
			got := strings.Split(err.Error(), "\n")
			ok := len(got) == len(tc.want)
			for i := 0; ok && i < len(got); i++ {
				if p, cut := strings.CutSuffix(tc.want[i], "…"); cut {
					ok = strings.HasPrefix(got[i], p)
				} else {
					ok = got[i] == tc.want[i]
				}
			}
			if !ok {
				t.Errorf("got:\n%s\nwant:\n%s", err, strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestMinimalLoads(t *testing.T) {
	if _, err := LoadExperiment("crack.toml", []byte(minimal), nil); err != nil {
		t.Fatal(err)
	}
}
