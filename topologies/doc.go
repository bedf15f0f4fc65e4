// Package topologies holds tsim's reusable, named topologies: TOML files in
// the experiment format (tiers, their presets and steps, and a default load)
// that an experiment starts from with topology = "<name>" and then
// overrides or extends (tiers are merged by name).
//
// The files are embedded, so the binary needs no data directory. Package
// topologies imports nothing of tsim; package model imports it.
package topologies
