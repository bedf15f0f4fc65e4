package dotnetconfig

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/format"
)

// hostsWCF reports whether the process hosts a WCF service: the files
// configure <services>, or (WCF 4) a nameless default service behaviour.
func (r *resolver) hostsWCF() bool {
	return len(r.c.services) > 0 || atLeast(r.v, "4.0") && findNamed(r.c.behaviors, "") != nil
}

// wcfService resolves the service the tier hosts: its behaviour's
// serviceThrottling, or the defaults of the WCF version (dotnet.md §4).
func (r *resolver) wcfService() {
	c := r.c
	wcf4 := atLeast(r.v, "4.0")
	var svc *named
	if len(c.services) > 0 {
		svc = c.services[0]
		if r.opt.Service != "" {
			svc = nil
			var names []string
			for _, s := range c.services {
				names = append(names, s.name)
				if s.name == r.opt.Service {
					svc = s
				}
			}
			if svc == nil {
				c.errorf(pos{file: "--service"}, "no <service name=%q> in the files (services: %s)", clip(r.opt.Service), clip(strings.Join(names, ", ")))
				return
			}
		} else if len(c.services) > 1 {
			c.warn(c.services[1].at, "%d services are configured; the tier gets the throttle of the first, %q (--service NAME for another)", len(c.services), clip(svc.name))
		}
	}
	defaultBehavior := findNamed(c.behaviors, "")
	r.markOtherServices(svc)
	if svc == nil && !(wcf4 && defaultBehavior != nil) {
		if r.opt.Service != "" {
			c.errorf(pos{file: "--service"}, "no <services> in the files")
		}
		r.row("WCF service", "none", "wcf.preset", "no <services> in the files (a service configured in code is not visible here)")
		r.set("wcf.preset", "none", "no <services> in the files", r.rep.presetWCF != "none")
		return
	}
	if r.v == "2.0" {
		c.warn(pos{}, "system.serviceModel with .NET 2.0: WCF needs .NET 3.0 or later; its settings are resolved as 3.0's")
	}
	preset := "wcf35"
	if wcf4 {
		preset = "wcf4"
	}
	// The behaviour: behaviorConfiguration, or (WCF 4) the nameless one.
	var beh *named
	behFrom := ""
	if svc != nil {
		r.rep.Service = svc.name
		r.row("WCF service", svc.name, "wcf.preset", fromAt(svc.at, "WCF "+map[bool]string{true: "4", false: "3.x"}[wcf4]+" throttle defaults: "+preset))
		r.set("wcf.preset", preset, fromAt(svc.at, "<service>"), true)
		if bc, _ := svc.el.Attr("behaviorConfiguration"); bc != "" {
			beh = findNamed(c.behaviors, bc)
			if beh == nil {
				c.errorf(svc.at, "<service> behaviorConfiguration=%q names no <serviceBehaviors><behavior>; .NET refuses it", clip(bc))
				return
			}
			behFrom = fromAt(beh.at, fmt.Sprintf("behavior %q", clip(bc)))
		} else if defaultBehavior != nil {
			if wcf4 {
				beh, behFrom = defaultBehavior, fromAt(defaultBehavior.at, "the nameless default behavior (WCF 4)")
			} else {
				c.warn(defaultBehavior.at, "a <behavior> without a name has no effect before .NET 4: default behaviors are new in WCF 4; give it a name and set behaviorConfiguration")
			}
		}
		for _, ep := range svc.el.Children {
			if ep.Name == "endpoint" {
				r.serviceEndpoint(ep, svc.at.file)
			}
		}
	} else {
		beh, behFrom = defaultBehavior, fromAt(defaultBehavior.at, "no <services>: WCF 4's nameless default behavior applies to every service")
		r.row("WCF service", "(every service)", "wcf.preset", behFrom)
		r.set("wcf.preset", preset, behFrom, true)
	}
	var th *Element
	var thAt pos
	if beh != nil {
		beh.used = true
		if th = child(beh.el, "serviceThrottling"); th != nil {
			thAt = pos{beh.at.file, th.Line}
		}
	}
	if th == nil && behFrom != "" {
		behFrom += ", without <serviceThrottling>"
	}
	calls, sessions := 16, 10 // dotnet.md §4: WCF 3.0/3.5
	why := "WCF 3.x default (dotnet.md §4)"
	if wcf4 {
		calls, sessions, why = 16*r.n, 100*r.n, fmt.Sprintf("WCF 4 default, per CPU × %d (dotnet.md §4)", r.n)
	}
	get := func(name string, def int, defWhy string) (int, string, bool) {
		if th != nil {
			if a, ok := th.Attr(name); ok {
				v, err := parseInt(a)
				if err == nil && v < 1 {
					err = fmt.Errorf("must be at least 1")
				}
				if err != nil {
					c.errorf(thAt, "serviceThrottling %s: %v", name, err)
					return def, "", false
				}
				return v, thAt.String(), true
			}
		}
		from := fromDefault(defWhy)
		if behFrom != "" {
			from += "; " + behFrom
		}
		return def, from, false
	}
	mc, mcFrom, mcFile := get("maxConcurrentCalls", calls, why)
	ms, msFrom, msFile := get("maxConcurrentSessions", sessions, why)
	mi, miFrom, miFile := get("maxConcurrentInstances", min(mc+ms, maxInt32), "calls + sessions (dotnet.md §4)")
	r.row("serviceThrottling maxConcurrentCalls", fmt.Sprint(mc), "wcf.max_calls", mcFrom)
	r.set("wcf.max_calls", mc, mcFrom, mcFile)
	r.row("serviceThrottling maxConcurrentSessions", fmt.Sprint(ms), "wcf.max_sessions", msFrom)
	r.set("wcf.max_sessions", ms, msFrom, msFile)
	r.row("serviceThrottling maxConcurrentInstances", fmt.Sprint(mi), "wcf.max_instances", miFrom)
	r.set("wcf.max_instances", mi, miFrom, miFile)
}

