package format

import (
	"fmt"
	"math"
	"strings"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/sim"
)

// Farms and load agents: a tier with replicas (or a balancer) is a farm of
// machines; a load with agents runs on machines of its own. Both are
// expanded when a scenario is compiled: a farm "web" of N becomes the
// Tiers "web#1" … "web#N", each a copy with its own calls, and the load's
// agents the Tiers "agent#1" … "agent#K" (model/farm.go).

// farmSpec is a tier's deployment, resolved before its calls.
type farmSpec struct {
	name       string
	n          int
	bal        model.Balancer
	affinity   *setting // balancer.affinity, when set explicitly
	sessionful bool     // some call into the farm has a sessionful binding
}

// agentName is the agents' farm; agentTier the name a tier may not take
// when the load runs on agents.
const agentName = "agent"

// resolveFarms reads every tier's replicas and balancer: a tier is a farm
// when either is set, even replicas = 1 (one machine behind a balancer,
// so that a sweep over replicas compares like with like).
func (p *loader) resolveFarms(doc *docSpec) []*farmSpec {
	out := make([]*farmSpec, len(doc.tiers))
	for i, t := range doc.tiers {
		c := &chain{p: p, layers: []layer{{explicit: t.keys}, {raw: tierDefaults}}, at: t.at, label: "tier." + t.name + "."}
		farm := false
		for k := range t.keys {
			if k == "replicas" || strings.HasPrefix(k, "balancer.") {
				farm = true
			}
		}
		if !farm {
			continue
		}
		f := &farmSpec{name: t.name, n: c.int(scopeTier, "replicas")}
		f.bal.Policy = model.BalancePolicy(indexOf(model.BalanceNames(), c.str(scopeTier, "balancer.policy")))
		f.bal.Affinity = c.str(scopeTier, "balancer.affinity") == "session"
		if s, ok := c.explicit("balancer.affinity"); ok {
			f.affinity = &s
		}
		f.bal.Latency = c.dur(scopeTier, "balancer.latency")
		if s, ok := c.explicit("balancer.max_connections"); ok {
			f.bal.MaxConns = s.v.(int)
			// Without a queue_limit the balancer's queue is unbounded.
			f.bal.QueueLimit = math.MaxInt32
			if q, ok := c.explicit("balancer.queue_limit"); ok {
				f.bal.QueueLimit = q.v.(int)
			}
		} else if _, ok := c.explicit("balancer.queue_limit"); ok {
			c.errAt("balancer.queue_limit", "applies with balancer.max_connections (the requests the balancer passes at once); set it too")
		}
		out[i] = f
	}
	return out
}

