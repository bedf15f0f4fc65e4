package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Axis is one searched key and the values it may take.
type Axis struct {
	Key string
	// Ints is true for an integer range Lo..Hi, which can be bisected.
	Ints   bool
	Lo, Hi int
	// Values are the values of a grid, as written, and Nums their numeric
	// values for ordering (their position for values that are not
	// numbers). A range's grid is LO, the powers of two between and HI
	// (every integer if the range holds at most 16).
	Values []string
	Nums   []float64

	seen map[string]bool // while parsing: the values added
}

// monotoneKeys end the key paths of capacity settings: more of them never
// makes a goal harder to meet, so the goal can be bisected on them.
var monotoneKeys = []string{
	".maxconnection", ".maxconnection_host", ".connection_limit_code", ".max_conns_per_host",
	".max_connections", ".pool_size", ".proxy_pool_size", ".worker.max", ".io.max", ".cores",
	".wcf.max_calls", ".wcf.max_sessions", ".wcf.max_instances", ".admission.max_executing", ".admission.max_per_cpu",
	".replicas", "load.agents", // machines of a farm, load agents
}

// Monotone reports whether the axis is a capacity setting — a connection
// limit, a thread pool's max, cores, a WCF throttle or an admission limit
// — for which more never makes a goal harder to meet.
func (a *Axis) Monotone() bool {
	for _, s := range monotoneKeys {
		if strings.HasSuffix(a.Key, s) {
			return true
		}
	}
	return false
}

// CanBisect reports whether axes can be bisected: one integer range.
func CanBisect(axes []*Axis) bool { return len(axes) == 1 && axes[0].Ints }

// ParseVary reads a searched key: KEY=LO..HI, a range of integers
// ("1..128"), durations ("1s..30s") or positive numbers, or KEY=a,b,c, the
// values to try. Its errors name the key, for the caller to prefix with
// where it came from.
func ParseVary(s string) (*Axis, error) {
	key, spec, ok := strings.Cut(s, "=")
	key, spec = strings.TrimSpace(key), strings.TrimSpace(spec)
	if !ok || key == "" || spec == "" {
		return nil, fmt.Errorf("%s: want KEY=LO..HI or KEY=a,b,c", excerpt(s))
	}
	a := &Axis{Key: key, seen: map[string]bool{}}
	defer func() { a.seen = nil }()
	if lo, hi, isRange := strings.Cut(spec, ".."); isRange {
		li, err1 := strconv.Atoi(lo)
		hj, err2 := strconv.Atoi(hi)
		if err1 == nil && err2 == nil {
			if hj < li {
				return nil, fmt.Errorf("%s: %d..%d is empty", key, li, hj)
			}
			a.Ints, a.Lo, a.Hi = true, li, hj
			if hj-li+1 <= 16 {
				for v := li; v <= hj; v++ {
					a.add(strconv.Itoa(v), float64(v))
				}
			} else {
				a.add(strconv.Itoa(li), float64(li))
				for p := 1; p < hj; p *= 2 {
					if p > li {
						a.add(strconv.Itoa(p), float64(p))
					}
				}
				a.add(strconv.Itoa(hj), float64(hj))
			}
			return a, nil
		}
		dl, err1 := time.ParseDuration(lo)
		dh, err2 := time.ParseDuration(hi)
		if err1 == nil && err2 == nil {
			if dh < dl || dl <= 0 {
				return nil, fmt.Errorf("%s: want 0 < LO ≤ HI, got %s", key, excerpt(spec))
			}
			for d := dl; d < dh; d *= 2 {
				a.add(d.String(), d.Seconds())
			}
			a.add(dh.String(), dh.Seconds())
			return a, nil
		}
		fl, err1 := strconv.ParseFloat(lo, 64)
		fh, err2 := strconv.ParseFloat(hi, 64)
		if err1 != nil || err2 != nil || fh < fl || fl <= 0 || math.IsInf(fh, 0) {
			return nil, fmt.Errorf("%s: want a range of integers (1..128), durations (1s..30s) or positive numbers, got %s", key, excerpt(spec))
		}
		for f := fl; f < fh; f *= 2 {
			a.add(strconv.FormatFloat(f, 'g', -1, 64), f)
		}
		a.add(strconv.FormatFloat(fh, 'g', -1, 64), fh)
		return a, nil
	}
	numeric := true
	var nums []float64
	vals := strings.Split(spec, ",")
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			nums = append(nums, f)
		} else if d, err := time.ParseDuration(v); err == nil {
			nums = append(nums, d.Seconds())
		} else {
			numeric = false
		}
	}
	for i, v := range vals {
		x := float64(i)
		if numeric {
			x = nums[i]
		}
		a.add(strings.TrimSpace(v), x)
	}
	return a, nil
}

func (a *Axis) add(v string, x float64) {
	if a.seen[v] {
		return
	}
	a.seen[v] = true
	a.Values = append(a.Values, v)
	a.Nums = append(a.Nums, x)
}

// Numeric reports whether the axis's values are numbers (or durations),
// so that they can be drawn on a numeric axis.
func (a *Axis) Numeric() bool {
	for i, v := range a.Values {
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			continue
		}
		if d, err := time.ParseDuration(v); err == nil && d.Seconds() == a.Nums[i] {
			continue
		}
		return false
	}
	return true
}
