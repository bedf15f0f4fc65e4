package tsim

import (
	"errors"
	"fmt"
	"slices"
	"strings"

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

// CheckConfigOptions checks the options as tsim config takes them from
// its flags, and turns a version such as "4.7.2" into the one ReadConfig
// knows ("4.7"). Its messages name the flags.
func CheckConfigOptions(o *ConfigOptions) error {
	versions := strings.Join(DotNetVersions(), ", ")
	v, ok := NormalizeDotNet(o.DotNet)
	switch {
	case o.DotNet == "":
		return fmt.Errorf("--dotnet is required: the defaults differ by version (%s)", versions)
	case strings.EqualFold(o.DotNet, "core"):
		return errors.New("--dotnet core: .NET Core and .NET 5+ do not read these files")
	case !ok:
		return fmt.Errorf("--dotnet %s: unknown version (%s)", o.DotNet, versions)
	case o.Cores < 1 || o.Cores > 1024:
		return fmt.Errorf("--cores must be 1–1024, got %d", o.Cores)
	case o.Host != "" && !slices.Contains(ConfigHosts(), o.Host):
		return fmt.Errorf("--host %s: unknown host (%s)", o.Host, strings.Join(ConfigHosts(), ", "))
	case o.Tier != "" && !validTierName(o.Tier):
		return fmt.Errorf("--name %q: a tier name is letters, digits, '-' and '_', at most 64", o.Tier)
	}
	o.DotNet = v
	return nil
}

// validTierName is the experiment format's rule for tier names.
func validTierName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
