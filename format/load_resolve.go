package format

import (
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/sim"
)

// Resolution: from explicit settings to a Topology. For every key the value
// is, in order: the explicit setting (step, then the tier's calls.* for call
// keys), the tier preset, the schema default below. Presets are applied anew
// for every scenario, so a variant that changes cores rescales every per-CPU
// default it did not set explicitly.

// topDefaults are the defaults of top-level and load keys.
var topDefaults = map[string]any{
	"duration":         "5m",
	"warmup":           "0s",
	"sample_every":     "1s",
	"precision":        0.0,
	"load.timeout":     "0s", // the load client waits as long as it takes
	"load.agents":      1,
	"load.agent_cores": 1,
}

// tierDefaults are the defaults of tier keys that the tier preset leaves out.
var tierDefaults = map[string]any{
	"preset":                           "none",
	"host":                             "self",
	"cores":                            1,
	"cpu_discipline":                   "sharing",
	"cost_multiplier":                  1.0,
	"async":                            false,
	"start_up":                         "0s",
	"memory_per_request_kb":            0.0,
	"auto_config":                      false,
	"worker.min":                       0,
	"worker.max":                       unlimitedThreads,
	"worker.injection":                 "none",
	"worker.gate_delay":                "500ms", // dotnet.md §3: gate thread period
	"worker.idle_timeout":              "20s",   // see idleTimeout in presets.go
	"io.min":                           0,
	"io.max":                           unlimitedThreads,
	"io.injection":                     "none",
	"io.gate_delay":                    "500ms",
	"io.idle_timeout":                  "20s",
	"admission.kind":                   "none",
	"admission.min_free_threads":       8,    // dotnet.md §2a: minFreeThreads without autoConfig
	"admission.queue_limit":            5000, // dotnet.md §2a: appRequestQueueLimit
	"admission.count_executing":        false,
	"admission.module":                 "sync",
	"admission.execution_timeout":      "0s",
	"admission.execution_check":        "15s",        // dotnet.md §2a
	"admission.client_connected_check": "5s",         // dotnet.md §2a: clientConnectedCheck
	"wcf.instancing":                   "PerSession", // dotnet.md §4: InstanceContextMode default
	"wcf.concurrency":                  "Single",     // dotnet.md §4: ConcurrencyMode default
	// No source gives WCF's own cost of creating an instance or of the
	// singleton's lock (seed 000 says only "pretty high" and "global
	// locking"); a measured operation cost already includes them.
	"wcf.instance_cpu":            "0s",
	"wcf.single_lock_cpu":         "0s",
	"wcf.one_way":                 false, // OperationContract IsOneWay defaults to false
	"wcf.max_pending_sessions":    128,   // RS Security/SecuritySessionServerSettings.cs: defaultMaximumPendingSessions
	"wcf.pending_session_timeout": "2m",  // same file: defaultInactivityTimeout
	"replicas":                    1,
	"balancer.policy":             "round-robin",
	"balancer.affinity":           "session",
	"balancer.latency":            "0s",
}

// callDefaults are the defaults of call keys that do not depend on the
// client (those that do are decided in resolveCall).
var callDefaults = map[string]any{
	"client":                      "none",
	"connection_limit_code":       0,
	"max_conns_per_host":          0,
	"loopback":                    false,
	"connection_queue":            "auto",
	"proxy":                       "shared",
	"proxy_pool_size":             10, // no source: ClientBase has no pool; 10 is a small pool
	"proxy_create_cost":           "0s",
	"factory_create_cost":         "0s", // no source: Dong's post says only "very expensive"
	"proxy_construction":          "config",
	"factory_cache":               "auto",
	"cache_setting":               "default",
	"endpoints":                   1,
	"endpoint_pick":               "random",
	"request_kb":                  2.0,     // a small SOAP request
	"reply_kb":                    5.0,     // ~20 objects (the binding calibration point)
	"network_latency":             "100us", // one way on a LAN
	"network_bandwidth_mbps":      1000.0,  // gigabit Ethernet
	"retry.attempts":              1,
	"retry.backoff":               "0s",
	"retry.jitter":                0.0,
	"farm_address":                "virtual",
	"binding_negotiation_timeout": "1m", // dotnet.md §5: OpenTimeout, the channel open that negotiates
	"binding_close_timeout":       "1m", // dotnet.md §5: CloseTimeout
}

// layer is one source of values in a lookup chain.
type layer struct {
	explicit map[string]setting // explicit settings, or nil
	raw      map[string]any     // preset or default values, or nil
	prefix   string             // prepended to the key in this layer ("calls.")
}

// chain looks a key up through its layers. at is the position blamed for
// values that were not set explicitly.
type chain struct {
	p      *loader
	layers []layer
	at     pos
	label  string // key path prefix for messages ("tier.web.")
}

// get returns the value of rel, where it was set, and whether explicitly.
// def is the key's definition (its scope's table).
func (c *chain) get(def *keyDef, rel string) (v any, at pos, explicit, ok bool) {
	for _, l := range c.layers {
		k := l.prefix + rel
		if l.explicit != nil {
			if s, has := l.explicit[k]; has {
				return s.v, s.at, true, true
			}
			continue
		}
		r, has := l.raw[k]
		if !has {
			continue
		}
		if n, isInt := r.(int); isInt {
			r = int64(n)
		}
		pv, err := parseValue(def, r, nil)
		if err != nil {
			// A preset value out of range (e.g. a per-CPU value for many cores).
			c.p.errorf(c.at, c.label+rel, "the preset's value: %v", err)
			return nil, c.at, false, false
		}
		return pv, c.at, false, true
	}
	return nil, c.at, false, false
}

