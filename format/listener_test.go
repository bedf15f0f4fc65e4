package format

import (
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/model"
)

// noListener is w without its netTcp listener (tests of the throttles).
func noListener(w *model.WCF) model.WCF {
	c := *w
	c.Listener = model.Listener{}
	return c
}

func TestListenerDefaults(t *testing.T) {
	file := func(keys string) string {
		return `name = "l"
duration = "1m"
[load]
users = 1
[load.call]
binding = "netTcp"
[[tier]]
name = "svc"
preset = "self-net35"
cores = 4
` + keys + `
  [[tier.step]]
  cpu = "1ms"
`
	}
	for _, tc := range []struct {
		name, keys   string
		pending, log int
		why          string
	}{
		{"net35", "", 10, 10, "netTcpBinding defaults before .NET 4.5"},
		{"net40", "dotnet = \"4.0\"", 10, 10, "before .NET 4.5"},
		{"net45", "dotnet = \"4.5\"", 48, 48, "targeting .NET 4.5: 12 × 4"},
		{"set", "nettcp.max_connections = 200\nnettcp.listen_backlog = 300", 200, 300, "as set"},
		{"port-sharing", "nettcp.port_sharing = true\nnettcp.max_connections = 200\nnettcp.listen_backlog = 300", 100, 10, "the binding's maxConnections and listenBacklog are ignored"},
		{"port-sharing-45", "dotnet = \"4.5\"\nnettcp.port_sharing = true", 100, 64, "16 × 4"},
		{"port-sharing-set", "nettcp.port_sharing = true\nnettcp.sharing_max_pending = 500\nnettcp.sharing_listen_backlog = 50", 500, 50, "SMSvcHost.exe.config as set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top := loadTopo(t, file(tc.keys))
			l := top.Tiers[0].WCF.Listener
			if l.MaxPending != tc.pending || l.Backlog != tc.log || !strings.Contains(l.Resolution, tc.why) {
				t.Errorf("listener %+v; want %d pending, %d backlog, %q", l, tc.pending, tc.log, tc.why)
			}
			if !top.Load.Call.Binding.Listener {
				t.Error("netTcp's binding does not go through the listener")
			}
		})
	}
	_, err := LoadExperiment("l.toml", []byte(file("nettcp.sharing_max_pending = 5")), nil)
	if err == nil || !strings.Contains(err.Error(), "tier.svc.nettcp.sharing_max_pending: configures the Net.TCP Port Sharing Service") {
		t.Errorf("sharing key without port sharing: %v", err)
	}
	_, err = LoadExperiment("l.toml", []byte(strings.Replace(file("nettcp.listen_backlog = 5"), `preset = "self-net35"`, `host = "self"`, 1)), nil)
	if err == nil || !strings.Contains(err.Error(), "tier.svc.nettcp.listen_backlog: is set but the tier is not a WCF service") {
		t.Errorf("listener on a non-WCF tier: %v", err)
	}
}
