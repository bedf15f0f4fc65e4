package sim

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// zTol is how many standard errors a statistical check allows. Every check
// runs on a fixed seed, so it cannot flake; 5 SE keeps the chance that a
// correct implementation fails on a newly chosen seed below 1e-6 per check.
const zTol = 5

// refDist is the independent reference a family is checked against: its
// CDF and quantile function, mean and standard deviation.
type refDist interface {
	CDF(x float64) float64
	Quantile(p float64) float64
	Mean() float64
	StdDev() float64
}

// truncNormalRef is normal(mu, sigma) truncated to [0, ∞), built from
// distuv.Normal; its moments come from numerical integration, not from the
// closed form that dist.go uses.
type truncNormalRef struct {
	n  distuv.Normal
	p0 float64 // P(X < 0) before truncation
}

func newTruncNormalRef(mu, sigma float64) truncNormalRef {
	n := distuv.Normal{Mu: mu, Sigma: sigma}
	return truncNormalRef{n: n, p0: n.CDF(0)}
}

func (t truncNormalRef) CDF(x float64) float64 {
	if x < 0 {
		return 0
	}
	return (t.n.CDF(x) - t.p0) / (1 - t.p0)
}

func (t truncNormalRef) Quantile(p float64) float64 { return t.n.Quantile(t.p0 + p*(1-t.p0)) }

// moment integrates x^k times the truncated density over [0, mu+12 sigma]
// with composite Simpson's rule.
func (t truncNormalRef) moment(k float64) float64 {
	const steps = 200000
	hi := t.n.Mu + 12*t.n.Sigma
	h := hi / steps
	f := func(x float64) float64 { return math.Pow(x, k) * t.n.Prob(x) / (1 - t.p0) }
	sum := f(0) + f(hi)
	for i := 1; i < steps; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		sum += w * f(float64(i)*h)
	}
	return sum * h / 3
}

func (t truncNormalRef) Mean() float64 { return t.moment(1) }

func (t truncNormalRef) StdDev() float64 {
	m := t.moment(1)
	return math.Sqrt(t.moment(2) - m*m)
}

// famCase is one family checked statistically against its reference.
type famCase struct {
	in  string
	ref refDist
	// cvCheck is false where the sample CV has no usable standard error
	// (an infinite 4th moment makes the delta-method SE meaningless).
	cvCheck bool
}

func famCases() []famCase {
	lognorm := func(mean, cv float64) distuv.LogNormal {
		s2 := math.Log(1 + cv*cv) // the brief's parameterisation, written independently
		return distuv.LogNormal{Mu: math.Log(mean) - s2/2, Sigma: math.Sqrt(s2)}
	}
	gamma := func(mean, cv float64) distuv.Gamma {
		k := 1 / (cv * cv)
		return distuv.Gamma{Alpha: k, Beta: k / mean}
	}
	return []famCase{
		{"exp(50ms)", distuv.Exponential{Rate: 1 / 0.05}, true},
		{"uniform(10ms,30ms)", distuv.Uniform{Min: 0.01, Max: 0.03}, true},
		{"normal(80ms,20ms)", newTruncNormalRef(0.08, 0.02), true},
		{"normal(10ms,20ms)", newTruncNormalRef(0.01, 0.02), true}, // a third of the mass truncated
		{"normal(0,1ms)", newTruncNormalRef(0, 0.001), true},       // half-normal
		{"lognormal(mean=80ms,cv=0.5)", lognorm(0.08, 0.5), true},
		{"lognormal(mean=80ms,cv=1.5)", lognorm(0.08, 1.5), true},
		{"gamma(mean=80ms,cv=0.5)", gamma(0.08, 0.5), true},
		{"gamma(mean=80ms,cv=2)", gamma(0.08, 2), true}, // shape 0.25: Marsaglia-Tsang with the a<1 boost
		{"gamma(mean=80ms,cv=3)", gamma(0.08, 3), true}, // shape 0.11: the small-shape algorithm
		{"erlang(4,100ms)", distuv.Gamma{Alpha: 4, Beta: 4 / 0.1}, true},
		{"pareto(mean=80ms,alpha=2.5)", distuv.Pareto{Xm: 0.08 * 1.5 / 2.5, Alpha: 2.5}, false},
		{"pareto(xm=10ms,alpha=6)", distuv.Pareto{Xm: 0.01, Alpha: 6}, true},
	}
}