// farmCall applies the farm keys of a call (farm_address) once its
// connection limit is resolved, and says in the limit's resolution how
// the addressing and the calling machines multiply it. target is the
// called tier's farm (nil: one machine), callers the machines the calling
// tier runs on (0: one machine; the load agents when from is "agent").
func (p *loader) farmCall(c *chain, call *model.Call, target *farmSpec, targetName string, callers int, from string) {
	if target == nil {
		if s, ok := c.layers[0].explicit[c.layers[0].prefix+"farm_address"]; ok {
			p.errorf(s.at, c.label+"farm_address", "applies to calls into a farm; %s runs on one machine (give it replicas = N)", targetName)
		}
		if callers > 0 && call.Conn.Limit > 0 {
			who := "machines of " + from
			if from == agentName {
				who = "load agents"
			}
			call.Conn.Resolution += fmt.Sprintf("; per calling machine: %s receives at most %d × %d %s = %d connections", targetName, call.Conn.Limit, callers, who, call.Conn.Limit*callers)
		}
		return
	}
	if call.Binding.Sessionful {
		target.sessionful = true
	}
	if call.Binding.NegotiationLegs > 0 || call.Binding.CloseMessage {
		k := "binding_negotiation_legs"
		if call.Binding.NegotiationLegs == 0 {
			k = "binding_close_message"
		}
		c.errAt(k, "a negotiation or close message of its own is not modelled for calls into a farm (%s has replicas); leave it out", target.name)
	}
	call.PerHost = c.str(scopeStep, "farm_address") == "per-host"
	if call.PerHost && target.bal.Policy == model.BalanceSticky {
		c.errAt("farm_address", "\"per-host\": the caller picks each machine itself, but %s's balancer.policy is \"sticky\", which a balancer between connections and machines applies (allowed with per-host: round-robin, random, least-outstanding; or farm_address = \"virtual\")", target.name)
	}
	l, n := call.Conn.Limit, target.n
	machines := fmt.Sprintf("%d machines", n)
	if n == 1 {
		machines = "1 machine"
	}
	var b strings.Builder
	b.WriteString(call.Conn.Resolution)
	if call.PerHost {
		fmt.Fprintf(&b, "; each of the %s of %s addressed by its own host name: a ServicePoint, and this limit, per machine", machines, target.name)
		if l > 0 {
			fmt.Fprintf(&b, " (%d × %d = %d to the farm)", n, l, n*l)
		}
	} else {
		fmt.Fprintf(&b, "; the farm %s (%s) addressed by one virtual host name: one ServicePoint, so this limit covers the whole farm", target.name, machines)
		if target.bal.Policy == model.BalanceSticky && l > 0 {
			fmt.Fprintf(&b, "; its balancer is connection-sticky, so these %d connections reach at most %d of its %s", l, min(l, n), machines)
		}
	}
	if callers > 0 && l > 0 {
		per := l
		if call.PerHost {
			per = l * n
		}
		who := "machines of " + from
		if from == agentName {
			who = "load agents"
		}
		fmt.Fprintf(&b, "; the farm %s receives at most %d × %d %s = %d connections", target.name, per, callers, who, per*callers)
	}
	call.Conn.Resolution = b.String()
}

// checkAffinity refuses session affinity on a farm that no sessionful
// call reaches: it would mean nothing.
func (p *loader) checkAffinity(farms []*farmSpec) {
	for _, f := range farms {
		if f == nil || f.affinity == nil || f.sessionful || !f.bal.Affinity {
			continue
		}
		p.errorf(f.affinity.at, "tier."+f.name+".balancer.affinity", "\"session\" keeps a WCF session's calls on its machine, but every call into %s uses a sessionless binding; affinity needs a sessionful binding (wsHttp, netTcp, namedPipe, or binding_sessionful = true), or leave it out", f.name)
	}
}

// agentSpec is the load's agents, when it has them.
type agentSpec struct {
	n     int
	cores int
	cpu   sim.Dist
	// machine, if > 0, is the shared machine the agents run on
	// (load.agent_machine), with its CPU discipline.
	machine int
	disc    model.CPUDiscipline
}

// resolveAgents reads load.agents, agent_cores, agent_cpu and
// agent_machine: the load runs on agents when any is set.
func (p *loader) resolveAgents(doc *docSpec, top *chain, l *model.Load, names []string) *agentSpec {
	set := false
	for _, k := range []string{"load.agents", "load.agent_cores", "load.agent_cpu", "load.agent_machine"} {
		if _, ok := doc.top[k]; ok {
			set = true
		}
	}
	if !set {
		return nil
	}
	a := &agentSpec{n: top.int(scopeTop, "load.agents"), cores: top.int(scopeTop, "load.agent_cores"), cpu: top.dist(scopeTop, "load.agent_cpu")}
	for _, n := range names {
		if n == agentName {
			top.errAt("load.agents", "a tier is named %q, the name of the load's agents; rename the tier", agentName)
		}
	}
	if l.Kind == model.LoadClosed && l.Users != nil {
		if most := int(math.Round(l.Users.Max())); a.n > most {
			top.errAt("load.agents", "%d agents but at most %d users: %d agents would send nothing (users run on agents in turn; allowed: 1 to %d agents)", a.n, most, a.n-most, most)
		}
	}
	return a
}