func (c *chain) explicit(rel string) (setting, bool) {
	for _, l := range c.layers {
		if l.explicit != nil {
			if s, ok := l.explicit[l.prefix+rel]; ok {
				return s, true
			}
		}
	}
	return setting{}, false
}

// Typed accessors. A missing value yields the zero value; the schema
// defaults make that rare and deliberate.
func (c *chain) int(sc scope, rel string) int {
	v, _, _, ok := c.get(mustDef(sc, rel), rel)
	if !ok {
		return 0
	}
	return v.(int)
}

func (c *chain) float(sc scope, rel string) float64 {
	v, _, _, ok := c.get(mustDef(sc, rel), rel)
	if !ok {
		return 0
	}
	return v.(float64)
}

func (c *chain) bool(sc scope, rel string) bool {
	v, _, _, ok := c.get(mustDef(sc, rel), rel)
	return ok && v.(bool)
}

func (c *chain) str(sc scope, rel string) string {
	v, _, _, ok := c.get(mustDef(sc, rel), rel)
	if !ok {
		return ""
	}
	return v.(string)
}

func (c *chain) dur(sc scope, rel string) time.Duration {
	v, _, _, ok := c.get(mustDef(sc, rel), rel)
	if !ok {
		return 0
	}
	return v.(time.Duration)
}

func (c *chain) dist(sc scope, rel string) sim.Dist {
	v, _, _, ok := c.get(mustDef(sc, rel), rel)
	if !ok {
		return sim.Dist{}
	}
	return v.(sim.Dist)
}

func mustDef(sc scope, rel string) *keyDef {
	d := lookupKey(sc, rel)
	if d == nil {
		panic("model: no schema key " + rel) // a typo in this package
	}
	return d
}

// errAt reports a problem with key rel, blaming its explicit setting if any.
func (c *chain) errAt(rel, format string, args ...any) {
	at := c.at
	if s, ok := c.explicit(rel); ok {
		at = s.at
	}
	c.p.errorf(at, c.label+rel, format, args...)
}

// resolve turns a document into a Topology, reporting problems to p.
func (p *loader) resolve(doc *docSpec) model.Topology {
	var topo model.Topology
	root := pos{}
	if len(p.sources) > 0 {
		root.src = p.sources[0]
	}
	top := &chain{p: p, layers: []layer{{explicit: doc.top}, {raw: topDefaults}}, at: root}
	topo.Duration = top.dur(scopeTop, "duration")
	topo.Warmup = top.dur(scopeTop, "warmup")
	topo.SampleEvery = top.dur(scopeTop, "sample_every")
	topo.Precision = top.float(scopeTop, "precision")
	if topo.Warmup >= topo.Duration {
		top.errAt("warmup", "must be shorter than duration (%v), got %v", topo.Duration, topo.Warmup)
	}
	if topo.SampleEvery > topo.Duration {
		top.errAt("sample_every", "must be at most duration (%v), got %v", topo.Duration, topo.SampleEvery)
	} else if topo.SampleEvery > 0 && topo.Duration/topo.SampleEvery > 10_000_000 {
		top.errAt("sample_every", "gives %d samples over %v; at most 10000000 (sample less often)", topo.Duration/topo.SampleEvery, topo.Duration)
	}

	index := map[string]int{}
	for i, t := range doc.tiers {
		index[t.name] = i
	}
	names := doc.tierNames()
	topo.Tiers = make([]model.Tier, len(doc.tiers))
	var callAt [][]pos // per tier, per step: where the call target was set
	callAt = make([][]pos, len(doc.tiers))
	farms := p.resolveFarms(doc)
	machines := p.resolveMachines(doc, index, names, farms)
	for i, t := range doc.tiers {
		if h := machines.host[i]; h >= 0 {
			guest := *t
			guest.keys = guestKeys(t, doc.tiers[h], p)
			t = &guest
		}
		topo.Tiers[i], callAt[i] = p.resolveTier(t, index, names, farms)
	}
	applyMachines(topo.Tiers, machines)
	p.checkCycles(topo.Tiers, doc, callAt)
	var ag *agentSpec
	topo.Load, ag = p.resolveLoad(doc, top, index, names, farms)
	if h := machines.agents; h >= 0 && ag != nil {
		ag.cores, ag.machine, ag.disc = topo.Tiers[h].Cores, h+1, topo.Tiers[h].CPU
	}
	p.warnSessions(doc, &topo)
	p.warnConnKeys()
	p.checkAffinity(farms)
	p.expandFarms(&topo, farms, ag, top)
	return topo
}

