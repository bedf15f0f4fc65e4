package dotnetconfig

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Options are what the files do not say.
type Options struct {
	// DotNet is the .NET Framework version of the process, as tsim's
	// dotnet key takes it: "2.0", "3.0", "3.5", "4.0", "4.5", "4.6", "4.7"
	// or "4.8". Required: defaults differ by version.
	DotNet string
	// Cores is the processor count the runtime sees (N in the per-CPU
	// defaults); at least 1.
	Cores int
	// CoresDefaulted says Cores was not given, for the table.
	CoresDefaulted bool
	// Host is "self", "aspnet-classic" or "iis-integrated"; "" decides
	// from the files: ASP.NET when a web.config is given (the classic
	// pipeline before .NET 4.0, the integrated one from 4.0), else self.
	Host string
	// MaxConcurrentRequestsPerCPU is the registry value under
	// HKLM\SOFTWARE\Microsoft\ASP.NET\<version>; < 0 when not given.
	MaxConcurrentRequestsPerCPU int
	// Tier names the tier in the skeleton; "" = "web" for ASP.NET, "app"
	// otherwise.
	Tier string
	// Service picks the <service> whose throttle the tier gets when the
	// files configure several; "" = the first.
	Service string
}

// DotNetVersions are the versions Resolve accepts, oldest first.
func DotNetVersions() []string { return append([]string(nil), dotnetVersions...) }

var dotnetVersions = []string{"2.0", "3.0", "3.5", "4.0", "4.5", "4.6", "4.7", "4.8"}

// HostNames are the hosts Options.Host accepts.
func HostNames() []string { return []string{"self", "aspnet-classic", "iis-integrated"} }

// NormalizeVersion turns "4.7.2" into "4.7" and checks the result is a
// version tsim knows.
func NormalizeVersion(v string) (string, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if parts := strings.Split(v, "."); len(parts) > 2 {
		v = parts[0] + "." + parts[1]
	}
	for _, s := range dotnetVersions {
		if s == v {
			return v, true
		}
	}
	return "", false
}

func atLeast(v, min string) bool {
	vi, mi := -1, -1
	for i, s := range dotnetVersions {
		if s == v {
			vi = i
		}
		if s == min {
			mi = i
		}
	}
	return vi >= 0 && mi >= 0 && vi >= mi
}

// Report is the effective configuration of one process.
type Report struct {
	Files  []string // as applied, in order
	DotNet string
	Cores  int
	Host   string // self, aspnet-classic, iis-integrated
	Preset string // the tsim preset the skeleton starts from
	Tier   string // the tier's name in the skeleton

	Rows     []Row   // every effective value, in a fixed order
	Calls    []*Call // the client endpoints, in file order
	Warnings []Warning

	WCF       bool   // the process hosts a WCF service (the tier gets a WCF throttle)
	presetWCF string // the preset's own wcf.preset
	Service   string // its name ("" when only WCF 4's default behaviour says so)

	keys []tierKey // the tier's keys for the skeleton, in order
}

// A Row is one effective value.
type Row struct {
	Setting string // the .NET setting, e.g. "processModel maxWorkerThreads"
	Value   string // its effective value, in the units of the tsim key
	Key     string // the tsim key it becomes, e.g. "tier.web.worker.max"; "" when tsim does not model it
	From    string // "machine.config:40 (100 per CPU × 8)", or "default: ..." and why
}

// A Call is a client endpoint: a call from the tier to a service.
type Call struct {
	Target   string // the placeholder tier it calls in the skeleton
	Endpoint string // the endpoint's name (or contract), for comments
	Address  string
	At       string // file:line of the endpoint

	BindingType string // the WCF binding, e.g. "customBinding"
	Binding     string // the tsim binding, e.g. "basicHttp-binary"
	Sessionful  bool
	// SessionfulSet: the binding's sessionfulness differs from the tsim
	// binding's own, so the skeleton sets binding_sessionful.
	SessionfulSet bool
	Timeout       time.Duration // SendTimeout; 0 = Infinite (none)
	TimeoutFrom   string

	MaxConnectionHost int // the host-specific connectionManagement entry; 0 = none
	Loopback          bool
	Limit             int    // the connection limit, from format.ResolveConnLimit; 0 = none
	Resolution        string // ResolveConnLimit's why
}

