package dotnetconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// conf wraps sections in a configuration file.
func conf(body string) string {
	return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<configuration>\n" + body + "\n</configuration>\n"
}

// file makes a File whose kind comes from its name.
func file(name, body string) File {
	k, ok := KindOf(name)
	if !ok {
		panic("no kind for " + name)
	}
	return File{Name: name, Kind: k, Data: []byte(conf(body))}
}

func opts(dotnet string, cores int) Options {
	return Options{DotNet: dotnet, Cores: cores, MaxConcurrentRequestsPerCPU: -1}
}

func mustResolve(t *testing.T, o Options, files ...File) *Report {
	t.Helper()
	r, err := Resolve(files, o)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	// Every report's skeleton must load and agree with it.
	if _, err := r.Skeleton(); err != nil {
		t.Fatalf("Skeleton: %v", err)
	}
	return r
}

// row finds the first row whose setting is s.
func row(t *testing.T, r *Report, s string) Row {
	t.Helper()
	for _, row := range r.Rows {
		if row.Setting == s {
			return row
		}
	}
	var names []string
	for _, row := range r.Rows {
		names = append(names, row.Setting)
	}
	t.Fatalf("no row %q (rows: %s)", s, strings.Join(names, "; "))
	return Row{}
}

func warned(r *Report, substr string) *Warning {
	for i := range r.Warnings {
		if strings.Contains(r.Warnings[i].Msg, substr) {
			return &r.Warnings[i]
		}
	}
	return nil
}

func warnings(r *Report) string {
	var s []string
	for _, w := range r.Warnings {
		s = append(s, w.String())
	}
	return strings.Join(s, "\n")
}

// client is a web.config fragment with one basicHttp client endpoint.
const client = `<system.serviceModel><client>
  <endpoint name="be" address="http://be/Service.svc" binding="basicHttpBinding" contract="IService"/>
</client></system.serviceModel>`

// The story: the maxconnection entry in configSections is ignored, and
// without autoConfig the '*' entry machine.config holds (2) applies.
func TestCrackThrottling(t *testing.T) {
	files, err := ReadArgs([]string{"testdata/crack"})
	if err != nil {
		t.Fatal(err)
	}
	r := mustResolve(t, opts("3.5", 8), files...)
	w := warned(r, "ignored: not inside system.net/connectionManagement")
	if w == nil {
		t.Fatalf("no warning about the misplaced entry:\n%s", warnings(r))
	}
	if w.File != filepath.Join("testdata", "crack", "machine.config") || w.Line != 21 {
		t.Errorf("warning at %s:%d, want testdata/crack/machine.config:21", w.File, w.Line)
	}
	if !strings.Contains(w.Msg, `maxconnection="96"`) || !strings.Contains(w.Msg, "configSections") {
		t.Errorf("warning %q does not say what and where", w.Msg)
	}
	if len(r.Calls) != 1 {
		t.Fatalf("%d calls, want 1", len(r.Calls))
	}
	c := r.Calls[0]
	if c.Limit != 2 || !strings.Contains(c.Resolution, "'*' maxconnection entry") {
		t.Errorf("web→service limit %d (%s), want 2 from the '*' entry", c.Limit, c.Resolution)
	}
	if c.Timeout != 20*time.Second || c.Binding != "basicHttp-binary" {
		t.Errorf("call: timeout %v binding %s, want 20s basicHttp-binary", c.Timeout, c.Binding)
	}
	if r.Preset != "aspnet-classic-net35" || r.Host != "aspnet-classic" {
		t.Errorf("preset %s host %s", r.Preset, r.Host)
	}
	for s, want := range map[string]string{
		"processModel autoConfig":       "false",
		"processModel maxWorkerThreads": "800",
		"httpRuntime minFreeThreads":    "704",
		`connectionManagement "*"`:      "2",
	} {
		if got := row(t, r, s).Value; got != want {
			t.Errorf("%s = %s, want %s", s, got, want)
		}
	}
}

// The same machine.config with the entry where it belongs.
func TestCrackFixed(t *testing.T) {
	data, err := os.ReadFile("testdata/crack/machine.config")
	if err != nil {
		t.Fatal(err)
	}
	fixed := strings.Replace(string(data), `<add address="*" maxconnection="2" />`, `<add address="*" maxconnection="96" />`, 1)
	web, err := os.ReadFile("testdata/crack/web.config")
	if err != nil {
		t.Fatal(err)
	}
	files := []File{{Name: "machine.config", Kind: KindMachine, Data: []byte(fixed)}, {Name: "web.config", Kind: KindWeb, Data: web}}
	r := mustResolve(t, opts("3.5", 8), files...)
	if c := r.Calls[0]; c.Limit != 96 || !strings.Contains(c.Resolution, "'*' maxconnection entry") {
		t.Errorf("limit %d (%s), want 96 from the '*' entry", c.Limit, c.Resolution)
	}
	// Only the misplaced copy in configSections is left to warn about.
	if n := len(r.Warnings); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, warnings(r))
	}
}

