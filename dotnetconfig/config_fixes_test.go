package dotnetconfig

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestOneServicePointPerHost: four endpoints of different contracts and
// paths on one scheme://host:port are one ServicePoint, so one callee
// with one connection limit; another port is another ServicePoint
// (dotnet.md §1.2).
func TestOneServicePointPerHost(t *testing.T) {
	body := `<system.net><connectionManagement><add address="http://orders" maxconnection="48"/></connectionManagement></system.net>
<system.serviceModel><client>
  <endpoint name="a" address="http://orders/A.svc" binding="basicHttpBinding" contract="IA"/>
  <endpoint name="b" address="http://orders/B.svc" binding="basicHttpBinding" contract="IB"/>
  <endpoint name="c" address="http://ORDERS:80/C.svc" binding="wsHttpBinding" contract="IC"/>
  <endpoint name="d" address="http://orders/D.svc" binding="basicHttpBinding" contract="ID"/>
  <endpoint name="e" address="http://orders:8080/E.svc" binding="basicHttpBinding" contract="IE"/>
</client></system.serviceModel>`
	r := mustResolve(t, opts("4.0", 4), file("app.exe.config", body))
	if len(r.Calls) != 5 {
		t.Fatalf("%d calls, want 5", len(r.Calls))
	}
	for _, c := range r.Calls[:4] {
		if c.Target != "orders" || c.Limit != 48 {
			t.Errorf("endpoint %s: target %s limit %d, want orders and 48", c.Endpoint, c.Target, c.Limit)
		}
	}
	if c := r.Calls[4]; c.Target != "orders-8080" || c.Limit != 2 {
		t.Errorf("endpoint e: target %s limit %d, want orders-8080 and the default 2", c.Target, c.Limit)
	}
	sk, err := r.Skeleton()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(sk), `name = "orders"`); n != 1 {
		t.Errorf("the skeleton has %d tiers named orders, want 1:\n%s", n, sk)
	}
	shared := 0
	for _, row := range r.Rows {
		if strings.Contains(row.From, "one ServicePoint with endpoint \"a\"") {
			shared++
		}
	}
	if shared != 3 {
		t.Errorf("%d connection-limit rows say they share endpoint a's ServicePoint, want 3", shared)
	}
}

// TestSeveralServices: binding configurations and behaviours of the
// services the tier does not take are in use, not "no endpoint uses it".
func TestSeveralServices(t *testing.T) {
	body := `<system.serviceModel>
  <bindings>
    <basicHttpBinding><binding name="first" sendTimeout="00:00:10"/></basicHttpBinding>
    <netTcpBinding><binding name="second"/></netTcpBinding>
  </bindings>
  <behaviors><serviceBehaviors>
    <behavior name="one"><serviceThrottling maxConcurrentCalls="5"/></behavior>
    <behavior name="two"><serviceThrottling maxConcurrentCalls="7"/></behavior>
  </serviceBehaviors></behaviors>
  <services>
    <service name="One" behaviorConfiguration="one"><endpoint address="" binding="basicHttpBinding" bindingConfiguration="first" contract="I1"/></service>
    <service name="Two" behaviorConfiguration="two"><endpoint address="" binding="netTcpBinding" bindingConfiguration="second" contract="I2"/></service>
  </services>
</system.serviceModel>`
	for _, svc := range []string{"", "Two"} {
		o := opts("4.0", 2)
		o.Service = svc
		r := mustResolve(t, o, file("app.exe.config", body))
		for _, w := range r.Warnings {
			if strings.Contains(w.Msg, "no endpoint uses it") || strings.Contains(w.Msg, "no service uses that behavior") {
				t.Errorf("--service %q: false warning %s", svc, w)
			}
		}
		want := map[string]string{"": "5", "Two": "7"}[svc]
		if got := row(t, r, "serviceThrottling maxConcurrentCalls").Value; got != want {
			t.Errorf("--service %q: maxConcurrentCalls %s, want %s", svc, got, want)
		}
	}
}