// tierKey is one of the tier's keys in the skeleton.
type tierKey struct {
	key   string // relative to the tier: "worker.max"
	value any    // int, bool or string (durations as strings)
	from  string // for the comment
	file  bool   // set in a file or by a flag: always written
}

// unlimitedExecuting stands for "no limit" where tsim needs a number
// (admission.max_executing's range ends at 10⁷).
const unlimitedExecuting = 10_000_000

// Resolve reads files (any order; see ReadArgs for how kinds are told) and
// returns the effective configuration. The error, if any, lists every
// problem found, each with its file and line.
func Resolve(files []File, opt Options) (*Report, error) {
	v, ok := NormalizeVersion(opt.DotNet)
	if !ok {
		return nil, fmt.Errorf("unknown .NET version %q (versions: %s)", opt.DotNet, strings.Join(dotnetVersions, ", "))
	}
	opt.DotNet = v
	if opt.Cores < 1 || opt.Cores > 1024 {
		return nil, fmt.Errorf("cores must be 1–1024, got %d", opt.Cores)
	}
	switch opt.Host {
	case "", "self", "aspnet-classic", "iis-integrated":
	default:
		return nil, fmt.Errorf("unknown host %q (hosts: %s)", opt.Host, strings.Join(HostNames(), ", "))
	}
	files, err := order(files)
	if err != nil {
		return nil, err
	}
	c, err := collect(files)
	if err != nil {
		return nil, err
	}
	r := &resolver{c: c, opt: opt, v: v, n: opt.Cores, rep: &Report{DotNet: v, Cores: opt.Cores}}
	for _, f := range files {
		r.rep.Files = append(r.rep.Files, f.Name)
	}
	r.process()
	r.rep.WCF = r.hostsWCF()
	if r.aspnet() {
		r.threadsASPNet()
		r.admission()
		r.wcfService()
	} else {
		r.threadsSelf()
		r.wcfService()
		r.aspnetUnused()
	}
	r.calls()
	r.unused()
	if len(c.errs) > 0 {
		errs := c.errs
		if len(errs) > maxErrors {
			errs = append(errs[:maxErrors:maxErrors], fmt.Errorf("and %d more problems", len(c.errs)-maxErrors))
		}
		return nil, errors.Join(errs...)
	}
	r.rep.Warnings = sortWarnings(c.warnings, r.rep.Files)
	if n := len(r.rep.Warnings); n > maxWarnings {
		r.rep.Warnings = append(r.rep.Warnings[:maxWarnings:maxWarnings], Warning{Msg: fmt.Sprintf("and %d more warnings", n-maxWarnings)})
	}

	return r.rep, nil
}

// maxErrors and maxWarnings bound what Resolve reports: a file of 20,000
// broken entries makes a page, not 20,000 lines.
const (
	maxErrors   = 20
	maxWarnings = 100
)

// sortWarnings orders warnings by file (in the order applied) and line.
func sortWarnings(ws []Warning, files []string) []Warning {
	idx := func(f string) int {
		for i, n := range files {
			if n == f {
				return i
			}
		}
		return len(files)
	}
	var out []Warning
	seen := map[Warning]bool{}
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if ia, ib := idx(a.File), idx(b.File); ia != ib {
			return ia < ib
		}
		return a.Line < b.Line
	})
	return out
}

type resolver struct {
	c   *collected
	opt Options
	v   string // .NET version
	n   int    // cores
	rep *Report

	auto                     bool // processModel autoConfig (ASP.NET)
	workerMax, ioMax         int
	starEntry                int // the '*' maxconnection in effect; 0 = none
	serviceBehavior, svcName string
	targets                  map[string]*Call // ServicePoint key → the first call to it
	listenerDone             bool             // the netTcp listener is reported
}

