package dotnetconfig

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/model"
)

// getters read a tier key's value back from a resolved tier, to compare a
// preset's value with the effective one and to check a skeleton. Keys
// without a getter (dotnet, auto_config, wcf.preset, calls.maxconnection)
// do not show in a model.Tier; the connection limits they decide are
// checked on the calls instead.
var getters = map[string]func(t *model.Tier) any{
	"worker.min":                       func(t *model.Tier) any { return t.Worker.Min },
	"worker.max":                       func(t *model.Tier) any { return t.Worker.Max },
	"io.min":                           func(t *model.Tier) any { return t.IO.Min },
	"io.max":                           func(t *model.Tier) any { return t.IO.Max },
	"admission.min_free_threads":       func(t *model.Tier) any { return t.Admission.MinFreeThreads },
	"admission.max_per_cpu":            func(t *model.Tier) any { return t.Admission.MaxExecuting / max(t.Cores, 1) },
	"admission.max_executing":          func(t *model.Tier) any { return t.Admission.MaxExecuting },
	"admission.queue_limit":            func(t *model.Tier) any { return t.Admission.QueueLimit },
	"admission.execution_timeout":      func(t *model.Tier) any { return fmtDuration(t.Admission.ExecutionTimeout) },
	"admission.client_connected_check": func(t *model.Tier) any { return fmtDuration(t.Admission.ClientConnectedCheck) },
	"wcf.max_calls":                    wcfGetter(func(w *model.WCF) int { return w.MaxCalls }),
	"wcf.max_sessions":                 wcfGetter(func(w *model.WCF) int { return w.MaxSessions }),
	"wcf.max_instances":                wcfGetter(func(w *model.WCF) int { return w.MaxInstances }),
}

func wcfGetter(f func(*model.WCF) int) func(t *model.Tier) any {
	return func(t *model.Tier) any {
		if t.WCF == nil {
			return nil
		}
		return f(t.WCF)
	}
}

// presetTier resolves a tier of the given preset with tsim's own loader:
// what the preset gives for these cores, without re-implementing it.
func presetTier(preset string, cores int, wcfPreset string) (*model.Tier, error) {
	src := fmt.Sprintf("[load]\nusers = 1\n\n[[tier]]\nname = \"probe\"\npreset = %q\ncores = %d\nwcf.preset = %q\nstep = [{cpu = \"const(1ms)\"}]\n", preset, cores, wcfPreset)
	x, err := format.LoadExperiment("preset.toml", []byte(src), nil)
	if err != nil {
		return nil, fmt.Errorf("resolving preset %s: %w", preset, err)
	}
	sc, err := x.Scenario(0)
	if err != nil {
		return nil, fmt.Errorf("resolving preset %s: %w", preset, err)
	}
	return &sc.Topology.Tiers[0], nil
}

func (r *Report) wcfPreset() string {
	for _, k := range r.keys {
		if k.key == "wcf.preset" {
			return k.value.(string)
		}
	}
	return "none"
}