// markOtherServices marks the behaviours and binding configurations the
// services other than svc use: they are in use, though the tier gets one
// service's throttle, and "no service uses it" would be false.
func (r *resolver) markOtherServices(svc *named) {
	for _, s := range r.c.services {
		if s == svc {
			continue
		}
		if bc, ok := s.el.Attr("behaviorConfiguration"); ok {
			if b := findNamed(r.c.behaviors, bc); b != nil {
				b.used = true
			}
		} else if b := findNamed(r.c.behaviors, ""); b != nil && atLeast(r.v, "4.0") {
			b.used = true
		}
		for _, ep := range s.el.Children {
			if ep.Name != "endpoint" {
				continue
			}
			typ, _ := ep.Attr("binding")
			name, _ := ep.Attr("bindingConfiguration")
			if b := findNamed(r.c.bindings[typ], name); b != nil && (name != "" || atLeast(r.v, "4.0")) {
				b.used = true
			}
		}
	}
}

// serviceEndpoint describes one of the service's endpoints: whether its
// binding keeps sessions decides whether maxConcurrentSessions matters.
func (r *resolver) serviceEndpoint(ep *Element, file string) {
	at := pos{file, ep.Line}
	typ, hasType := ep.Attr("binding")
	addr, _ := ep.Attr("address")
	if !hasType {
		return // a default endpoint; nothing to say about it
	}
	cfgName, _ := ep.Attr("bindingConfiguration")
	cfg, cfgAt := r.bindingConfig(typ, cfgName, at)
	b := mapBinding(typ, cfg)
	if b.unknown {
		return
	}
	s := "no sessions"
	if b.sessionful {
		s = "sessionful: maxConcurrentSessions applies"
	}
	r.row(fmt.Sprintf("service endpoint %q", clip(addr)), typ, "", fromAt(at, s+"; in tsim the callers' binding decides"))
	if b.tsim == "netTcp" && !r.listenerDone {
		r.listenerDone = true
		r.netTcpListener(cfg, cfgAt)
	}
}