func (r *resolver) aspnet() bool { return r.rep.Host != "self" }

// key returns a tier key's full path for the table.
func (r *resolver) key(k string) string { return "tier." + r.rep.Tier + "." + k }

func (r *resolver) row(setting, value, key, from string) {
	if key != "" {
		key = r.key(key)
	}
	r.rep.Rows = append(r.rep.Rows, Row{Setting: setting, Value: value, Key: key, From: from})
}

func (r *resolver) set(key string, value any, from string, file bool) {
	r.rep.keys = append(r.rep.keys, tierKey{key: key, value: value, from: from, file: file})
}

func fromAt(at pos, note string) string {
	if note == "" {
		return at.String()
	}
	return at.String() + " (" + note + ")"
}

func fromDefault(why string) string { return "default: " + why }

// process decides the host, the preset and the tier's name.
func (r *resolver) process() {
	rep, c := r.rep, r.c
	host, hostFrom := r.opt.Host, "--host"
	if host == "" {
		switch {
		case c.webFiles > 0 && atLeast(r.v, "4.0"):
			host, hostFrom = "iis-integrated", fromDefault("a web.config was given and .NET 4+: the IIS 7+ integrated pipeline (--host aspnet-classic for IIS 6 or the classic pipeline)")
		case c.webFiles > 0:
			host, hostFrom = "aspnet-classic", fromDefault("a web.config was given and .NET "+r.v+": IIS 6 or the classic pipeline (--host iis-integrated for IIS 7's integrated pipeline)")
		default:
			host, hostFrom = "self", fromDefault("no web.config given: a process of its own (console, Windows service); --host for ASP.NET")
		}
	}
	rep.Host = host
	if host == "self" && c.webFiles > 0 {
		c.warn(pos{}, "web.config files with --host self: their system.web settings have no effect outside ASP.NET")
	}
	if host != "self" && c.appFiles > 0 {
		c.warn(pos{}, "an executable's configuration file with an ASP.NET host: ASP.NET reads web.config files, not NAME.exe.config")
	}
	rep.Tier = r.opt.Tier
	if rep.Tier == "" {
		rep.Tier = "app"
		if host != "self" {
			rep.Tier = "web"
		}
	}
	presetDotNet := "3.5"
	rep.presetWCF = "none"
	switch {
	case host == "self" && atLeast(r.v, "4.0"):
		rep.Preset, presetDotNet, rep.presetWCF = "self-net4", "4.0", "wcf4"
	case host == "self":
		rep.Preset, rep.presetWCF = "self-net35", "wcf35"
	case host == "aspnet-classic":
		// tsim has one classic-pipeline preset; on .NET 4.x its numbers
		// (autoConfig's 100/88/76 per CPU) are the same, and the dotnet
		// key below carries the version.
		rep.Preset = "aspnet-classic-net35"
	case atLeast(r.v, "4.0"):
		rep.Preset, presetDotNet = "iis7-net4", "4.0"
	default:
		rep.Preset = "iis7-net35"
	}
	r.row(".NET version", r.v, "dotnet", "--dotnet")
	r.set("dotnet", r.v, "--dotnet", r.v != presetDotNet)
	coresFrom := "--cores"
	if r.opt.CoresDefaulted {
		coresFrom = fromDefault("--cores not given; every per-CPU value below is for 1 processor")
	}
	r.row("processors", fmt.Sprint(r.n), "cores", coresFrom)
	r.row("host", host, "host", hostFrom)
	r.row("preset", rep.Preset, "preset", "the tsim preset for this host and version")
}

// intAttr reads an integer attribute of a merged section within [lo, hi];
// ok is false when it is absent or bad (bad is reported).
func (r *resolver) intAttr(s *section, elem, name string, lo, hi int, infiniteOK bool) (v int, at pos, ok bool) {
	a, present := s.get(name)
	if !present {
		return 0, pos{}, false
	}
	parse := parseInt
	if infiniteOK {
		parse = parseInfiniteInt
	}
	v, err := parse(a.value)
	if err == nil && (v < lo || v > hi) {
		err = fmt.Errorf("must be %d–%d", lo, hi)
	}
	if err != nil {
		r.c.errorf(a.at, "%s %s: %v", elem, name, err)
		return 0, pos{}, false
	}
	return v, a.at, true
}