func (p *loader) resolveTier(t *tierSpec, index map[string]int, names []string, farms []*farmSpec) (model.Tier, []pos) {
	label := "tier." + t.name + "."
	base := &chain{p: p, layers: []layer{{explicit: t.keys}, {raw: tierDefaults}}, at: t.at, label: label}
	n := base.int(scopeTier, "cores")
	pr := findTierPreset(base.str(scopeTier, "preset"))
	keys := pr.keys(n)
	c := &chain{p: p, layers: []layer{{explicit: t.keys}, {raw: keys}, {raw: tierDefaults}}, at: t.at, label: label}
	processModel(c, keys, n)
	clrInjection(c, keys)

	tier := model.Tier{
		Name:             t.name,
		Cores:            n,
		CostMultiplier:   c.float(scopeTier, "cost_multiplier"),
		DotNet:           c.str(scopeTier, "dotnet"),
		Async:            c.bool(scopeTier, "async"),
		StartUp:          c.dur(scopeTier, "start_up"),
		MemoryPerRequest: int64(c.float(scopeTier, "memory_per_request_kb") * 1024),
	}
	tier.Host = model.HostKind(indexOf(model.HostNames(), c.str(scopeTier, "host")))
	tier.CPU = model.CPUDiscipline(indexOf(model.CPUNames(), c.str(scopeTier, "cpu_discipline")))
	tier.Worker = resolvePool(c, "worker")
	tier.IO = resolvePool(c, "io")
	tier.WCF = resolveWCF(c, n)
	tier.Admission = resolveAdmission(c, tier)
	warnTier(c, &tier)
	resolveContention(c, &tier)

	steps, callAt := p.resolveSteps(t, c, tier, index, names, farms)
	tier.Steps = steps
	return tier, callAt
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return 0
}

func resolvePool(c *chain, name string) model.Pool {
	pl := model.Pool{
		Min:         c.int(scopeTier, name+".min"),
		Max:         c.int(scopeTier, name+".max"),
		Injection:   model.Injection(indexOf(model.InjectionNames(), c.str(scopeTier, name+".injection"))),
		GateDelay:   c.dur(scopeTier, name+".gate_delay"),
		IdleTimeout: c.dur(scopeTier, name+".idle_timeout"),
	}
	// An absent queue_limit is the CLR's unbounded queue.
	if s, ok := c.explicit(name + ".queue_limit"); ok {
		pl.BoundedQueue, pl.QueueLimit = true, s.v.(int)
	}
	if pl.Min > pl.Max {
		rel := name + ".min"
		if _, ok := c.explicit(rel); !ok {
			rel = name + ".max"
		}
		c.errAt(rel, "%s.min (%d) must not exceed %s.max (%d)", name, pl.Min, name, pl.Max)
	}
	if pl.Injection != model.InjectNone && pl.GateDelay <= 0 {
		c.errAt(name+".gate_delay", "must be > 0 with injection %q (the CLR gate thread runs every 500ms)", pl.Injection)
	}
	return pl
}

func resolveWCF(c *chain, n int) *model.WCF {
	preset := c.str(scopeTier, "wcf.preset")
	var set []string
	for _, d := range tierKeys {
		if strings.HasPrefix(d.name, "wcf.") && d.name != "wcf.preset" {
			if _, ok := c.explicit(d.name); ok {
				set = append(set, d.name)
			}
		}
	}
	var netTCP []string
	for _, d := range tierKeys {
		if strings.HasPrefix(d.name, "nettcp.") {
			if _, ok := c.explicit(d.name); ok {
				netTCP = append(netTCP, d.name)
			}
		}
	}
	if preset == "none" {
		if len(set) > 0 {
			c.errAt(set[0], "is set but wcf.preset is \"none\" (the tier is not a WCF service)")
		}
		if len(netTCP) > 0 {
			c.errAt(netTCP[0], "is set but wcf.preset is \"none\" (the tier is not a WCF service, and has no netTcp listener)")
		}
		return nil
	}
	if preset == "" {
		if len(set) == 0 {
			if len(netTCP) > 0 {
				c.errAt(netTCP[0], "is set but the tier is not a WCF service (no wcf.* key, no WCF preset); a netTcp listener is a WCF service's")
			}
			return nil
		}
		// A WCF tier without a preset takes the defaults of its .NET version.
		preset = "wcf4"
		if v := c.str(scopeTier, "dotnet"); v != "" && !dotnetAtLeast(v, "4.0") {
			preset = "wcf35"
		}
	}
	calls, sessions := wcfDefaults(preset, n)
	w := &model.WCF{MaxCalls: calls, MaxSessions: sessions}
	if s, ok := c.explicit("wcf.max_calls"); ok {
		w.MaxCalls = s.v.(int)
	}
	if s, ok := c.explicit("wcf.max_sessions"); ok {
		w.MaxSessions = s.v.(int)
	}
	// dotnet.md §4: MaxConcurrentInstances = calls + sessions unless set.
	w.MaxInstances = min(w.MaxCalls+w.MaxSessions, maxInt32)
	if s, ok := c.explicit("wcf.max_instances"); ok {
		w.MaxInstances = s.v.(int)
	}
	w.MaxPendingSessions = c.int(scopeTier, "wcf.max_pending_sessions")
	w.PendingSessionTimeout = c.dur(scopeTier, "wcf.pending_session_timeout")
	w.Instancing = model.Instancing(indexOf(model.InstancingNames(), c.str(scopeTier, "wcf.instancing")))
	w.Concurrency = model.Concurrency(indexOf(model.ConcurrencyNames(), c.str(scopeTier, "wcf.concurrency")))
	w.InstanceCPU = c.dur(scopeTier, "wcf.instance_cpu")
	w.SingleLockCPU = c.dur(scopeTier, "wcf.single_lock_cpu")
	w.Listener = resolveListener(c, n)
	w.OneWay = c.bool(scopeTier, "wcf.one_way")
	return w
}

