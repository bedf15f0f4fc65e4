// Package model is tsim's domain: the tiers, thread pools, CPUs, connection
// limits, ASP.NET admission, WCF throttles, proxies, bindings, load
// generators and timeouts that a multi-tier request/reply system is made of,
// as a compiled, validated Topology, and every decision its two executors
// share: the simulator (package simmode) and the real executor (package
// realmode) both run a Topology by calling the functions and state
// machines of this package, so that cross-validating them tests the model,
// not two implementations of it. The real defaults of .NET, ASP.NET, WCF and the CLR are
// filled in by package format, which reads the TOML experiment files.
//
// A Topology is a fully resolved, validated description of one system under
// one load. simmode.Run simulates it; realmode.Run runs it for real.
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