func (r *resolver) boolAttr(s *section, elem, name string) (v bool, at pos, ok bool) {
	a, present := s.get(name)
	if !present {
		return false, pos{}, false
	}
	v, err := parseBool(a.value)
	if err != nil {
		r.c.errorf(a.at, "%s %s: %v", elem, name, err)
		return false, pos{}, false
	}
	return v, a.at, true
}

// perCPU multiplies a per-CPU thread count, within tsim's range.
func (r *resolver) perCPU(v int) (int, string) {
	t := int64(v) * int64(r.n)
	if t > 1_000_000 {
		return 1_000_000, fmt.Sprintf("%d per CPU × %d, capped at tsim's 1,000,000", v, r.n)
	}
	return int(t), fmt.Sprintf("%d per CPU × %d", v, r.n)
}

// threadsASPNet resolves processModel: autoConfig and the CLR thread pool
// limits ASP.NET sets (HttpRuntime.SetThreadPoolLimits, dotnet.md §2a).
func (r *resolver) threadsASPNet() {
	pm := r.c.processMdl
	auto, at, ok := r.boolAttr(pm, "processModel", "autoConfig")
	var from string
	switch {
	case ok:
		from = at.String()
	case r.c.machine:
		from = fromDefault(`attribute default false: this machine.config sets no autoConfig (the shipped one sets "true")`)
	default:
		auto, from = true, fromDefault(`the shipped machine.config sets autoConfig="true" (no machine.config given)`)
	}
	r.auto = auto
	r.row("processModel autoConfig", fmt.Sprint(auto), "auto_config", from)
	r.set("auto_config", auto, from, ok || !auto)

	maxOf := func(attrName, key string) int {
		if auto {
			v, note := r.perCPU(100)
			if a, set := pm.get(attrName); set {
				r.c.warn(a.at, `processModel %s has no effect: autoConfig="true" sets it to 100 per CPU`, attrName)
			}
			from := "autoConfig: " + note + " (dotnet.md §2a)"
			r.row("processModel "+attrName, fmt.Sprint(v), key, from)
			r.set(key, v, from, false)
			return v
		}
		if n, at, ok := r.intAttr(pm, "processModel", attrName, 1, maxInt32-1, false); ok {
			v, note := r.perCPU(n)
			r.row("processModel "+attrName, fmt.Sprint(v), key, fromAt(at, note))
			r.set(key, v, fromAt(at, note), true)
			return v
		}
		def, sysWeb := 100, "System.Web 4"
		if !atLeast(r.v, "4.0") {
			def, sysWeb = 20, "System.Web 2.0"
		}
		v, note := r.perCPU(def)
		from := fromDefault(fmt.Sprintf("%s %d per CPU without autoConfig (ProcessModelSection in %s, dotnet.md §2a): %s", attrName, def, sysWeb, note))
		r.row("processModel "+attrName, fmt.Sprint(v), key, from)
		r.set(key, v, from, false)
		return v
	}
	r.workerMax = maxOf("maxWorkerThreads", "worker.max")
	r.ioMax = maxOf("maxIoThreads", "io.max")

	// minWorkerThreads and minIoThreads apply with or without autoConfig:
	// ThreadPool.SetMinThreads(min × N), which the CLR refuses above max.
	minOf := func(attrName, key string, max int) {
		if n, at, ok := r.intAttr(pm, "processModel", attrName, 1, maxInt32-1, false); ok {
			v, note := r.perCPU(n)
			note += ", ASP.NET calls ThreadPool.SetMinThreads"
			if v > max {
				r.c.warn(at, "processModel %s has no effect: %s exceeds the maximum (%d); ThreadPool.SetMinThreads refuses it", attrName, note, max)
			} else {
				r.row("processModel "+attrName, fmt.Sprint(v), key, fromAt(at, note))
				r.set(key, v, fromAt(at, note), true)
				return
			}
		}
		from := fromDefault(fmt.Sprintf("1 per CPU × %d, the CLR's own minimum (dotnet.md §3a); ThreadPool.SetMinThreads in code raises it", r.n))
		r.row("processModel "+attrName, fmt.Sprint(r.n), key, from)
		r.set(key, r.n, from, false)
	}
	minOf("minWorkerThreads", "worker.min", r.workerMax)
	minOf("minIoThreads", "io.min", r.ioMax)
}

