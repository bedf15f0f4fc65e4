package dotnetconfig

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// SettingConfig says how to make a tsim setting in .NET itself: the
// configuration element to paste, and where, or the line of code. key is a
// key path as a variant or tsim explain writes it
// ("tier.web.call.orders.maxconnection_host") and value its value ("17");
// top is the system it applies to, for the tier's processors, host and
// calls. It is the inverse of Resolve for the settings tsim explain
// proposes; ok is false for a key with no .NET form (cores, replicas, a Go
// or Envoy client's keys). The address of a host-specific entry is the
// target tier's name as a host, "http://orders", as tsim config names the
// tiers it writes after the hosts the client endpoints call.
func SettingConfig(top *model.Topology, key, value string) (cfg string, ok bool) {
	parts := strings.Split(key, ".")
	var tier *model.Tier
	var rel string
	target := -1
	switch {
	case len(parts) >= 3 && parts[0] == "load" && parts[1] == "call":
		rel = strings.Join(parts[2:], ".")
		target = top.Load.Call.Target
	case len(parts) >= 3 && parts[0] == "tier":
		tier = findTier(top, parts[1])
		if tier == nil {
			return "", false
		}
		rel = strings.Join(parts[2:], ".")
		switch {
		case strings.HasPrefix(rel, "calls.") && len(parts) >= 4:
			rel = strings.TrimPrefix(rel, "calls.")
			target = onlyTarget(tier)
		case parts[2] == "call" && len(parts) >= 5:
			rel = strings.Join(parts[4:], ".")
			if t := findTier(top, parts[3]); t != nil {
				target = tierIndex(top, t)
			}
		case parts[2] == "step" && len(parts) >= 5:
			rel = strings.Join(parts[4:], ".")
			if n, err := strconv.Atoi(parts[3]); err == nil && n >= 1 && n <= len(tier.Steps) && tier.Steps[n-1].Call != nil {
				target = tier.Steps[n-1].Call.Target
			}
		}
	default:
		return "", false
	}
	n, err := strconv.Atoi(value)
	isInt := err == nil
	cores := 1
	aspnet := false
	if tier != nil {
		cores = max(tier.Cores, 1)
		aspnet = tier.Host == model.HostASPNetClassic || tier.Host == model.HostIISIntegrated
	}
	perCPU := func(v int) int { return (v + cores - 1) / cores }
	appConfig := "the application's app.config (NAME.exe.config)"
	if aspnet {
		appConfig = "the application's web.config"
	}
	switch rel {
	case "maxconnection":
		if !isInt {
			return "", false
		}
		return fmt.Sprintf(`<add address="*" maxconnection="%d"/> inside <system.net><connectionManagement> of %s or machine.config`, n, appConfig), true
	case "maxconnection_host":
		if !isInt {
			return "", false
		}
		host := "HOST"
		if target >= 0 && target < len(top.Tiers) {
			host = hostOf(&top.Tiers[target])
		}
		return fmt.Sprintf(`<add address="http://%s" maxconnection="%d"/> inside <system.net><connectionManagement> of %s or machine.config (the address as the client endpoint names the host: scheme://host, with :port only when it is not the default)`, host, n, appConfig), true
	case "connection_limit_code":
		if !isInt {
			return "", false
		}
		return fmt.Sprintf("System.Net.ServicePointManager.DefaultConnectionLimit = %d; at start-up (Main, or Application_Start in Global.asax), before the first call", n), true
	case "timeout":
		d, err := time.ParseDuration(value)
		if err != nil {
			return "", false
		}
		return fmt.Sprintf(`sendTimeout="%s" on the <binding> the client endpoint's bindingConfiguration names`, timeSpan(d)), true
	}
	if tier == nil {
		return "", false
	}
	code := "at start-up (Main, or Application_Start in Global.asax)"
	switch rel {
	case "worker.max", "io.max", "worker.min", "io.min":
		if !isInt {
			return "", false
		}
		w, io := tier.Worker, tier.IO
		method, wv, iv := "SetMaxThreads", w.Max, io.Max
		if strings.HasSuffix(rel, ".min") {
			method, wv, iv = "SetMinThreads", w.Min, io.Min
		}
		if strings.HasPrefix(rel, "worker.") {
			wv = n
		} else {
			iv = n
		}
		s := fmt.Sprintf("System.Threading.ThreadPool.%s(%d, %d); %s", method, wv, iv, code)
		if aspnet {
			attr := map[string]string{"worker.max": "maxWorkerThreads", "io.max": "maxIoThreads", "worker.min": "minWorkerThreads", "io.min": "minIoThreads"}[rel]
			extra := ""
			if strings.HasSuffix(rel, ".max") {
				extra = ` autoConfig="false"` // autoConfig would override the maximum
			}
			s += fmt.Sprintf(`; or <processModel%s %s="%d"/> in machine.config's <system.web> (per CPU: %d × %d)`, extra, attr, perCPU(n), perCPU(n), cores)
		}
		return s, true
	case "admission.max_executing", "admission.max_per_cpu":
		if !isInt {
			return "", false
		}
		per := n
		if rel == "admission.max_executing" {
			per = perCPU(n)
		}
		if tier.Host != model.HostIISIntegrated {
			return "", false
		}
		return fmt.Sprintf(`<applicationPool maxConcurrentRequestsPerCPU="%d"/> inside <system.web> of Aspnet.config (.NET 4), or the registry value MaxConcurrentRequestsPerCPU under HKLM\SOFTWARE\Microsoft\ASP.NET\2.0.50727.0 (.NET 3.5 SP1)`, per), true
	case "admission.min_free_threads":
		if !isInt {
			return "", false
		}
		return fmt.Sprintf(`<httpRuntime minFreeThreads="%d"/> inside <system.web> of web.config, with <processModel autoConfig="false"/> in machine.config (autoConfig makes it 88 per CPU)`, n), true
	case "admission.queue_limit":
		if !isInt {
			return "", false
		}
		if tier.Host == model.HostIISIntegrated {
			return fmt.Sprintf(`<applicationPool requestQueueLimit="%d"/> inside <system.web> of Aspnet.config (.NET 4)`, n), true
		}
		return fmt.Sprintf(`<httpRuntime appRequestQueueLimit="%d"/> inside <system.web> of web.config`, n), true
	case "wcf.max_calls", "wcf.max_sessions", "wcf.max_instances":
		if !isInt {
			return "", false
		}
		attr := map[string]string{"wcf.max_calls": "maxConcurrentCalls", "wcf.max_sessions": "maxConcurrentSessions", "wcf.max_instances": "maxConcurrentInstances"}[rel]
		return fmt.Sprintf(`<serviceThrottling %s="%d"/> inside the service's <behavior> (system.serviceModel/behaviors/serviceBehaviors) of %s`, attr, n, appConfig), true
	case "wcf.concurrency":
		return fmt.Sprintf("[ServiceBehavior(ConcurrencyMode = ConcurrencyMode.%s)] on the service class", value), true
	case "wcf.instancing":
		return fmt.Sprintf("[ServiceBehavior(InstanceContextMode = InstanceContextMode.%s)] on the service class", value), true
	case "nettcp.max_connections", "nettcp.listen_backlog":
		if !isInt {
			return "", false
		}
		attr := map[string]string{"nettcp.max_connections": "maxConnections", "nettcp.listen_backlog": "listenBacklog"}[rel]
		return fmt.Sprintf(`%s="%d" on the service endpoint's <netTcpBinding><binding> of %s`, attr, n, appConfig), true
	}
	return "", false
}