// TestConnectionLimits covers system.net/connectionManagement with every
// .NET version tsim has presets for, and each rule of the resolution.
func TestConnectionLimits(t *testing.T) {
	star := func(n int) string {
		return fmt.Sprintf(`<system.net><connectionManagement><add address="*" maxconnection="%d"/></connectionManagement></system.net>`, n)
	}
	auto := func(on bool) string {
		return fmt.Sprintf(`<system.web><processModel autoConfig="%v"/></system.web>`, on)
	}
	for _, tc := range []struct {
		name     string
		dotnet   string
		host     string
		files    []File
		limit    int
		why      string // substring of the resolution
		warning  string // substring of a warning, if any
		hostWant int
	}{
		{"self 3.5 default", "3.5", "", []File{file("app.exe.config", client)}, 2, "self-hosted process on .NET 3.5", "", 0},
		{"self 4.0 default", "4.0", "", []File{file("app.exe.config", client)}, 2, "self-hosted", "", 0},
		{"self 3.5 star", "3.5", "", []File{file("machine.config", star(40)), file("app.exe.config", client)}, 40, "'*' maxconnection", "", 0},
		{"self 4.8 star in app", "4.8", "", []File{file("app.exe.config", star(12)+client)}, 12, "'*'", "", 0},
		{"aspnet 3.5 autoConfig", "3.5", "", []File{file("machine.config", auto(true)), file("web.config", client)}, 96, "12 × 8", "", 0},
		{"aspnet 3.5 autoConfig overrides star", "3.5", "", []File{file("machine.config", auto(true)+star(4)), file("web.config", client)}, 96, "overridden", "has no effect: ASP.NET's autoConfig", 0},
		{"aspnet 4.0 autoConfig", "4.0", "", []File{file("machine.config", auto(true)), file("web.config", client)}, 96, "12 × 8", "", 0},
		{"aspnet 4.5 autoConfig", "4.5", "", []File{file("machine.config", auto(true)), file("web.config", client)}, 0, "4.5+", "", 0},
		{"aspnet 4.8 no machine.config", "4.8", "", []File{file("web.config", client)}, 0, "4.5+", "", 0},
		{"aspnet 3.5 no machine.config", "3.5", "", []File{file("web.config", client)}, 96, "autoConfig", "", 0},
		{"aspnet 3.5 no autoConfig", "3.5", "", []File{file("machine.config", auto(false)), file("web.config", client)}, 10, "without autoConfig", "", 0},
		{"aspnet 2.0 no autoConfig", "2.0", "", []File{file("machine.config", auto(false)), file("web.config", client)}, 10, "without autoConfig", "", 0},
		{"aspnet 4.0 no autoConfig", "4.0", "aspnet-classic", []File{file("machine.config", auto(false)), file("web.config", client)}, 10, "without autoConfig", "", 0},
		{"aspnet 3.5 machine.config without processModel", "3.5", "", []File{file("machine.config", ""), file("web.config", client)}, 10, "without autoConfig", "", 0},
		{"host entry beats autoConfig", "3.5", "", []File{file("machine.config", auto(true)), file("web.config",
			`<system.net><connectionManagement><add address="http://be" maxconnection="3"/></connectionManagement></system.net>`+client)}, 3, "host-specific", "", 3},
		{"host entry with port", "3.5", "", []File{file("app.exe.config",
			`<system.net><connectionManagement><add address="http://be:8080" maxconnection="7"/></connectionManagement></system.net>`+
				`<system.serviceModel><client><endpoint address="http://be:8080/s" binding="basicHttpBinding" contract="I"/></client></system.serviceModel>`)}, 7, "host-specific", "", 7},
		{"host entry never matches", "3.5", "", []File{file("app.exe.config",
			`<system.net><connectionManagement><add address="http://BE:80/" maxconnection="50"/></connectionManagement></system.net>`+client)}, 2, "self-hosted", `never matches: System.Net looks the host up as "http://be"`, 0},
		{"clear in app.config", "3.5", "", []File{file("machine.config", star(40)), file("app.exe.config",
			`<system.net><connectionManagement><clear/></connectionManagement></system.net>`+client)}, 2, "self-hosted", "", 0},
		{"remove in app.config", "3.5", "", []File{file("machine.config", star(40)), file("app.exe.config",
			`<system.net><connectionManagement><remove address="*"/></connectionManagement></system.net>`+client)}, 2, "self-hosted", "", 0},
		{"later file overrides", "3.5", "", []File{file("machine.config", star(40)), file("app.exe.config", star(8)+client)}, 8, "'*'", "", 0},
		{"star below 1 ignored", "3.5", "", []File{file("app.exe.config", star(0)+client)}, 2, "self-hosted", "System.Net ignores a default below 1", 0},
		{"star without maxconnection", "3.5", "", []File{file("app.exe.config",
			`<system.net><connectionManagement><add address="*"/></connectionManagement></system.net>`+client)}, 1, "'*'", "", 0},
		{"directly under system.net", "3.5", "", []File{file("machine.config", auto(false)), file("web.config",
			`<system.net><add address="*" maxconnection="96"/></system.net>`+client)}, 10, "without autoConfig", "ignored: not inside system.net/connectionManagement (it is in <system.net>)", 0},
		{"in system.web", "3.5", "", []File{file("machine.config", auto(false)), file("web.config",
			`<system.web><connectionManagement><add address="*" maxconnection="96"/></connectionManagement></system.web>`+client)}, 10, "without autoConfig", "ignored: not inside system.net/connectionManagement", 0},
		{"case slip", "3.5", "", []File{file("app.exe.config",
			`<system.net><connectionmanagement><add address="*" maxconnection="96"/></connectionmanagement></system.net>`+client)}, 2, "self-hosted", "names are case-sensitive", 0},
		{"loopback", "3.5", "", []File{file("app.exe.config", star(2)+
			`<system.serviceModel><client><endpoint address="http://localhost:8000/s" binding="basicHttpBinding" contract="I"/></client></system.serviceModel>`)}, 0, "same machine", "", 0},
		{"netTcp bypasses System.Net", "3.5", "", []File{file("app.exe.config", star(2)+
			`<system.serviceModel><client><endpoint address="net.tcp://be:808/s" binding="netTcpBinding" contract="I"/></client></system.serviceModel>`)}, 0, "netTcp", "", 0},
		{"location dot applies", "3.5", "", []File{file("app.exe.config",
			`<location path="."><system.net><connectionManagement><add address="*" maxconnection="5"/></connectionManagement></system.net></location>`+client)}, 5, "'*'", "", 0},
		{"location path ignored", "3.5", "", []File{file("app.exe.config",
			`<location path="admin"><system.net><connectionManagement><add address="*" maxconnection="5"/></connectionManagement></system.net></location>`+client)}, 2, "self-hosted", `<location path="admin"> ignored`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(tc.dotnet, 8)
			o.Host = tc.host
			r := mustResolve(t, o, tc.files...)
			if len(r.Calls) != 1 {
				t.Fatalf("%d calls", len(r.Calls))
			}
			c := r.Calls[0]
			if c.Limit != tc.limit || !strings.Contains(c.Resolution, tc.why) {
				t.Errorf("limit %d (%s), want %d (…%s…)", c.Limit, c.Resolution, tc.limit, tc.why)
			}
			if c.MaxConnectionHost != tc.hostWant {
				t.Errorf("host entry %d, want %d", c.MaxConnectionHost, tc.hostWant)
			}
			if tc.warning != "" && warned(r, tc.warning) == nil {
				t.Errorf("no warning %q:\n%s", tc.warning, warnings(r))
			}
			if tc.warning == "" && len(r.Warnings) > 0 {
				t.Errorf("unexpected warnings:\n%s", warnings(r))
			}
		})
	}
}