// expandFarms turns the resolved tiers (one per [[tier]]) into machines:
// the load's agents first, then every tier, a farm as its replicas, each
// with its own copy of the calls, and every call's target its machine
// (the first replica of a farm, with the Farm). Without farms or agents
// it changes nothing.
func (p *loader) expandFarms(topo *model.Topology, farms []*farmSpec, ag *agentSpec, top *chain) {
	nf := 0
	for _, f := range farms {
		if f != nil {
			nf++
		}
	}
	if nf == 0 && ag == nil {
		return
	}
	logical := topo.Tiers
	first := make([]int, len(logical))
	k := 0
	if ag != nil {
		k = ag.n
		nf++
	}
	for i := range logical {
		first[i] = k
		if f := farms[i]; f != nil {
			k += f.n
		} else {
			k++
		}
	}
	if k > MaxMachines {
		top.errAt("", "%d machines (tiers, replicas of farms and load agents); at most %d", k, MaxMachines)
		return
	}
	topo.Farms = make([]model.Farm, 0, nf) // its capacity keeps the Farm pointers valid
	addFarm := func(f model.Farm) *model.Farm {
		f.Index = len(topo.Farms)
		topo.Farms = append(topo.Farms, f)
		return &topo.Farms[f.Index]
	}
	var agents *model.Farm
	if ag != nil {
		f := model.Farm{Name: agentName, Agents: true, Balancer: model.Balancer{Policy: model.BalanceByUser}}
		for r := range ag.n {
			f.Replicas = append(f.Replicas, r)
		}
		agents = addFarm(f)
	}
	farmOf := make([]*model.Farm, len(logical))
	for i, f := range farms {
		if f == nil {
			continue
		}
		mf := model.Farm{Name: f.name, Balancer: f.bal}
		for r := range f.n {
			mf.Replicas = append(mf.Replicas, first[i]+r)
		}
		farmOf[i] = addFarm(mf)
	}
	remap := func(c *model.Call) *model.Call {
		cp := *c
		if lt := cp.Target; lt >= 0 && lt < len(logical) {
			cp.Target, cp.Farm = first[lt], farmOf[lt]
		}
		return &cp
	}
	copySteps := func(steps []model.Step) []model.Step {
		out := make([]model.Step, len(steps))
		copy(out, steps)
		for s := range out {
			if out[s].Kind == model.StepCall && out[s].Call != nil {
				out[s].Call = remap(out[s].Call)
			}
		}
		return out
	}
	phys := make([]model.Tier, 0, k)
	load := &topo.Load
	if ag != nil {
		// Each agent makes the load's call into the entry tier (its own
		// connection pool, proxies, timeout and retries) after its own CPU
		// per request; the users reach their agent at no cost.
		entry := load.Call
		for r := 1; r <= ag.n; r++ {
			t := model.Tier{
				Name: fmt.Sprintf("%s#%d", agentName, r), Farm: agentName, Replica: r, Agent: true,
				Host: model.HostSelf, Cores: ag.cores, CostMultiplier: 1, Machine: ag.machine, CPU: ag.disc,
				Worker: model.Pool{Min: unlimitedThreads, Max: unlimitedThreads},
				IO:     model.Pool{Min: unlimitedThreads, Max: unlimitedThreads},
			}
			if !ag.cpu.IsZero() {
				t.Steps = append(t.Steps, model.Step{Kind: model.StepCPU, Demand: ag.cpu})
			}
			t.Steps = append(t.Steps, model.Step{Kind: model.StepCall, Call: remap(&entry)})
			phys = append(phys, t)
		}
		none, _ := findBinding("none")
		load.Call = model.Call{Target: 0, Farm: agents, Binding: none, Retry: model.Retry{Attempts: 1},
			Conn: model.Conn{Resolution: "unlimited: the users run on their load agent (user u on agent u mod " + fmt.Sprint(ag.n) + ")"}}
	} else {
		load.Call = *remap(&load.Call)
	}
	for i := range logical {
		n, name := 1, logical[i].Name
		if f := farms[i]; f != nil {
			n = f.n
		}
		for r := 1; r <= n; r++ {
			t := logical[i]
			t.Steps = copySteps(t.Steps)
			if farms[i] != nil {
				t.Name, t.Farm, t.Replica = fmt.Sprintf("%s#%d", name, r), name, r
			}
			phys = append(phys, t)
		}
	}
	topo.Tiers = phys
}
