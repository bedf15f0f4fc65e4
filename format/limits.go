package format

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits on what an experiment may hold. Files get shared, so opening one
// must not exhaust memory or time: each limit is far above what a real
// experiment needs (the largest file in experiments/ is 4 KB, its deepest
// key 4 levels) and well below what would take the loader seconds. The
// command line enforces the same ones on its flags.
const (
	// MaxExperimentBytes bounds an experiment file, and a topology file
	// given as a path. BurntSushi/toml decodes tsim's files at a few MB/s,
	// so a file this size decodes in well under a second.
	MaxExperimentBytes = 1 << 20
	// MaxDataBytes bounds one data file an experiment names
	// (empirical(FILE)): several million samples.
	MaxDataBytes = 64 << 20
	// MaxTotalBytes bounds all the files one experiment reads through
	// ReadFile together, so that a file naming many data files cannot
	// exhaust memory either. The samples parsed from them take at most 4
	// times as much (8 bytes for a sample of 2, "0\n").
	MaxTotalBytes = 128 << 20
	// MaxDepth bounds TOML nesting: tables, arrays, and every part of a
	// dotted key or table header count a level ([[tier.step]] is 2,
	// retry.backoff inside it 4).
	MaxDepth = 32
	// MaxKeys bounds the keys and table headers of one TOML file (a
	// schedule of the largest allowed size, 10,000 points, holds 20,000).
	MaxKeys = 50_000
	// MaxNameLen bounds names: of the experiment, its tiers, variants and
	// locks, in characters.
	MaxNameLen = 64
	// MaxDescriptionLen bounds a description (of the experiment or a
	// variant), in bytes. Callers that print one on a line may shorten it
	// further with Abbreviate.
	MaxDescriptionLen = 8 << 10

	// MaxReplications bounds replications (the file's and --reps).
	MaxReplications = 10_000
	// MaxDuration bounds duration and every other span setting.
	MaxDuration = 30 * 24 * time.Hour
	// MaxUsers bounds load.users and users_schedule values.
	MaxUsers = 1_000_000
	// MaxRate bounds load.rate and rate_schedule values, in requests/s.
	MaxRate = 1e6
	// MaxScenarios bounds variants × sweep points.
	MaxScenarios = 1_000_000
	// MaxTiers, MaxSteps (per tier), MaxVariants and MaxSweepValues (per
	// axis) bound the parts of an experiment.
	MaxTiers       = 1000
	MaxSteps       = 1000
	MaxVariants    = 10_000
	MaxSweepValues = 10_000
	// MaxReplicas bounds a farm's replicas and the load's agents, and
	// MaxMachines all the machines of a scenario (tiers, replicas of
	// farms, load agents).
	MaxReplicas = 1024
	MaxMachines = 4096
)

// Seeds: the file and the command line take every uint64, 0 included. A
// TOML integer stops at 2⁶³−1, so a larger seed is written as a string
// (seed = "18446744073709551615").
const (
	MinSeed uint64 = 0
	MaxSeed uint64 = math.MaxUint64
)

// CheckReplications says whether n replications are allowed, in the
// file's words ("must be ..."), for a flag such as --reps.
func CheckReplications(n int) error {
	if n < 1 || n > MaxReplications {
		return fmt.Errorf("must be between 1 and %d, got %d", MaxReplications, n)
	}
	return nil
}

// CheckDuration says whether d is an allowed run duration, for a flag such
// as --duration.
func CheckDuration(d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("must be > 0, got %v", d)
	}
	if d > MaxDuration {
		return fmt.Errorf("must be ≤ %s (more is not a plausible setting), got %v", fmtDur(MaxDuration), d)
	}
	return nil
}

// ParseSeed reads a seed as the command line and a seed string in the file
// write it: a decimal integer from MinSeed to MaxSeed.
func ParseSeed(s string) (uint64, error) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		if len(s) > 0 && s[0] == '-' {
			return 0, fmt.Errorf("must be ≥ 0, got %s", abbreviateRunes(s, 40))
		}
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("must be ≤ %d, got %s", MaxSeed, abbreviateRunes(s, 40))
		}
		return 0, fmt.Errorf("want a whole number from 0 to %d, got %s", MaxSeed, quote(s))
	}
	return n, nil
}

// FormatBytes writes a size for messages: "812 bytes", "41 KiB",
// "41.2 MiB". A fraction is rounded up, so that a size above a limit never
// reads as the limit (1 MiB and a byte is "1.1 MiB").
func FormatBytes(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " bytes"
	case n < 1<<20:
		return fmtUnit(float64(n)/(1<<10), "KiB")
	case n < 1<<30:
		return fmtUnit(float64(n)/(1<<20), "MiB")
	}
	return fmtUnit(float64(n)/(1<<30), "GiB")
}

func fmtUnit(x float64, unit string) string {
	if x == math.Trunc(x) || x >= 100 {
		return strconv.FormatFloat(math.Ceil(x), 'f', 0, 64) + " " + unit
	}
	return strconv.FormatFloat(math.Ceil(x*10)/10, 'f', 1, 64) + " " + unit
}

// Abbreviate shortens s for one line of output: runs of white space
// (newlines included) become one space, control characters are dropped,
// and the result is cut to at most max runes, ending in "…" when cut.
func Abbreviate(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			space = b.Len() > 0
			continue
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return abbreviateRunes(b.String(), max)
}

// abbreviateRunes cuts s to at most max runes, the last one "…" when cut.
func abbreviateRunes(s string, max int) string {
	if max < 1 {
		return ""
	}
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// quote quotes a string of the user's for a message, cut to 64 runes so a
// megabyte string cannot make a megabyte message.
func quote(s string) string {
	if len(s) <= 64 {
		return strconv.Quote(s)
	}
	return strconv.Quote(abbreviateRunes(s, 64)) + fmt.Sprintf(" (%d bytes)", len(s))
}

// checkLabel checks a name (max runes) or a description (multiline, max
// bytes): valid UTF-8 and no control characters (a description may hold
// newlines and tabs), since both end up on terminals. It returns a
// message, or "".
func checkLabel(s string, max int, multiline bool) string {
	if multiline && len(s) > max {
		return fmt.Sprintf("is %s long; at most %s", lengthOf(s), lengthLimit(max))
	}
	if n := utf8.RuneCountInString(s); !multiline && n > max {
		return fmt.Sprintf("is %d characters long; at most %d", n, max)
	}
	for i, r := range s {
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return "is not valid UTF-8"
		}
		if multiline && (r == '\n' || r == '\t' || r == '\r') {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Sprintf("holds the control character %U at byte %d; names and descriptions are plain text", r, i)
		}
	}
	return ""
}

func lengthOf(s string) string {
	if len(s) < 1<<10 {
		return strconv.Itoa(len(s)) + " bytes"
	}
	return FormatBytes(int64(len(s)))
}

func lengthLimit(max int) string {
	if max < 1<<10 {
		return strconv.Itoa(max) + " bytes"
	}
	return FormatBytes(int64(max))
}

// sizeMessage says that a file is too large.
func sizeMessage(n int64, what string, max int64) string {
	return fmt.Sprintf("file is %s; %s may be at most %s", FormatBytes(n), what, FormatBytes(max))
}