// Skeleton writes the tier as an experiment file for tsim run: the preset,
// every effective value that a file set or that differs from the preset's
// (the others as comments), a call step per client endpoint and a
// placeholder tier for each service called, with a placeholder load. It
// loads the file it wrote with tsim's loader and checks that the loader
// resolves every value and connection limit as the report says.
func (r *Report) Skeleton() ([]byte, error) {
	pt, err := presetTier(r.Preset, r.Cores, r.wcfPreset())
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Written by tsim config from %s.\n", comment(strings.Join(r.Files, ", ")))
	p("# .NET %s, %d processors, %s. The tier's settings are those files'\n", r.DotNet, r.Cores, hostWords(r.Host))
	p("# effective values (a comment says where each came from); settings left\n")
	p("# as comments are the preset's. The load, the steps and the called tiers\n")
	p("# are placeholders: describe them (docs/experiment-format.md).\n")
	p("name = %q\n", r.Tier+"-config")
	p("duration = \"2m\"\n\n")
	p("[load]\nusers = 10           # placeholder: the users to try\nthink = \"exp(1s)\"    # placeholder\n\n")
	p("[[tier]]\nname = %q\n", r.Tier)
	p("preset = %q\n", r.Preset)
	p("cores = %d\n", r.Cores)
	for _, k := range r.keys {
		write := k.file
		if g, ok := getters[k.key]; ok && !write {
			write = g(pt) != k.value
		}
		line := fmt.Sprintf("%s = %s", k.key, tomlValue(k.value))
		if write {
			p("%-40s # %s\n", line, comment(k.from))
		} else {
			p("# %-38s # the preset's value; %s\n", line, comment(k.from))
		}
	}
	if r.WCF {
		p("# wcf.instancing and wcf.concurrency come from the service's [ServiceBehavior] attribute, in code: set them\n")
	}
	p("  [[tier.step]]\n  cpu = \"exp(10ms)\"                      # placeholder: the tier's own work\n")
	for _, c := range r.Calls {
		p("  [[tier.step]]\n")
		p("  %-38s # client endpoint %s at %s: %s\n", fmt.Sprintf("call = %q", c.Target), comment(strconv.Quote(c.Endpoint)), comment(c.At), comment(c.Address))
		p("  %-38s # %s\n", fmt.Sprintf("timeout = %q", timeoutValue(c.Timeout)), comment("sendTimeout: "+c.TimeoutFrom))
		p("  %-38s # %s\n", fmt.Sprintf("binding = %q", c.Binding), comment(c.BindingType))
		if c.SessionfulSet {
			p("  %-38s # %s\n", fmt.Sprintf("binding_sessionful = %v", c.Sessionful), "security and reliable-session settings of the binding")
		}
		if c.MaxConnectionHost > 0 {
			p("  %-38s # the host-specific connectionManagement entry\n", fmt.Sprintf("maxconnection_host = %d", c.MaxConnectionHost))
		}
		if c.Loopback {
			p("  %-38s # the service is on this machine\n", "loopback = true")
		}
		p("  # connection limit: %s\n", comment(c.Resolution))
	}
	placed := map[string]bool{}
	for _, c := range r.Calls {
		if placed[c.Target] {
			continue // another endpoint on the same scheme://host:port
		}
		placed[c.Target] = true
		p("\n[[tier]]\n%-40s # placeholder for the service at %s: give its preset, cores and steps\n", fmt.Sprintf("name = %q", c.Target), comment(c.Address))
		p("  [[tier.step]]\n  cpu = \"exp(10ms)\"\n")
	}
	out := b.Bytes()
	if err := r.check(out); err != nil {
		return nil, err
	}
	return out, nil
}

// check loads a skeleton with tsim's loader and compares what it resolves
// with the report. A difference is a bug in this package: the report and
// tsim run would disagree.
func (r *Report) check(data []byte) error {
	x, err := format.LoadExperiment(r.Tier+"-config.toml", data, nil)
	if err != nil {
		return fmt.Errorf("internal error: the skeleton does not load: %w", err)
	}
	sc, err := x.Scenario(0)
	if err != nil {
		return fmt.Errorf("internal error: the skeleton does not load: %w", err)
	}
	tiers := sc.Topology.Tiers
	t := &tiers[0]
	for _, k := range r.keys {
		if g, ok := getters[k.key]; ok {
			if got := g(t); got != k.value {
				return fmt.Errorf("internal error: the skeleton's %s resolves to %v, the report says %v", k.key, got, k.value)
			}
		}
	}
	if (t.WCF != nil) != r.WCF {
		return fmt.Errorf("internal error: the skeleton's tier is a WCF service: %v, the report says %v", t.WCF != nil, r.WCF)
	}
	var calls []*model.Call
	for i := range t.Steps {
		if t.Steps[i].Kind == model.StepCall {
			calls = append(calls, t.Steps[i].Call)
		}
	}
	if len(calls) != len(r.Calls) {
		return fmt.Errorf("internal error: the skeleton has %d calls, the report %d", len(calls), len(r.Calls))
	}
	for i, c := range r.Calls {
		got := calls[i]
		switch {
		case got.Conn.Limit != c.Limit:
			return fmt.Errorf("internal error: the skeleton's call to %s has connection limit %d (%s), the report says %d", c.Target, got.Conn.Limit, got.Conn.Resolution, c.Limit)
		case got.Timeout != c.Timeout:
			return fmt.Errorf("internal error: the skeleton's call to %s has timeout %v, the report says %v", c.Target, got.Timeout, c.Timeout)
		case got.Binding.Name != c.Binding || got.Binding.Sessionful != c.Sessionful:
			return fmt.Errorf("internal error: the skeleton's call to %s has binding %s (sessionful %v), the report says %s (%v)", c.Target, got.Binding.Name, got.Binding.Sessionful, c.Binding, c.Sessionful)
		}
	}
	return nil
}

func tomlValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	default:
		return fmt.Sprint(v)
	}
}

// comment makes text safe for one TOML comment line.
func comment(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r < ' ' && r != '\t' {
			return ' '
		}
		return r
	}, s)
}

func hostWords(h string) string {
	switch h {
	case "aspnet-classic":
		return "ASP.NET on IIS 6 or the classic pipeline"
	case "iis-integrated":
		return "ASP.NET on the IIS 7+ integrated pipeline"
	}
	return "a process of its own"
}