// sampleStats draws n spans and returns them in seconds with their mean and
// central moments (population form).
func sampleStats(s *Sampler, n int) (xs []float64, mean, m2, m3, m4 float64) {
	xs = make([]float64, n)
	for i := range xs {
		xs[i] = Seconds(s.Sample())
		mean += xs[i]
	}
	mean /= float64(n)
	for _, x := range xs {
		d := x - mean
		m2 += d * d
		m3 += d * d * d
		m4 += d * d * d * d
	}
	return xs, mean, m2 / float64(n), m3 / float64(n), m4 / float64(n)
}

func relClose(a, b, tol float64) bool {
	return a == b || math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// TestDistMoments checks Mean and CV of every family against an
// independent reference (distuv or numerical integration), then checks
// that 200k samples agree with Mean, CV and the reference quantiles within
// zTol standard errors.
func TestDistMoments(t *testing.T) {
	const n = 200000
	streams := NewStreams(20240611)
	for _, c := range famCases() {
		t.Run(c.in, func(t *testing.T) {
			d := MustParseDist(c.in)
			mean, cv := d.meanSeconds(), d.CV()
			if !relClose(mean, c.ref.Mean(), 1e-9) {
				t.Errorf("Mean = %v s, reference %v s", mean, c.ref.Mean())
			}
			if want := c.ref.StdDev() / c.ref.Mean(); !relClose(cv, want, 1e-9) {
				t.Errorf("CV = %v, reference %v", cv, want)
			}
			if d.Mean() != FromSeconds(mean) {
				t.Errorf("Mean() = %v, want %v", d.Mean(), FromSeconds(mean))
			}

			s := d.Sampler(streams.Stream("test/" + c.in))
			xs, sm, v, m3, m4 := sampleStats(&s, n)
			if slices.Min(xs) < 0 {
				t.Fatalf("negative sample %v", slices.Min(xs))
			}

			// Mean: the CLT standard error from the sample variance.
			if se := math.Sqrt(v / n); math.Abs(sm-mean) > zTol*se {
				t.Errorf("sample mean %.6g s, Mean %.6g s: off by %.1f SE (SE %.3g s); replay with seed 20240611, stream %q",
					sm, mean, math.Abs(sm-mean)/se, se, "test/"+c.in)
			}

			// CV: the delta method on g(m, v) = sqrt(v)/m, with
			// Var(v̂) ≈ (μ4-σ⁴)/n and Cov(m̂, v̂) ≈ μ3/n.
			if c.cvCheck {
				sd := math.Sqrt(v)
				scv := sd / sm
				gm, gv := -sd/(sm*sm), 1/(2*sm*sd)
				se := math.Sqrt((gm*gm*v + gv*gv*(m4-v*v) + 2*gm*gv*m3) / n)
				if math.Abs(scv-cv) > zTol*se {
					t.Errorf("sample CV %.5g, CV() %.5g: off by %.1f SE (SE %.3g)", scv, cv, math.Abs(scv-cv)/se, se)
				}
			}

			// Shape: the count of samples at or below the reference
			// p-quantile is binomial. Samples are rounded to whole ns, so
			// P(sample <= k ns) is the reference CDF at k+0.5 ns, which
			// differs from p where quantiles fall below a nanosecond.
			slices.Sort(xs)
			for _, p := range []float64{0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99} {
				k := FromSeconds(c.ref.Quantile(p))
				want := c.ref.CDF((float64(k) + 0.5) / 1e9)
				got := float64(countAtMost(xs, Seconds(k))) / n
				if se := math.Sqrt(want * (1 - want) / n); math.Abs(got-want) > zTol*se {
					t.Errorf("P(X <= %v) = %.5f, want %.5f (the %.2f-quantile; off by %.1f SE)", k, got, want, p, math.Abs(got-want)/se)
				}
			}
		})
	}
}

// countAtMost returns how many of the sorted xs are <= x.
func countAtMost(xs []float64, x float64) int {
	i, found := slices.BinarySearch(xs, x)
	for found && i < len(xs) && xs[i] == x {
		i++
	}
	return i
}

func TestDistInfiniteMoments(t *testing.T) {
	for _, c := range []struct {
		in   string
		mean time.Duration
		cv   float64
	}{
		{"pareto(xm=10ms,alpha=1)", math.MaxInt64, math.Inf(1)},
		{"pareto(xm=10ms,alpha=0.5)", math.MaxInt64, math.Inf(1)},
		{"pareto(xm=10ms,alpha=1.5)", 30 * time.Millisecond, math.Inf(1)},
		{"pareto(mean=80ms,alpha=2)", 80 * time.Millisecond, math.Inf(1)},
	} {
		d := MustParseDist(c.in)
		if d.Mean() != c.mean || d.CV() != c.cv {
			t.Errorf("%s: Mean, CV = %v, %v; want %v, %v", c.in, d.Mean(), d.CV(), c.mean, c.cv)
		}
		s := d.Sampler(NewStreams(1).Stream("inf"))
		for range 10000 {
			if x := s.Sample(); x < 10*time.Millisecond {
				t.Fatalf("%s: sample %v below xm", c.in, x)
			}
		}
	}
}

// TestDistNearDegenerate checks parameters at the edge of what ParseDist
// accepts, where a distribution is so concentrated that every sample must
// round to its mean. It guards against parameters that overflow inside the
// samplers (a shape of +Inf once made gamma draw NaN, hence 0).
func TestDistNearDegenerate(t *testing.T) {
	for _, in := range []string{
		"gamma(1s,1e-154)", "gamma(1s,1e-15)", "erlang(1e300,1s)", "lognormal(1s,1e-300)",
		"normal(1s,1e-300)", "pareto(mean=1s,alpha=1e300)", "uniform(1s,1s)",
	} {
		d := MustParseDist(in)
		s := d.Sampler(NewStreams(5).Stream("degenerate"))
		for range 1000 {
			if x := s.Sample(); x < time.Second-1 || x > time.Second+1 {
				t.Fatalf("%s: sample %v, want 1s", in, x)
			}
		}
	}
}

// testFiles is an in-memory file system for empirical(FILE).
var testFiles = map[string]string{
	"lat.csv":    "latency_s\n0.004\n\n# measured 2024-06-11\n2ms\n 3ms \r\n0.001\n",
	"one.txt":    "5ms\n",
	"zero.txt":   "0\n0s\n",
	"bad.csv":    "1ms\n2ms\n# fine\nabc\n",
	"neg.csv":    "1ms\n-2ms\n",
	"neghdr.csv": "-1ms\n2ms\n",
	"empty.csv":  "# only a comment\n\n",
	"hdronly":    "latency\n",
	"late.csv":   "1ms\nlatency\n",
	"bom.csv":    "\ufefflatency\n1ms\n",
}

func testReader(name string) ([]byte, error) {
	if s, ok := testFiles[name]; ok {
		return []byte(s), nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

var testOpts = ParseOptions{ReadFile: testReader}

// goodDists maps input strings to their canonical form.
var goodDists = []struct{ in, canon string }{
	{"const(2ms)", "const(2ms)"},
	{"2ms", "const(2ms)"},
	{" 0.5 ", "const(500ms)"},
	{"CONST( 1.5s )", "const(1.5s)"},
	{"const(d=1s)", "const(1s)"},
	{"2m", "const(120s)"},
	{"100us", "const(100us)"},
	{"100µs", "const(100us)"},
	{"1h30m", "const(5400s)"},
	{"0", "const(0s)"},
	{"-0", "const(0s)"},
	{"17ns", "const(17ns)"},
	{"1e-10", "const(1e-10)"},
	{"exp(50ms)", "exp(50ms)"},
	{"Exp(mean=50ms)", "exp(50ms)"},
	{"exp(0.05)", "exp(50ms)"},
	{"exp(1.234567ms)", "exp(1.234567ms)"},
	{"exp(1.000000001s)", "exp(1.000000001s)"},
	{"uniform(10ms,30ms)", "uniform(10ms,30ms)"},
	{"uniform(lo=10ms, hi=30ms)", "uniform(10ms,30ms)"},
	{"uniform(hi=30ms,lo=0)", "uniform(0s,30ms)"},
	{"uniform(5ms,5ms)", "uniform(5ms,5ms)"},
	{"normal(80ms,20ms)", "normal(80ms,20ms)"},
	{"normal(mean=80ms,sd=20ms)", "normal(80ms,20ms)"},
	{"normal(sd=20ms, mean=80ms)", "normal(80ms,20ms)"},
	{"normal(80ms, sd=20ms)", "normal(80ms,20ms)"},
	{"normal(0,1ms)", "normal(0s,1ms)"},
	{"normal(5ms,0)", "normal(5ms,0s)"},
	{"lognormal(mean=80ms,cv=1.5)", "lognormal(mean=80ms,cv=1.5)"},
	{"lognormal(80ms,1.5)", "lognormal(mean=80ms,cv=1.5)"},
	{"LogNormal( Mean = 80ms , CV = 1.5 )", "lognormal(mean=80ms,cv=1.5)"},
	{"lognormal(80ms,0)", "lognormal(mean=80ms,cv=0)"},
	{"gamma(mean=80ms,cv=0.5)", "gamma(mean=80ms,cv=0.5)"},
	{"gamma(80ms,0.5)", "gamma(mean=80ms,cv=0.5)"},
	{"erlang(4,100ms)", "erlang(4,100ms)"},
	{"erlang(k=4,mean=100ms)", "erlang(4,100ms)"},
	{"erlang(4.0,0.1)", "erlang(4,100ms)"},
	{"pareto(mean=80ms,alpha=2.5)", "pareto(mean=80ms,alpha=2.5)"},
	{"pareto(xm=10ms,alpha=1.5)", "pareto(xm=10ms,alpha=1.5)"},
	{"PARETO(alpha=1, xm=1ms)", "pareto(xm=1ms,alpha=1)"},
	{"empirical(lat.csv)", "empirical(lat.csv)"},
	{" empirical( lat.csv ) ", "empirical(lat.csv)"},
	{"empirical(lat.csv, scale=2)", "empirical(lat.csv,scale=2)"},
	{"empirical(lat.csv,SCALE=1)", "empirical(lat.csv)"},
}

func sameDist(a, b Dist) bool {
	if a.fam != b.fam || a.a != b.a || a.b != b.b || (a.emp == nil) != (b.emp == nil) {
		return false
	}
	return a.emp == nil || a.emp.name == b.emp.name && slices.Equal(a.emp.xs, b.emp.xs)
}

func TestParseDistRoundTrip(t *testing.T) {
	for _, c := range goodDists {
		d, err := ParseDist(c.in, testOpts)
		if err != nil {
			t.Errorf("ParseDist(%q): %v", c.in, err)
			continue
		}
		if got := d.String(); got != c.canon {
			t.Errorf("ParseDist(%q).String() = %q, want %q", c.in, got, c.canon)
		}
		d2, err := ParseDist(d.String(), testOpts)
		if err != nil || !sameDist(d, d2) {
			t.Errorf("round trip of %q via %q: %+v, %v; want %+v", c.in, d.String(), d2, err, d)
		}
	}
}

// badDists maps input strings to a fragment of their error.
var badDists = []struct{ in, want string }{
	{"", "empty"},
	{"   ", "empty"},
	{"expo(5ms)", `unknown name "expo"`},
	{"exp", "exp needs arguments in parentheses"},
	{"exp()", "exp: missing arguments"},
	{"exp( )", "exp: missing arguments"},
	{"exp(5ms", "missing ')'"},
	{"exp(5ms))", `unexpected ")" after ')'`},
	{"exp(5ms)x", `unexpected "x" after ')'`},
	{"exp((5ms))", "more than one '('"},
	{"exp(5ms)(1)", "more than one '('"},
	{"5ms)", "')' without '('"},
	{"(5ms)", "missing name before '('"},
	{"exp(-5ms)", `exp: mean: negative duration "-5ms"`},
	{"exp(0)", "exp: mean must be > 0, got 0"},
	{"exp(0.1ns)", "exp: mean must be > 0"},
	{"exp(5ms,6ms)", "exp: too many arguments (want mean)"},
	{"exp(rate=5)", `exp: unknown argument "rate" (want mean)`},
	{"exp(mean=)", "exp: mean has no value"},
	{"exp(5ms, mean=5ms)", "exp: mean given twice"},
	{"exp(5ms,)", "exp: argument 2 is empty"},
	{"exp(5 ms)", `"5 ms" is not a duration`},
	{"exp(5MS)", `"5MS" is not a duration`},
	{"exp(nan)", `"nan" is not finite`},
	{"exp(inf)", `"inf" is not finite`},
	{"exp(1e999)", "out of range"},
	{"exp(1e10)", "exceeds the longest span"},
	{"exp(3000000h)", "not a duration"}, // overflows time.Duration
	{"const(1ms,2ms)", "const: too many arguments"},
	{"const(-1)", "negative duration"},
	{"-1ms", "negative duration"},
	{"abc", `neither NAME(ARGS) nor a duration: "abc" is not a duration`},
	{"uniform(30ms,10ms)", "uniform: lo must be <= hi, got lo=30ms hi=10ms"},
	{"uniform(10ms)", "uniform: missing hi"},
	{"uniform(lo=1ms,2ms)", `uniform: positional argument "2ms" after a named one`},
	{"normal(mean=80ms)", "normal: missing sd"},
	{"normal(-1ms,1ms)", "normal: mean: negative duration"},
	{"normal(1ms,-1ms)", "normal: sd: negative duration"},
	{"lognormal(80ms,-1)", "lognormal: cv must be >= 0, got -1"},
	{"lognormal(0,1)", "lognormal: mean must be > 0"},
	{"lognormal(80ms,NaN)", "lognormal: cv must be finite"},
	{"lognormal(80ms,+Inf)", "lognormal: cv must be finite"},
	{"lognormal(80ms,2ms)", `lognormal: cv must be a number, got "2ms"`},
	{"lognormal(80ms,1e200)", "lognormal: cv 1e200 is too large"},
	{"lognormal(mean=80ms,sd=1ms)", `lognormal: unknown argument "sd" (want mean, cv)`},
	{"gamma(80ms,0)", "gamma: cv must be > 0, got 0"},
	{"gamma(80ms,1e-200)", "gamma: cv 1e-200 is out of range"},
	{"gamma(80ms,2e-162)", "gamma: cv 2e-162 is out of range"}, // cv² > 0 but 1/cv² = +Inf
	{"gamma(80ms,1e300)", "gamma: cv 1e300 is out of range"},
	{"erlang(0,100ms)", "erlang: k must be a whole number >= 1, got 0"},
	{"erlang(2.5,100ms)", "erlang: k must be a whole number >= 1, got 2.5"},
	{"erlang(100ms,4)", `erlang: k must be a number, got "100ms"`},
	{"erlang(4,0)", "erlang: mean must be > 0"},
	{"pareto(80ms,2.5)", "pareto: arguments must be named, as in pareto(mean=M,alpha=A)"},
	{"pareto(mean=80ms,alpha=1)", "pareto: alpha must be > 1 when the mean is given"},
	{"pareto(xm=0,alpha=2)", "pareto: xm must be > 0"},
	{"pareto(mean=1ms,xm=1ms,alpha=2)", "pareto: give mean or xm, not both"},
	{"pareto(alpha=2)", "pareto: missing mean or xm"},
	{"pareto(xm=1ms)", "pareto: missing alpha"},
	{"pareto(xm=1ms,alpha=0)", "pareto: alpha must be > 0, got 0"},
	{"pareto(xm=1ms,alpha=-1)", "pareto: alpha must be > 0"},
	{"empirical()", "empirical: missing file name"},
	{"empirical(lat.csv,foo=1)", `empirical: unexpected argument "foo=1"`},
	{"empirical(lat.csv,2)", `empirical: unexpected argument "2"`},
	{"empirical(lat.csv,scale=0)", "empirical: scale must be > 0"},
	{"empirical(lat.csv,scale=1,scale=2)", "empirical: scale given twice"},
}

func TestParseDistErrors(t *testing.T) {
	for _, c := range badDists {
		_, err := ParseDist(c.in, testOpts)
		if err == nil {
			t.Errorf("ParseDist(%q) succeeded, want error containing %q", c.in, c.want)
			continue
		}
		msg := err.Error()
		prefix := fmt.Sprintf("bad distribution %q: ", c.in)
		if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, c.want) || !strings.HasSuffix(msg, "; allowed: "+DistForms) {
			t.Errorf("ParseDist(%q) error:\n  %s\nwant %q, then %q, ending in the allowed forms", c.in, msg, prefix, c.want)
		}
	}
	// The brief's example message, verbatim.
	_, err := ParseDist("expo(5ms)", ParseOptions{})
	want := `bad distribution "expo(5ms)": unknown name "expo"; allowed: const(D), exp(MEAN), uniform(LO,HI), normal(MEAN,SD), lognormal(mean=M,cv=C), gamma(mean=M,cv=C), erlang(K,MEAN), pareto(mean=M,alpha=A) or pareto(xm=X,alpha=A), empirical(FILE), or a plain duration such as 20ms`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestEmpirical(t *testing.T) {
	d, err := ParseDist("empirical(lat.csv)", testOpts)
	if err != nil {
		t.Fatal(err)
	}
	// Samples 1, 2, 3, 4 ms (header, blank, comment and \r skipped): mean
	// 2.5ms, population sd sqrt(1.25) ms.
	if want := []float64{0.001, 0.002, 0.003, 0.004}; !slices.Equal(d.emp.xs, want) {
		t.Fatalf("samples %v, want %v (sorted)", d.emp.xs, want)
	}
	if d.Mean() != 2500*time.Microsecond || !relClose(d.CV(), math.Sqrt(1.25)/2.5, 1e-12) {
		t.Errorf("Mean, CV = %v, %v", d.Mean(), d.CV())
	}
	// Each sample is drawn with probability 1/4: binomial tolerances.
	const n = 100000
	s := d.Sampler(NewStreams(7).Stream("emp"))
	counts := map[time.Duration]int{}
	for range n {
		counts[s.Sample()]++
	}
	if len(counts) != 4 {
		t.Fatalf("drew %d distinct values, want 4: %v", len(counts), counts)
	}
	for _, ms := range []time.Duration{1, 2, 3, 4} {
		got := float64(counts[ms*time.Millisecond]) / n
		if se := math.Sqrt(0.25 * 0.75 / n); math.Abs(got-0.25) > zTol*se {
			t.Errorf("P(%vms) = %.4f, want 0.25 ± %.4f", ms, got, zTol*se)
		}
	}

	scaled := d.Scale(3)
	if scaled.String() != "empirical(lat.csv,scale=3)" || scaled.Mean() != 7500*time.Microsecond || scaled.CV() != d.CV() {
		t.Errorf("Scale(3): %v, Mean %v, CV %v", scaled, scaled.Mean(), scaled.CV())
	}

	for _, c := range []struct{ in string }{{"empirical(one.txt)"}, {"empirical(bom.csv)"}} {
		if _, err := ParseDist(c.in, testOpts); err != nil {
			t.Errorf("%s: %v", c.in, err)
		}
	}
	if z := MustParseDistWith(t, "empirical(zero.txt)"); !z.IsZero() || z.CV() != 0 {
		t.Errorf("empirical of zeros: IsZero %v, CV %v", z.IsZero(), z.CV())
	}

	// Errors inside the file name it and the line, and don't list the forms.
	for _, c := range []struct{ in, want string }{
		{"empirical(bad.csv)", `bad distribution "empirical(bad.csv)": bad.csv:4: bad sample: not a span`},
		{"empirical(neg.csv)", `neg.csv:2: bad sample: a negative span`},
		{"empirical(neghdr.csv)", `neghdr.csv:1: bad sample: a negative span`},
		{"empirical(late.csv)", `late.csv:2: bad sample: not a span`},
		{"empirical(empty.csv)", "empty.csv: no samples"},
		{"empirical(hdronly)", "hdronly: no samples"},
		{"empirical(missing.csv)", "reading missing.csv: open missing.csv: file does not exist"},
	} {
		_, err := ParseDist(c.in, testOpts)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "allowed:") {
			t.Errorf("ParseDist(%q) = %v, want %q without the forms", c.in, err, c.want)
		}
	}
	if _, err := ParseDist("empirical(missing.csv)", testOpts); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reader error not wrapped: %v", err)
	}
	_, err = ParseDist("empirical(lat.csv)", ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "empirical(...) needs a file reader") {
		t.Errorf("nil ReadFile: %v", err)
	}
}

// MustParseDistWith parses s with the in-memory files.
func MustParseDistWith(t *testing.T, s string) Dist {
	t.Helper()
	d, err := ParseDist(s, testOpts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDistScale checks that Scale(f) multiplies the mean by f, keeps the
// CV, round trips, and, on the same stream, multiplies every sample by f
// (up to nanosecond rounding), so scaled what-ifs keep common random numbers.
func TestDistScale(t *testing.T) {
	ins := []string{"const(2ms)"}
	for _, c := range famCases() {
		ins = append(ins, c.in)
	}
	ins = append(ins, "empirical(lat.csv)", "pareto(xm=1ms,alpha=0.8)")
	for _, in := range ins {
		d := MustParseDistWith(t, in)
		for _, f := range []float64{2, 0.37, 1.1} {
			sd := d.Scale(f)
			if !relClose(sd.meanSeconds(), f*d.meanSeconds(), 1e-12) || !relClose(sd.CV(), d.CV(), 1e-12) {
				t.Errorf("%s.Scale(%v): mean %v, CV %v; want %v, %v", in, f, sd.meanSeconds(), sd.CV(), f*d.meanSeconds(), d.CV())
			}
			back, err := ParseDist(sd.String(), testOpts)
			if err != nil || !sameDist(back, sd) {
				t.Errorf("%s.Scale(%v) = %s does not round trip: %v", in, f, sd, err)
			}
			s1 := d.Sampler(NewStreams(3).Stream("scale"))
			s2 := sd.Sampler(NewStreams(3).Stream("scale"))
			for range 1000 {
				x, y := s1.Sample(), s2.Sample()
				if x == math.MaxInt64 || y == math.MaxInt64 {
					continue // capped
				}
				if want := float64(x) * f; math.Abs(float64(y)-want) > 1+1e-9*want {
					t.Fatalf("%s.Scale(%v): sample %v, want %v × %v", in, f, y, x, f)
				}
			}
		}
	}
	if got := MustParseDist("exp(50ms)").Scale(1.1).String(); got != "exp(0.05500000000000001)" {
		t.Errorf("exp(50ms).Scale(1.1) = %s", got) // documents the exact-seconds form
	}
	for _, f := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Scale(%v) did not panic", f)
				}
			}()
			Exp(time.Second).Scale(f)
		}()
	}
}

