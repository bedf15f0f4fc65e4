package calibrate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/tsim-dev/tsim/sim"
)

// scaledDist writes d with every sample multiplied by f, in the experiment
// format's syntax, its spans rounded to four significant digits: the same
// family and shape (coefficient of variation), a new mean. The shape is
// the experiment's: counters give means, not distributions.
func scaledDist(d sim.Dist, f float64, opt sim.ParseOptions) (string, error) {
	if !(f > 0) || math.IsInf(f, 0) {
		return "", fmt.Errorf("scale %v", f)
	}
	s := d.Scale(f).String()
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return "", fmt.Errorf("unexpected distribution %q", s)
	}
	fam, args := s[:open], strings.Split(s[open+1:len(s)-1], ",")
	for i, a := range args {
		key, val, named := strings.Cut(a, "=")
		if !named {
			key, val = "", a
		}
		span := false
		switch fam {
		case "exp", "const", "uniform", "normal":
			span = true
		case "lognormal", "gamma", "pareto":
			span = key == "mean" || key == "xm"
		case "erlang":
			span = i == 1
		case "empirical":
			if key == "scale" {
				x, err := strconv.ParseFloat(val, 64)
				if err != nil {
					return "", err
				}
				val = strconv.FormatFloat(round4(x), 'g', -1, 64)
			}
		}
		if span {
			x, err := spanSeconds(val)
			if err != nil {
				return "", fmt.Errorf("%q: %v", s, err)
			}
			val = fmtSpan(x)
		}
		if named {
			args[i] = key + "=" + val
		} else {
			args[i] = val
		}
	}
	out := fam + "(" + strings.Join(args, ",") + ")"
	if fam == "const" {
		out = args[0]
	}
	if _, err := sim.ParseDist(out, opt); err != nil {
		return "", fmt.Errorf("%q does not parse back: %v", out, err)
	}
	return out, nil
}

// newDist is a new step's demand of mean m seconds: exponential, the
// shape with nothing assumed but the mean.
func newDist(m float64) string {
	if m <= 0 {
		return "0s"
	}
	return "exp(" + fmtSpan(m) + ")"
}

// spanSeconds reads a span as sim's Dist.String writes it: a duration
// ("80ms") or bare seconds.
func spanSeconds(v string) (float64, error) {
	if x, err := strconv.ParseFloat(v, 64); err == nil {
		return x, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, err
	}
	return d.Seconds(), nil
}

// round4 rounds x to four significant digits.
func round4(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}

// fmtSpan writes seconds x, rounded to four significant digits, as a
// duration in the largest unit at or below it ("23.41ms", "1.2s"), the
// way experiment files write them.
func fmtSpan(x float64) string {
	x = round4(x)
	switch {
	case x == 0:
		return "0s"
	case x >= 1:
		return trimFloat(x) + "s"
	case x >= 1e-3:
		return trimFloat(x*1e3) + "ms"
	case x >= 1e-6:
		return trimFloat(x*1e6) + "us"
	}
	return trimFloat(math.Max(1, math.Round(x*1e9))) + "ns"
}

// trimFloat writes x with at most four significant digits and no
// floating-point noise.
func trimFloat(x float64) string {
	return strconv.FormatFloat(round4(x), 'f', -1, 64)
}
