package realmode

import (
	"testing"

	"github.com/tsim-dev/tsim/model/modeltest"
)

// The contention mechanisms' step tables (model/modeltest/contention.go)
// for real: the simulator exactly, the real executor within its
// resolution (table). A table whose every real run was disturbed is
// skipped, saying so: it cannot judge.
func TestStepContention(t *testing.T) {
	for _, c := range modeltest.ContentionTables() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel() // mostly asleep: several at a time cost the others little
			opt := Options{}
			if c.CPU {
				opt.CPU = CPUSharing
			}
			s, r := table(t, c.Name, c.Top, c.Want, opt)
			if r == nil {
				t.Skip("every real run was disturbed (see the log): the real executor was not judged")
			}
			if st, rt := s.Tiers[0], r.Tiers[0]; st.Gen0Collections != rt.Gen0Collections || st.OutOfMemory != rt.OutOfMemory {
				t.Errorf("collections %d, out_of_memory %d; the simulator's %d, %d", rt.Gen0Collections, rt.OutOfMemory, st.Gen0Collections, st.OutOfMemory)
			}
		})
	}
}
