package format

import "fmt"

// WithBase returns a copy of x whose base system has set applied, in
// order: every variant and sweep point then starts from those values, and
// a variant or sweep that sets the same key still overrides it, as if the
// file had said them itself. Keys and values are those of ScenarioWith.
// tsim fit moves the inputs it searches this way, so that a fitted input
// keeps the variants' own changes around it.
//
// An unknown key or a value of the wrong type is an error naming the key;
// a value that does not resolve in some scenario shows when that scenario
// is built (Scenario, ScenarioWith).
func (x *Experiment) WithBase(set []Param) (*Experiment, error) {
	y := *x
	y.base = x.base.clone()
	p := &loader{files: x.files, sources: x.sources}
	for _, kv := range set {
		a, msg := p.parseAssignment(x.base, kv.Key, ParseValue(kv.Value), pos{})
		if msg != "" {
			return nil, fmt.Errorf("%s", msg)
		}
		apply(y.base, a.addr, a.s)
	}
	return &y, nil
}
