package format

import (
	"errors"
	"fmt"
	"github.com/tsim-dev/tsim/model"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tsim-dev/tsim/sim"
)

// The experiment schema: every settable key, its type and its range. The
// loader, variants, sweeps, Keys and the documentation test all use this one
// table.

type valType uint8

const (
	tInt valType = iota
	tFloat
	tBool
	tString   // a non-empty name
	tEnum     // one of enum
	tDuration // Go duration syntax
	tDist     // sim.ParseDist
	tSchedule // [{at = "0s", value = 60}, ...]
	tWarmup   // duration or "auto"
	tInterarrival
	tFile // a file name, read through the caller's ReadFile (load.trace)
)

type keyDef struct {
	name     string // relative to its scope: "worker.max"
	typ      valType
	min, max float64 // tInt, tFloat; seconds for tDuration, tWarmup
	minOpen  bool    // min is exclusive (> min)
	enum     []string
	maxWhy   string // why max is the limit, for messages
}

func intKey(name string, min, max float64, why string) keyDef {
	return keyDef{name: name, typ: tInt, min: min, max: max, maxWhy: why}
}

func floatKey(name string, min, max float64, minOpen bool) keyDef {
	return keyDef{name: name, typ: tFloat, min: min, max: max, minOpen: minOpen}
}

func durKey(name string, min, max time.Duration, minOpen bool) keyDef {
	return keyDef{name: name, typ: tDuration, min: min.Seconds(), max: max.Seconds(), minOpen: minOpen}
}

func enumKey(name string, values ...string) keyDef {
	return keyDef{name: name, typ: tEnum, enum: values}
}

const (
	day           = 24 * time.Hour
	maxSettingDur = MaxDuration
	maxInt32      = math.MaxInt32
)

// callKeys are the keys of a call: a step with call = "<tier>", the tier's
// calls.* defaults and load.call.*.
var callKeys = []keyDef{
	{name: "call", typ: tString},
	durKey("timeout", 0, maxSettingDur, false),
	enumKey("client", "dotnet", "go", "envoy", "hikari", "none"),
	intKey("maxconnection", 1, maxInt32, ""),
	intKey("maxconnection_host", 1, maxInt32, ""),
	intKey("connection_limit_code", 0, maxInt32, ""),
	intKey("max_conns_per_host", 0, maxInt32, ""),
	intKey("max_connections", 1, maxInt32, ""),
	intKey("max_pending", 0, maxInt32, ""),
	intKey("pool_size", 1, 1e6, ""),
	durKey("wait_timeout", 0, maxSettingDur, false),
	enumKey("connection_queue", "auto", "per-connection", "shared"),
	{name: "loopback", typ: tBool},
	enumKey("proxy", model.ProxyNames()...),
	intKey("proxy_pool_size", 1, 1e6, ""),
	{name: "proxy_create_cost", typ: tDist},
	{name: "factory_create_cost", typ: tDist},
	enumKey("proxy_construction", model.ConstructionNames()...),
	enumKey("factory_cache", "auto", "none", "mru-32"),
	enumKey("cache_setting", model.FactoryCacheModeNames()...),
	intKey("endpoints", 1, 1e6, ""),
	enumKey("endpoint_pick", model.EndpointPickNames()...),
	enumKey("binding", bindingNames()...),
	durKey("binding_cpu_base", 0, time.Hour, false),
	durKey("binding_cpu_per_kb", 0, time.Hour, false),
	intKey("binding_overhead", 0, 1e9, ""),
	floatKey("binding_factor", 0, 100, false),
	{name: "binding_sessionful", typ: tBool},
	durKey("binding_session_cpu", 0, time.Hour, false),
	intKey("binding_session_round_trips", 0, 100, ""),
	durKey("binding_session_idle_timeout", 0, maxSettingDur, false),
	intKey("binding_negotiation_legs", 0, 100, ""),
	durKey("binding_negotiation_timeout", 0, maxSettingDur, false),
	{name: "binding_close_message", typ: tBool},
	durKey("binding_close_timeout", 0, maxSettingDur, false),
	floatKey("request_kb", 0, 1e6, false),
	floatKey("reply_kb", 0, 1e6, false),
	durKey("network_latency", 0, time.Hour, false),
	floatKey("network_bandwidth_mbps", 0, 1e7, false),
	intKey("retry.attempts", 1, 100, ""),
	{name: "retry.backoff", typ: tDist},
	floatKey("retry.jitter", 0, 1, false),
	enumKey("farm_address", "virtual", "per-host"),
}

