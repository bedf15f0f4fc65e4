// Package model is tsim's domain: the tiers, thread pools, CPUs, connection
// limits, ASP.NET admission, WCF throttles, proxies, bindings, load
// generators and timeouts that a multi-tier request/reply system is made of,
// with the real defaults of .NET, ASP.NET, WCF, the CLR and their modern
// equivalents (see presets.go), and the TOML experiment format that
// describes them (load.go).
//
// A Topology is a fully resolved, validated description of one system under
// one load. Run simulates it on a sim.Engine and returns a Result. Every
// request ends in exactly one of completed, timed out, rejected, failed or
// in flight, and Run checks that the counts add up to the number generated.
//
// Admission and throttle decisions are plain functions of state (admit.go),
// so the real executor can share them.
//
// Package model imports sim and the standard library; it never calls
// time.Now, time.Sleep, the global math/rand functions, os or net.
package model
