package format

import (
	"strings"

	"github.com/tsim-dev/tsim/model"
)

// Machines several tiers share (model.Tier.Machine): a tier's machine =
// "<tier>" runs it on that tier's machine, and load.agent_machine the
// load's agents; they share its cores, one CPU. The host keeps its own
// keys; a guest takes the host's cores and CPU discipline.

// machineSpec is where each tier runs: host[i] is the tier whose machine
// tier i shares (-1: its own), agents the tier the load's agents run on
// (-1: a machine of their own).
type machineSpec struct {
	host   []int
	agents int
}

// id is the shared machine of tier i, 0 for a machine of its own: hosts
// and guests take their host's index + 1.
func (m *machineSpec) id(i int) int {
	if h := m.host[i]; h >= 0 {
		return h + 1
	}
	for g, h := range m.host {
		if h == i && g != i {
			return i + 1
		}
	}
	if m.agents == i {
		return i + 1
	}
	return 0
}

// resolveMachines reads every tier's machine key and load.agent_machine.
func (p *loader) resolveMachines(doc *docSpec, index map[string]int, names []string, farms []*farmSpec) *machineSpec {
	m := &machineSpec{host: make([]int, len(doc.tiers)), agents: -1}
	host := func(c *chain, key, who string, self int) int {
		s, ok := c.explicit(key)
		if !ok {
			return -1
		}
		name := s.v.(string)
		h, ok := index[name]
		switch {
		case !ok:
			c.errAt(key, "unknown tier %q; allowed: the name of another tier (%s)", name, strings.Join(names, ", "))
			return -1
		case h == self:
			c.errAt(key, "names the tier itself; a tier is on its own machine unless this names another tier")
			return -1
		case farms[h] != nil:
			c.errAt(key, "tier %q is a farm (replicas); %s shares one machine, not a farm's", name, who)
			return -1
		}
		if _, ok := doc.tiers[h].keys["machine"]; ok {
			c.errAt(key, "tier %q runs on another tier's machine itself; name that tier (%q)", name, doc.tiers[h].keys["machine"].v)
			return -1
		}
		return h
	}
	for i, t := range doc.tiers {
		c := &chain{p: p, layers: []layer{{explicit: t.keys}}, at: t.at, label: "tier." + t.name + "."}
		m.host[i] = host(c, "machine", "a tier", i)
		if m.host[i] >= 0 && farms[i] != nil {
			c.errAt("machine", "a farm (replicas) is several machines; a tier on another tier's machine is one")
			m.host[i] = -1
		}
	}
	top := &chain{p: p, layers: []layer{{explicit: doc.top}}, label: ""}
	if len(p.sources) > 0 {
		top.at = pos{src: p.sources[0], key: "load"}
	}
	m.agents = host(top, "load.agent_machine", "the load's agents share", -1)
	// A guest takes its host's cores and CPU discipline.
	for i, h := range m.host {
		if h < 0 {
			continue
		}
		t := doc.tiers[i]
		c := &chain{p: p, layers: []layer{{explicit: t.keys}}, at: t.at, label: "tier." + t.name + "."}
		hc := p.hostCores(doc.tiers[h])
		if s, ok := t.keys["cores"]; ok && s.v.(int) != hc {
			c.errAt("cores", "is %d, but the tier runs on the machine of %q (%d cores); leave cores out or set %d", s.v.(int), doc.tiers[h].name, hc, hc)
		}
		if s, ok := t.keys["cpu_discipline"]; ok && s.v.(string) != p.hostDiscipline(doc.tiers[h]) {
			c.errAt("cpu_discipline", "is %q, but the tier runs on the machine of %q (%q); one machine has one CPU discipline: leave it out", s.v, doc.tiers[h].name, p.hostDiscipline(doc.tiers[h]))
		}
	}
	if h := m.agents; h >= 0 {
		if s, ok := doc.top["load.agent_cores"]; ok && s.v.(int) != p.hostCores(doc.tiers[h]) {
			top.errAt("load.agent_cores", "is %d, but the agents run on the machine of %q (%d cores); leave agent_cores out or set %d", s.v.(int), doc.tiers[h].name, p.hostCores(doc.tiers[h]), p.hostCores(doc.tiers[h]))
		}
	}
	return m
}

// hostCores and hostDiscipline are a tier's own cores and CPU discipline
// (explicit or the default; presets set neither).
func (p *loader) hostCores(t *tierSpec) int {
	c := &chain{p: p, layers: []layer{{explicit: t.keys}, {raw: tierDefaults}}, at: t.at, label: "tier." + t.name + "."}
	return c.int(scopeTier, "cores")
}

func (p *loader) hostDiscipline(t *tierSpec) string {
	c := &chain{p: p, layers: []layer{{explicit: t.keys}, {raw: tierDefaults}}, at: t.at, label: "tier." + t.name + "."}
	return c.str(scopeTier, "cpu_discipline")
}

// guestKeys returns a guest tier's keys with its host's cores and CPU
// discipline filled in (so that per-CPU defaults scale with the machine).
func guestKeys(t *tierSpec, host *tierSpec, p *loader) map[string]setting {
	keys := make(map[string]setting, len(t.keys)+2)
	for k, v := range t.keys {
		keys[k] = v
	}
	if _, ok := keys["cores"]; !ok {
		keys["cores"] = setting{v: p.hostCores(host), at: t.at}
	}
	if _, ok := keys["cpu_discipline"]; !ok {
		keys["cpu_discipline"] = setting{v: p.hostDiscipline(host), at: t.at}
	}
	return keys
}

// applyMachines marks the shared machines on the resolved tiers (before
// farms and agents are expanded).
func applyMachines(tiers []model.Tier, m *machineSpec) {
	for i := range tiers {
		tiers[i].Machine = m.id(i)
	}
}
