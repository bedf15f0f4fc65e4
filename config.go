package tsim

import (
	"github.com/tsim-dev/tsim/dotnetconfig"
)

// ConfigOptions say which .NET process the configuration files are for;
// see dotnetconfig.Options.
type ConfigOptions = dotnetconfig.Options

// Config is the throttles real .NET configuration files put in effect,
// with where each came from and the warnings; see dotnetconfig.Report.
// Its WriteText prints what tsim config prints, and Skeleton is the
// settings as an experiment file.
type Config struct {
	*dotnetconfig.Report
}

// ReadConfig reads the configuration files args name (FILE, DIR or
// KIND=FILE, as tsim config takes them) and resolves the throttles they
// put in effect for the process opt describes.
func ReadConfig(args []string, opt ConfigOptions) (*Config, error) {
	files, err := dotnetconfig.ReadArgs(args)
	if err != nil {
		return nil, err
	}
	rep, err := dotnetconfig.Resolve(files, opt)
	if err != nil {
		return nil, err
	}
	return &Config{rep}, nil
}

// DotNetVersions are the .NET versions ReadConfig knows, oldest first;
// NormalizeDotNet turns "4.7.2" into "4.7" and says whether it is one of
// them; ConfigHosts are the hosts ConfigOptions.Host takes.
func DotNetVersions() []string { return dotnetconfig.DotNetVersions() }

func NormalizeDotNet(v string) (string, bool) { return dotnetconfig.NormalizeVersion(v) }

func ConfigHosts() []string { return dotnetconfig.HostNames() }
