package results

import "fmt"

// UnstableOf is the outcome of a scenario's replications that stopped
// unstable (Run.Unstable): the first one's, followed by how many of all
// when there are several; "" when none did.
func UnstableOf(runs []*Run) string {
	first, n := "", 0
	for _, r := range runs {
		if r.Unstable != "" {
			if n == 0 {
				first = r.Unstable
			}
			n++
		}
	}
	if n == 0 || len(runs) == 1 {
		return first
	}
	return fmt.Sprintf("%s (%d of %d replications)", first, n, len(runs))
}
