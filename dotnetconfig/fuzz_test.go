package dotnetconfig

import (
	"io"
	"os"
	"testing"
)

// FuzzResolve feeds arbitrary machine.config and web.config (or app.config)
// contents to the parser and the resolution. Neither may panic; a report
// Resolve accepts must print, and its skeleton must load with tsim's loader
// and agree with the report (Skeleton checks that itself). Plain go test
// runs the seeds; go test -fuzz FuzzResolve searches.
func FuzzResolve(f *testing.F) {
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	machine, web := read("testdata/crack/machine.config"), read("testdata/crack/web.config")
	f.Add(machine, web, uint8(2), uint8(0), uint8(8))
	f.Add(machine, web, uint8(7), uint8(2), uint8(1))
	f.Add([]byte(conf(`<system.web><processModel autoConfig="true" requestQueueLimit="Infinite" clientConnectedCheck="Infinite"/></system.web>`)),
		[]byte(conf(`<location path="."><system.net><connectionManagement><clear/><add address="*" maxconnection="4"/><remove address="*"/></connectionManagement></system.net></location>`+client)),
		uint8(3), uint8(1), uint8(4))
	f.Add([]byte(conf("")), []byte(conf(`<system.serviceModel>
  <behaviors><serviceBehaviors><behavior><serviceThrottling maxConcurrentCalls="100" maxConcurrentSessions="2147483647"/></behavior></serviceBehaviors></behaviors>
  <bindings><customBinding><binding sendTimeout="10675199.02:48:05"><reliableSession/><binaryMessageEncoding/><httpTransport/></binding></customBinding></bindings>
  <client><endpoint address="http://localhost:80/x" binding="customBinding" contract="I"/><endpoint address="net.pipe://./p" contract="I"/></client>
</system.serviceModel>`)), uint8(6), uint8(0), uint8(2))
	f.Add([]byte(conf(`<system.web><processModel autoConfig="false" maxWorkerThreads="2147483646" minWorkerThreads="5"/><httpRuntime executionTimeout="999999999999" appRequestQueueLimit="2147483647"/></system.web>`)),
		[]byte(conf(`<system.web><compilation debug="True"/></system.web>`)), uint8(4), uint8(1), uint8(255))
	f.Add([]byte(conf(`<system.web><processModel autoConfig="false" maxWorkerThreads="400000"/><httpRuntime executionTimeout="3000000"/></system.web>`)),
		[]byte(conf(`<system.serviceModel><bindings><basicHttpBinding><binding name="b" sendTimeout="40.00:00:00"/></basicHttpBinding></bindings>
  <client><endpoint address="http://be/s" binding="basicHttpBinding" bindingConfiguration="b" contract="I"/></client></system.serviceModel>`)), uint8(3), uint8(3), uint8(1))
	f.Add([]byte("<configuration><a><b/></a>"), []byte("\xff\xfe<\x00c\x00/\x00>\x00"), uint8(0), uint8(0), uint8(0))

	hosts := append([]string{""}, HostNames()...)
	versions := DotNetVersions()
	f.Fuzz(func(t *testing.T, machine, app []byte, version, host, cores uint8) {
		kind, name := KindWeb, "web.config"
		if host%uint8(len(hosts)) == 1 {
			kind, name = KindApp, "app.exe.config"
		}
		files := []File{{Name: "machine.config", Kind: KindMachine, Data: machine}, {Name: name, Kind: kind, Data: app}}
		o := Options{
			DotNet:                      versions[int(version)%len(versions)],
			Cores:                       1 + int(cores)%64,
			Host:                        hosts[int(host)%len(hosts)],
			MaxConcurrentRequestsPerCPU: int(cores) - 128,
		}
		r, err := Resolve(files, o)
		if err != nil {
			return
		}
		if err := r.WriteText(io.Discard); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Skeleton(); err != nil {
			t.Fatal(err)
		}
	})
}