// clientOnly names the keys that only mean something for one client.
var clientOnly = map[string]string{
	"maxconnection":         "dotnet",
	"maxconnection_host":    "dotnet",
	"connection_limit_code": "dotnet",
	"max_conns_per_host":    "go",
	"max_connections":       "envoy",
	"max_pending":           "envoy",
	"pool_size":             "hikari",
}

func poolKeys(prefix string) []keyDef {
	return []keyDef{
		intKey(prefix+".min", 0, unlimitedThreads, "threads"),
		intKey(prefix+".max", 1, unlimitedThreads, "threads"),
		enumKey(prefix+".injection", model.InjectionNames()...),
		durKey(prefix+".gate_delay", 0, time.Hour, false),
		durKey(prefix+".idle_timeout", 0, maxSettingDur, false),
		intKey(prefix+".queue_limit", 0, 1e7, ""),
	}
}

// callKeysExcept returns callKeys without the named keys, each prefixed.
func callKeysExcept(prefix string, except ...string) []keyDef {
	var out []keyDef
next:
	for _, k := range callKeys {
		for _, e := range except {
			if k.name == e {
				continue next
			}
		}
		k.name = prefix + k.name
		out = append(out, k)
	}
	return out
}

var topKeys = concatKeys(
	[]keyDef{
		durKey("duration", 0, maxSettingDur, true),
		{name: "warmup", typ: tWarmup, min: 0, max: maxSettingDur.Seconds()},
		durKey("sample_every", 0, day, true),
		floatKey("precision", 0, 1, false),
		enumKey("load.kind", "closed", "open", "trace"),
		{name: "load.trace", typ: tFile},
		enumKey("load.replay", "arrivals", "users"),
		{name: "load.target", typ: tString},
		intKey("load.users", 1, MaxUsers, "users"),
		{name: "load.users_schedule", typ: tSchedule, max: MaxUsers},
		{name: "load.think", typ: tDist},
		floatKey("load.rate", 0, MaxRate, true),
		{name: "load.rate_schedule", typ: tSchedule, max: MaxRate},
		{name: "load.interarrival", typ: tInterarrival},
		durKey("load.timeout", 0, maxSettingDur, false),
		intKey("load.agents", 1, MaxReplicas, "agents"),
		{name: "load.agent_cpu", typ: tDist},
		intKey("load.agent_cores", 1, 1024, "cores"),
		{name: "load.agent_machine", typ: tString},
	},
	callKeysExcept("load.call.", "call", "timeout"),
)

var tierKeys = concatKeys(
	[]keyDef{
		enumKey("preset", tierPresetNames()...),
		enumKey("host", model.HostNames()...),
		intKey("cores", 1, 1024, "cores"),
		{name: "machine", typ: tString},
		enumKey("cpu_discipline", model.CPUNames()...),
		floatKey("cost_multiplier", 0, 1000, true),
		{name: "async", typ: tBool},
		durKey("start_up", 0, time.Hour, false),
		floatKey("memory_per_request_kb", 0, 1e7, false),
		enumKey("dotnet", dotnetVersions...),
		{name: "auto_config", typ: tBool},
		intKey("replicas", 1, MaxReplicas, "machines"),
		enumKey("balancer.policy", model.BalanceNames()...),
		enumKey("balancer.affinity", "session", "none"),
		intKey("balancer.max_connections", 1, 1e7, ""),
		intKey("balancer.queue_limit", 0, 1e7, ""),
		durKey("balancer.latency", 0, time.Hour, false),
	},
	poolKeys("worker"),
	poolKeys("io"),
	[]keyDef{
		enumKey("admission.kind", model.AdmissionNames()...),
		intKey("admission.min_free_threads", 0, unlimitedThreads, "threads"),
		intKey("admission.max_executing", 1, 1e7, ""),
		intKey("admission.max_per_cpu", 1, 1e6, ""),
		intKey("admission.queue_limit", 0, 1e7, ""),
		{name: "admission.count_executing", typ: tBool},
		enumKey("admission.module", "sync", "async"),
		durKey("admission.execution_timeout", 0, maxSettingDur, false),
		durKey("admission.execution_check", 0, time.Hour, true),
		durKey("admission.client_connected_check", 0, time.Hour, false),
		enumKey("wcf.preset", "none", "wcf35", "wcf4"),
		intKey("wcf.max_calls", 1, maxInt32, ""),
		intKey("wcf.max_sessions", 1, maxInt32, ""),
		intKey("wcf.max_instances", 1, maxInt32, ""),
		intKey("wcf.max_pending_sessions", 0, maxInt32, ""),
		durKey("wcf.pending_session_timeout", 0, maxSettingDur, false),
		enumKey("wcf.instancing", "PerCall", "PerSession", "Single"),
		enumKey("wcf.concurrency", model.ConcurrencyNames()...),
		durKey("wcf.instance_cpu", 0, time.Second, false),
		durKey("wcf.single_lock_cpu", 0, time.Second, false),
		intKey("nettcp.max_connections", 1, maxInt32, ""),
		intKey("nettcp.listen_backlog", 1, maxInt32, ""),
		{name: "nettcp.port_sharing", typ: tBool},
		intKey("nettcp.sharing_max_pending", 1, maxInt32, ""),
		intKey("nettcp.sharing_listen_backlog", 1, maxInt32, ""),
		{name: "wcf.one_way", typ: tBool},
	},
	contentionKeys,
	callKeysExcept("calls.", "call"),
)

