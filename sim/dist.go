package sim

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"gonum.org/v1/gonum/stat/distuv"
)

// DistForms lists the forms ParseDist accepts, for error and help texts.
const DistForms = "const(D), exp(MEAN), uniform(LO,HI), normal(MEAN,SD), " +
	"lognormal(mean=M,cv=C), gamma(mean=M,cv=C), erlang(K,MEAN), " +
	"pareto(mean=M,alpha=A) or pareto(xm=X,alpha=A), empirical(FILE), " +
	"or a plain duration such as 20ms"

// family says which distribution a Dist is and what its a and b mean.
// Spans are float seconds, so Scale is exact and round trips through String.
type family uint8

const (
	famConst      family = iota // a: the value
	famExp                      // a: mean
	famUniform                  // a: lo, b: hi
	famNormal                   // a: mean, b: sd, both before truncation at 0
	famLogNormal                // a: mean, b: cv
	famGamma                    // a: mean, b: cv
	famErlang                   // a: mean, b: k
	famParetoMean               // a: mean, b: alpha (> 1)
	famParetoXm                 // a: xm, b: alpha
	famEmpirical                // a: scale factor, emp: the samples
)

// Dist is a parsed distribution of non-negative spans, not bound to a
// stream. Bind it to one with Sampler. A Dist is immutable, so one Dist may
// serve many replications running in parallel, each with its own Sampler.
// The zero Dist is const(0s).
type Dist struct {
	fam  family
	a, b float64
	emp  *empirical // shared and read-only; nil unless fam == famEmpirical
}

// empirical holds the samples of an empirical(FILE) distribution.
type empirical struct {
	name     string    // as written, for String
	xs       []float64 // seconds, ascending, so a Dist does not depend on line order
	mean, cv float64   // of the discrete distribution over xs (population moments)
}

// ParseOptions says how ParseDist reaches the outside world.
type ParseOptions struct {
	// ReadFile reads the file named in empirical(FILE). Package sim may not
	// touch the file system, so the caller passes os.ReadFile, typically
	// wrapped to resolve names against the config file's directory. A nil
	// ReadFile makes empirical(...) an error.
	ReadFile func(name string) ([]byte, error)
}

// ParseDist parses a distribution written as a string (see DistForms).
// Names and argument names are case-insensitive and whitespace around
// tokens is ignored. A span is a Go duration ("2ms", "1.5s", "2m", "100us")
// or a bare number of seconds ("0.002"). Arguments are positional in the
// order shown in DistForms or named (mean=, sd=, cv=, lo=, hi=, k=, xm=,
// alpha=); positional ones come first. Pareto takes named arguments only,
// since pareto(80ms,2.5) could mean either form.
//
// empirical(FILE) reads FILE through opt.ReadFile: one sample per line, in
// seconds or as a duration; blank lines and lines starting with # are
// skipped, as is a header on line 1 that starts with a letter. Sampling
// picks one of the samples uniformly (a bootstrap). empirical(FILE,scale=F)
// multiplies every sample by F; String writes it for a scaled empirical Dist
// so that the round trip holds. FILE may not contain ',' or parentheses.
//
// An error quotes s, says what is wrong and, unless the problem is inside
// the empirical file, lists DistForms.
func ParseDist(s string, opt ParseOptions) (Dist, error) {
	d, err := parseDist(s, opt)
	if err != nil {
		var fe fileError
		if errors.As(err, &fe) {
			return Dist{}, fmt.Errorf("bad distribution %q: %w", s, err)
		}
		return Dist{}, fmt.Errorf("bad distribution %q: %w; allowed: %s", s, err, DistForms)
	}
	return d, nil
}

// fileError marks a problem that is not about the form of the string (the
// empirical file or its reader), where listing DistForms would not help.
type fileError struct{ err error }

func (e fileError) Error() string { return e.err.Error() }
func (e fileError) Unwrap() error { return e.err }

// MustParseDist is ParseDist for strings fixed in code and tests. It panics
// on error, and empirical(...) always errs since there is no file reader.
func MustParseDist(s string) Dist {
	d, err := ParseDist(s, ParseOptions{})
	if err != nil {
		panic("sim: " + err.Error())
	}
	return d
}

