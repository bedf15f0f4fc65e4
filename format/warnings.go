package format

import (
	"fmt"

	"github.com/tsim-dev/tsim/model"
)

// Settings that take no effect (docs/dotnet.md, "Settings that take no
// effect"). .NET overrides or ignores some settings a file can make — the
// '*' maxconnection entry under ASP.NET's autoConfig, maxconnection on a
// netTcp call — and so does tsim; the loader says so with a Warning at the
// setting, the way tsim config warns about an entry in an XML file.

// A keyUse is an explicit connection-limit setting and whether it decided
// any call's limit; reason says what did instead, for the first call it
// did not decide.
type keyUse struct {
	at     pos
	label  string // the key path, "tier.web.calls.maxconnection"
	used   bool
	reason string
}

// noteConnKey records that the explicit setting s (key path label) took
// effect on a call, or did not and why.
func (p *loader) noteConnKey(s setting, label string, used bool, reason string) {
	for _, u := range p.connUse {
		if u.at == s.at {
			if used {
				u.used = true
			} else if u.reason == "" {
				u.reason = reason
			}
			return
		}
	}
	p.connUse = append(p.connUse, &keyUse{at: s.at, label: label, used: used, reason: reason})
}

// warnConnKeys warns about every connection-limit setting that decided no
// call's limit, and forgets them: called once a system is resolved.
func (p *loader) warnConnKeys() {
	for _, u := range p.connUse {
		if !u.used {
			p.warnf(u.at, u.label, "has no effect: %s", u.reason)
		}
	}
	p.connUse = nil
}

// connKeys checks the .NET connection-limit keys a call sets against the
// rule that decided its limit (docs/dotnet.md §1.1). label gives a key's path
// for the layer that set it.
func (p *loader) connKeys(c *chain, in ConnInput, rule connRule, label func(rel string, layer int) string) {
	for _, k := range []string{"maxconnection", "maxconnection_host", "connection_limit_code"} {
		s, layer, ok := c.explicitLayer(k)
		if !ok {
			continue
		}
		if n, _ := s.v.(int); n <= 0 {
			continue // 0: "not set in code"
		}
		mine := map[string]connRule{"maxconnection": ruleStar, "maxconnection_host": ruleHost, "connection_limit_code": ruleCode}[k]
		p.noteConnKey(s, label(k, layer), rule == mine, connReason(k, rule, in))
	}
}

// connReason says why key k did not decide a call's limit under rule.
func connReason(k string, rule connRule, in ConnInput) string {
	switch rule {
	case ruleCore:
		return "the .NET Core WCF client (dotnet = \"core\") sets no connection limit (docs/dotnet.md §1.6)"
	case ruleBinding:
		return fmt.Sprintf("the call to %s uses %s, which does not go through System.Net (docs/dotnet.md §5)", in.Target, in.Binding)
	case ruleHost:
		return fmt.Sprintf("the call to %s has a host-specific entry (maxconnection_host), which comes first (docs/dotnet.md §1.1)", in.Target)
	case ruleCode:
		return fmt.Sprintf("for the call to %s, connection_limit_code (ServicePointManager.DefaultConnectionLimit set in code) is assigned after the '*' entry is read and overrides it (docs/dotnet.md §1.1)", in.Target)
	case ruleAutoConfig:
		what := "12 × N on .NET 2.0–4.0"
		if dotnetAtLeast(in.DotNet, "4.5") {
			what = "unlimited from .NET 4.5"
		}
		return fmt.Sprintf("ASP.NET's autoConfig sets DefaultConnectionLimit (%s) after the '*' entry is read (docs/dotnet.md §1.1); maxconnection_host or connection_limit_code would take effect", what)
	case ruleLoopback:
		return fmt.Sprintf("%s is on the same machine (loopback): System.Net's loopback exemption beats a '*' entry (docs/dotnet.md §1.3); maxconnection_host or connection_limit_code would take effect", in.Target)
	}
	return "another rule decided the limit (docs/dotnet.md §1.1)"
}

// explicitLayer is explicit, and also says which layer set the key.
func (c *chain) explicitLayer(rel string) (setting, int, bool) {
	for i, l := range c.layers {
		if l.explicit != nil {
			if s, ok := l.explicit[l.prefix+rel]; ok {
				return s, i, true
			}
		}
	}
	return setting{}, 0, false
}

// warnUnused warns about an explicit tier key that takes no effect.
func (c *chain) warnUnused(rel, format string, args ...any) {
	if s, ok := c.explicit(rel); ok {
		c.p.warnf(s.at, c.label+rel, "has no effect: "+format, args...)
	}
}

// warnTier warns about the tier keys a resolved tier ignores.
func warnTier(c *chain, tier *model.Tier) {
	aspnet := tier.Host.IsASPNet()
	if !aspnet {
		c.warnUnused("auto_config", "processModel autoConfig is ASP.NET's; host %q is not an ASP.NET host (docs/dotnet.md §2a)", tier.Host)
		c.warnUnused("admission.module", "the WCF HTTP module is ASP.NET's; host %q is not an ASP.NET host (docs/dotnet.md §3h)", tier.Host)
	}
	if tier.Admission.Kind != model.AdmitClassic {
		c.warnUnused("admission.client_connected_check", "only the classic RequestQueue checks whether a queued request's client is still connected; admission.kind is %q (docs/dotnet.md §2b)", tier.Admission.Kind)
	}
	for _, pool := range []struct {
		name string
		p    model.Pool
	}{{"worker", tier.Worker}, {"io", tier.IO}} {
		if pool.p.Injection == model.InjectNone {
			c.warnUnused(pool.name+".gate_delay", "%s.injection is \"none\": no gate thread adds threads (docs/dotnet.md §3)", pool.name)
		}
	}
}

// warnSessions warns about a MaxConcurrentSessions that no call can take:
// every call into the tier is sessionless (docs/dotnet.md §4). It runs on the
// resolved tiers before farms are expanded.
func (p *loader) warnSessions(doc *docSpec, topo *model.Topology) {
	sessionful := make([]bool, len(topo.Tiers))
	called := make([]bool, len(topo.Tiers))
	mark := func(call *model.Call) {
		if call == nil || call.Target < 0 || call.Target >= len(topo.Tiers) {
			return
		}
		called[call.Target] = true
		if call.Binding.Sessionful {
			sessionful[call.Target] = true
		}
	}
	for i := range topo.Tiers {
		for _, st := range topo.Tiers[i].Steps {
			if st.Kind == model.StepCall {
				mark(st.Call)
			}
		}
	}
	mark(&topo.Load.Call)
	for i, t := range doc.tiers {
		if i >= len(topo.Tiers) || topo.Tiers[i].WCF == nil || !called[i] || sessionful[i] {
			continue
		}
		if s, ok := t.keys["wcf.max_sessions"]; ok {
			p.warnf(s.at, "tier."+t.name+".wcf.max_sessions", "has no effect: every call into %s uses a sessionless binding, which takes no session slot (docs/dotnet.md §4)", t.name)
		}
	}
}