var stepKeys = concatKeys(
	[]keyDef{
		{name: "cpu", typ: tDist},
		{name: "wait", typ: tDist},
		{name: "lock", typ: tString},
		{name: "unlock", typ: tString},
	},
	contentionStepKeys,
	callKeys,
)

// stepActions are the step keys that say what a step does; a step has one.
var stepActions = []string{"cpu", "wait", "call", "lock", "unlock"}

func concatKeys(parts ...[]keyDef) []keyDef {
	var out []keyDef
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

type scope uint8

const (
	scopeTop scope = iota
	scopeTier
	scopeStep
)

var scopeDefs = [...][]keyDef{topKeys, tierKeys, stepKeys}

func lookupKey(s scope, name string) *keyDef {
	defs := scopeDefs[s]
	for i := range defs {
		if defs[i].name == name {
			return &defs[i]
		}
	}
	return nil
}

// isKeyPrefix reports whether name is a table that holds keys of scope s
// (e.g. "worker" or "load.call").
func isKeyPrefix(s scope, name string) bool {
	for _, d := range scopeDefs[s] {
		if strings.HasPrefix(d.name, name+".") {
			return true
		}
	}
	return false
}

// Keys returns every settable key path of the schema, as patterns:
// "duration", "load.users", "load.call.maxconnection",
// "tier.<name>.worker.max", "tier.<name>.calls.maxconnection",
// "tier.<name>.step.<n>.cpu", "tier.<name>.call.<target>.timeout". Variants
// and sweeps may set any of them.
func (x *Experiment) Keys() []string { return schemaKeys() }

func schemaKeys() []string {
	var out []string
	for _, d := range topKeys {
		out = append(out, d.name)
	}
	for _, d := range tierKeys {
		out = append(out, "tier.<name>."+d.name)
	}
	for _, d := range stepKeys {
		out = append(out, "tier.<name>.step.<n>."+d.name)
	}
	for _, d := range callKeys {
		if d.name != "call" {
			out = append(out, "tier.<name>.call.<target>."+d.name)
		}
	}
	return out
}

// structuralKeys are the keys of the file that are not settable by variants
// and sweeps (they shape the experiment itself).
var structuralKeys = []string{
	"name", "description", "seed", "replications", "topology", "report.per_replica",
	"tier.name", "tier.step",
	"variant.name", "variant.description", "variant.set",
	"sweep.key", "sweep.values", "sweep.from", "sweep.to", "sweep.step", "sweep.factor", "sweep.axis",
}

// A setting is one key's value: the TOML value as written and where.
type setting struct {
	v   any // parsed: int, float64, bool, string, time.Duration, sim.Dist, Schedule
	raw any // the TOML value
	at  pos
}

// parseValue checks a TOML value against d and converts it. The error text
// follows the key path (the caller adds the path).
func parseValue(d *keyDef, raw any, fs *files) (any, error) {
	switch d.typ {
	case tInt:
		n, ok := raw.(int64)
		if !ok {
			return nil, wantErr("an integer", raw)
		}
		if err := checkRange(d, float64(n), strconv.FormatInt(n, 10)); err != nil {
			return nil, err
		}
		return int(n), nil
	case tFloat:
		var f float64
		switch v := raw.(type) {
		case int64:
			f = float64(v)
		case float64:
			f = v
		default:
			return nil, wantErr("a number", raw)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("must be a finite number, got %v", f)
		}
		if err := checkRange(d, f, strconv.FormatFloat(f, 'g', -1, 64)); err != nil {
			return nil, err
		}
		return f, nil
	case tBool:
		b, ok := raw.(bool)
		if !ok {
			return nil, wantErr("true or false", raw)
		}
		return b, nil
	case tString:
		s, ok := raw.(string)
		if !ok {
			return nil, wantErr("a name", raw)
		}
		if msg := nameProblem(s); msg != "" {
			return nil, errors.New(msg)
		}
		return s, nil
	case tFile:
		s, ok := raw.(string)
		if !ok || s == "" {
			return nil, wantErr("a file name", raw)
		}
		if len(s) > 4096 || strings.ContainsAny(s, "\x00\n\r") {
			return nil, errors.New("must be a file name (at most 4096 bytes, on one line)")
		}
		return s, nil
	case tEnum:
		s, ok := raw.(string)
		if !ok {
			return nil, wantErr("one of "+quoteList(d.enum), raw)
		}
		for _, e := range d.enum {
			if s == e {
				return s, nil
			}
		}
		for _, e := range d.enum { // forgive case, but say so
			if strings.EqualFold(s, e) {
				return nil, fmt.Errorf("unknown value %s; did you mean %q? (allowed: %s)", quote(s), e, quoteList(d.enum))
			}
		}
		return nil, fmt.Errorf("unknown value %s (allowed: %s)", quote(s), quoteList(d.enum))
	case tDuration:
		return parseDurationValue(d, raw)
	case tWarmup:
		if s, ok := raw.(string); ok && s == "auto" {
			return time.Duration(-1), nil
		}
		return parseDurationValue(d, raw)
	case tDist:
		s, ok := raw.(string)
		if !ok {
			return nil, wantErr("a distribution string", raw)
		}
		return parseDist(s, fs)
	case tInterarrival:
		s, ok := raw.(string)
		if !ok {
			return nil, wantErr(`"exp", "const" or a distribution string`, raw)
		}
		switch s {
		case "exp", "poisson":
			return sim.Dist{}, nil // zero: Poisson arrivals
		case "const":
			return sim.Const(time.Second), nil // the mean is rescaled to 1/rate
		}
		return parseDist(s, fs)
	case tSchedule:
		return parseSchedule(d, raw)
	}
	return nil, fmt.Errorf("internal: unknown key type %d", d.typ)
}

// parseDist parses a distribution; sim.ParseDist's error already quotes
// the string and lists sim.DistForms. A string longer than any
// distribution (or path) is refused before it is quoted in a message.
func parseDist(s string, fs *files) (sim.Dist, error) {
	if len(s) > maxDistLen {
		return sim.Dist{}, fmt.Errorf("a distribution string of %s; at most %d bytes", lengthOf(s), maxDistLen)
	}
	return fs.parseDist(s)
}

// maxDistLen bounds a distribution string: room for a long path in
// empirical(FILE).
const maxDistLen = 4096

func parseDurationValue(d *keyDef, raw any) (time.Duration, error) {
	s, ok := raw.(string)
	if !ok {
		return 0, wantErr(`a duration string such as "20s", "150ms", "2m"`, raw)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %s: use Go duration syntax such as \"20s\", \"150ms\", \"2m\", \"1h30m\"", quote(s))
	}
	if err := checkRange(d, v.Seconds(), s); err != nil {
		return 0, err
	}
	return v, nil
}