// netTcpListener reports the netTcp listener the first netTcp endpoint of
// the service configures: portSharingEnabled, maxConnections and
// listenBacklog (dotnet.md §5). With port sharing the Net.TCP Port Sharing
// Service accepts the connections and the binding's two limits are ignored.
func (r *resolver) netTcpListener(cfg *Element, at pos) {
	sharing, sharingFrom, sharingFile := false, fromDefault("false (TcpTransportDefaults.PortSharingEnabled)"), false
	if cfg != nil {
		if a, ok := cfg.Attr("portSharingEnabled"); ok {
			v, err := parseBool(a)
			if err != nil {
				r.c.errorf(at, "netTcpBinding portSharingEnabled: %v", err)
			} else {
				sharing, sharingFrom, sharingFile = v, at.String(), true
			}
		}
	}
	r.row("  netTcp portSharingEnabled", fmt.Sprint(sharing), "nettcp.port_sharing", sharingFrom)
	if sharingFile {
		r.set("nettcp.port_sharing", sharing, sharingFrom, true)
	}
	defWhy := "10; 12 per CPU when the application targets .NET 4.5 (TransportDefaults, dotnet.md §5)"
	for _, k := range []struct{ attr, key string }{{"maxConnections", "nettcp.max_connections"}, {"listenBacklog", "nettcp.listen_backlog"}} {
		v, set := 0, false
		if cfg != nil {
			if a, ok := cfg.Attr(k.attr); ok {
				n, err := parseInt(a)
				if err == nil && n < 1 {
					err = fmt.Errorf("must be at least 1")
				}
				if err != nil {
					r.c.errorf(at, "netTcpBinding %s: %v", k.attr, err)
					continue
				}
				v, set = n, true
			}
		}
		switch {
		case set && sharing:
			r.c.warn(at, "netTcpBinding %s has no effect: with portSharingEnabled the Net.TCP Port Sharing Service (SMSvcHost.exe.config) accepts the connections (dotnet.md §5)", k.attr)
		case set:
			r.row("  netTcp "+k.attr, fmt.Sprint(v), k.key, at.String())
			r.set(k.key, v, at.String(), true)
		case !sharing:
			r.row("  netTcp "+k.attr, "default", k.key, fromDefault(defWhy))
		}
	}
	if sharing {
		r.row("  netTcp listener", "SMSvcHost", "", fromDefault("maxPendingConnections 100, listenBacklog 10 (16 per CPU on 4.5) in SMSvcHost.exe.config, which tsim config does not read (nettcp.sharing_max_pending, nettcp.sharing_listen_backlog)"))
	}
}

func findNamed(list []*named, name string) *named {
	for _, n := range list {
		if n.name == name {
			return n
		}
	}
	return nil
}

// bindingConfig finds the binding configuration an endpoint names, or
// (WCF 4) the nameless one of its type. nil means the binding's defaults.
func (r *resolver) bindingConfig(typ, name string, at pos) (*Element, pos) {
	list := r.c.bindings[typ]
	if name != "" {
		b := findNamed(list, name)
		if b == nil {
			r.c.errorf(at, "bindingConfiguration=%q: no <%s><binding name=%q>; .NET refuses it", clip(name), clip(typ), clip(name))
			return nil, pos{}
		}
		b.used = true
		return b.el, b.at
	}
	if b := findNamed(list, ""); b != nil {
		if atLeast(r.v, "4.0") {
			b.used = true
			return b.el, b.at
		}
		b.used = true // warned here; not again as unused
		r.c.warn(b.at, "a <%s><binding> without a name has no effect before .NET 4: default binding configurations are new in WCF 4", clip(typ))
	}
	return nil, pos{}
}

// boundBinding is a WCF binding as tsim models it.
type boundBinding struct {
	tsim       string // the tsim binding
	sessionful bool
	notes      []string // security mode, encoder, reliable session
	unknown    bool     // tsim has no binding like it
}