// TestPortSharing: portSharingEnabled is reported; with it, the binding's
// maxConnections has no effect.
func TestPortSharing(t *testing.T) {
	svc := func(attrs string) string {
		return `<system.serviceModel><bindings><netTcpBinding><binding name="t" ` + attrs + `/></netTcpBinding></bindings>
  <services><service name="S"><endpoint address="" binding="netTcpBinding" bindingConfiguration="t" contract="I"/></service></services></system.serviceModel>`
	}
	r := mustResolve(t, opts("3.5", 2), file("app.exe.config", svc(`portSharingEnabled="true" maxConnections="50"`)))
	if got := row(t, r, "  netTcp portSharingEnabled"); got.Value != "true" || got.Key != "tier.app.nettcp.port_sharing" {
		t.Errorf("portSharingEnabled row %+v", got)
	}
	if warned(r, "maxConnections has no effect: with portSharingEnabled") == nil {
		t.Errorf("no warning about maxConnections:\n%s", warnings(r))
	}
	sk, _ := r.Skeleton()
	if !strings.Contains(string(sk), "nettcp.port_sharing = true") {
		t.Errorf("the skeleton does not set port sharing:\n%s", sk)
	}
	r = mustResolve(t, opts("3.5", 2), file("app.exe.config", svc(`maxConnections="50" listenBacklog="64"`)))
	if got := row(t, r, "  netTcp maxConnections").Value; got != "50" {
		t.Errorf("maxConnections %s, want 50", got)
	}
	if got := row(t, r, "  netTcp portSharingEnabled").Value; got != "false" {
		t.Errorf("portSharingEnabled %s, want false", got)
	}
}

// TestMinRowsSayMin: the minimum rows name SetMinThreads, the maximum
// rows SetMaxThreads.
func TestMinRowsSayMin(t *testing.T) {
	r := mustResolve(t, opts("3.5", 2), file("app.exe.config", ""))
	for _, s := range []string{"CLR worker threads, min", "CLR I/O threads, min"} {
		if f := row(t, r, s).From; !strings.Contains(f, "SetMinThreads") || strings.Contains(f, "SetMaxThreads") {
			t.Errorf("%s: %q, want SetMinThreads", s, f)
		}
	}
	for _, s := range []string{"CLR worker threads, max", "CLR I/O threads, max"} {
		if f := row(t, r, s).From; !strings.Contains(f, "SetMaxThreads") {
			t.Errorf("%s: %q, want SetMaxThreads", s, f)
		}
	}
}

// manyEntries is an app.config with n connectionManagement entries.
func manyEntries(n int, repeated bool) File {
	var b strings.Builder
	b.WriteString("<system.net><connectionManagement>\n")
	for i := range n {
		addr := fmt.Sprintf("http://host%d", i)
		if repeated {
			addr = "http://same"
		}
		fmt.Fprintf(&b, "<add address=%q maxconnection=\"4\"/>\n", addr)
	}
	b.WriteString("</connectionManagement></system.net>\n" + client)
	return file("app.exe.config", b.String())
}

// TestManyEntriesLinear: merging connectionManagement takes time and
// memory linear in its entries (issue 22: 20,000 entries took 59 s). The
// check is on bytes allocated, which a quadratic merge would make grow
// four times for twice the entries, not on the clock.
func TestManyEntriesLinear(t *testing.T) {
	alloc := func(n int) uint64 {
		f := manyEntries(n, false)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := Resolve([]File{f}, opts("3.5", 1))
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Rows) > 60 {
			t.Errorf("%d entries make %d rows; unused entries are summed up", n, len(r.Rows))
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	a10, a20 := alloc(10_000), alloc(20_000)
	if ratio := float64(a20) / float64(a10); ratio > 2.8 {
		t.Errorf("20,000 entries allocate %.1f× what 10,000 do (%d vs %d bytes): not linear", ratio, a20, a10)
	}
}

// TestRepeatedEntriesOneLine: 20,000 repeated entries are one error, not
// 20,000 (issue 22, item 8).
func TestRepeatedEntriesOneLine(t *testing.T) {
	_, err := Resolve([]File{manyEntries(20_000, true)}, opts("3.5", 1))
	if err == nil {
		t.Fatal("no error for repeated entries")
	}
	msg := err.Error()
	if n := strings.Count(msg, "\n") + 1; n != 1 {
		t.Errorf("%d lines of errors, want 1:\n%.500s", n, msg)
	}
	if !strings.Contains(msg, "and 19998 more repeated addresses in this connectionManagement, the last at line") {
		t.Errorf("the error does not count the repeats: %.300s", msg)
	}
}