// threadsSelf states the CLR's own thread pool limits: a process of its
// own has no configuration file setting for them (dotnet.md §3).
func (r *resolver) threadsSelf() {
	wmax, why := 250*r.n, fmt.Sprintf("the CLR 2.0 SP1–3.5 maximum, 250 per CPU × %d (dotnet.md §3)", r.n)
	if r.v == "2.0" {
		why = fmt.Sprintf("250 per CPU × %d, the CLR 2.0 SP1 maximum (2.0 RTM had 25 per CPU; dotnet.md §3)", r.n)
	}
	if atLeast(r.v, "4.0") {
		wmax, why = 32767, "the CLR 4 maximum on 64-bit (dotnet.md §3)"
	}
	wmax = min(wmax, 1_000_000)
	minWhy := fmt.Sprintf("the CLR minimum, one per CPU × %d (dotnet.md §3)", r.n)
	for _, k := range []struct {
		setting, key string
		v            int
		why          string
		code         string
	}{
		{"CLR worker threads, min", "worker.min", r.n, minWhy, "ThreadPool.SetMinThreads"},
		{"CLR worker threads, max", "worker.max", wmax, why, "ThreadPool.SetMaxThreads"},
		{"CLR I/O threads, min", "io.min", r.n, minWhy, "ThreadPool.SetMinThreads"},
		{"CLR I/O threads, max", "io.max", 1000, "the CLR's I/O completion thread maximum (dotnet.md §3a)", "ThreadPool.SetMaxThreads"},
	} {
		r.row(k.setting, fmt.Sprint(k.v), k.key, fromDefault(k.why+"; set only in code ("+k.code+")"))
		r.set(k.key, k.v, fromDefault(k.why), false)
	}
}