// sessionfulBindings are the tsim bindings that keep sessions by default.
var sessionfulBindings = map[string]bool{"wsHttp": true, "netTcp": true, "namedPipe": true}

// mapBinding maps a WCF binding and its configuration (nil: defaults) to
// tsim's bindings. tsim's bindings are costs per message; security that
// only adds CPU (TLS) is not in them, sessions are.
func mapBinding(typ string, cfg *Element) boundBinding {
	secMode := func(def string) string {
		if cfg != nil {
			if s := child(cfg, "security"); s != nil {
				if m, ok := s.Attr("mode"); ok {
					return strings.TrimSpace(m)
				}
			}
		}
		return def
	}
	reliable := false
	if cfg != nil {
		if rs := child(cfg, "reliableSession"); rs != nil {
			if e, ok := rs.Attr("enabled"); ok {
				reliable, _ = parseBool(e)
			}
		}
	}
	switch typ {
	case "basicHttpBinding", "basicHttpsBinding":
		def := "None"
		if typ == "basicHttpsBinding" {
			def = "Transport"
		}
		b := boundBinding{tsim: "basicHttp", notes: []string{"security " + secMode(def)}}
		if secMode(def) != "None" {
			b.notes = append(b.notes, "TLS and message security cost is not modelled")
		}
		if cfg != nil {
			if e, ok := cfg.Attr("messageEncoding"); ok && strings.EqualFold(strings.TrimSpace(e), "Mtom") {
				b.notes = append(b.notes, "MTOM encoder modelled as text")
			}
		}
		return b
	case "wsHttpBinding", "ws2007HttpBinding":
		mode := secMode("Message")
		secureConv := true
		if cfg != nil {
			if s := child(cfg, "security"); s != nil {
				if m := child(s, "message"); m != nil {
					if e, ok := m.Attr("establishSecurityContext"); ok {
						if v, err := parseBool(e); err == nil {
							secureConv = v
						}
					}
				}
			}
		}
		notes := []string{"security " + mode}
		if reliable {
			notes = append(notes, "reliable session")
		}
		switch mode {
		case "Message", "TransportWithMessageCredential":
			if !secureConv {
				notes = append(notes, "establishSecurityContext=false")
			}
			return boundBinding{tsim: "wsHttp", sessionful: secureConv || reliable, notes: notes}
		default:
			notes = append(notes, "no message security: basicHttp's costs")
			return boundBinding{tsim: "basicHttp", sessionful: reliable, notes: notes}
		}
	case "wsDualHttpBinding":
		return boundBinding{tsim: "wsHttp", sessionful: true, notes: []string{"always a reliable session"}}
	case "netTcpBinding":
		n := []string{"security " + secMode("Transport")}
		if reliable {
			n = append(n, "reliable session")
		}
		return boundBinding{tsim: "netTcp", sessionful: true, notes: n}
	case "netNamedPipeBinding":
		return boundBinding{tsim: "namedPipe", sessionful: true}
	case "webHttpBinding":
		return boundBinding{tsim: "http"}
	case "netHttpBinding", "netHttpsBinding":
		return boundBinding{tsim: "basicHttp-binary", notes: []string{"binary encoder over HTTP"}}
	case "customBinding":
		if cfg == nil {
			return boundBinding{tsim: "basicHttp", unknown: true}
		}
		enc, transport, session := "text", "", false
		var notes []string
		for _, el := range cfg.Children {
			switch el.Name {
			case "binaryMessageEncoding":
				enc = "binary"
			case "textMessageEncoding", "mtomMessageEncoding":
				enc = "text"
			case "httpTransport", "httpsTransport":
				transport = "http"
			case "tcpTransport":
				transport = "tcp"
			case "namedPipeTransport":
				transport = "pipe"
			case "reliableSession":
				session = true
				notes = append(notes, "reliable session")
			case "security":
				if m, _ := el.Attr("authenticationMode"); strings.Contains(m, "SecureConversation") {
					session = true
					notes = append(notes, "secure conversation")
				}
			}
		}
		switch transport {
		case "tcp":
			return boundBinding{tsim: "netTcp", sessionful: true, notes: notes}
		case "pipe":
			return boundBinding{tsim: "namedPipe", sessionful: true, notes: notes}
		case "http":
			b := boundBinding{tsim: "basicHttp", sessionful: session, notes: append([]string{"text encoder over HTTP"}, notes...)}
			if enc == "binary" {
				b.tsim, b.notes[0] = "basicHttp-binary", "binary encoder over HTTP"
			}
			return b
		}
		return boundBinding{tsim: "basicHttp", unknown: true}
	}
	return boundBinding{tsim: "basicHttp", unknown: true}
}