func checkRange(d *keyDef, f float64, shown string) error {
	unit := func(x float64) string {
		if d.typ == tDuration || d.typ == tWarmup {
			return fmtDur(time.Duration(x * 1e9))
		}
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	if d.typ == tInt && d.min == 1 && f < 1 {
		return fmt.Errorf("must be > 0, got %s", shown)
	}
	if d.minOpen && !(f > d.min) {
		return fmt.Errorf("must be > %s, got %s", unit(d.min), shown)
	}
	if !d.minOpen && f < d.min {
		return fmt.Errorf("must be ≥ %s, got %s", unit(d.min), shown)
	}
	if f > d.max {
		why := ""
		if d.maxWhy != "" {
			why = " " + d.maxWhy
		}
		return fmt.Errorf("must be ≤ %s%s (more is not a plausible setting), got %s", unit(d.max), why, shown)
	}
	return nil
}

func parseSchedule(d *keyDef, raw any) (model.Schedule, error) {
	arr, ok := raw.([]map[string]any)
	if !ok {
		if a, isArr := raw.([]any); isArr {
			arr = make([]map[string]any, 0, len(a))
			for _, e := range a {
				m, isMap := e.(map[string]any)
				if !isMap {
					return nil, wantErr(`a list of points such as [{at = "0s", value = 60}, {at = "2m", value = 100}]`, raw)
				}
				arr = append(arr, m)
			}
		} else {
			return nil, wantErr(`a list of points such as [{at = "0s", value = 60}, {at = "2m", value = 100}]`, raw)
		}
	}
	if len(arr) == 0 {
		return nil, fmt.Errorf("needs at least one point")
	}
	if len(arr) > 10000 {
		return nil, fmt.Errorf("has %d points; at most 10000", len(arr))
	}
	atDef := keyDef{typ: tDuration, min: 0, max: maxSettingDur.Seconds()}
	valDef := keyDef{typ: tFloat, min: 0, max: d.max}
	s := make(model.Schedule, 0, len(arr))
	for i, m := range arr {
		for _, k := range sortedKeys(m) {
			if k != "at" && k != "value" {
				return nil, fmt.Errorf("point %d: unknown key %s (a point has at and value)", i+1, quote(k))
			}
		}
		atRaw, ok1 := m["at"]
		vRaw, ok2 := m["value"]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("point %d: needs both at and value", i+1)
		}
		at, err := parseDurationValue(&atDef, atRaw)
		if err != nil {
			return nil, fmt.Errorf("point %d: at: %v", i+1, err)
		}
		v, err := parseValue(&valDef, vRaw, nil)
		if err != nil {
			return nil, fmt.Errorf("point %d: value: %v", i+1, err)
		}
		if i > 0 && at < s[i-1].At {
			return nil, fmt.Errorf("point %d: at %v is before the previous point's %v; points must be in time order", i+1, at, s[i-1].At)
		}
		if i > 1 && at == s[i-1].At && at == s[i-2].At {
			return nil, fmt.Errorf("point %d: three points at %v; a step is two points at one instant", i+1, at)
		}
		s = append(s, model.Point{At: at, Value: v.(float64)})
	}
	return s, nil
}

