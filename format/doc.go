// Package format reads tsim's experiment files: TOML with presets (the real
// defaults of .NET, ASP.NET, WCF, the CLR, Go, Envoy, Tomcat and HikariCP),
// named topologies, variants and sweeps over key paths. It validates every
// key, names each problem by file, line and key path, resolves .NET's
// connection-limit rules, and compiles each scenario into a model.Topology.
//
// Opening a file must not exhaust memory or time, whatever the file: the
// limits (MaxExperimentBytes, MaxDepth, MaxKeys, MaxDataBytes,
// MaxTotalBytes, MaxNameLen, ...) are exported so that the command line
// enforces the same ones, and LoadExperiment enforces them on the data it
// is given (a scan before the TOML parser, which is superlinear in
// nesting, refuses deep or huge files). Messages never quote a file the
// experiment names (a data file, a topology given as a path), only the
// experiment file itself.
//
// Package format builds on model and sim. It must not import the runtime's
// callers (runner, analysis, report, realmode, plots, input, cmd/tsim), and
// it reads no file itself: the caller passes a ReadFile function, which is
// where path confinement and bounded reads are enforced (package input
// provides one).
package format