func resolveAdmission(c *chain, tier model.Tier) model.Admission {
	kind := c.str(scopeTier, "admission.kind")
	a := model.Admission{Kind: model.AdmissionKind(indexOf(model.AdmissionNames(), kind))}
	aspnet := tier.Host.IsASPNet()
	a.QueueLimit = c.int(scopeTier, "admission.queue_limit")
	a.SyncModule = aspnet && c.str(scopeTier, "admission.module") == "sync"
	if s, ok := c.explicit("admission.module"); ok && s.v == "async" {
		// Dong, "Orcas SP1 Improvement": "in Orcas SP1 (.NET 3.5 SP1), WCF
		// has implemented the asynchronous HTTP Module/Handler" (tsim's
		// "3.5" includes SP1).
		if v := c.str(scopeTier, "dotnet"); v != "" && !dotnetAtLeast(v, "3.5") {
			c.errAt("admission.module", "the asynchronous WCF HTTP module came with .NET 3.5 SP1; this tier's dotnet is %q (allowed: \"sync\")", v)
		}
	}
	// dotnet.md §2a: executionTimeout is an ASP.NET setting; whether it fires
	// for WCF is unconfirmed and assumed not, so a WCF tier gets it only
	// when the experiment sets it explicitly.
	if a.Kind == model.AdmitClassic {
		a.ClientConnectedCheck = c.dur(scopeTier, "admission.client_connected_check")
	}
	if _, ok := c.explicit("admission.execution_timeout"); ok || (aspnet && tier.WCF == nil) {
		a.ExecutionTimeout = c.dur(scopeTier, "admission.execution_timeout")
		a.ExecutionCheck = c.dur(scopeTier, "admission.execution_check")
	}
	switch a.Kind {
	case model.AdmitNone:
		for _, k := range []string{"admission.min_free_threads", "admission.max_executing", "admission.max_per_cpu", "admission.queue_limit", "admission.count_executing"} {
			if _, ok := c.explicit(k); ok {
				c.errAt(k, "is set but admission.kind is \"none\" (set admission.kind = \"classic\" or \"concurrent\")")
			}
		}
		a.QueueLimit = 0
	case model.AdmitClassic:
		a.MinFreeThreads = c.int(scopeTier, "admission.min_free_threads")
		if aspnet && c.bool(scopeTier, "auto_config") {
			// dotnet.md §2a: autoConfig builds the RequestQueue with 88
			// free threads per CPU, whatever httpRuntime says.
			auto := 88 * tier.Cores
			if s, ok := c.explicit("admission.min_free_threads"); ok && s.v.(int) != auto {
				c.p.warnf(s.at, c.label+"admission.min_free_threads", "has no effect: ASP.NET's autoConfig sets minFreeThreads to 88 per CPU (%d here, docs/dotnet.md §2a); set auto_config = false to use it", auto)
			}
			a.MinFreeThreads = auto
		}
		if a.MinFreeThreads >= tier.Worker.Max {
			rel := "admission.min_free_threads"
			if _, ok := c.explicit(rel); !ok {
				if _, ok := c.explicit("worker.max"); ok {
					rel = "worker.max"
				}
			}
			c.errAt(rel, "admission.min_free_threads (%d) must be below worker.max (%d), or no request could ever run", a.MinFreeThreads, tier.Worker.Max)
		}
		for _, k := range []string{"admission.max_executing", "admission.max_per_cpu", "admission.count_executing"} {
			if _, ok := c.explicit(k); ok {
				c.errAt(k, "applies to admission.kind \"concurrent\", not \"classic\"")
			}
		}
	case model.AdmitConcurrent:
		if s, ok := c.explicit("admission.max_executing"); ok {
			a.MaxExecuting = s.v.(int)
		} else if s, ok := c.explicit("admission.max_per_cpu"); ok {
			a.MaxExecuting = s.v.(int) * tier.Cores
		} else if v, _, _, ok := c.get(mustDef(scopeTier, "admission.max_executing"), "admission.max_executing"); ok {
			a.MaxExecuting = v.(int)
		} else if v, _, _, ok := c.get(mustDef(scopeTier, "admission.max_per_cpu"), "admission.max_per_cpu"); ok {
			a.MaxExecuting = v.(int) * tier.Cores
		} else {
			c.errAt("admission.kind", "\"concurrent\" needs admission.max_executing or admission.max_per_cpu")
		}
		a.CountExecuting = c.bool(scopeTier, "admission.count_executing")
		if _, ok := c.explicit("admission.min_free_threads"); ok {
			c.errAt("admission.min_free_threads", "applies to admission.kind \"classic\", not \"concurrent\"")
		}
	}
	return a
}

