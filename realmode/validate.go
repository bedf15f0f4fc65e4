package realmode

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tsim-dev/tsim/results"
)

// Validation is one topology run simulated and for real with the same
// seed, and their comparison.
type Validation struct {
	Sim, Real *results.Run
	Info      Info
	Report    Report
}

// ParseTolerances reads tsim validate's --tolerance list, NAME=VALUE
// pairs such as "mean=5%,timeouts=1pp", on top of DefaultTolerances.
func ParseTolerances(s string) (Tolerances, error) {
	tol := DefaultTolerances
	if strings.TrimSpace(s) == "" {
		return tol, nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return tol, fmt.Errorf("%q: want NAME=VALUE", kv)
		}
		name = strings.TrimSpace(name)
		val = strings.TrimSpace(val)
		num := func(suffix string, scale float64) (float64, error) {
			v := strings.TrimSuffix(val, suffix)
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 {
				return 0, fmt.Errorf("%s: bad value %q", name, val)
			}
			if v != val {
				f *= scale
			}
			return f, nil
		}
		var err error
		switch name {
		case "throughput":
			tol.Throughput, err = num("%", 0.01)
		case "mean":
			tol.Mean, err = num("%", 0.01)
		case "p50":
			tol.P50, err = num("%", 0.01)
		case "p99":
			tol.P99, err = num("%", 0.01)
		case "level":
			tol.Level, err = num("%", 0.01)
		case "level_abs":
			tol.LevelAbs, err = num("", 1)
		case "timeouts":
			tol.TimeoutRatePP, err = num("pp", 1)
		case "first_timeout":
			tol.FirstTimeoutFrac, err = num("%", 0.01)
		default:
			return tol, fmt.Errorf("unknown tolerance %q (allowed: throughput, mean, p50, p99, level, level_abs, timeouts, first_timeout)", name)
		}
		if err != nil {
			return tol, err
		}
	}
	return tol, nil
}
