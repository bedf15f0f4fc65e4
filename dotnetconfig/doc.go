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
// SettingConfig goes the other way: a tsim setting (the change tsim explain
// proposes) as the .NET configuration element or line of code that makes
// it, such as <add address="http://orders" maxconnection="17"/>.
//
// Files are read through package input (regular files only, at most
// MaxFileSize bytes), parsed with encoding/xml, their charset decoded with
// golang.org/x/text, and nested at most maxDepth elements deep; a malformed
// file is an error that names file and line. Collections merge in linear
// time. Messages name elements and attributes but never repeat file
// contents beyond the settings this package interprets.
//
// The package imports format (connection limits, presets), model (the
// resolved tier the skeleton is checked against) and input (reading), the
// standard library and golang.org/x/text. Only ReadArgs touches files;
// everything else works on bytes.
package dotnetconfig
