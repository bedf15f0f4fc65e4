package results

import "strconv"

// What the counter pictures (plots' counters.png, htmlreport's charts)
// ask of a run's tier: what it is, so that a tier shows the counters it
// has — no WCF counters on a tier that is not a WCF service, no
// connections on one that calls nobody.

// Presence says which tiers have a counter.
type Presence uint8

const (
	Always    Presence = iota // every tier
	ByData                    // tiers on which it is not zero throughout
	ASPNetApp                 // ASP.NET hosts (the ASP.NET objects)
	WCFOnly                   // WCF services (ServiceModelService)
	HTTPTier                  // ASP.NET hosts and tiers that are not WCF services: the ASP.NET names, as tsim's tables use them
	CallsOut                  // tiers that call others (tsim Connections)
)

// TierInfo is what a run says of one tier: whether it says anything
// (Run.Tiers, or Run.Replicas for a farm's machine), and then whether the
// tier is an ASP.NET host, a WCF service, and calls others.
type TierInfo struct {
	Known, ASPNet, WCF, Calls bool
	// Kind is what hosts it and on which .NET: "WCF self-hosted, .NET 3.5".
	Kind string
	// Cores are its cores, Farm its machines when it is a farm's totals.
	Cores, Farm int
}

// TierInfo reads what r says of its i-th tier, named name (a farm's
// machines, when shown, follow its tiers: the reports' PerReplica); the
// zero TierInfo when r says nothing of it.
func (r *Run) TierInfo(i int, name string) TierInfo {
	tiers, calls := r.Tiers, r.Calls
	if i >= len(tiers) && len(r.Replicas) > 0 {
		i, tiers, calls = i-len(tiers), r.Replicas, r.ReplicaCalls
	}
	if i >= len(tiers) || tiers[i].Name != name {
		return TierInfo{}
	}
	t := tiers[i]
	info := TierInfo{Known: true, WCF: t.WCF, Cores: t.Cores, Farm: t.Replicas}
	host := ""
	switch t.Host {
	case "aspnet-classic":
		info.ASPNet, host = true, "ASP.NET classic pipeline"
	case "iis-integrated":
		info.ASPNet, host = true, "IIS integrated pipeline"
	}
	for _, c := range calls {
		info.Calls = info.Calls || c.From == name
	}
	switch {
	case t.WCF && info.ASPNet:
		info.Kind = "WCF in " + host
	case t.WCF:
		info.Kind = "WCF self-hosted"
	default:
		info.Kind = host
	}
	if t.DotNet != "" && t.DotNet != "core" {
		info.Kind = join(info.Kind, ".NET "+t.DotNet)
	}
	return info
}

// Title is the tier's title: its kind, its cores if cores, and a farm's
// "farm of 3 machines: totals" (FoldTiers: levels and rates are sums, CPU
// over all the cores). Empty when the run says nothing of the tier.
func (info TierInfo) Title(cores bool) string {
	if !info.Known {
		return ""
	}
	s := info.Kind
	if cores {
		s = join(s, strconv.Itoa(info.Cores)+" cores")
	}
	if info.Farm > 0 {
		s = join(s, "farm of "+strconv.Itoa(info.Farm)+" machines: totals")
	}
	return s
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// Shows reports whether a tier described by info shows a counter of
// presence p: by what the run says of the tier or, where it says nothing
// (a run without Tiers), by the data (nonzero: not zero throughout).
func (p Presence) Shows(info TierInfo, nonzero bool) bool {
	switch p {
	case Always:
		return true
	case ByData:
		return nonzero
	}
	if !info.Known {
		return nonzero
	}
	switch p {
	case ASPNetApp:
		return info.ASPNet
	case WCFOnly:
		return info.WCF
	case HTTPTier:
		return info.ASPNet || !info.WCF
	case CallsOut:
		return info.Calls
	}
	return false
}
