package results

import "strings"

// How the tables, pictures and pages name what a sweep varies.

// ShortKey is the last part of a key path: "maxconnection" for
// "tier.fe.calls.maxconnection".
func ShortKey(k string) string {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		return k[i+1:]
	}
	return k
}

// Label names a scenario in a legend: its variant, and its sweep values
// when there is a sweep ("misconfigured, maxconnection=4").
func (sc *Scenario) Label() string { return paramsLabel(sc.Variant, sc.Params) }

// SweepLine is the scenarios of one variant and one combination of the
// other axes' values, along a sweep's first axis.
type SweepLine struct {
	// Label is the variant and the other axes' values
	// ("misconfigured, users=200").
	Label     string
	Scenarios []*Scenario
}

// SweepLines groups done (scenarios of a sweep, in order) into lines,
// in the order their first scenario comes.
func SweepLines(done []*Scenario) []*SweepLine {
	var lines []*SweepLine
	for _, sc := range done {
		l := paramsLabel(sc.Variant, sc.Params[1:])
		var ln *SweepLine
		for _, x := range lines {
			if x.Label == l {
				ln = x
			}
		}
		if ln == nil {
			ln = &SweepLine{Label: l}
			lines = append(lines, ln)
		}
		ln.Scenarios = append(ln.Scenarios, sc)
	}
	return lines
}

func paramsLabel(variant string, params []Param) string {
	parts := []string{variant}
	for _, kv := range params {
		parts = append(parts, ShortKey(kv.Key)+"="+kv.Value)
	}
	return strings.Join(parts, ", ")
}