// TestASPNet covers processModel, httpRuntime, compilation and
// applicationPool (and the registry value) per version and host.
func TestASPNet(t *testing.T) {
	web := file("web.config", "")
	pm := func(attrs string) File {
		return file("machine.config", `<system.web><processModel `+attrs+`/></system.web>`)
	}
	type want map[string]string // row → value
	for _, tc := range []struct {
		name    string
		dotnet  string
		host    string
		cores   int
		mcrpc   int
		files   []File
		want    want
		preset  string
		warning string
	}{
		{"classic 3.5 autoConfig", "3.5", "", 4, -1, []File{pm(`autoConfig="true"`), web}, want{
			"processModel maxWorkerThreads":          "400",
			"processModel maxIoThreads":              "400",
			"processModel minWorkerThreads":          "4",
			"httpRuntime minFreeThreads":             "352",
			"httpRuntime minLocalRequestFreeThreads": "304",
			"httpRuntime appRequestQueueLimit":       "5000",
			"httpRuntime executionTimeout":           "1m50s",
			"processModel clientConnectedCheck":      "5s",
		}, "aspnet-classic-net35", ""},
		{"classic autoConfig ignores explicit", "3.5", "", 2, -1, []File{pm(`autoConfig="true" maxWorkerThreads="20"`),
			file("web.config", `<system.web><httpRuntime minFreeThreads="8"/></system.web>`)}, want{
			"processModel maxWorkerThreads": "200",
			"httpRuntime minFreeThreads":    "176",
		}, "aspnet-classic-net35", `maxWorkerThreads has no effect: autoConfig="true"`},
		{"classic manual", "3.5", "", 2, -1, []File{pm(`autoConfig="false" maxWorkerThreads="50" maxIoThreads="60" minWorkerThreads="10" clientConnectedCheck="00:00:30"`),
			file("web.config", `<system.web><httpRuntime minFreeThreads="20" appRequestQueueLimit="100" executionTimeout="300"/></system.web>`)}, want{
			"processModel maxWorkerThreads":          "100",
			"processModel maxIoThreads":              "120",
			"processModel minWorkerThreads":          "20",
			"httpRuntime minFreeThreads":             "20",
			"httpRuntime minLocalRequestFreeThreads": "4",
			"httpRuntime appRequestQueueLimit":       "100",
			"httpRuntime executionTimeout":           "5m",
			"processModel clientConnectedCheck":      "30s",
		}, "aspnet-classic-net35", ""},
		{"classic defaults without autoConfig", "3.5", "", 8, -1, []File{pm(`autoConfig="false"`), web}, want{
			"processModel maxWorkerThreads": "160",
			"processModel maxIoThreads":     "160",
			"httpRuntime minFreeThreads":    "8",
		}, "aspnet-classic-net35", ""},
		{"classic 4.0 defaults without autoConfig", "4.0", "aspnet-classic", 8, -1, []File{pm(`autoConfig="false"`), web}, want{
			"processModel maxWorkerThreads": "800",
			"processModel maxIoThreads":     "800",
			"httpRuntime minFreeThreads":    "8",
		}, "aspnet-classic-net35", ""},
		{"root web.config then app's", "3.5", "", 1, -1, []File{pm(`autoConfig="false"`),
			file("web.config", `<system.web><httpRuntime executionTimeout="90" appRequestQueueLimit="200"/></system.web>`),
			file("web.config", `<system.web><httpRuntime executionTimeout="30"/></system.web>`)}, want{
			"httpRuntime executionTimeout":     "30s",
			"httpRuntime appRequestQueueLimit": "200",
		}, "aspnet-classic-net35", ""},
		{"debug switches executionTimeout off", "3.5", "", 1, -1, []File{pm(`autoConfig="true"`),
			file("web.config", `<system.web><compilation debug="true"/><httpRuntime executionTimeout="30"/></system.web>`)}, want{
			"compilation debug":            "true",
			"httpRuntime executionTimeout": "0s",
		}, "aspnet-classic-net35", "executionTimeout is not enforced"},
		{"processModel in web.config", "3.5", "", 1, -1, []File{pm(`autoConfig="true"`),
			file("web.config", `<system.web><processModel autoConfig="false"/></system.web>`)}, want{
			"processModel autoConfig": "true",
		}, "aspnet-classic-net35", "has no effect outside machine.config"},
		{"integrated 3.5 default", "3.5", "iis-integrated", 8, -1, []File{pm(`autoConfig="true"`), web}, want{
			"maxConcurrentRequestsPerCPU":    "12",
			"processModel requestQueueLimit": "5000",
		}, "iis7-net35", ""},
		{"integrated 3.5 registry", "3.5", "iis-integrated", 8, 36, []File{pm(`autoConfig="true" requestQueueLimit="100"`), web}, want{
			"maxConcurrentRequestsPerCPU":    "36",
			"processModel requestQueueLimit": "100",
		}, "iis7-net35", ""},
		{"integrated 3.5 aspnet.config beats registry", "3.5", "iis-integrated", 8, 36, []File{pm(`autoConfig="true"`), web,
			file("aspnet.config", `<system.web><applicationPool maxConcurrentRequestsPerCPU="24"/></system.web>`)}, want{
			"maxConcurrentRequestsPerCPU": "24",
		}, "iis7-net35", "registry value has no effect"},
		{"integrated 4.0 default", "4.0", "", 8, -1, []File{pm(`autoConfig="true"`), web}, want{
			"maxConcurrentRequestsPerCPU":       "5000",
			"applicationPool requestQueueLimit": "5000",
		}, "iis7-net4", ""},
		{"integrated 4.8 aspnet.config", "4.8", "", 8, -1, []File{pm(`autoConfig="true"`), web,
			file("aspnet.config", `<system.web><applicationPool maxConcurrentRequestsPerCPU="50" maxConcurrentThreadsPerCPU="0" requestQueueLimit="300"/></system.web>`)}, want{
			"maxConcurrentRequestsPerCPU":       "50",
			"applicationPool requestQueueLimit": "300",
		}, "iis7-net4", ""},
		{"integrated 4.0 no limit", "4.0", "", 8, -1, []File{web,
			file("aspnet.config", `<system.web><applicationPool maxConcurrentRequestsPerCPU="0"/></system.web>`)}, want{
			"maxConcurrentRequestsPerCPU": "0",
		}, "iis7-net4", ""},
		{"integrated ignores RequestQueue settings", "4.0", "", 8, -1, []File{pm(`autoConfig="true"`),
			file("web.config", `<system.web><httpRuntime minFreeThreads="100"/></system.web>`)}, want{}, "iis7-net4", "no effect on the integrated pipeline"},
		{"applicationPool in web.config", "4.0", "", 8, -1, []File{
			file("web.config", `<system.web><applicationPool maxConcurrentRequestsPerCPU="1"/></system.web>`)}, want{
			"maxConcurrentRequestsPerCPU": "5000",
		}, "iis7-net4", "has no effect outside Aspnet.config"},
		{"applicationPool on classic", "4.0", "aspnet-classic", 8, -1, []File{web,
			file("aspnet.config", `<system.web><applicationPool maxConcurrentRequestsPerCPU="1"/></system.web>`)}, want{}, "aspnet-classic-net35", "has no effect on the classic pipeline"},
		{"maxConcurrentThreadsPerCPU", "4.0", "", 8, -1, []File{web,
			file("aspnet.config", `<system.web><applicationPool maxConcurrentThreadsPerCPU="4"/></system.web>`)}, want{}, "iis7-net4", "not modelled"},
		{"self 3.5 threads", "3.5", "", 4, -1, []File{file("app.exe.config", "")}, want{
			"CLR worker threads, max": "1000",
			"CLR I/O threads, max":    "1000",
			"CLR worker threads, min": "4",
		}, "self-net35", ""},
		{"self 4.0 threads", "4.0", "", 4, -1, []File{file("app.exe.config", "")}, want{
			"CLR worker threads, max": "32767",
		}, "self-net4", ""},
		{"self 2.0", "2.0", "", 2, -1, []File{file("app.exe.config", "")}, want{
			"CLR worker threads, max": "500",
			".NET version":            "2.0",
		}, "self-net35", ""},
		{"system.web in app.config", "3.5", "", 2, -1, []File{file("app.exe.config", `<system.web><httpRuntime executionTimeout="5"/></system.web>`)}, want{}, "self-net35", "not hosted by ASP.NET"},
		{"4.6 classic keeps its version", "4.6", "aspnet-classic", 2, -1, []File{web}, want{".NET version": "4.6"}, "aspnet-classic-net35", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts(tc.dotnet, tc.cores)
			o.Host, o.MaxConcurrentRequestsPerCPU = tc.host, tc.mcrpc
			r := mustResolve(t, o, tc.files...)
			if r.Preset != tc.preset {
				t.Errorf("preset %s, want %s", r.Preset, tc.preset)
			}
			for s, v := range tc.want {
				if got := row(t, r, s); got.Value != v {
					t.Errorf("%s = %s (%s), want %s", s, got.Value, got.From, v)
				}
			}
			if tc.warning != "" && warned(r, tc.warning) == nil {
				t.Errorf("no warning %q:\n%s", tc.warning, warnings(r))
			}
			if tc.warning == "" && len(r.Warnings) > 0 {
				t.Errorf("unexpected warnings:\n%s", warnings(r))
			}
		})
	}
}