func TestDistConstructors(t *testing.T) {
	if d := Const(3 * time.Millisecond); d.String() != "const(3ms)" || d.Mean() != 3*time.Millisecond || d.CV() != 0 || d.IsZero() {
		t.Errorf("Const(3ms) = %v", d)
	}
	if d := Exp(40 * time.Millisecond); d.String() != "exp(40ms)" || d.Mean() != 40*time.Millisecond || d.CV() != 1 {
		t.Errorf("Exp(40ms) = %v", d)
	}
	for _, z := range []Dist{{}, Const(0), MustParseDist("0"), MustParseDist("uniform(0,0)"), MustParseDist("normal(0,0)")} {
		if !z.IsZero() || z.Mean() != 0 || z.CV() != 0 {
			t.Errorf("%v: IsZero %v, Mean %v, CV %v", z, z.IsZero(), z.Mean(), z.CV())
		}
		s := z.Sampler(NewStreams(1).Stream("z"))
		if x := s.Sample(); x != 0 {
			t.Errorf("%v sampled %v", z, x)
		}
	}
	if (Dist{}).String() != "const(0s)" {
		t.Errorf("zero Dist prints %q", Dist{}.String())
	}
	var zs Sampler
	if zs.Sample() != 0 {
		t.Error("zero Sampler drew non-zero")
	}
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"Const(-1)", func() { Const(-1) }},
		{"Exp(0)", func() { Exp(0) }},
		{"MustParseDist(bad)", func() { MustParseDist("expo(1s)") }},
		{"Sampler(nil)", func() { Exp(1).Sampler(nil) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", c.name)
				}
			}()
			c.f()
		}()
	}
}

