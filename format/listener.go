package format

import (
	"fmt"

	"github.com/tsim-dev/tsim/model"
)

// resolveListener decides a WCF tier's netTcp listener (model.Listener):
// the binding's maxConnections and listenBacklog, 10 each before .NET 4.5
// and 12 × N when the service targets 4.5 or later (dotnet.md §5:
// TransportDefaults, "tied to 4.5 targeting, not 4.0"); with port sharing
// the binding's values are ignored and the Net.TCP Port Sharing Service's
// (SMSvcHost.exe.config) apply: maxPendingConnections 100, listenBacklog 10
// (16 × N in the .NET 4.5 documentation) — seed 004, Snyder: "When running
// your WCF services in netTcpBinding using port sharing the configuration
// of the netTcpBinding is ignored"; MSDN "Configuring the Net.TCP Port
// Sharing Service" and the <net.tcp> element (NetTcpSection).
func resolveListener(c *chain, n int) model.Listener {
	v := c.str(scopeTier, "dotnet")
	net45 := v != "" && dotnetAtLeast(v, "4.5")
	if c.bool(scopeTier, "nettcp.port_sharing") {
		for _, k := range []string{"nettcp.max_connections", "nettcp.listen_backlog"} {
			c.warnUnused(k, "with port sharing the Net.TCP Port Sharing Service accepts the connections and the binding's %s is ignored; set nettcp.sharing_max_pending or nettcp.sharing_listen_backlog (docs/dotnet.md §5)", k[len("nettcp."):])
		}
		l := model.Listener{MaxPending: 100, Backlog: 10}
		why := "SMSvcHost.exe.config defaults: maxPendingConnections 100, listenBacklog 10"
		if net45 {
			l.Backlog = 16 * n
			why = fmt.Sprintf("SMSvcHost.exe.config defaults on .NET 4.5: maxPendingConnections 100, listenBacklog 16 × %d", n)
		}
		set := false
		if s, ok := c.explicit("nettcp.sharing_max_pending"); ok {
			l.MaxPending, set = s.v.(int), true
		}
		if s, ok := c.explicit("nettcp.sharing_listen_backlog"); ok {
			l.Backlog, set = s.v.(int), true
		}
		if set {
			why = "SMSvcHost.exe.config as set (nettcp.sharing_*)"
		}
		l.Resolution = fmt.Sprintf("%d pending, %d backlog: port sharing, the binding's maxConnections and listenBacklog are ignored; %s", l.MaxPending, l.Backlog, why)
		return l
	}
	for _, k := range []string{"nettcp.sharing_max_pending", "nettcp.sharing_listen_backlog"} {
		if _, ok := c.explicit(k); ok {
			c.errAt(k, "configures the Net.TCP Port Sharing Service (SMSvcHost.exe.config), which applies with nettcp.port_sharing = true; set that too, or use nettcp.max_connections and nettcp.listen_backlog")
		}
	}
	l := model.Listener{MaxPending: 10, Backlog: 10}
	why := "netTcpBinding defaults before .NET 4.5 targeting"
	if net45 {
		l = model.Listener{MaxPending: 12 * n, Backlog: 12 * n}
		why = fmt.Sprintf("netTcpBinding defaults when targeting .NET 4.5: 12 × %d", n)
	}
	set := false
	if s, ok := c.explicit("nettcp.max_connections"); ok {
		l.MaxPending, set = s.v.(int), true
	}
	if s, ok := c.explicit("nettcp.listen_backlog"); ok {
		l.Backlog, set = s.v.(int), true
	}
	if set {
		why = "as set (nettcp.max_connections, nettcp.listen_backlog)"
	}
	l.Resolution = fmt.Sprintf("%d pending, %d backlog: %s", l.MaxPending, l.Backlog, why)
	return l
}
