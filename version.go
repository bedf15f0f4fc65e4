package tsim

import "runtime/debug"

// ReleaseVersion is tsim's release version; Version adds the revision a
// build came from.
const ReleaseVersion = "0.1.0-dev"

// Version is ReleaseVersion plus the VCS revision of the build ("+dirty"
// when it had local changes), if the build recorded one: what tsim
// version prints, and what a shard's manifest records (merge refuses
// shards of different versions).
func Version() string {
	v := ReleaseVersion
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v += " (" + rev
	if dirty {
		v += "+dirty"
	}
	return v + ")"
}
