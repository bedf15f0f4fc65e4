package report

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tsim-dev/tsim/results"
)

// FmtSeconds writes a simulated span for the header line: "300 s", "1.5 s".
func FmtSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + " s"
	}
	return strconv.FormatFloat(s, 'g', 4, 64) + " s"
}

// maxDescription is the most of a description the tables print.
const maxDescription = 400

// Abbreviate shortens s to at most n runes, ending it with "…" when cut.
func Abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// TierLabel names a tier in the tables: a farm's totals as "web ×4".
func TierLabel(x results.Tier) string {
	if x.Replicas > 0 {
		return fmt.Sprintf("%s ×%d", x.Name, x.Replicas)
	}
	return x.Name
}