// Const returns the distribution that is always d. It panics if d < 0.
func Const(d time.Duration) Dist {
	if d < 0 {
		panic(fmt.Sprintf("sim: Const(%v): negative span", d))
	}
	return Dist{fam: famConst, a: Seconds(d)}
}

// Exp returns the exponential distribution with the given mean. It panics
// if mean <= 0.
func Exp(mean time.Duration) Dist {
	if mean <= 0 {
		panic(fmt.Sprintf("sim: Exp(%v): mean must be > 0", mean))
	}
	return Dist{fam: famExp, a: Seconds(mean)}
}

func parseDist(s string, opt ParseOptions) (Dist, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Dist{}, errors.New("empty")
	}
	open := strings.IndexByte(t, '(')
	if open < 0 {
		if _, ok := families[strings.ToLower(t)]; ok {
			return Dist{}, fmt.Errorf("%s needs arguments in parentheses", strings.ToLower(t))
		}
		if strings.IndexByte(t, ')') >= 0 {
			return Dist{}, errors.New("')' without '('")
		}
		x, err := parseSpan(t)
		if err != nil {
			return Dist{}, fmt.Errorf("neither NAME(ARGS) nor a duration: %w", err)
		}
		return Dist{fam: famConst, a: x}, nil
	}
	name := strings.ToLower(strings.TrimSpace(t[:open]))
	rest := t[open+1:]
	closing := strings.IndexByte(rest, ')')
	switch {
	case name == "":
		return Dist{}, errors.New("missing name before '('")
	case strings.IndexByte(rest, '(') >= 0:
		return Dist{}, errors.New("more than one '('")
	case closing < 0:
		return Dist{}, errors.New("missing ')'")
	case closing != len(rest)-1:
		return Dist{}, fmt.Errorf("unexpected %q after ')'", rest[closing+1:])
	}
	inner := rest[:closing]
	parse, ok := families[name]
	if !ok {
		return Dist{}, fmt.Errorf("unknown name %q", name)
	}
	return parse(inner, opt)
}

// families maps each name to its parser. Lookups only, never iterated.
var families = map[string]func(inner string, opt ParseOptions) (Dist, error){
	"const":     parseConst,
	"exp":       parseExp,
	"uniform":   parseUniform,
	"normal":    parseNormal,
	"lognormal": parseLogNormal,
	"gamma":     parseGamma,
	"erlang":    parseErlang,
	"pareto":    parsePareto,
	"empirical": parseEmpirical,
}

func parseConst(inner string, _ ParseOptions) (Dist, error) {
	v, err := args("const", inner, true, "d")
	if err != nil {
		return Dist{}, err
	}
	x, err := span("const", "d", v[0])
	return Dist{fam: famConst, a: x}, err
}

func parseExp(inner string, _ ParseOptions) (Dist, error) {
	v, err := args("exp", inner, true, "mean")
	if err != nil {
		return Dist{}, err
	}
	mean, err := positiveSpan("exp", "mean", v[0])
	return Dist{fam: famExp, a: mean}, err
}

func parseUniform(inner string, _ ParseOptions) (Dist, error) {
	v, err := args("uniform", inner, true, "lo", "hi")
	if err != nil {
		return Dist{}, err
	}
	lo, err := span("uniform", "lo", v[0])
	if err != nil {
		return Dist{}, err
	}
	hi, err := span("uniform", "hi", v[1])
	if err != nil {
		return Dist{}, err
	}
	if lo > hi {
		return Dist{}, fmt.Errorf("uniform: lo must be <= hi, got lo=%s hi=%s", v[0], v[1])
	}
	return Dist{fam: famUniform, a: lo, b: hi}, nil
}

func parseNormal(inner string, _ ParseOptions) (Dist, error) {
	v, err := args("normal", inner, true, "mean", "sd")
	if err != nil {
		return Dist{}, err
	}
	mean, err := span("normal", "mean", v[0])
	if err != nil {
		return Dist{}, err
	}
	sd, err := span("normal", "sd", v[1])
	return Dist{fam: famNormal, a: mean, b: sd}, err
}