func (p *loader) resolveSteps(t *tierSpec, c *chain, tier model.Tier, index map[string]int, names []string, farms []*farmSpec) ([]model.Step, []pos) {
	steps := make([]model.Step, 0, len(t.steps))
	callAt := make([]pos, len(t.steps))
	locks := map[string]int{}
	var lockNames []string
	held := map[string]int{} // lock → step that took it (1-based)
	for j, s := range t.steps {
		label := fmt.Sprintf("tier.%s.step.%d", t.name, j+1)
		var actions []string
		for _, a := range stepActions {
			if _, ok := s.keys[a]; ok {
				actions = append(actions, a)
			}
		}
		if len(actions) != 1 {
			if len(actions) == 0 {
				p.errorf(s.at, label, "says nothing to do: give one of cpu, wait, call, lock, unlock")
			} else {
				p.errorf(s.keys[actions[1]].at, label, "has both %s and %s; give one action per step", actions[0], actions[1])
			}
			continue
		}
		act := actions[0]
		for _, k := range sortedKeys(s.keys) {
			if only := stepExtraOnly(k); only != "" && only != act {
				p.errorf(s.keys[k].at, label+"."+k, "applies only to %s steps (this step is %s)", only, act)
			}
		}
		if act != "call" {
			for _, k := range sortedKeys(s.keys) {
				if k != act && stepExtraOnly(k) == "" {
					p.errorf(s.keys[k].at, label+"."+k, "applies only to call steps (this step is %s)", act)
				}
			}
		}
		st := model.Step{}
		switch act {
		case "cpu":
			st.Kind, st.Demand = model.StepCPU, s.keys[act].v.(sim.Dist)
			if a, ok := s.keys["alloc_kb"]; ok {
				st.Alloc = int64(a.v.(float64) * 1024)
			}
		case "wait":
			st.Kind, st.Demand = model.StepWait, s.keys[act].v.(sim.Dist)
		case "lock", "unlock":
			name := s.keys[act].v.(string)
			if _, ok := locks[name]; !ok {
				locks[name] = len(lockNames)
				lockNames = append(lockNames, name)
			}
			st.Lock, st.LockName = locks[name], name
			if act == "lock" {
				st.Kind = model.StepLock
				if a, ok := s.keys["acquires"]; ok {
					st.Acquires = a.v.(int)
				}
				if k, ok := held[name]; ok {
					p.errorf(s.keys[act].at, label+".lock", "lock %q is already held since step %d (it would deadlock)", name, k)
				}
				held[name] = j + 1
			} else {
				st.Kind = model.StepUnlock
				if _, ok := held[name]; !ok {
					p.errorf(s.keys[act].at, label+".unlock", "lock %q is not held here (no lock = %q before)", name, name)
				}
				delete(held, name)
			}
		case "call":
			target := s.keys["call"].v.(string)
			callAt[j] = s.keys["call"].at
			ti, ok := index[target]
			if !ok {
				p.errorf(s.keys["call"].at, label+".call", "unknown tier %q (tiers: %s)", target, strings.Join(names, ", "))
				ti = -1
			}
			cc := &chain{p: p, at: s.at, label: label + ".", layers: []layer{
				{explicit: s.keys},
				{explicit: t.keys, prefix: "calls."},
				{raw: c.layers[1].raw, prefix: "calls."}, // the tier preset
				{raw: callDefaults},
			}}
			call := p.resolveCall(cc, callerInfo{tier: tier, target: target, tierKeys: t.keys, tierPreset: c.layers[1].raw, tierLabel: "tier." + t.name + ".", tierAt: t.at})
			call.Target = ti
			var tf *farmSpec
			if ti >= 0 {
				tf = farms[ti]
			}
			callers := 0
			if f := farms[index[t.name]]; f != nil {
				callers = f.n
			}
			p.farmCall(cc, call, tf, target, callers, t.name)
			st.Kind, st.Call = model.StepCall, call
		}
		steps = append(steps, st)
	}
	for _, name := range lockNames {
		if k, ok := held[name]; ok {
			p.errorf(t.steps[k-1].keys["lock"].at, fmt.Sprintf("tier.%s.step.%d.lock", t.name, k), "lock %q is never released (add a step unlock = %q)", name, name)
		}
	}
	return steps, callAt
}

// callerInfo is what a call needs to know about its caller.
type callerInfo struct {
	tier       model.Tier // Name, Host, Cores; zero for the load generator
	target     string
	load       bool
	tierKeys   map[string]setting // the caller tier's explicit keys (for calls.* checks)
	tierPreset map[string]any
	tierLabel  string
	tierAt     pos
}