func TestSamplerDeterminism(t *testing.T) {
	ins := []string{"const(2ms)", "empirical(lat.csv)"}
	for _, c := range famCases() {
		ins = append(ins, c.in)
	}
	for _, in := range ins {
		d := MustParseDistWith(t, in)
		a := d.Sampler(NewStreams(99).Stream("svc/be"))
		b := d.Sampler(NewStreams(99).Stream("svc/be"))
		c := d.Sampler(NewStreams(99).Stream("svc/fe"))
		differs := false
		for i := range 2000 {
			x, y, z := a.Sample(), b.Sample(), c.Sample()
			if x != y {
				t.Fatalf("%s: sample %d differs on one path: %v vs %v", in, i, x, y)
			}
			differs = differs || x != z
		}
		if !differs && d.CV() != 0 {
			t.Errorf("%s: streams svc/be and svc/fe drew the same 2000 samples", in)
		}
	}
}

func TestSampleAllocs(t *testing.T) {
	ins := []string{"const(2ms)", "empirical(lat.csv)", "pareto(xm=1ms,alpha=0.8)"}
	for _, c := range famCases() {
		ins = append(ins, c.in)
	}
	for _, in := range ins {
		s := MustParseDistWith(t, in).Sampler(NewStreams(1).Stream("allocs"))
		if n := testing.AllocsPerRun(1000, func() { s.Sample() }); n != 0 {
			t.Errorf("%s: %v allocations per Sample", in, n)
		}
	}
}