func findTier(top *model.Topology, name string) *model.Tier {
	for i := range top.Tiers {
		if t := &top.Tiers[i]; t.Name == name || t.Farm == name {
			return t
		}
	}
	return nil
}

func tierIndex(top *model.Topology, t *model.Tier) int {
	for i := range top.Tiers {
		if &top.Tiers[i] == t {
			return i
		}
	}
	return -1
}

// onlyTarget is the one tier a tier's calls go to, or -1.
func onlyTarget(t *model.Tier) int {
	target := -1
	for _, st := range t.Steps {
		if st.Kind != model.StepCall || st.Call == nil {
			continue
		}
		if target >= 0 && st.Call.Target != target {
			return -1
		}
		target = st.Call.Target
	}
	return target
}

// hostOf is the host name a tier answers as: its farm's (the balancer's
// virtual host) or its own name.
func hostOf(t *model.Tier) string {
	if t.Farm != "" {
		return t.Farm
	}
	return t.Name
}

// timeSpan writes a duration as .NET's TimeSpan format, hh:mm:ss[.fffffff].
func timeSpan(d time.Duration) string {
	h := int64(d / time.Hour)
	m := int64(d/time.Minute) % 60
	s := int64(d/time.Second) % 60
	frac := int64(d%time.Second) / 100 // ticks
	out := fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	if h >= 24 {
		out = fmt.Sprintf("%d.%02d:%02d:%02d", h/24, h%24, m, s)
	}
	if frac > 0 {
		out += fmt.Sprintf(".%07d", frac)
	}
	return out
}
