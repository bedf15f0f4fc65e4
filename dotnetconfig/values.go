package dotnetconfig

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// The attribute converters of System.Configuration, as far as the settings
// read here need them. Messages never repeat the value: it is the user's
// file, and a value that does not parse may be anything.

const maxInt32 = math.MaxInt32

// parseInt reads an Int32 attribute (Int32Converter: optional sign,
// surrounding white space).
func parseInt(s string) (int, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, errors.New("not a whole number in the Int32 range")
	}
	return int(v), nil
}

// parseInfiniteInt reads an InfiniteIntConverter attribute: a number or
// "Infinite" (Int32.MaxValue).
func parseInfiniteInt(s string) (int, error) {
	if strings.EqualFold(strings.TrimSpace(s), "Infinite") {
		return maxInt32, nil
	}
	v, err := parseInt(s)
	if err != nil {
		return 0, errors.New(`not a whole number or "Infinite"`)
	}
	return v, nil
}

// parseBool reads a Boolean attribute (Boolean.Parse: "true" or "false",
// any case, surrounding white space).
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errors.New(`neither "true" nor "false"`)
}

// parseSeconds reads a TimeSpanSecondsConverter attribute (httpRuntime
// executionTimeout): a whole number of seconds.
func parseSeconds(s string) (time.Duration, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 || v > maxSeconds {
		return 0, errors.New("not a whole number of seconds")
	}
	return time.Duration(v) * time.Second, nil
}

// maxSeconds keeps durations far from time.Duration's overflow (about 292
// years); anything longer is as good as infinite for a simulation.
const maxSeconds = 100 * 365 * 24 * 3600

// maxTsimDuration is the longest duration the experiment format takes
// (30 days); a longer timeout is written as none.
const maxTsimDuration = 30 * 24 * time.Hour

// infinite stands for TimeSpan.MaxValue ("Infinite").
const infinite = time.Duration(math.MaxInt64)

// parseTimeSpan reads a TimeSpan attribute as TimeSpan.Parse does:
// [-][d.]hh:mm[:ss[.fffffff]], or a whole number of days; with
// allowInfinite also "Infinite" (TimeSpan.MaxValue, WCF's and processModel's
// converters). Negative values are refused: no timeout read here may be.
func parseTimeSpan(s string, allowInfinite bool) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if allowInfinite && strings.EqualFold(s, "Infinite") {
		return infinite, nil
	}
	bad := errors.New(`not a time span such as "00:01:00"`)
	if allowInfinite {
		bad = errors.New(`not a time span such as "00:01:00" or "Infinite"`)
	}
	if s == "" || strings.HasPrefix(s, "-") {
		return 0, bad
	}
	var days int64
	if !strings.Contains(s, ":") {
		d, err := strconv.ParseInt(s, 10, 64)
		if err != nil || d > maxSeconds/86400 {
			return 0, bad
		}
		return time.Duration(d) * 24 * time.Hour, nil
	}
	if i := strings.IndexByte(s, '.'); i >= 0 && i < strings.IndexByte(s, ':') {
		d, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || d > maxSeconds/86400 {
			return 0, bad
		}
		days, s = d, s[i+1:]
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, bad
	}
	field := func(p string, max int64) (int64, bool) {
		if p == "" || len(p) > 2 {
			return 0, false
		}
		v, err := strconv.ParseInt(p, 10, 64)
		return v, err == nil && v >= 0 && v <= max
	}
	h, ok1 := field(parts[0], 23)
	m, ok2 := field(parts[1], 59)
	if !ok1 || !ok2 {
		return 0, bad
	}
	var sec int64
	var frac time.Duration
	if len(parts) == 3 {
		p := parts[2]
		if i := strings.IndexByte(p, '.'); i >= 0 {
			f := p[i+1:]
			if f == "" || len(f) > 7 {
				return 0, bad
			}
			fv, err := strconv.ParseInt(f, 10, 64)
			if err != nil || fv < 0 {
				return 0, bad
			}
			for n := len(f); n < 7; n++ {
				fv *= 10
			}
			frac = time.Duration(fv) * 100 // ticks of 100 ns
			p = p[:i]
		}
		v, ok := field(p, 59)
		if !ok {
			return 0, bad
		}
		sec = v
	}
	total := ((days*24+h)*60+m)*60 + sec
	return time.Duration(total)*time.Second + frac, nil
}

// fmtDuration writes a duration the way the experiment format reads it:
// "20s", "1m0s" becomes "1m", "1h50m"; "none" for no limit.
func fmtDuration(d time.Duration) string {
	if d == infinite {
		return "Infinite"
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
