package format

import (
	"errors"
	"github.com/tsim-dev/tsim/model"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/sim"
)

var parseOptionsNone *files

// loadTopo loads a one-scenario file and returns its topology.
func loadTopo(t *testing.T, file string) model.Topology {
	t.Helper()
	x, err := LoadExperiment("test.toml", []byte(file), nil)
	if err != nil {
		t.Fatalf("LoadExperiment:\n%v", err)
	}
	sc, err := x.Scenario(0)
	if err != nil {
		t.Fatalf("Scenario(0):\n%v", err)
	}
	return sc.Topology
}

func TestPipelineExperiment(t *testing.T) {
	data, err := os.ReadFile("../experiments/pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	x, err := LoadExperiment("pipeline.toml", data, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	if x.Name != "pipeline" || x.Seed != 1 || x.Replications != 1 || x.NumScenarios() != 1 ||
		!reflect.DeepEqual(x.Variants, []string{"base"}) || len(x.Sweep) != 0 {
		t.Fatalf("experiment %+v", x)
	}
	sc, err := x.Scenario(0)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Index != 0 || sc.Variant != "base" || len(sc.Params) != 0 {
		t.Errorf("scenario %+v", sc)
	}
	topo := sc.Topology
	if topo.Duration != time.Hour || topo.Warmup != 0 || topo.SampleEvery != time.Second {
		t.Errorf("duration %v warmup %v sample %v", topo.Duration, topo.Warmup, topo.SampleEvery)
	}
	l := topo.Load
	if l.Kind != model.LoadClosed || !reflect.DeepEqual(l.Users, model.Schedule{{At: 0, Value: 100}}) || l.Think.Mean() != time.Second {
		t.Errorf("load %+v", l)
	}
	if l.Call.Target != 0 || l.Call.Timeout != 20*time.Second || l.Call.Conn.Limit != 0 ||
		l.Call.Binding != (model.Binding{Name: "none"}) || l.Call.Network != (model.Network{}) {
		t.Errorf("load call %+v", l.Call)
	}
	if len(topo.Tiers) != 2 {
		t.Fatalf("%d tiers", len(topo.Tiers))
	}
	fe, be := topo.Tiers[0], topo.Tiers[1]
	if fe.Name != "fe" || fe.Worker.Min != 96 || fe.Worker.Max != 96 || fe.Worker.Injection != model.InjectNone ||
		fe.Admission.Kind != model.AdmitNone || fe.WCF != nil || fe.Async || len(fe.Steps) != 1 {
		t.Errorf("fe %+v", fe)
	}
	c := fe.Steps[0].Call
	if fe.Steps[0].Kind != model.StepCall || c.Target != 1 || c.Timeout != 0 || c.Conn.Limit != 2 ||
		c.Conn.MaxPending != 0 || c.Conn.WaitTimeout != 0 || c.Binding != (model.Binding{Name: "none"}) ||
		c.Network != (model.Network{}) || c.Retry.Attempts != 1 || c.Proxy.Kind != model.ProxyShared {
		t.Errorf("fe → be call %+v", *c)
	}
	if c.Conn.Resolution != "2: Go http.Transport MaxConnsPerHost" {
		t.Errorf("resolution %q", c.Conn.Resolution)
	}
	if be.Name != "be" || be.Cores != 8 || be.Admission.Kind != model.AdmitNone || len(be.Steps) != 2 ||
		be.Steps[0].Kind != model.StepCPU || be.Steps[0].Demand.Mean() != 50*time.Millisecond ||
		be.Steps[1].Kind != model.StepWait || be.Steps[1].Demand.Mean() != 100*time.Millisecond {
		t.Errorf("be %+v", be)
	}
	if be.CostMultiplier != 1 {
		t.Errorf("be cost multiplier %v", be.CostMultiplier)
	}
}

func TestThreeTierTopology(t *testing.T) {
	topo := loadTopo(t, `topology = "three-tier"`)
	if len(topo.Tiers) != 3 || topo.Tiers[0].Name != "web" || topo.Tiers[1].Name != "service" || topo.Tiers[2].Name != "backend" {
		t.Fatalf("tiers %+v", topo.Tiers)
	}
	web, svc := topo.Tiers[0], topo.Tiers[1]
	call := web.Steps[1].Call
	if call.Target != 1 || call.Timeout != 20*time.Second || call.Conn.Limit != 96 ||
		call.Conn.Resolution != "96: ASP.NET autoConfig on .NET 3.5 sets 12 × 8 CPUs" || call.ReplyKB != 20 {
		t.Errorf("web → service %+v", *call)
	}
	if svc.WCF == nil || noListener(svc.WCF) != (model.WCF{MaxCalls: 100, MaxSessions: 10, MaxInstances: 200, Instancing: model.SingleInstance, Concurrency: model.ConcurrencyMultiple, MaxPendingSessions: 128, PendingSessionTimeout: 2 * time.Minute}) {
		t.Errorf("service wcf %+v", svc.WCF)
	}
	if l := svc.Steps[1].Call.Conn; l.Limit != 0 || !strings.HasPrefix(l.Resolution, "unlimited: netTcp") {
		t.Errorf("service → backend conn %+v", l)
	}
	if topo.Load.Call.Target != 0 || topo.Load.Users.Max() != 100 {
		t.Errorf("load %+v", topo.Load)
	}
}

// An experiment overrides a topology's keys by tier name, replaces steps
// when it gives them, and adds tiers.
func TestTopologyOverride(t *testing.T) {
	topo := loadTopo(t, `topology = "three-tier"
duration = "2m"
[load]
users = 60
[[tier]]
name = "web"
  [tier.calls]
  maxconnection_host = 2
[[tier]]
name = "backend"
  [[tier.step]]
  call = "db"
  client = "hikari"
[[tier]]
name = "db"
  [[tier.step]]
  wait = "exp(5ms)"
`)
	if topo.Duration != 2*time.Minute || topo.Load.Users.Max() != 60 || topo.Load.Think.Mean() != time.Second {
		t.Errorf("top %v load %+v", topo.Duration, topo.Load)
	}
	if c := topo.Tiers[0].Steps[1].Call.Conn; c.Limit != 2 || c.Resolution != "2: host-specific maxconnection entry for service" {
		t.Errorf("web conn %+v", c)
	}
	if topo.Tiers[0].Cores != 8 || topo.Tiers[0].Admission.MinFreeThreads != 704 {
		t.Errorf("web lost its topology keys: %+v", topo.Tiers[0])
	}
	be := topo.Tiers[2]
	if len(be.Steps) != 1 || be.Steps[0].Call.Target != 3 || be.Steps[0].Call.Conn.Limit != 10 ||
		be.Steps[0].Call.Conn.WaitTimeout != 30*time.Second {
		t.Errorf("backend %+v", be.Steps)
	}
	if len(topo.Tiers) != 4 {
		t.Errorf("%d tiers", len(topo.Tiers))
	}
}

func TestIncludeByPath(t *testing.T) {
	files := map[string]string{
		"topo/two.toml": "[[tier]]\nname = \"a\"\ncores = 2\n  [[tier.step]]\n  cpu = \"1ms\"\n  bogus = 1\n",
	}
	read := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, errors.New("no such file")
	}
	_, err := LoadExperiment("x.toml", []byte("topology = \"topo/two.toml\"\n[load]\nusers = 1\n"), read)
	want := `topo/two.toml:6: tier.a.step.1.bogus: unknown key`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want prefix %q", err, want)
	}
	_, err = LoadExperiment("x.toml", []byte("topology = \"topo/none.toml\"\n"), read)
	if err == nil || !strings.HasPrefix(err.Error(), `x.toml:1: topology: cannot read "topo/none.toml": no such file`) {
		t.Errorf("got %v", err)
	}
	_, err = LoadExperiment("x.toml", []byte("topology = \"topo/none.toml\"\n"), nil)
	if err == nil || !strings.HasPrefix(err.Error(), `x.toml:1: topology: cannot read "topo/none.toml": this loader has no file access`) {
		t.Errorf("got %v", err)
	}
}

