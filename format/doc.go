// Package format reads tsim's experiment files: TOML with presets (the real
// defaults of .NET, ASP.NET, WCF, the CLR, Go, Envoy, Tomcat and HikariCP),
// named topologies, variants and sweeps over key paths. It validates every
// key, names each problem by file, line and key path, resolves .NET's
// connection-limit rules, and compiles each scenario into a model.Topology.
//
// Package format builds on model and sim. It must not import the runtime's
// callers (runner, analysis, report, realmode, plots, cmd/tsim), and it
// reads no file itself: the caller passes a ReadFile function, which is
// where size limits and path confinement are enforced.
package format