func (p *loader) resolveCall(c *chain, who callerInfo) *model.Call {
	client := c.str(scopeStep, "client")
	if client == "" {
		client = "none"
	}
	// Keys that mean something for one client only.
	for _, k := range sortedKeys(clientOnly) {
		want := clientOnly[k]
		if s, ok := c.layers[0].explicit[c.layers[0].prefix+k]; ok && want != client {
			p.errorf(s.at, c.label+k, "applies to client %q; this call's client is %q%s", want, client, clientHint(client))
		}
	}
	if !who.load {
		// The tier's calls.* defaults are checked against the tier's own default client.
		tc := &chain{p: p, layers: []layer{{explicit: who.tierKeys, prefix: "calls."}, {raw: who.tierPreset, prefix: "calls."}, {raw: callDefaults}}}
		tierClient := tc.str(scopeStep, "client")
		for _, k := range sortedKeys(clientOnly) {
			want := clientOnly[k]
			if s, ok := who.tierKeys["calls."+k]; ok && want != tierClient {
				p.errorf(s.at, who.tierLabel+"calls."+k, "applies to client %q; the tier's calls.client is %q%s", want, tierClient, clientHint(tierClient))
			}
		}
	}

	bindingName := "http"
	if client == "dotnet" {
		bindingName = "basicHttp"
	}
	if v, _, _, ok := c.get(mustDef(scopeStep, "binding"), "binding"); ok {
		bindingName = v.(string)
	}
	b, _ := findBinding(bindingName)
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_cpu_base"), "binding_cpu_base"); ok && explicit {
		b.CPUBase = v.(time.Duration)
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_cpu_per_kb"), "binding_cpu_per_kb"); ok && explicit {
		b.CPUPerKB = v.(time.Duration)
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_overhead"), "binding_overhead"); ok && explicit {
		b.Overhead = v.(int)
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_factor"), "binding_factor"); ok && explicit {
		b.Factor = v.(float64)
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_sessionful"), "binding_sessionful"); ok && explicit {
		b.Sessionful = v.(bool)
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_session_cpu"), "binding_session_cpu"); ok && explicit {
		b.SessionCPU = v.(time.Duration)
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_session_round_trips"), "binding_session_round_trips"); ok && explicit {
		b.SessionRoundTrips = v.(int)
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_session_idle_timeout"), "binding_session_idle_timeout"); ok && explicit {
		b.SessionIdleTimeout = v.(time.Duration)
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_negotiation_legs"), "binding_negotiation_legs"); ok && explicit {
		b.NegotiationLegs = v.(int)
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "binding_close_message"), "binding_close_message"); ok && explicit {
		b.CloseMessage = v.(bool)
	}
	if b.NegotiationLegs > 0 {
		b.NegotiationTimeout = c.dur(scopeStep, "binding_negotiation_timeout")
	} else if _, ok := c.explicit("binding_negotiation_timeout"); ok {
		c.errAt("binding_negotiation_timeout", "is set but the negotiation is not an exchange of its own (set binding_negotiation_legs > 0)")
	}
	if b.CloseMessage {
		b.CloseTimeout = c.dur(scopeStep, "binding_close_timeout")
	} else if _, ok := c.explicit("binding_close_timeout"); ok {
		c.errAt("binding_close_timeout", "is set but closing sends no message (set binding_close_message = true)")
	}
	for _, k := range []string{"binding_session_idle_timeout", "binding_negotiation_legs", "binding_close_message"} {
		if _, ok := c.explicit(k); ok && !b.Sessionful {
			c.errAt(k, "needs a sessionful binding; %s has no session (allowed with wsHttp, netTcp, namedPipe, or binding_sessionful = true)", bindingName)
		}
	}
	if !b.Sessionful {
		b.SessionIdleTimeout, b.NegotiationLegs, b.CloseMessage = 0, 0, false
	}

	call := &model.Call{Binding: b}
	// Load calls take their timeout from load.timeout (set by the caller).
	if !who.load {
		if v, _, explicit, ok := c.get(mustDef(scopeStep, "timeout"), "timeout"); ok && explicit {
			call.Timeout = v.(time.Duration)
		} else {
			call.Timeout, _ = defaultCallTimeout(client, bindingName)
		}
	}

	loopback := c.bool(scopeStep, "loopback")
	call.Network.Latency = c.dur(scopeStep, "network_latency")
	call.Network.Bandwidth = c.float(scopeStep, "network_bandwidth_mbps") * 1e6 / 8
	if loopback {
		// A loopback call never touches the wire: no latency or bandwidth
		// limit unless given.
		if _, ok := c.explicit("network_latency"); !ok {
			call.Network.Latency = 0
		}
		if _, ok := c.explicit("network_bandwidth_mbps"); !ok {
			call.Network.Bandwidth = 0
		}
	}
	call.RequestKB = c.float(scopeStep, "request_kb")
	call.ReplyKB = c.float(scopeStep, "reply_kb")

	call.Proxy.Kind = model.ProxyKind(indexOf(model.ProxyNames(), c.str(scopeStep, "proxy")))
	if call.Proxy.Kind.String() == "per-user" && !who.load {
		c.errAt("proxy", "\"per-user\" is for the load's call only (load.call.proxy); a tier's calls have no users")
	}
	if call.Proxy.Kind == model.ProxyPoolCreate || call.Proxy.Kind == model.ProxyPoolWait {
		call.Proxy.PoolSize = c.int(scopeStep, "proxy_pool_size")
	} else if s, ok := c.layers[0].explicit[c.layers[0].prefix+"proxy_pool_size"]; ok {
		p.errorf(s.at, c.label+"proxy_pool_size", "applies to proxy \"pool-create\" or \"pool-wait\", not %q", call.Proxy.Kind)
	}
	call.Proxy.CreateCost = c.dist(scopeStep, "proxy_create_cost")
	p.resolveFactories(c, who, call)

	call.Retry = model.Retry{
		Attempts: c.int(scopeStep, "retry.attempts"),
		Backoff:  c.dist(scopeStep, "retry.backoff"),
		Jitter:   c.float(scopeStep, "retry.jitter"),
	}

	in := ConnInput{
		Client:            client,
		Target:            who.target,
		Binding:           bindingName,
		ASPNet:            who.tier.Host.IsASPNet(),
		Cores:             max(who.tier.Cores, 1),
		MaxConnection:     c.int(scopeStep, "maxconnection"),
		MaxConnectionHost: c.int(scopeStep, "maxconnection_host"),
		CodeLimit:         c.int(scopeStep, "connection_limit_code"),
		Loopback:          loopback,
		MaxConnsPerHost:   c.int(scopeStep, "max_conns_per_host"),
		MaxConnections:    c.int(scopeStep, "max_connections"),
		PoolSize:          c.int(scopeStep, "pool_size"),
	}
	if !who.load {
		tc := &chain{p: p, layers: []layer{{explicit: who.tierKeys}, {raw: who.tierPreset}, {raw: tierDefaults}}}
		in.DotNet = tc.str(scopeTier, "dotnet")
		in.AutoConfig = tc.bool(scopeTier, "auto_config")
		if client == "dotnet" && in.DotNet == "" && in.ASPNet && in.AutoConfig {
			p.errorf(who.tierAt, who.tierLabel+"dotnet", "must be set: with ASP.NET autoConfig the connection limit depends on the .NET version (allowed: %s)", quoteList(dotnetVersions))
		}
	}
	if client == "dotnet" {
		var rule connRule
		call.Conn.Limit, call.Conn.Resolution, rule = resolveDotNet(in)
		p.connKeys(c, in, rule, func(rel string, layer int) string {
			if layer > 0 && !who.load {
				return who.tierLabel + "calls." + rel
			}
			return c.label + rel
		})
	} else {
		call.Conn.Limit, call.Conn.Resolution = ResolveConnLimit(in)
	}
	switch client {
	case "envoy":
		call.Conn.MaxPending = envoyDefaultMax // dotnet.md §8: max_pending_requests 1024
		if v, _, _, ok := c.get(mustDef(scopeStep, "max_pending"), "max_pending"); ok {
			call.Conn.MaxPending = v.(int)
			// 0: no call may wait for a connection (a loss system).
			call.Conn.NoPending = call.Conn.MaxPending == 0
		}
	case "hikari":
		call.Conn.WaitTimeout = hikariDefaultWait // dotnet.md §8: connectionTimeout 30 s
	}
	if v, _, explicit, ok := c.get(mustDef(scopeStep, "wait_timeout"), "wait_timeout"); ok && explicit {
		call.Conn.WaitTimeout = v.(time.Duration)
	}
	switch c.str(scopeStep, "connection_queue") {
	case "per-connection":
		call.Conn.PerConnection = true
	case "auto":
		// dotnet.md §1: System.Net binds a waiting request to the least busy
		// connection and queues it there.
		call.Conn.PerConnection = client == "dotnet"
	}
	return call
}

