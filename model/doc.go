// Package model is tsim's domain: the tiers, thread pools, CPUs, connection
// limits, ASP.NET admission, WCF throttles, proxies, bindings, load
// generators and timeouts that a multi-tier request/reply system is made of,
// as a compiled, validated Topology, and the event-driven runtime that
// simulates one. The real defaults of .NET, ASP.NET, WCF and the CLR are
// filled in by package format, which reads the TOML experiment files.
//
// A Topology is a fully resolved, validated description of one system under
// one load. Run simulates it on a sim.Engine and returns a Result. Every
// request ends in exactly one of completed, timed out, rejected, failed or
// in flight, and Run checks that the counts add up to the number generated.
//
// A tier may be a farm of machines behind a balancer (farm.go): format
// compiles each machine into a Tier, and the balancer's choice (Pick,
// ChooseReplica, DecideBalancer) is a plain function of state that both
// executors call.
//
// Admission and throttle decisions are plain functions of state (admit.go),
// so the real executor can share them; so are the pieces of the PerfMon
// counters both report (counters.go: DurationStat, the HttpApplication pool
// behind Pipeline Instance Count). docs/counters.md defines every counter.
//
// Package model imports sim, results and the standard library (never format,
// the experiment files' reader, which builds on it); it never calls
// time.Now, time.Sleep, the global math/rand functions, os or net.
package model