const sweepFile = `name = "s"
replications = 3
seed = 7
[load]
users = 10
[[tier]]
name = "web"
preset = "aspnet-classic-net35"
cores = 8
worker.max = 1000    # explicit: not rescaled with cores
  [[tier.step]]
  call = "be"
[[tier]]
name = "be"
preset = "self-net35"
  [[tier.step]]
  cpu = "exp(5ms)"

[[variant]]
name = "misconfigured"
description = "the '*' entry is ignored"
set = { "tier.web.call.be.maxconnection_host" = 2 }
[[variant]]
name = "fixed"
set = { "tier.web.call.be.maxconnection_host" = 96, "duration" = "10m" }

[[sweep.axis]]
key = "tier.web.cores"
values = [2, 4]
[[sweep.axis]]
key = "load.users"
from = 10
to = 40
step = 10
`

func TestVariantsAndSweep(t *testing.T) {
	x, err := LoadExperiment("s.toml", []byte(sweepFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	if x.Seed != 7 || x.Replications != 3 || !reflect.DeepEqual(x.Variants, []string{"misconfigured", "fixed"}) {
		t.Errorf("experiment %+v", x)
	}
	wantAxes := []SweepAxis{{"tier.web.cores", []string{"2", "4"}}, {"load.users", []string{"10", "20", "30", "40"}}}
	if !reflect.DeepEqual(x.Sweep, wantAxes) {
		t.Errorf("sweep %+v", x.Sweep)
	}
	if x.NumScenarios() != 16 {
		t.Fatalf("%d scenarios", x.NumScenarios())
	}
	if x.VariantDescription(0) != "the '*' entry is ignored" {
		t.Errorf("description %q", x.VariantDescription(0))
	}
	for i := 0; i < 16; i++ {
		sc, err := x.Scenario(i)
		if err != nil {
			t.Fatal(err)
		}
		v, cores, users := i/8, []int{2, 4}[i%8/4], 10*(i%4+1)
		if sc.Index != i || sc.Variant != x.Variants[v] ||
			!reflect.DeepEqual(sc.Params, []Param{{Key: "tier.web.cores", Value: []string{"2", "4"}[i%8/4]}, {Key: "load.users", Value: []string{"10", "20", "30", "40"}[i%4]}}) {
			t.Errorf("scenario %d: %+v", i, sc)
		}
		web := sc.Topology.Tiers[0]
		if web.Cores != cores || web.Worker.Max != 1000 || web.Worker.Min != cores ||
			web.IO.Max != 100*cores || web.Admission.MinFreeThreads != 88*cores {
			t.Errorf("scenario %d: presets not rescaled to %d cores: %+v", i, cores, web)
		}
		if sc.Topology.Load.Users.Max() != float64(users) {
			t.Errorf("scenario %d: users %v", i, sc.Topology.Load.Users)
		}
		wantLimit, wantDur := 2, 5*time.Minute
		if v == 1 {
			wantLimit, wantDur = 96, 10*time.Minute
		}
		if l := web.Steps[0].Call.Conn.Limit; l != wantLimit || sc.Topology.Duration != wantDur {
			t.Errorf("scenario %d: limit %d duration %v", i, l, sc.Topology.Duration)
		}
	}
	if _, err := x.Scenario(16); err == nil {
		t.Error("Scenario(16) did not fail")
	}
}

func TestSweepRanges(t *testing.T) {
	base := "[load]\nusers = 1\n[[tier]]\nname = \"a\"\npreset = \"self-net4\"\n  [[tier.step]]\n  call = \"b\"\n[[tier]]\nname = \"b\"\n  [[tier.step]]\n  wait = \"1ms\"\n"
	tests := []struct{ sweep, want string }{
		{"key = \"tier.a.call.b.maxconnection_host\"\nfrom = 1\nto = 128\nfactor = 2", "1 2 4 8 16 32 64 128"},
		{"key = \"tier.a.call.b.maxconnection_host\"\nfrom = 1\nto = 10\nfactor = 1.5", "1 2 3 5 8"},
		{"key = \"tier.a.step.1.timeout\"\nfrom = \"500ms\"\nto = \"2s\"\nstep = \"500ms\"", "500ms 1s 1.5s 2s"},
		{"key = \"tier.a.worker.gate_delay\"\nvalues = [\"100ms\", \"1s\"]", "100ms 1s"},
		{"key = \"tier.a.cost_multiplier\"\nfrom = 0.5\nto = 1.5\nstep = 0.25", "0.5 0.75 1 1.25 1.5"},
		{"key = \"load.think\"\nvalues = [\"exp(1s)\", \"exp(2s)\"]", "exp(1s) exp(2s)"},
	}
	for _, tc := range tests {
		x, err := LoadExperiment("r.toml", []byte(base+"[sweep]\n"+tc.sweep+"\n"), nil)
		if err != nil {
			t.Errorf("%s:\n%v", tc.sweep, err)
			continue
		}
		if got := strings.Join(x.Sweep[0].Values, " "); got != tc.want {
			t.Errorf("%s: values %s, want %s", tc.sweep, got, tc.want)
		}
		for i := 0; i < x.NumScenarios(); i++ {
			if _, err := x.Scenario(i); err != nil {
				t.Errorf("%s: scenario %d: %v", tc.sweep, i, err)
			}
		}
	}
}

func TestLoadKinds(t *testing.T) {
	topo := loadTopo(t, `duration = "10m"
warmup = "auto"
[load]
rate = 50
interarrival = "const"
timeout = "3s"
[load.call]
client = "envoy"
max_pending = 5
[[tier]]
name = "a"
  [[tier.step]]
  cpu = "1ms"
`)
	l := topo.Load
	if topo.Warmup != -1 || l.Kind != model.LoadOpen || !reflect.DeepEqual(l.Rate, model.Schedule{{At: 0, Value: 50}}) ||
		l.Interarrival.IsZero() || l.Call.Timeout != 3*time.Second ||
		l.Call.Conn.Limit != 1024 || l.Call.Conn.MaxPending != 5 || l.Call.Binding.Name != "http" {
		t.Errorf("load %+v", l)
	}
	topo = loadTopo(t, `[load]
users_schedule = [{at = "0s", value = 60}, {at = "90s", value = 60}, {at = "90s", value = 100}]
[[tier]]
name = "a"
`)
	want := model.Schedule{{At: 0, Value: 60}, {At: 90 * time.Second, Value: 60}, {At: 90 * time.Second, Value: 100}}
	if !reflect.DeepEqual(topo.Load.Users, want) || topo.Load.Kind != model.LoadClosed || !topo.Load.Think.IsZero() {
		t.Errorf("users %+v", topo.Load)
	}
}

func TestLocksAndCalls(t *testing.T) {
	topo := loadTopo(t, `[load]
users = 1
[[tier]]
name = "a"
preset = "self-net35"
cores = 2
async = true
memory_per_request_kb = 64
[tier.calls]
maxconnection = 8
proxy = "pool-wait"
[[tier.step]]
lock = "cache"
[[tier.step]]
call = "b"
retry = { attempts = 3, backoff = "exp(1s)", jitter = 0.5 }
binding = "wsHttp"
binding_cpu_base = "1ms"
loopback = true
[[tier.step]]
unlock = "cache"
[[tier.step]]
lock = "other"
[[tier.step]]
unlock = "other"
[[tier]]
name = "b"
`)
	a := topo.Tiers[0]
	if !a.Async || a.MemoryPerRequest != 64*1024 {
		t.Errorf("tier %+v", a)
	}
	if s := a.Steps; s[0].Kind != model.StepLock || s[0].Lock != 0 || s[0].LockName != "cache" ||
		s[2].Kind != model.StepUnlock || s[2].Lock != 0 || s[3].Lock != 1 || s[4].LockName != "other" {
		t.Errorf("locks %+v", s)
	}
	c := a.Steps[1].Call
	if c.Retry.Attempts != 3 || c.Retry.Backoff.Mean() != time.Second || c.Retry.Jitter != 0.5 {
		t.Errorf("retry %+v", c.Retry)
	}
	if c.Binding.Name != "wsHttp" || c.Binding.CPUBase != time.Millisecond || !c.Binding.Sessionful || c.Binding.SessionRoundTrips != 2 {
		t.Errorf("binding %+v", c.Binding)
	}
	// loopback: unlimited despite the '*' entry; no wire.
	if c.Conn.Limit != 0 || c.Network != (model.Network{}) || c.Proxy.Kind != model.ProxyPoolWait || c.Proxy.PoolSize != 10 {
		t.Errorf("call %+v", *c)
	}
}

// Errors come with the line of the key that causes them, also inside
// variants and multi-line strings, and Load reports all of them.
func TestManyErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString("[load]\nusers = 1\n")
	for i := 0; i < 30; i++ {
		b.WriteString("[[tier]]\nname = \"t" + string(rune('a'+i%26)) + string(rune('a'+i/26)) + "\"\ncores = 0\n")
	}
	_, err := LoadExperiment("m.toml", []byte(b.String()), nil)
	var le LoadErrors
	if !errors.As(err, &le) || len(le) != maxErrors+1 || le[0].Line != 5 || le[maxErrors].Msg != "and 10 more errors" {
		t.Fatalf("got %d errors:\n%v", len(le), err)
	}
}

func TestDeterministic(t *testing.T) {
	a, err1 := LoadExperiment("s.toml", []byte(sweepFile), nil)
	b, err2 := LoadExperiment("s.toml", []byte(sweepFile), nil)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	for i := 0; i < a.NumScenarios(); i++ {
		sa, _ := a.Scenario(i)
		sb, _ := b.Scenario(i)
		if !reflect.DeepEqual(sa, sb) {
			t.Fatalf("scenario %d differs", i)
		}
	}
}

func TestBadDistQuotesForms(t *testing.T) {
	_, err := LoadExperiment("d.toml", []byte(mut(`cpu = "exp(10ms)"`, `cpu = "expo(10ms)"`)), nil)
	if err == nil || !strings.Contains(err.Error(), sim.DistForms) {
		t.Errorf("got %v", err)
	}
}

func TestKeys(t *testing.T) {
	var x Experiment
	keys := x.Keys()
	for _, k := range []string{"duration", "load.users", "load.call.maxconnection", "tier.<name>.worker.max",
		"tier.<name>.wcf.max_calls", "tier.<name>.calls.maxconnection", "tier.<name>.step.<n>.cpu",
		"tier.<name>.call.<target>.retry.attempts"} {
		if !contains(keys, k) {
			t.Errorf("Keys() lacks %s", k)
		}
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			t.Errorf("Keys() lists %s twice", k)
		}
		seen[k] = true
	}
}

// A combination of sweep values that are each fine alone fails only when
// its scenario is built; the error names the point.
func TestScenarioCombinationError(t *testing.T) {
	file := `[load]
users = 1
[[tier]]
name = "web"
preset = "aspnet-classic-net35"
[[sweep.axis]]
key = "tier.web.cores"
values = [1, 2]
[[sweep.axis]]
key = "tier.web.worker.max"
values = [1000, 100]
`
	x, err := LoadExperiment("c.toml", []byte(file), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := x.Scenario(i); err != nil {
			t.Errorf("scenario %d: %v", i, err)
		}
	}
	_, err = x.Scenario(3)
	want := "c.toml:11: sweep tier.web.cores = 2, sweep tier.web.worker.max = 100: tier.web.worker.max: admission.min_free_threads (176) must be below worker.max (100), or no request could ever run"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestVariantSameSettingTwice(t *testing.T) {
	_, err := LoadExperiment("v.toml", []byte(minimal+`[[variant]]
name = "v"
set = { "tier.web.call.be.timeout" = "1s", "tier.web.step.2.timeout" = "2s" }
`), nil)
	want := `v.toml:28: variant "v".set: tier.web.call.be.timeout and tier.web.step.2.timeout name the same setting; give it once`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}