func clientHint(client string) string {
	switch client {
	case "go":
		return " (for Go use max_conns_per_host)"
	case "envoy":
		return " (for Envoy use max_connections and max_pending)"
	case "hikari":
		return " (for HikariCP use pool_size and wait_timeout)"
	case "dotnet":
		return " (for .NET use maxconnection, maxconnection_host, connection_limit_code)"
	}
	return ` (client "none" has no connection limit; set client to use one)`
}

// checkCycles reports synchronous call cycles (a tier that, through its
// calls, ends up calling itself).
func (p *loader) checkCycles(tiers []model.Tier, doc *docSpec, callAt [][]pos) {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(tiers))
	var stack []int
	reported := map[string]bool{}
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, i)
		for j, st := range tiers[i].Steps {
			if st.Kind != model.StepCall || st.Call.Target < 0 {
				continue
			}
			k := st.Call.Target
			switch color[k] {
			case white:
				visit(k)
			case grey:
				var path []string
				start := 0
				for s := range stack {
					if stack[s] == k {
						start = s
					}
				}
				for _, s := range stack[start:] {
					path = append(path, tiers[s].Name)
				}
				path = append(path, tiers[k].Name)
				text := strings.Join(path, " → ")
				if !reported[text] {
					reported[text] = true
					at := pos{}
					if j < len(callAt[i]) {
						at = callAt[i][j]
					}
					// Steps that failed to resolve are missing from Steps; find the
					// step by its target instead.
					at, label := callSite(doc, i, tiers[k].Name, at)
					p.errorf(at, label, "call cycle %s (synchronous calls must not come back to a caller)", text)
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := range tiers {
		if color[i] == white {
			visit(i)
		}
	}
}

func callSite(doc *docSpec, tier int, target string, fallback pos) (pos, string) {
	t := doc.tiers[tier]
	for j, s := range t.steps {
		if c, ok := s.keys["call"]; ok && c.v == target {
			return c.at, fmt.Sprintf("tier.%s.step.%d.call", t.name, j+1)
		}
	}
	return fallback, "tier." + t.name
}

func (p *loader) resolveLoad(doc *docSpec, top0 *chain, index map[string]int, names []string, farms []*farmSpec) (model.Load, *agentSpec) {
	var l model.Load
	// Blame the [load] table for missing keys.
	top := &chain{p: p, layers: top0.layers, at: pos{src: top0.at.src, key: "load"}}
	get := func(k string) (setting, bool) { s, ok := doc.top[k]; return s, ok }
	target := ""
	if len(names) > 0 {
		target = names[0]
	}
	if s, ok := get("load.target"); ok {
		target = s.v.(string)
	}
	ti, ok := index[target]
	if !ok && target != "" {
		top.errAt("load.target", "unknown tier %q (tiers: %s)", target, strings.Join(names, ", "))
		ti = -1
	}

	kind := "closed"
	_, hasRate := get("load.rate")
	_, hasRateS := get("load.rate_schedule")
	if hasRate || hasRateS {
		kind = "open"
	}
	if _, ok := get("load.trace"); ok {
		kind = "trace"
	}
	if s, ok := get("load.kind"); ok {
		kind = s.v.(string)
	}
	closedKeys := []string{"load.users", "load.users_schedule", "load.think"}
	openKeys := []string{"load.rate", "load.rate_schedule", "load.interarrival"}
	schedule := func(single, sched, unit string) model.Schedule {
		s1, has1 := get(single)
		s2, has2 := get(sched)
		switch {
		case has1 && has2:
			top.errAt(sched, "give either %s or %s, not both", single, sched)
		case has1:
			v := 0.0
			switch n := s1.v.(type) {
			case int:
				v = float64(n)
			case float64:
				v = n
			}
			if !(v > 0) {
				top.errAt(single, "must be > 0, got %v", v)
			}
			return model.Schedule{{At: 0, Value: v}}
		case has2:
			sch := s2.v.(model.Schedule)
			if !(sch.Max() > 0) {
				top.errAt(sched, "is zero throughout: no %s", unit)
			}
			return sch
		default:
			top.errAt(single, "a %s load needs %s = N or %s = [{at = \"0s\", value = N}, ...]", kind, single[len("load."):], sched[len("load."):])
		}
		return nil
	}
	wrong := func(keys []string, k string) {
		for _, key := range keys {
			if _, ok := get(key); ok {
				top.errAt(key, "applies to %s loads; load.kind is %q", loadKindOf(key), k)
			}
		}
	}
	if kind != "trace" {
		wrong([]string{"load.trace", "load.replay"}, kind)
	}
	switch kind {
	case "trace":
		wrong(append(openKeys, "load.users", "load.users_schedule"), kind)
		p.resolveTrace(top, get, &l)
	case "closed":
		l.Kind = model.LoadClosed
		l.Users = schedule("load.users", "load.users_schedule", "users")
		if s, ok := get("load.think"); ok {
			l.Think = s.v.(sim.Dist)
		}
		wrong(openKeys, kind)
	case "open":
		l.Kind = model.LoadOpen
		l.Rate = schedule("load.rate", "load.rate_schedule", "arrivals")
		if s, ok := get("load.interarrival"); ok {
			l.Interarrival = s.v.(sim.Dist)
		}
		wrong(closedKeys, kind)
	}

	lc := &chain{p: p, at: top.at, label: "load.call.", layers: []layer{{explicit: doc.top, prefix: "load.call."}, {raw: callDefaults}}}
	call := p.resolveCall(lc, callerInfo{target: target, load: true})
	call.Target = ti
	call.Timeout = top.dur(scopeTop, "load.timeout")
	ag := p.resolveAgents(doc, top, &l, names)
	var tf *farmSpec
	if ti >= 0 {
		tf = farms[ti]
	}
	callers, from := 0, "load"
	if ag != nil {
		callers, from = ag.n, agentName
	}
	p.farmCall(lc, call, tf, target, callers, from)
	l.Call = *call
	return l, ag
}

// resolveFactories decides a call's ChannelFactory keys (model
// factorycache.go): the cache by the caller's .NET version, how its
// proxies are constructed, its endpoints.
func (p *loader) resolveFactories(c *chain, who callerInfo, call *model.Call) {
	pr := &call.Proxy
	pr.FactoryCost = c.dist(scopeStep, "factory_create_cost")
	pr.Construction = model.Construction(indexOf(model.ConstructionNames(), c.str(scopeStep, "proxy_construction")))
	pr.CacheMode = model.FactoryCacheMode(indexOf(model.FactoryCacheModeNames(), c.str(scopeStep, "cache_setting")))
	dotnet := ""
	if !who.load {
		tc := &chain{p: p, layers: []layer{{explicit: who.tierKeys}, {raw: who.tierPreset}, {raw: tierDefaults}}}
		dotnet = tc.str(scopeTier, "dotnet")
	}
	switch c.str(scopeStep, "factory_cache") {
	case "mru-32":
		pr.FactoryCache = model.FactoryCacheSize
	case "auto":
		// Dong: the cache came "In .NET 3.0 SP1, which will be shipped
		// together with .NET 3.5"; tsim's "3.0" is 3.0 before SP1. An
		// unknown version is taken as 3.5 or later.
		if dotnet == "" || dotnetAtLeast(dotnet, "3.5") {
			pr.FactoryCache = model.FactoryCacheSize
		}
	}
	if pr.CacheMode != model.CacheDefault && dotnet != "" && !dotnetAtLeast(dotnet, "4.5") {
		c.errAt("cache_setting", "ClientBase<T>.CacheSetting is a .NET 4.5 property; the caller's dotnet is %q (allowed before 4.5: \"default\")", dotnet)
	}
	if pr.CacheMode != model.CacheDefault && pr.FactoryCache == 0 {
		c.errAt("cache_setting", "%q needs a ChannelFactory cache; factory_cache resolves to none", pr.CacheMode)
	}
	pr.Endpoints = c.int(scopeStep, "endpoints")
	pr.Pick = model.EndpointPick(indexOf(model.EndpointPickNames(), c.str(scopeStep, "endpoint_pick")))
	if pr.Endpoints > 1 && pr.Kind != model.ProxyPerCall {
		c.errAt("endpoints", "more than one endpoint applies to proxy \"per-call\" (a new proxy for each call's endpoint), not %q", pr.Kind)
	}
	if s, ok := c.layers[0].explicit[c.layers[0].prefix+"endpoint_pick"]; ok && pr.Endpoints <= 1 {
		p.errorf(s.at, c.label+"endpoint_pick", "applies to a call with endpoints > 1; this one has %d", pr.Endpoints)
	}
}