func parseLogNormal(inner string, _ ParseOptions) (Dist, error) {
	v, err := args("lognormal", inner, true, "mean", "cv")
	if err != nil {
		return Dist{}, err
	}
	mean, err := positiveSpan("lognormal", "mean", v[0])
	if err != nil {
		return Dist{}, err
	}
	cv, err := number("lognormal", "cv", v[1])
	switch {
	case err != nil:
		return Dist{}, err
	case cv < 0:
		return Dist{}, fmt.Errorf("lognormal: cv must be >= 0, got %s", v[1])
	case math.IsInf(cv*cv, 0): // sigma would be infinite
		return Dist{}, fmt.Errorf("lognormal: cv %s is too large", v[1])
	}
	return Dist{fam: famLogNormal, a: mean, b: cv}, nil
}

func parseGamma(inner string, _ ParseOptions) (Dist, error) {
	v, err := args("gamma", inner, true, "mean", "cv")
	if err != nil {
		return Dist{}, err
	}
	mean, err := positiveSpan("gamma", "mean", v[0])
	if err != nil {
		return Dist{}, err
	}
	cv, err := number("gamma", "cv", v[1])
	switch {
	case err != nil:
		return Dist{}, err
	case !(cv > 0):
		return Dist{}, fmt.Errorf("gamma: cv must be > 0, got %s", v[1])
	case math.IsInf(1/(cv*cv), 0) || 1/(cv*cv) == 0: // the shape 1/cv² must be finite and > 0
		return Dist{}, fmt.Errorf("gamma: cv %s is out of range", v[1])
	}
	return Dist{fam: famGamma, a: mean, b: cv}, nil
}

func parseErlang(inner string, _ ParseOptions) (Dist, error) {
	v, err := args("erlang", inner, true, "k", "mean")
	if err != nil {
		return Dist{}, err
	}
	k, err := number("erlang", "k", v[0])
	if err != nil {
		return Dist{}, err
	}
	if k < 1 || k != math.Trunc(k) {
		return Dist{}, fmt.Errorf("erlang: k must be a whole number >= 1, got %s", v[0])
	}
	mean, err := positiveSpan("erlang", "mean", v[1])
	return Dist{fam: famErlang, a: mean, b: k}, err
}

func parsePareto(inner string, _ ParseOptions) (Dist, error) {
	v, err := args("pareto", inner, false, "mean", "xm", "alpha")
	if err != nil {
		return Dist{}, err
	}
	switch {
	case v[0] != "" && v[1] != "":
		return Dist{}, errors.New("pareto: give mean or xm, not both")
	case v[0] == "" && v[1] == "":
		return Dist{}, errors.New("pareto: missing mean or xm")
	case v[2] == "":
		return Dist{}, errors.New("pareto: missing alpha")
	}
	alpha, err := number("pareto", "alpha", v[2])
	if err != nil {
		return Dist{}, err
	}
	if v[0] != "" {
		if !(alpha > 1) {
			return Dist{}, fmt.Errorf("pareto: alpha must be > 1 when the mean is given (the mean is infinite otherwise), got %s", v[2])
		}
		mean, err := positiveSpan("pareto", "mean", v[0])
		return Dist{fam: famParetoMean, a: mean, b: alpha}, err
	}
	if !(alpha > 0) {
		return Dist{}, fmt.Errorf("pareto: alpha must be > 0, got %s", v[2])
	}
	xm, err := positiveSpan("pareto", "xm", v[1])
	return Dist{fam: famParetoXm, a: xm, b: alpha}, err
}