// TestWCF covers system.serviceModel: serviceThrottling behaviours per
// version, binding timeouts, security modes and reliable sessions.
func TestWCF(t *testing.T) {
	svc := func(behavior, throttle string) string {
		bc := ""
		if behavior != "" {
			bc = ` behaviorConfiguration="` + behavior + `"`
		}
		return `<system.serviceModel>
  <behaviors><serviceBehaviors><behavior name="` + behavior + `">` + throttle + `</behavior></serviceBehaviors></behaviors>
  <services><service name="Svc"` + bc + `><endpoint address="" binding="basicHttpBinding" contract="I"/></service></services>
</system.serviceModel>`
	}
	type want map[string]string
	for _, tc := range []struct {
		name, dotnet string
		cores        int
		body         string
		want         want
		warning      string
	}{
		{"3.5 defaults", "3.5", 8, svc("b", ""), want{
			"serviceThrottling maxConcurrentCalls":     "16",
			"serviceThrottling maxConcurrentSessions":  "10",
			"serviceThrottling maxConcurrentInstances": "26",
		}, ""},
		{"4.0 defaults", "4.0", 8, svc("b", ""), want{
			"serviceThrottling maxConcurrentCalls":     "128",
			"serviceThrottling maxConcurrentSessions":  "800",
			"serviceThrottling maxConcurrentInstances": "928",
		}, ""},
		{"the story's back end", "3.5", 8, svc("b", `<serviceThrottling maxConcurrentCalls="100" maxConcurrentSessions="100" maxConcurrentInstances="200"/>`), want{
			"serviceThrottling maxConcurrentCalls":     "100",
			"serviceThrottling maxConcurrentSessions":  "100",
			"serviceThrottling maxConcurrentInstances": "200",
		}, ""},
		{"4.0 unset attributes keep CPU-scaled defaults", "4.0", 2, svc("b", `<serviceThrottling maxConcurrentCalls="50"/>`), want{
			"serviceThrottling maxConcurrentCalls":     "50",
			"serviceThrottling maxConcurrentSessions":  "200",
			"serviceThrottling maxConcurrentInstances": "250",
		}, ""},
		{"4.0 default behaviour applies", "4.0", 1, svc("", `<serviceThrottling maxConcurrentCalls="7"/>`), want{
			"serviceThrottling maxConcurrentCalls": "7",
		}, ""},
		{"3.5 default behaviour does not", "3.5", 1, svc("", `<serviceThrottling maxConcurrentCalls="7"/>`), want{
			"serviceThrottling maxConcurrentCalls": "16",
		}, "default behaviors are new in WCF 4"},
		{"unused behaviour", "3.5", 1, `<system.serviceModel><behaviors><serviceBehaviors><behavior name="x"><serviceThrottling maxConcurrentCalls="7"/></behavior></serviceBehaviors></behaviors>
  <services><service name="Svc"/></services></system.serviceModel>`, want{
			"serviceThrottling maxConcurrentCalls": "16",
		}, "no service uses that behavior"},
		{"throttle in endpointBehaviors", "3.5", 1, `<system.serviceModel><behaviors><endpointBehaviors><behavior name="x"><serviceThrottling maxConcurrentCalls="7"/></behavior></endpointBehaviors></behaviors>
  <services><service name="Svc"/></services></system.serviceModel>`, want{
			"serviceThrottling maxConcurrentCalls": "16",
		}, "<serviceThrottling> ignored: not at system.serviceModel/behaviors/serviceBehaviors/behavior/serviceThrottling"},
		{"sessionful service endpoint", "4.0", 1, `<system.serviceModel><services><service name="Svc">
  <endpoint address="" binding="wsHttpBinding" contract="I"/></service></services></system.serviceModel>`, want{
			`service endpoint ""`: "wsHttpBinding",
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustResolve(t, opts(tc.dotnet, tc.cores), file("app.exe.config", tc.body))
			if !r.WCF {
				t.Fatal("not a WCF service")
			}
			for s, v := range tc.want {
				if got := row(t, r, s); got.Value != v {
					t.Errorf("%s = %s (%s), want %s", s, got.Value, got.From, v)
				}
			}
			if tc.warning != "" && warned(r, tc.warning) == nil {
				t.Errorf("no warning %q:\n%s", tc.warning, warnings(r))
			}
			if tc.warning == "" && len(r.Warnings) > 0 {
				t.Errorf("unexpected warnings:\n%s", warnings(r))
			}
		})
	}
}

