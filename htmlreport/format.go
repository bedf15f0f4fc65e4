package htmlreport

import (
	"math"
	"strconv"
)

// The numbers of the page's tables are written as tsim run's tables write
// them (results' Fmt functions); what only the pages write is here.

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }

// fmtSeconds writes a simulated span: "300 s", "1.5 s".
func fmtSeconds(s float64) string {
	if s == math.Trunc(s) {
		return strconv.FormatFloat(s, 'f', 0, 64) + " s"
	}
	return strconv.FormatFloat(s, 'g', 4, 64) + " s"
}