// admission resolves ASP.NET's front door: the classic RequestQueue
// (httpRuntime) or the integrated pipeline's MaxConcurrentRequestsPerCPU
// (applicationPool or the registry), and executionTimeout.
func (r *resolver) admission() {
	c := r.c
	hr, pm, ap := c.httpRt, c.processMdl, c.appPool
	if r.rep.Host == "aspnet-classic" {
		r.classicQueue()
		if ap != nil {
			c.warn(ap.at, "applicationPool has no effect on the classic pipeline: only IIS 7's integrated pipeline uses it (--host iis-integrated)")
		}
		if r.opt.MaxConcurrentRequestsPerCPU >= 0 {
			c.warn(pos{}, "the MaxConcurrentRequestsPerCPU registry value has no effect on the classic pipeline: only IIS 7's integrated pipeline uses it (--host iis-integrated)")
		}
	} else {
		for _, name := range []string{"minFreeThreads", "minLocalRequestFreeThreads", "appRequestQueueLimit"} {
			if a, ok := hr.get(name); ok {
				c.warn(a.at, "httpRuntime %s has no effect on the integrated pipeline, which has no RequestQueue (dotnet.md §2c)", name)
			}
		}
		if a, ok := pm.get("clientConnectedCheck"); ok {
			c.warn(a.at, "processModel clientConnectedCheck is modelled for the classic RequestQueue only")
		}
		r.integratedQueue()
	}

	// executionTimeout, and debug compilation, which switches it off.
	et, etFrom := 110*time.Second, fromDefault("110 s (HttpRuntimeSection, dotnet.md §2a)")
	if a, ok := hr.get("executionTimeout"); ok {
		d, err := parseSeconds(a.value)
		if err == nil && d == 0 {
			err = errors.New("must be a positive number of seconds")
		}
		if err != nil {
			c.errorf(a.at, "httpRuntime executionTimeout: %v", err)
		} else {
			et, etFrom = d, a.at.String()
			if d > maxTsimDuration {
				et, etFrom = 0, fromAt(a.at, "more than 30 days: as good as none")
			}
		}
	}
	debug, dat, dok := r.boolAttr(c.compile, "compilation", "debug")
	dFrom := fromDefault("false")
	if dok {
		dFrom = dat.String()
	}
	r.row("compilation debug", fmt.Sprint(debug), "", dFrom)
	if debug {
		c.warn(dat, `compilation debug="true": executionTimeout is not enforced and pages are compiled for debugging; tsim's cost_multiplier can model the slowdown (no source gives a figure)`)
	}
	switch {
	case r.rep.WCF:
		r.row("httpRuntime executionTimeout", fmtDuration(et), "", etFrom+"; not applied: tsim assumes executionTimeout does not fire for WCF services (dotnet.md §2a, unconfirmed)")
	case debug:
		from := fromAt(dat, fmt.Sprintf("compilation debug=\"true\": executionTimeout (%s) is not enforced, dotnet.md §2a", fmtDuration(et)))
		r.row("httpRuntime executionTimeout", "0s", "admission.execution_timeout", from)
		r.set("admission.execution_timeout", "0s", from, true)
	default:
		r.row("httpRuntime executionTimeout", fmtDuration(et), "admission.execution_timeout", etFrom)
		r.set("admission.execution_timeout", fmtDuration(et), etFrom, !strings.HasPrefix(etFrom, "default"))
	}
}

// classicQueue resolves the RequestQueue of IIS 6 and the classic pipeline
// (HttpRuntime.InitRequestQueue, dotnet.md §2a–§2b).
func (r *resolver) classicQueue() {
	c, hr, pm := r.c, r.c.httpRt, r.c.processMdl
	threadLimit := min(r.workerMax, r.ioMax)
	free := func(attrName string, perCPU, def int) (int, bool) {
		if r.auto {
			v := perCPU * r.n
			if a, ok := hr.get(attrName); ok {
				c.warn(a.at, `httpRuntime %s has no effect: autoConfig="true" sets it to %d per CPU`, attrName, perCPU)
			}
			return v, false
		}
		if v, at, ok := r.intAttr(hr, "httpRuntime", attrName, 0, maxInt32, false); ok {
			if v >= threadLimit {
				c.errorf(at, "httpRuntime %s (%d) must be below the thread pool limit, min(maxWorkerThreads, maxIoThreads) × N = %d; ASP.NET refuses it", attrName, v, threadLimit)
			}
			return v, true
		}
		return def, false
	}
	mft, mftFile := free("minFreeThreads", 88, 8)
	mftFrom := r.freeFrom(hr, "minFreeThreads", 88, 8, mftFile)
	if !mftFile && !r.auto && mft >= threadLimit {
		c.errorf(pos{}, "httpRuntime minFreeThreads (default %d) must be below min(maxWorkerThreads, maxIoThreads) × N = %d; ASP.NET refuses it", mft, threadLimit)
	}
	r.row("httpRuntime minFreeThreads", fmt.Sprint(mft), "admission.min_free_threads", mftFrom)
	r.set("admission.min_free_threads", mft, mftFrom, mftFile)
	mlr, mlrFile := free("minLocalRequestFreeThreads", 76, 4)
	r.row("httpRuntime minLocalRequestFreeThreads", fmt.Sprint(mlr), "", r.freeFrom(hr, "minLocalRequestFreeThreads", 76, 4, mlrFile)+"; tsim does not tell local requests apart")

	q, qFrom, qFile := 5000, fromDefault("5000 (HttpRuntimeSection, dotnet.md §2a)"), false
	if v, at, ok := r.intAttr(hr, "httpRuntime", "appRequestQueueLimit", 1, maxInt32, false); ok {
		q, qFrom, qFile = v, at.String(), true
	}
	q, qFrom = capQueue(q, qFrom)
	r.row("httpRuntime appRequestQueueLimit", fmt.Sprint(q), "admission.queue_limit", qFrom)
	r.set("admission.queue_limit", q, qFrom, qFile)

	if v, at, ok := r.intAttr(pm, "processModel", "requestQueueLimit", 0, maxInt32, true); ok {
		r.row("processModel requestQueueLimit", fmtInfiniteInt(v), "", fromAt(at, "the IIS 6 process-level limit; tsim's classic queue is appRequestQueueLimit"))
	}

	ccc, cccFrom, cccFile := 5*time.Second, fromDefault("5 s (ProcessModelSection, dotnet.md §2a)"), false
	if a, ok := pm.get("clientConnectedCheck"); ok {
		d, err := parseTimeSpan(a.value, true)
		if err != nil {
			c.errorf(a.at, "processModel clientConnectedCheck: %v", err)
		} else {
			ccc, cccFrom, cccFile = d, a.at.String(), true
			switch {
			case d == infinite:
				ccc, cccFrom = 0, fromAt(a.at, "Infinite: never checked")
			case d > time.Hour:
				ccc, cccFrom = time.Hour, fromAt(a.at, "capped at tsim's 1h")
			}
		}
	}
	r.row("processModel clientConnectedCheck", fmtDuration(ccc), "admission.client_connected_check", cccFrom)
	r.set("admission.client_connected_check", fmtDuration(ccc), cccFrom, cccFile)
}