func TestBindings(t *testing.T) {
	ep := func(binding, config, body string) string {
		return `<system.serviceModel><bindings><` + binding + `><binding name="c"` + config + `>` + body + `</binding></` + binding + `></bindings>
  <client><endpoint address="http://be/s" binding="` + binding + `" bindingConfiguration="c" contract="I"/></client></system.serviceModel>`
	}
	for _, tc := range []struct {
		name, dotnet, body string
		binding            string
		sessionful         bool
		timeout            time.Duration
	}{
		{"basicHttp defaults", "3.5", ep("basicHttpBinding", "", ""), "basicHttp", false, time.Minute},
		{"basicHttp sendTimeout", "3.5", ep("basicHttpBinding", ` sendTimeout="00:00:20"`, ""), "basicHttp", false, 20 * time.Second},
		{"basicHttp days and fractions", "3.5", ep("basicHttpBinding", ` sendTimeout="1.00:00:01.5"`, ""), "basicHttp", false, 24*time.Hour + 1500*time.Millisecond},
		{"infinite sendTimeout", "3.5", ep("basicHttpBinding", ` sendTimeout="Infinite"`, ""), "basicHttp", false, 0},
		{"wsHttp defaults", "3.5", ep("wsHttpBinding", "", ""), "wsHttp", true, time.Minute},
		{"wsHttp without security", "3.5", ep("wsHttpBinding", "", `<security mode="None"/>`), "basicHttp", false, time.Minute},
		{"wsHttp without security context", "3.5", ep("wsHttpBinding", "", `<security mode="Message"><message establishSecurityContext="false"/></security>`), "wsHttp", false, time.Minute},
		{"wsHttp reliable session", "3.5", ep("wsHttpBinding", "", `<security mode="None"/><reliableSession enabled="true"/>`), "basicHttp", true, time.Minute},
		{"netTcp", "3.5", ep("netTcpBinding", ` sendTimeout="00:02:00"`, `<security mode="None"/>`), "netTcp", true, 2 * time.Minute},
		{"namedPipe", "3.5", ep("netNamedPipeBinding", "", ""), "namedPipe", true, time.Minute},
		{"webHttp", "4.0", ep("webHttpBinding", "", ""), "http", false, time.Minute},
		{"custom binary", "3.5", ep("customBinding", ` sendTimeout="00:00:20"`, `<binaryMessageEncoding/><httpTransport/>`), "basicHttp-binary", false, 20 * time.Second},
		{"custom text with RM", "3.5", ep("customBinding", "", `<reliableSession/><textMessageEncoding/><httpTransport/>`), "basicHttp", true, time.Minute},
		{"custom tcp", "3.5", ep("customBinding", "", `<binaryMessageEncoding/><tcpTransport/>`), "netTcp", true, time.Minute},
		{"4.0 default binding configuration", "4.0", `<system.serviceModel><bindings><basicHttpBinding><binding sendTimeout="00:00:05"/></basicHttpBinding></bindings>
  <client><endpoint address="http://be/s" binding="basicHttpBinding" contract="I"/></client></system.serviceModel>`, "basicHttp", false, 5 * time.Second},
		{"4.0 protocol mapping", "4.0", `<system.serviceModel><client><endpoint address="net.tcp://be/s" contract="I"/></client></system.serviceModel>`, "netTcp", true, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustResolve(t, opts(tc.dotnet, 2), file("app.exe.config", tc.body))
			if len(r.Calls) != 1 {
				t.Fatalf("%d calls", len(r.Calls))
			}
			c := r.Calls[0]
			if c.Binding != tc.binding || c.Sessionful != tc.sessionful || c.Timeout != tc.timeout {
				t.Errorf("binding %s sessionful %v timeout %v, want %s %v %v", c.Binding, c.Sessionful, c.Timeout, tc.binding, tc.sessionful, tc.timeout)
			}
			if len(r.Warnings) > 0 {
				t.Errorf("unexpected warnings:\n%s", warnings(r))
			}
		})
	}
}

