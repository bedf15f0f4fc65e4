package dotnetconfig

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/simmode"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// TestSkeletonMatrix: for every version, host and autoConfig setting, with
// a service, a client endpoint and explicit settings, the skeleton loads
// with tsim's loader and resolves as the report says (Skeleton checks
// itself; this test makes sure it is exercised everywhere).
func TestSkeletonMatrix(t *testing.T) {
	machine := func(auto string) File {
		return file("machine.config", `<system.web><processModel `+auto+` maxWorkerThreads="50"/></system.web>
<system.net><connectionManagement><add address="*" maxconnection="24"/><add address="http://other" maxconnection="3"/></connectionManagement></system.net>`)
	}
	app := `<system.web><httpRuntime executionTimeout="60"/></system.web>
<system.serviceModel>
  <behaviors><serviceBehaviors><behavior name="t"><serviceThrottling maxConcurrentCalls="64"/></behavior></serviceBehaviors></behaviors>
  <services><service name="S" behaviorConfiguration="t"><endpoint address="" binding="wsHttpBinding" contract="I"/></service></services>
  <bindings><wsHttpBinding><binding name="w" sendTimeout="00:00:30"><security mode="None"/><reliableSession enabled="true"/></binding></wsHttpBinding></bindings>
  <client>
    <endpoint name="a" address="http://be/s" binding="wsHttpBinding" bindingConfiguration="w" contract="I"/>
    <endpoint name="b" address="http://other/s" binding="basicHttpBinding" contract="I"/>
  </client>
</system.serviceModel>`
	for _, v := range DotNetVersions() {
		for _, host := range HostNames() {
			for _, auto := range []string{`autoConfig="true"`, `autoConfig="false"`, ``} {
				for _, wcf := range []bool{true, false} {
					body := app
					if !wcf {
						body = strings.Replace(body, `<services><service name="S" behaviorConfiguration="t"><endpoint address="" binding="wsHttpBinding" contract="I"/></service></services>`, "", 1)
						body = strings.Replace(body, `<behaviors><serviceBehaviors><behavior name="t"><serviceThrottling maxConcurrentCalls="64"/></behavior></serviceBehaviors></behaviors>`, "", 1)
					}
					name := "web.config"
					if host == "self" {
						name = "app.exe.config"
						body = strings.Replace(body, `<system.web><httpRuntime executionTimeout="60"/></system.web>`, "", 1)
					}
					o := opts(v, 4)
					o.Host = host
					r, err := Resolve([]File{machine(auto), file(name, body)}, o)
					if err != nil {
						t.Fatalf("%s %s %s: %v", v, host, auto, err)
					}
					sk, err := r.Skeleton()
					if err != nil {
						t.Fatalf("%s %s %s wcf=%v: %v", v, host, auto, wcf, err)
					}
					if len(r.Calls) != 2 || r.Calls[1].MaxConnectionHost != 3 || r.Calls[1].Limit != 3 {
						t.Errorf("%s %s %s: calls %+v", v, host, auto, r.Calls)
					}
					if r.WCF != wcf {
						t.Errorf("%s %s %s: WCF %v", v, host, auto, r.WCF)
					}
					documentedKeys(t, sk)
				}
			}
		}
	}
}

// documentedKeys checks that every key a skeleton writes is in
// docs/experiment-format.md.
func documentedKeys(t *testing.T, skeleton []byte) {
	t.Helper()
	doc := docs(t)
	re := regexp.MustCompile(`(?m)^\s*([a-z_][a-z_.]*)\s*=`)
	for _, m := range re.FindAllSubmatch(skeleton, -1) {
		k := string(m[1])
		last := k[strings.LastIndexByte(k, '.')+1:]
		if !strings.Contains(doc, "`"+k+"`") && !strings.Contains(doc, "`"+last+"`") && !strings.Contains(doc, "`tier."+k+"`") && !strings.Contains(doc, "`load."+k+"`") {
			t.Errorf("the skeleton writes %s, which docs/experiment-format.md does not document", k)
		}
	}
}

var docText string

func docs(t *testing.T) string {
	if docText == "" {
		b, err := os.ReadFile("../docs/experiment-format.md")
		if err != nil {
			t.Fatal(err)
		}
		docText = string(b)
	}
	return docText
}

// TestCrackGolden is the transcript of the story's files: the table, the
// warning and the skeleton. Refresh it with go test -run TestCrackGolden
// -update, and commit only a diff you understand.
func TestCrackGolden(t *testing.T) {
	files, err := ReadArgs([]string{"testdata/crack"})
	if err != nil {
		t.Fatal(err)
	}
	r := mustResolve(t, opts("3.5", 8), files...)
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	sk, err := r.Skeleton()
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n---- skeleton ----\n")
	b.Write(sk)
	const golden = "testdata/crack.golden"
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("output differs from %s (go test -run TestCrackGolden -update to refresh):\n%s", golden, b.String())
	}
}

// TestCrackSkeletonRuns: tsim's loader takes the story's skeleton and the
// simulator runs it, with the connection limit of 2 the files leave.
func TestCrackSkeletonRuns(t *testing.T) {
	files, err := ReadArgs([]string{"testdata/crack"})
	if err != nil {
		t.Fatal(err)
	}
	r := mustResolve(t, opts("3.5", 8), files...)
	sk, err := r.Skeleton()
	if err != nil {
		t.Fatal(err)
	}
	x, err := format.LoadExperiment("web-config.toml", sk, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := x.Scenario(0)
	if err != nil {
		t.Fatal(err)
	}
	web := sc.Topology.Tiers[0]
	call := web.Steps[1].Call
	if call.Conn.Limit != 2 || web.Admission.MinFreeThreads != 704 || web.Worker.Max != 800 {
		t.Errorf("loaded: limit %d (%s), minFreeThreads %d, worker.max %d", call.Conn.Limit, call.Conn.Resolution, web.Admission.MinFreeThreads, web.Worker.Max)
	}
	res, err := simmode.Run(&sc.Topology, model.Options{Seed: 1, NoSeries: true})
	if err != nil {
		t.Fatal(err)
	}
	if res == nil {
		t.Fatal("no result")
	}
}