// calls resolves the client endpoints and the System.Net connection limit
// of each, with format.ResolveConnLimit: the rule tsim run applies.
func (r *resolver) calls() {
	c := r.c
	// The '*' entry: ServicePointManager takes it as the default limit, or
	// ignores it below 1 (ServicePointManager.ConfigTable, dotnet.md §1).
	star := fromDefault("no <add address=\"*\"> inside system.net/connectionManagement took effect")
	for _, e := range c.conn {
		if e.address != "*" {
			continue
		}
		switch {
		case e.max < 1:
			c.warn(e.at, "<add address=\"*\" maxconnection=\"%d\"> has no effect: System.Net ignores a default below 1", e.max)
		case !e.maxSet:
			r.starEntry, star = 1, fromAt(e.at, "maxconnection absent: the element's default of 1")
		default:
			r.starEntry, star = e.max, e.at.String()
		}
	}
	val := "none"
	if r.starEntry > 0 {
		val = fmt.Sprint(r.starEntry)
		r.set("calls.maxconnection", r.starEntry, star, true)
		if r.aspnet() && r.auto {
			for _, e := range c.conn {
				if e.address == "*" {
					c.warn(e.at, `<add address="*"> has no effect: ASP.NET's autoConfig sets the default connection limit after reading it (12 per CPU on .NET 2.0–4.0, unlimited from 4.5; dotnet.md §1); a host-specific entry would take effect`)
				}
			}
		}
	}
	r.row(`connectionManagement "*"`, val, "calls.maxconnection", star)

	hostEntries := map[string]connEntry{}
	for _, e := range c.conn {
		if e.address != "*" {
			hostEntries[e.address] = e
		}
	}
	names := map[string]bool{r.rep.Tier: true}
	matched := map[string]bool{}
	r.targets = map[string]*Call{}
	for _, ep := range c.client {
		call := r.call(ep, hostEntries, names, matched)
		if call != nil {
			r.rep.Calls = append(r.rep.Calls, call)
		}
	}
	callKeys := map[string]bool{}
	for _, call := range r.rep.Calls {
		if u, err := url.Parse(strings.TrimSpace(call.Address)); err == nil {
			callKeys[servicePointKey(u)] = true
		}
	}
	unmatched := 0
	for _, e := range c.conn {
		if e.address == "*" || matched[e.address] {
			continue
		}
		if key, near := nearMiss(e.address, callKeys); near {
			c.warn(e.at, "<add address=%q> never matches: System.Net looks the host up as %q (scheme://host, with the port only when it is not the default, as written in lower case)", clip(e.address), key)
			continue
		}
		if unmatched++; unmatched <= maxUnmatchedRows {
			r.row(fmt.Sprintf("connectionManagement %q", clip(e.address)), fmt.Sprint(e.max), "", fromAt(e.at, "no client endpoint in these files calls that host"))
		}
	}
	if unmatched > maxUnmatchedRows {
		r.row(fmt.Sprintf("connectionManagement, %d more", unmatched-maxUnmatchedRows), "", "", "entries for hosts no client endpoint in these files calls")
	}
	if len(c.client) == 0 {
		limit, why := format.ResolveConnLimit(r.connInput("another host", "basicHttp", 0, false))
		r.row("System.Net connection limit per host", fmtLimit(limit), "", why)
	}
}