// FuzzParseDist checks that ParseDist never panics, and that whatever it
// accepts round trips through String, samples non-negative spans and has a
// sane mean and CV.
func FuzzParseDist(f *testing.F) {
	for _, c := range goodDists {
		f.Add(c.in)
	}
	for _, c := range badDists {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ParseDist(in, testOpts)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "bad distribution ") {
				t.Fatalf("error without the prefix: %v", err)
			}
			return
		}
		canon := d.String()
		d2, err := ParseDist(canon, testOpts)
		if err != nil || !sameDist(d, d2) || d2.String() != canon {
			t.Fatalf("%q -> %q does not round trip: %+v, %v", in, canon, d2, err)
		}
		if d.Mean() < 0 || math.IsNaN(d.CV()) || d.CV() < 0 {
			t.Fatalf("%q: Mean %v, CV %v", in, d.Mean(), d.CV())
		}
		s := d.Sampler(NewStreams(1).Stream("fuzz"))
		for range 20 {
			if x := s.Sample(); x < 0 {
				t.Fatalf("%q sampled %v", in, x)
			}
		}
	})
}

func benchmarkSample(b *testing.B, in string) {
	s := MustParseDist(in).Sampler(NewStreams(1).Stream("bench"))
	b.ReportAllocs()
	var sum time.Duration
	for b.Loop() {
		sum += s.Sample()
	}
	_ = sum
}

func BenchmarkSampleExp(b *testing.B)       { benchmarkSample(b, "exp(50ms)") }
func BenchmarkSampleLogNormal(b *testing.B) { benchmarkSample(b, "lognormal(mean=80ms,cv=1.5)") }

func BenchmarkSampleFamilies(b *testing.B) {
	for _, in := range []string{"const(2ms)", "uniform(10ms,30ms)", "normal(80ms,20ms)", "normal(0,1ms)",
		"gamma(mean=80ms,cv=0.5)", "erlang(4,100ms)", "pareto(mean=80ms,alpha=2.5)"} {
		b.Run(in, func(b *testing.B) { benchmarkSample(b, in) })
	}
}