func (r *resolver) freeFrom(hr *section, name string, perCPU, def int, file bool) string {
	if r.auto {
		return fmt.Sprintf("autoConfig: %d per CPU × %d (dotnet.md §2a)", perCPU, r.n)
	}
	if file {
		a, _ := hr.get(name)
		return a.at.String()
	}
	return fromDefault(fmt.Sprintf("%d without autoConfig (HttpRuntimeSection, dotnet.md §2a)", def))
}

// capQueue keeps a queue limit within tsim's range (0–10⁷).
func capQueue(q int, from string) (int, string) {
	if q > unlimitedExecuting {
		return unlimitedExecuting, from + "; capped at tsim's 10,000,000"
	}
	return q, from
}

func fmtInfiniteInt(v int) string {
	if v == maxInt32 {
		return "Infinite"
	}
	return fmt.Sprint(v)
}

// integratedQueue resolves the IIS 7+ integrated pipeline's limit:
// MaxConcurrentRequestsPerCPU from Aspnet.config's applicationPool, or the
// registry, or its default (dotnet.md §2c).
func (r *resolver) integratedQueue() {
	c, ap, pm := r.c, r.c.appPool, r.c.processMdl
	net4 := atLeast(r.v, "4.0")
	mc, mcFrom, mcFile := 12, fromDefault("12 per CPU on .NET 2.0–3.5 SP1 (dotnet.md §2c)"), false
	if net4 {
		mc, mcFrom = 5000, fromDefault("5000 per CPU on .NET 4.0+ (dotnet.md §2c)")
	}
	if r.opt.MaxConcurrentRequestsPerCPU >= 0 {
		mc, mcFrom, mcFile = r.opt.MaxConcurrentRequestsPerCPU, "--max-concurrent-requests-per-cpu (the registry value)", true
	}
	if v, at, ok := r.intAttr(ap, "applicationPool", "maxConcurrentRequestsPerCPU", 0, maxInt32, false); ok {
		if r.opt.MaxConcurrentRequestsPerCPU >= 0 {
			c.warn(at, "the MaxConcurrentRequestsPerCPU registry value has no effect: Aspnet.config's applicationPool maxConcurrentRequestsPerCPU is taken instead (an assumption: no source says which wins)")
		}
		mc, mcFrom, mcFile = v, at.String(), true
	}
	if mc == 0 {
		from := mcFrom + "; 0 = no limit"
		r.row("maxConcurrentRequestsPerCPU", "0", "admission.max_executing", from)
		r.set("admission.max_executing", unlimitedExecuting, from, true)
	} else {
		if int64(mc)*int64(r.n) > unlimitedExecuting || mc > 1_000_000 {
			total := int(min(int64(mc)*int64(r.n), unlimitedExecuting))
			mcFrom += fmt.Sprintf("; %d in all, within tsim's 10,000,000", total)
			r.row("maxConcurrentRequestsPerCPU", fmt.Sprint(mc), "admission.max_executing", mcFrom)
			r.set("admission.max_executing", total, mcFrom, true)
		} else {
			r.row("maxConcurrentRequestsPerCPU", fmt.Sprint(mc), "admission.max_per_cpu", mcFrom)
			r.set("admission.max_per_cpu", mc, mcFrom, mcFile)
		}
	}
	if v, at, ok := r.intAttr(ap, "applicationPool", "maxConcurrentThreadsPerCPU", 0, maxInt32, false); ok && v != 0 {
		c.warn(at, "applicationPool maxConcurrentThreadsPerCPU=%d is not modelled by tsim (it limits by managed threads instead of requests)", v)
	}

	q, qFrom, qFile := 5000, fromDefault("5000 (dotnet.md §2a, §2c)"), false
	if net4 {
		if v, at, ok := r.intAttr(ap, "applicationPool", "requestQueueLimit", 1, maxInt32, false); ok {
			q, qFrom, qFile = v, at.String(), true
		}
		qFrom += "; counts executing requests too (.NET 4 requestQueueLimit)"
		q, qFrom = capQueue(q, qFrom)
		r.row("applicationPool requestQueueLimit", fmt.Sprint(q), "admission.queue_limit", qFrom)
	} else {
		if a, ok := ap.get("requestQueueLimit"); ok {
			c.warn(a.at, "applicationPool requestQueueLimit is taken from .NET 4.0 on (an assumption); before, the queue limit is processModel requestQueueLimit")
		}
		if v, at, ok := r.intAttr(pm, "processModel", "requestQueueLimit", 0, maxInt32, true); ok {
			q, qFrom, qFile = v, at.String(), true
		}
		q, qFrom = capQueue(q, qFrom)
		r.row("processModel requestQueueLimit", fmt.Sprint(q), "admission.queue_limit", qFrom)
	}
	r.set("admission.queue_limit", q, qFrom, qFile)
}