func wantErr(want string, raw any) error {
	return fmt.Errorf("want %s, got %s", want, describe(raw))
}

// describe names a TOML value's type and shows it, for messages.
func describe(raw any) string {
	switch v := raw.(type) {
	case string:
		return "string " + quote(v)
	case int64:
		return "integer " + strconv.FormatInt(v, 10)
	case float64:
		return "float " + strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case map[string]any:
		return "a table"
	case []map[string]any, []any:
		return "an array"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("%T", raw)
}

// canonical renders a TOML scalar the way the user would write it (for
// sweep values and parameters).
func canonical(raw any) string {
	switch v := raw.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return describe(raw)
}

// nameProblem says what is wrong with a name (of a tier, a lock, a call
// target), or "".
func nameProblem(s string) string {
	if n := utf8.RuneCountInString(s); n > MaxNameLen {
		return fmt.Sprintf("is %d characters long; names may be at most %d", n, MaxNameLen)
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return fmt.Sprintf("must be a name of letters, digits, '_' and '-', got %s", quote(s))
		}
	}
	if s == "" {
		return "must be a name of letters, digits, '_' and '-', got an empty string"
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// suggest returns the candidate closest to s, or "" when none is close.
func suggest(s string, candidates []string) string {
	// Close means within 2 edits, or a third of s: candidates whose length
	// differs by more cannot be, and are not measured.
	limit := max(2, len(s)/3)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := 1 << 20
		// A key typed without its table ("max" for "worker.max") is close too.
		if i := strings.LastIndexByte(c, '.'); i >= 0 && c[i+1:] == s {
			d = 1
		} else if abs(len(s)-len(c)) <= limit {
			d = editDistance(s, c)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= limit {
		return best
	}
	return ""
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// editDistance is Levenshtein distance over bytes, capped for long inputs.
// It does not allocate.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 20
	}
	var prevA, curA [65]int
	prev, cur := prevA[:len(b)+1], curA[:len(b)+1]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			cur[j] = c
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// fmtDur prints a duration without trailing zero units ("720h", "1m30s").
func fmtDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