func fmtLimit(n int) string {
	if n == 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

func (r *resolver) connInput(target, binding string, hostEntry int, loopback bool) format.ConnInput {
	return format.ConnInput{
		Client:            "dotnet",
		Target:            target,
		Binding:           binding,
		DotNet:            r.v,
		ASPNet:            r.aspnet(),
		AutoConfig:        r.aspnet() && r.auto,
		Cores:             r.n,
		MaxConnection:     r.starEntry,
		MaxConnectionHost: hostEntry,
		Loopback:          loopback,
	}
}

// defaultPort is a scheme's port when a URI gives none.
func defaultPort(scheme string) string {
	switch strings.ToLower(scheme) {
	case "http":
		return "80"
	case "https":
		return "443"
	case "net.tcp":
		return "808"
	}
	return ""
}

// servicePointKey is the string System.Net looks a host up by in
// connectionManagement: scheme://host, with :port only when it is not the
// scheme's default (ServicePointManager.MakeQueryString).
func servicePointKey(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	key := strings.ToLower(u.Scheme) + "://" + host
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80") && !(u.Scheme == "https" && p == "443") {
		key += ":" + p
	}
	return key
}

// maxUnmatchedRows bounds the rows of host entries no call uses.
const maxUnmatchedRows = 20

// nearMiss reports whether a host entry was probably meant for one of the
// calls (their ServicePoint keys): equal to a key but for case, a trailing
// slash, a path, a default port or a missing scheme.
func nearMiss(addr string, callKeys map[string]bool) (string, bool) {
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		if !strings.Contains(s, "://") {
			s = "http://" + s
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return s
		}
		return servicePointKey(u)
	}
	n := norm(addr)
	return n, callKeys[n]
}