// aspnetUnused warns about ASP.NET settings of an application's own files
// in a process that is not ASP.NET. machine.config's are silent: every
// process reads that file, and its ASP.NET sections are for ASP.NET.
func (r *resolver) aspnetUnused() {
	c := r.c
	for _, s := range []*section{c.httpRt, c.compile} {
		if s != nil && s.at.file != c.machineName {
			c.warn(s.at, "this system.web setting has no effect: the process is not hosted by ASP.NET (--host)")
		}
	}
	if c.appPool != nil {
		c.warn(c.appPool.at, "applicationPool has no effect: the process is not hosted by ASP.NET (--host iis-integrated)")
	}
	if r.opt.MaxConcurrentRequestsPerCPU >= 0 {
		c.warn(pos{}, "the MaxConcurrentRequestsPerCPU registry value has no effect: the process is not hosted by ASP.NET (--host iis-integrated)")
	}
}

// unused warns about WCF configurations nothing uses.
func (r *resolver) unused() {
	for _, b := range r.c.behaviors {
		if !b.used && child(b.el, "serviceThrottling") != nil {
			r.c.warn(b.at, "<serviceThrottling> in behavior %q has no effect: no service uses that behavior", clip(b.name))
		}
	}
	types := make([]string, 0, len(r.c.bindings))
	for t := range r.c.bindings {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		for _, b := range r.c.bindings[t] {
			if !b.used {
				r.c.warn(b.at, "<%s> binding %q has no effect: no endpoint uses it", clip(t), clip(b.name))
			}
		}
	}
}

// child returns el's first child named name.
func child(el *Element, name string) *Element {
	for _, c := range el.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}