// TestInvalid: malformed files and invalid settings are errors naming file
// and line, and messages do not repeat the bad values.
func TestInvalid(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []File
		want  string
	}{
		{"unclosed", []File{{Name: "web.config", Kind: KindWeb, Data: []byte("<configuration>\n<system.web>\n</configuration>\n")}}, "web.config:3: malformed XML"},
		{"not xml", []File{{Name: "web.config", Kind: KindWeb, Data: []byte("maxconnection=96\n")}}, "web.config:1: text outside the root element"},
		{"wrong root", []File{{Name: "web.config", Kind: KindWeb, Data: []byte("<?xml version=\"1.0\"?>\n<settings/>")}}, "web.config:2: root element is <settings>"},
		{"bad int", []File{file("machine.config", `<system.web><processModel autoConfig="false" maxWorkerThreads="lots-secret"/></system.web>`), file("web.config", "")}, "machine.config:3: processModel maxWorkerThreads: not a whole number"},
		{"bad bool", []File{file("machine.config", `<system.web><processModel autoConfig="yes"/></system.web>`), file("web.config", "")}, "processModel autoConfig: neither"},
		{"bad timeout", []File{file("app.exe.config", `<system.serviceModel><bindings><basicHttpBinding><binding name="b" sendTimeout="20 s"/></basicHttpBinding></bindings><client><endpoint address="http://x/" binding="basicHttpBinding" bindingConfiguration="b" contract="I"/></client></system.serviceModel>`)}, "sendTimeout: not a time span"},
		{"missing binding configuration", []File{file("app.exe.config", `<system.serviceModel><client><endpoint address="http://x/" binding="basicHttpBinding" bindingConfiguration="nope" contract="I"/></client></system.serviceModel>`)}, `bindingConfiguration="nope": no <basicHttpBinding><binding name="nope">`},
		{"zero throttle", []File{file("app.exe.config", `<system.serviceModel><behaviors><serviceBehaviors><behavior name="b"><serviceThrottling maxConcurrentCalls="0"/></behavior></serviceBehaviors></behaviors><services><service name="S" behaviorConfiguration="b"/></services></system.serviceModel>`)}, "serviceThrottling maxConcurrentCalls: must be at least 1"},
		{"section twice", []File{file("web.config", `<system.web><httpRuntime/><httpRuntime/></system.web>`)}, "appears a second time"},
		{"duplicate add", []File{file("web.config", `<system.net><connectionManagement><add address="*" maxconnection="1"/><add address="*" maxconnection="2"/></connectionManagement></system.net>`)}, "a second time in this connectionManagement"},
		{"minFreeThreads above the pool", []File{file("machine.config", `<system.web><processModel autoConfig="false" maxWorkerThreads="10"/><httpRuntime minFreeThreads="100"/></system.web>`), file("web.config", "")}, "must be below the thread pool limit"},
		{"web and app", []File{file("web.config", ""), file("app.exe.config", "")}, "both a web.config"},
		{"two machine.config", []File{file("machine.config", ""), file("machine.config", "")}, "two machine.config"},
		{"deep", []File{{Name: "web.config", Kind: KindWeb, Data: []byte("<configuration>" + strings.Repeat("<a>", 200) + strings.Repeat("</a>", 200) + "</configuration>")}}, "nested deeper than 100"},
		{"unknown charset", []File{{Name: "web.config", Kind: KindWeb, Data: []byte(`<?xml version="1.0" encoding="x-no-such-charset"?><configuration/>`)}}, "unsupported encoding"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.files, opts("3.5", 1))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want …%s…", err, tc.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the message repeats the value: %v", err)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) && !strings.HasPrefix(tc.name, "web and app") && !strings.HasPrefix(tc.name, "two") {
				t.Errorf("not a ConfigError: %T", err)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "web.config")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadArgs([]string{p}); err == nil || !strings.Contains(err.Error(), "configuration files may be at most 16 MiB") {
		t.Fatalf("error %v, want at most 16 MiB", err)
	}
}