// call resolves one client endpoint.
func (r *resolver) call(ep *endpoint, hostEntries map[string]connEntry, names, matched map[string]bool) *Call {
	c := r.c
	u, err := url.Parse(strings.TrimSpace(ep.address))
	if err != nil || !u.IsAbs() || u.Host == "" {
		c.warn(ep.at, "client <endpoint> without an absolute address is not a call tsim config can place")
		return nil
	}
	typ := ep.binding
	typFrom := ep.at.String()
	if !ep.hasBinding {
		if !atLeast(r.v, "4.0") {
			c.errorf(ep.at, "client <endpoint> without a binding attribute; .NET 3.x refuses it")
			return nil
		}
		switch strings.ToLower(u.Scheme) {
		case "http", "https":
			typ = "basicHttpBinding"
		case "net.tcp":
			typ = "netTcpBinding"
		case "net.pipe":
			typ = "netNamedPipeBinding"
		default:
			c.warn(ep.at, "client <endpoint> without a binding for scheme %q: not a call tsim config can place", clip(u.Scheme))
			return nil
		}
		typFrom = fromAt(ep.at, "no binding attribute: WCF 4's protocolMapping for "+strings.ToLower(u.Scheme))
	}
	cfg, cfgAt := r.bindingConfig(typ, ep.bindingConfig, ep.at)
	b := mapBinding(typ, cfg)
	if b.unknown {
		c.warn(ep.at, "tsim has no binding like <%s>%s; the call is written with basicHttp", clip(typ), map[bool]string{true: " without a transport element", false: ""}[typ == "customBinding"])
	}
	name := ep.name
	if name == "" {
		name = ep.contract
	}
	call := &Call{
		Endpoint:    name,
		Address:     ep.address,
		At:          ep.at.String(),
		BindingType: typ,
		Binding:     b.tsim,
		Sessionful:  b.sessionful,
		Timeout:     time.Minute,
		TimeoutFrom: fromDefault("WCF SendTimeout 1 min (dotnet.md §5)"),
	}
	call.SessionfulSet = b.sessionful != sessionfulBindings[b.tsim]
	if cfg != nil {
		if v, ok := cfg.Attr("sendTimeout"); ok {
			d, err := parseTimeSpan(v, true)
			if err != nil {
				c.errorf(cfgAt, "<%s> sendTimeout: %v", clip(typ), err)
			} else if d == infinite || d > maxTsimDuration {
				call.Timeout, call.TimeoutFrom = 0, fromAt(cfgAt, "Infinite or more than 30 days: no timeout")
			} else {
				call.Timeout, call.TimeoutFrom = d, cfgAt.String()
			}
		} else {
			call.TimeoutFrom += "; " + fromAt(cfgAt, "its binding configuration sets none")
		}
	}
	// One ServicePoint, and so one connection limit, per scheme, host and
	// port, whatever the endpoint's path or contract (dotnet.md §1.2): the
	// endpoints that share one call one placeholder tier, whose connection
	// pool tsim keeps per caller and target.
	key := servicePointKey(u)
	first := r.targets[key]
	if first != nil {
		call.Target = first.Target
	} else {
		base := u.Hostname()
		if p := u.Port(); p != "" && p != defaultPort(u.Scheme) {
			base += "-" + p
		}
		call.Target = targetName(base, names)
		r.targets[key] = call
	}
	host := strings.ToLower(u.Hostname())
	call.Loopback = host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
	hostFrom := ""
	if e, ok := hostEntries[key]; ok && strings.HasPrefix(key, "http") {
		matched[key] = true
		if e.max < 1 {
			c.warn(e.at, "<add address=%q maxconnection=\"%d\"> is not modelled: tsim takes host-specific limits of 1 or more", clip(e.address), e.max)
		} else {
			call.MaxConnectionHost, hostFrom = e.max, e.at.String()
		}
	}
	call.Limit, call.Resolution = format.ResolveConnLimit(r.connInput(call.Target, call.Binding, call.MaxConnectionHost, call.Loopback))

	bindingFrom := typFrom
	if cfg != nil {
		bindingFrom = fromAt(cfgAt, "<"+typ+">")
	}
	if len(b.notes) > 0 {
		bindingFrom += "; " + strings.Join(b.notes, ", ")
	}
	sess := ""
	if b.sessionful {
		sess = ", sessionful"
	}
	t := "call." + call.Target + "."
	r.row(fmt.Sprintf("client endpoint %q", clip(name)), clip(ep.address), "call."+call.Target, ep.at.String())
	r.row("  binding", call.Binding+sess, t+"binding", bindingFrom)
	r.row("  sendTimeout", timeoutValue(call.Timeout), t+"timeout", call.TimeoutFrom)
	if call.MaxConnectionHost > 0 {
		r.row(fmt.Sprintf("  connectionManagement %q", key), fmt.Sprint(call.MaxConnectionHost), t+"maxconnection_host", hostFrom)
	}
	limitKey := ""
	switch {
	case call.MaxConnectionHost > 0:
		limitKey = t + "maxconnection_host"
	case r.starEntry > 0:
		limitKey = "calls.maxconnection"
	}
	shared := ""
	if first != nil {
		shared = fmt.Sprintf("; one ServicePoint with endpoint %q (%s), so one limit for both (dotnet.md §1.2)", clip(first.Endpoint), key)
	}
	r.row("  connection limit", fmtLimit(call.Limit), limitKey, call.Resolution+shared)
	return call
}

func timeoutValue(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return fmtDuration(d)
}

// targetName makes a tier name for the service a call goes to from its host
// name: letters, digits, '-' and '_', unique among names.
func targetName(host string, names map[string]bool) string {
	var b strings.Builder
	for _, ch := range strings.ToLower(host) {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= '0' && ch <= '9', ch == '-', ch == '_':
			b.WriteRune(ch)
		case ch == '.' || ch == ':':
			b.WriteByte('-')
		}
		if b.Len() >= 56 {
			break
		}
	}
	base := strings.Trim(b.String(), "-")
	if base == "" {
		base = "service"
	}
	name := base
	for i := 2; names[name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	names[name] = true
	return name
}