func parseEmpirical(inner string, opt ParseOptions) (Dist, error) {
	parts := strings.Split(inner, ",")
	name := strings.TrimSpace(parts[0])
	if name == "" {
		return Dist{}, errors.New("empirical: missing file name")
	}
	scale, scaled := 1.0, false
	for _, p := range parts[1:] {
		k, val, ok := strings.Cut(p, "=")
		if !ok || strings.ToLower(strings.TrimSpace(k)) != "scale" {
			return Dist{}, fmt.Errorf("empirical: unexpected argument %q (only scale=F may follow the file name)", strings.TrimSpace(p))
		}
		if scaled {
			return Dist{}, errors.New("empirical: scale given twice")
		}
		scaled = true
		val = strings.TrimSpace(val)
		f, err := number("empirical", "scale", val)
		if err != nil {
			return Dist{}, err
		}
		if !(f > 0) {
			return Dist{}, fmt.Errorf("empirical: scale must be > 0, got %s", val)
		}
		scale = f
	}
	if opt.ReadFile == nil {
		return Dist{}, fileError{errors.New("empirical(...) needs a file reader")}
	}
	data, err := opt.ReadFile(name)
	if err != nil {
		return Dist{}, fileError{fmt.Errorf("reading %s: %w", name, err)}
	}
	e, err := parseSamples(name, data)
	if err != nil {
		return Dist{}, fileError{err}
	}
	return Dist{fam: famEmpirical, a: scale, emp: e}, nil
}

// maxSamples bounds the samples of one empirical file (64 MB of them).
const maxSamples = 1 << 23

// parseSamples reads an empirical file: one span per line. Its errors name
// the file and the line but never quote the file: empirical(FILE) may have
// been pointed at a file that is not the user's to show.
func parseSamples(name string, data []byte) (*empirical, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff")) // a BOM from spreadsheet exports
	var xs []float64
	for i := 0; len(data) > 0; i++ {
		raw := data
		if j := bytes.IndexByte(data, '\n'); j >= 0 {
			raw, data = data[:j], data[j+1:]
		} else {
			data = nil
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] == '#' {
			continue
		}
		line := string(raw)
		x, err := parseSpan(line)
		if err != nil {
			// A header such as "latency_s" starts with a letter or a quote;
			// a line starting with a digit or sign is a sample, even if bad.
			if r, _ := utf8.DecodeRuneInString(line); i == 0 && (unicode.IsLetter(r) || r == '"') {
				continue
			}
			return nil, fmt.Errorf("%s:%d: bad sample: %s", name, i+1, sampleProblem(line))
		}
		if len(xs) == maxSamples {
			return nil, fmt.Errorf("%s: more than %d samples; an empirical file may hold at most %d", name, maxSamples, maxSamples)
		}
		xs = append(xs, x)
	}
	if len(xs) == 0 {
		return nil, fmt.Errorf("%s: no samples", name)
	}
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	n := float64(len(xs))
	mean := sum / n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	cv := 0.0
	if mean > 0 {
		cv = math.Sqrt(ss/n) / mean
	}
	return &empirical{name: name, xs: xs, mean: mean, cv: cv}, nil
}

// sampleProblem says why parseSpan refused a line of an empirical file,
// without quoting it.
func sampleProblem(v string) string {
	x, err := strconv.ParseFloat(v, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return "a number out of range"
	case err == nil && (math.IsNaN(x) || math.IsInf(x, 0)):
		return "not a finite number"
	case err == nil && x < 0:
		return "a negative span"
	case err == nil:
		return "longer than the longest span (about 292 years)"
	}
	if d, err := time.ParseDuration(v); err == nil && d < 0 {
		return "a negative span"
	}
	return "not a span (write a number of seconds or a Go duration such as 20ms or 1.5s)"
}

// args splits inner into the values of the parameters names, in order. With
// positional false, every argument must be named and missing ones are left
// "" for the caller to judge; otherwise all are required.
func args(fam, inner string, positional bool, names ...string) ([]string, error) {
	vals := make([]string, len(names))
	if strings.TrimSpace(inner) == "" {
		return nil, fmt.Errorf("%s: missing arguments", fam)
	}
	named := false
	for i, p := range strings.Split(inner, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("%s: argument %d is empty", fam, i+1)
		}
		if k, v, ok := strings.Cut(p, "="); ok {
			named = true
			k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
			j := slices.Index(names, k)
			switch {
			case j < 0:
				return nil, fmt.Errorf("%s: unknown argument %q (want %s)", fam, k, strings.Join(names, ", "))
			case vals[j] != "":
				return nil, fmt.Errorf("%s: %s given twice", fam, k)
			case v == "":
				return nil, fmt.Errorf("%s: %s has no value", fam, k)
			}
			vals[j] = v
			continue
		}
		switch {
		case !positional:
			return nil, fmt.Errorf("%s: arguments must be named, as in %s(mean=M,alpha=A)", fam, fam)
		case named:
			return nil, fmt.Errorf("%s: positional argument %q after a named one", fam, p)
		case i >= len(names):
			return nil, fmt.Errorf("%s: too many arguments (want %s)", fam, strings.Join(names, ", "))
		}
		vals[i] = p
	}
	if positional {
		for j, v := range vals {
			if v == "" {
				return nil, fmt.Errorf("%s: missing %s", fam, names[j])
			}
		}
	}
	return vals, nil
}