func TestEncodings(t *testing.T) {
	body := `<configuration><system.net><connectionManagement><add address="*" maxconnection="9"/></connectionManagement></system.net></configuration>`
	utf16le := []byte{0xFF, 0xFE}
	for _, r := range `<?xml version="1.0" encoding="utf-16"?>` + body {
		utf16le = append(utf16le, byte(r), byte(r>>8))
	}
	utf16be := []byte{}
	for _, r := range `<?xml version="1.0" encoding="utf-16"?>` + body {
		utf16be = append(utf16be, byte(r>>8), byte(r))
	}
	// A comment in KOI8-R: "ёлка" (e-with-diaeresis, el, ka, a).
	koi8 := append([]byte(`<?xml version="1.0" encoding="koi8-r"?><!-- `), 0xA3, 0xCC, 0xCB, 0xC1)
	koi8 = append(koi8, " -->"+body...)
	for name, data := range map[string][]byte{
		"bom":                  append([]byte{0xEF, 0xBB, 0xBF}, body...),
		"utf-16le":             utf16le,
		"utf-16be without BOM": utf16be,
		"latin1":               []byte(`<?xml version="1.0" encoding="iso-8859-1"?>` + body),
		"windows-1252":         append([]byte("<?xml version=\"1.0\" encoding=\"windows-1252\"?><!-- \x80 -->"), body...),
		"koi8-r":               koi8,
	} {
		t.Run(name, func(t *testing.T) {
			r := mustResolve(t, opts("3.5", 1), File{Name: "app.exe.config", Kind: KindApp, Data: data})
			if got := row(t, r, `connectionManagement "*"`).Value; got != "9" {
				t.Errorf("'*' = %s, want 9", got)
			}
		})
	}
}

