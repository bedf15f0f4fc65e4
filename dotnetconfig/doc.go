// Package dotnetconfig reads real .NET Framework configuration files
// (machine.config, the root and application web.config, an EXE's
// app.config, Aspnet.config) and resolves the throttles they leave in
// effect the way .NET does, for one .NET version and processor count:
// System.Net's connectionManagement, ASP.NET's processModel, httpRuntime,
// compilation and applicationPool (and the MaxConcurrentRequestsPerCPU
// registry value), and WCF's serviceThrottling behaviours, binding timeouts,
// security modes and reliable sessions.
//
// Resolve returns a Report: every effective value with where it came from
// (file:line, or the default and why), warnings for entries that have no
// effect (the "Crack Throttling" maxconnection entry outside
// system.net/connectionManagement above all), and the client endpoints as
// calls. Report.Skeleton writes the tier as an experiment file that tsim run
// accepts; it states only what differs from the tsim preset it names, and
// its connection limits come from format.ResolveConnLimit, the rule the
// loader itself applies, so tsim config and tsim run cannot disagree.
//
// Files are parsed with encoding/xml, at most MaxFileSize bytes each and
// nested at most maxDepth elements deep; a malformed file is an error that
// names file and line. Messages name elements and attributes but never
// repeat file contents beyond the settings this package interprets.
//
// The package imports format (connection limits, presets) and model (the
// resolved tier the skeleton is checked against), and the standard library.
// It reads files only in ReadFile; everything else works on bytes.
package dotnetconfig