// span parses argument name of fam as a non-negative span in seconds.
func span(fam, name, v string) (float64, error) {
	x, err := parseSpan(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %s: %w", fam, name, err)
	}
	return x, nil
}

// positiveSpan is span for parameters where 0 is nonsense (a mean or scale).
func positiveSpan(fam, name, v string) (float64, error) {
	x, err := span(fam, name, v)
	if err == nil && x == 0 {
		err = fmt.Errorf("%s: %s must be > 0, got %s", fam, name, v)
	}
	return x, err
}

// number parses argument name of fam as a finite plain number.
func number(fam, name, v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%s: %s %q is out of range", fam, name, v)
	case err != nil:
		return 0, fmt.Errorf("%s: %s must be a number, got %q", fam, name, v)
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0, fmt.Errorf("%s: %s must be finite, got %q", fam, name, v)
	}
	return x + 0, nil // + 0 turns -0 into 0
}

// parseSpan parses a span written as a Go duration or a bare number of
// seconds, and returns it in seconds. Bare numbers keep full float
// precision (they are how String writes spans that are not whole
// nanoseconds), so the round trip through String is exact.
func parseSpan(v string) (float64, error) {
	x, err := strconv.ParseFloat(v, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is out of range", v)
	}
	if err != nil {
		d, derr := time.ParseDuration(v)
		if derr != nil {
			return 0, fmt.Errorf("%q is not a duration (write Go syntax such as 20ms or 1.5s, or a number of seconds)", v)
		}
		if d < 0 {
			return 0, fmt.Errorf("negative duration %q", v)
		}
		return Seconds(d), nil
	}
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0, fmt.Errorf("%q is not finite", v)
	case x < 0:
		return 0, fmt.Errorf("negative duration %q", v)
	case x > maxDurationSeconds:
		return 0, fmt.Errorf("%q exceeds the longest span (about 292 years)", v)
	}
	return x + 0, nil
}