// TestReadArgs: kinds from names, KIND=PATH, directories.
func TestReadArgs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(conf("")), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("Web.config")
	write("machine.config")
	write("notes.txt")
	other := write("Web.Release.config")
	files, err := ReadArgs([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Kind != KindMachine || files[1].Kind != KindWeb {
		t.Errorf("directory gave %+v", files)
	}
	if _, err := ReadArgs([]string{other}); err == nil || !strings.Contains(err.Error(), "web="+other) {
		t.Errorf("unknown name: %v", err)
	}
	files, err = ReadArgs([]string{"web=" + other})
	if err != nil || len(files) != 1 || files[0].Kind != KindWeb {
		t.Errorf("web=PATH: %v %+v", err, files)
	}
	if _, err := ReadArgs([]string{"box=" + other}); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("box=PATH: %v", err)
	}
}

// TestNoSecrets: the table, the warnings and the skeleton never repeat what
// the files hold besides the settings read (connection strings, app
// settings).
func TestNoSecrets(t *testing.T) {
	files, err := ReadArgs([]string{"testdata/crack"})
	if err != nil {
		t.Fatal(err)
	}
	r := mustResolve(t, opts("3.5", 8), files...)
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	sk, err := r.Skeleton()
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"s3cr3t", "SQLEXPRESS", "aspnetdb", "ConversionServicePassword"} {
		if strings.Contains(b.String(), secret) || strings.Contains(string(sk), secret) {
			t.Errorf("output repeats %q", secret)
		}
	}
}

func TestParseTimeSpan(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"00:01:00":         time.Minute,
		"0:0:5":            5 * time.Second,
		"01:30":            90 * time.Minute,
		"2":                48 * time.Hour,
		"1.02:03:04":       26*time.Hour + 3*time.Minute + 4*time.Second,
		"00:00:00.1234567": 123456700 * time.Nanosecond,
		" 00:00:20 ":       20 * time.Second,
		"Infinite":         infinite,
	} {
		got, err := parseTimeSpan(s, true)
		if err != nil || got != want {
			t.Errorf("parseTimeSpan(%q) = %v, %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "-00:00:01", "24:00:00", "00:60:00", "00:00:60", "1:2:3:4", "00:00:01.", "00:00:01.12345678", "abc", "1.5", "Infinite!"} {
		if _, err := parseTimeSpan(s, true); err == nil {
			t.Errorf("parseTimeSpan(%q): no error", s)
		}
	}
	if _, err := parseTimeSpan("Infinite", false); err == nil {
		t.Error("Infinite accepted where it is not")
	}
}