// String returns the canonical form of d, which ParseDist parses back to
// the same Dist (for empirical, given the same file). Spans that are whole
// nanoseconds print as durations ("80ms", "1.5s", "100us"); others, as left
// by Scale, print as exact seconds ("0.055000000000000004").
func (d Dist) String() string {
	a := fmtSpan(d.a)
	switch d.fam {
	case famExp:
		return "exp(" + a + ")"
	case famUniform:
		return "uniform(" + a + "," + fmtSpan(d.b) + ")"
	case famNormal:
		return "normal(" + a + "," + fmtSpan(d.b) + ")"
	case famLogNormal:
		return "lognormal(mean=" + a + ",cv=" + fmtNum(d.b) + ")"
	case famGamma:
		return "gamma(mean=" + a + ",cv=" + fmtNum(d.b) + ")"
	case famErlang:
		return "erlang(" + fmtNum(d.b) + "," + a + ")"
	case famParetoMean:
		return "pareto(mean=" + a + ",alpha=" + fmtNum(d.b) + ")"
	case famParetoXm:
		return "pareto(xm=" + a + ",alpha=" + fmtNum(d.b) + ")"
	case famEmpirical:
		if d.a == 1 {
			return "empirical(" + d.emp.name + ")"
		}
		return "empirical(" + d.emp.name + ",scale=" + fmtNum(d.a) + ")"
	}
	return "const(" + a + ")"
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// fmtSpan writes seconds x as a duration when that parses back to exactly
// x, and as a bare number of seconds otherwise.
func fmtSpan(x float64) string {
	if ns := math.Round(x * 1e9); ns < 1<<63 && Seconds(time.Duration(ns)) == x {
		return fmtNanos(int64(ns))
	}
	return fmtNum(x)
}

// fmtNanos writes n ns in the largest unit not above it, with an exact
// decimal fraction. Unlike time.Duration.String it never mixes units
// ("2m0s") and writes "us", not "µs", so configs stay ASCII.
func fmtNanos(n int64) string {
	if n == 0 {
		return "0s"
	}
	units := [...]struct {
		size   int64
		digits int
		suffix string
	}{{1e9, 9, "s"}, {1e6, 6, "ms"}, {1e3, 3, "us"}, {1, 0, "ns"}}
	for _, u := range units {
		if n < u.size {
			continue
		}
		s := strconv.FormatInt(n/u.size, 10)
		if f := n % u.size; f != 0 {
			frac := strconv.FormatInt(f, 10)
			frac = strings.Repeat("0", u.digits-len(frac)) + frac
			s += "." + strings.TrimRight(frac, "0")
		}
		return s + u.suffix
	}
	panic("unreachable")
}

// meanSeconds is the exact mean of what a Sampler of d draws, in seconds
// before rounding to nanoseconds; +Inf for pareto with alpha <= 1.
func (d Dist) meanSeconds() float64 {
	switch d.fam {
	case famUniform:
		return (d.a + d.b) / 2
	case famNormal:
		m, _ := truncNormal(d.a, d.b)
		return m
	case famParetoXm:
		if d.b <= 1 {
			return math.Inf(1)
		}
		return d.b * d.a / (d.b - 1)
	case famEmpirical:
		return d.a * d.emp.mean
	}
	return d.a // const, exp, lognormal, gamma, erlang, pareto(mean=...)
}

// Mean returns the exact mean of the spans a Sampler of d draws (for normal,
// the mean after truncation at 0; for empirical, the mean of the samples
// times any scale). Where the mean is infinite (pareto with alpha <= 1) or
// beyond the longest span, it returns the longest time.Duration,
// math.MaxInt64 ns.
func (d Dist) Mean() time.Duration { return FromSeconds(d.meanSeconds()) }

// CV returns the coefficient of variation (standard deviation / mean) of
// what a Sampler of d draws: 0 for const and for any Dist that only draws 0,
// +Inf where the variance is infinite (pareto with alpha <= 2).
func (d Dist) CV() float64 {
	switch d.fam {
	case famExp:
		return 1
	case famUniform:
		if d.b == 0 {
			return 0
		}
		return (d.b - d.a) / (math.Sqrt(3) * (d.a + d.b))
	case famNormal:
		m, sd := truncNormal(d.a, d.b)
		if m == 0 {
			return 0
		}
		return sd / m
	case famLogNormal, famGamma:
		return d.b
	case famErlang:
		return 1 / math.Sqrt(d.b)
	case famParetoMean, famParetoXm:
		if d.b <= 2 {
			return math.Inf(1)
		}
		return 1 / math.Sqrt(d.b*(d.b-2))
	case famEmpirical:
		return d.emp.cv
	}
	return 0
}

// truncNormal returns the mean and standard deviation of a normal(mu, sigma)
// truncated to [0, ∞): with a = -mu/sigma and the hazard λ = φ(a)/(1-Φ(a)),
// mean = mu + sigma·λ and variance = sigma²·(1 + a·λ - λ²). Since mu >= 0,
// a <= 0 and 1-Φ(a) >= 1/2, so nothing cancels badly.
func truncNormal(mu, sigma float64) (mean, sd float64) {
	if sigma == 0 {
		return mu, 0
	}
	a := -mu / sigma
	phi := math.Exp(-a*a/2) / math.Sqrt(2*math.Pi)
	q := math.Erfc(a/math.Sqrt2) / 2
	lambda := phi / q
	return mu + sigma*lambda, sigma * math.Sqrt(math.Max(0, 1+a*lambda-lambda*lambda))
}

// Scale returns d with every sample multiplied by f, for cost multipliers
// and time scaling. Every family is closed under scaling, so the result is
// the same family with scaled span parameters. It panics unless f is finite
// and > 0. A result whose spans exceed about 292 years still samples
// (capped), but its String no longer parses.
func (d Dist) Scale(f float64) Dist {
	if !(f > 0) || math.IsInf(f, 1) {
		panic(fmt.Sprintf("sim: Dist.Scale(%v): factor must be finite and > 0", f))
	}
	d.a *= f
	if d.fam == famUniform || d.fam == famNormal {
		d.b *= f // hi and sd are spans too
	}
	return d
}

// IsZero reports whether d only ever draws 0, as the zero Dist (const 0)
// does; so does uniform(0,0), say. For a non-negative distribution that is
// the same as a mean of 0.
func (d Dist) IsZero() bool { return d.meanSeconds() == 0 }

// Sampler binds d to stream s. Samplers of one Dist on streams with one
// path draw the same sequence. It panics if s is nil.
func (d Dist) Sampler(s *Stream) Sampler {
	if s == nil {
		panic("sim: Dist.Sampler: nil stream")
	}
	// Distributions are built in unit form and multiplied by mul: that keeps
	// the distuv parameters finite for extreme spans and makes Scale exact.
	// Every distuv value gets Src: a nil Src silently uses the global source.
	src := s.Src()
	sm := Sampler{fam: d.fam, mul: d.a, stream: s}
	switch d.fam {
	case famConst:
		sm.c = FromSeconds(d.a)
	case famExp:
		sm.r = distuv.Exponential{Rate: 1, Src: src}
	case famUniform:
		sm.r, sm.mul = distuv.Uniform{Min: d.a, Max: d.b, Src: src}, 1
	case famNormal:
		sm.r, sm.mul = distuv.Normal{Mu: d.a, Sigma: d.b, Src: src}, 1
	case famLogNormal:
		// sigma² = ln(1+cv²), mu = ln(mean) - sigma²/2, with ln(mean) in mul.
		s2 := math.Log1p(d.b * d.b)
		sm.r = distuv.LogNormal{Mu: -s2 / 2, Sigma: math.Sqrt(s2), Src: src}
	case famGamma:
		k := 1 / (d.b * d.b) // shape; rate k/mean, with the mean in mul
		sm.r = distuv.Gamma{Alpha: k, Beta: k, Src: src}
	case famErlang:
		sm.r = distuv.Gamma{Alpha: d.b, Beta: d.b, Src: src}
	case famParetoMean:
		sm.r, sm.mul = distuv.Pareto{Xm: 1, Alpha: d.b, Src: src}, d.a*(d.b-1)/d.b
	case famParetoXm:
		sm.r = distuv.Pareto{Xm: 1, Alpha: d.b, Src: src}
	case famEmpirical:
		sm.xs = d.emp.xs
	}
	return sm
}

// Sampler draws spans from a Dist using one Stream. Like the Stream, it
// belongs to one goroutine. The zero Sampler always draws 0.
//
// distuv's Rand methods build a rand.Rand around Src on every call, but the
// compiler keeps it on the stack, so Sample allocates nothing (a test
// checks); if a Go release changes that, sample from the Stream directly.
type Sampler struct {
	fam    family
	c      time.Duration // the value of const
	mul    float64       // multiplies r's draws, or the empirical samples
	r      distuv.Rander
	xs     []float64
	stream *Stream
}

// Const reports whether every draw is the same span, and which: a
// constant's draws may be scheduled in a Lane.
func (s *Sampler) Const() (time.Duration, bool) { return s.c, s.fam == famConst }

// Sample draws the next span. It never returns a negative span and
// allocates nothing. Const draws no random numbers; normal redraws until it
// gets a value >= 0 (at most twice on average, since mean >= 0).
func (s *Sampler) Sample() time.Duration {
	switch s.fam {
	case famConst:
		return s.c
	case famExp:
		// distuv.Exponential{Rate: 1}.Rand draws exactly this, through an
		// interface call and a rand.Rand built per draw.
		return FromSeconds(s.mul * s.stream.ExpFloat64())
	case famNormal:
		for {
			if x := s.r.Rand(); x >= 0 {
				return FromSeconds(x)
			}
		}
	case famEmpirical:
		return FromSeconds(s.mul * s.xs[s.stream.IntN(len(s.xs))])
	}
	return FromSeconds(s.mul * s.r.Rand())
}
