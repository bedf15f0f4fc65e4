package simmode

import (
	"testing"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
)

// TestStepTables runs the step tables both executors share
// (modeltest.StepTables): the simulator must give each exactly, to the
// millisecond, and what each table checks besides to the unit.
// (realmode's TestStepTables runs the same tables for real.)
func TestStepTables(t *testing.T) {
	for _, st := range modeltest.StepTables {
		t.Run(st.Name, func(t *testing.T) {
			want, err := modeltest.ParseTable(st.Want)
			if err != nil {
				t.Fatal(err)
			}
			seed := st.Seed
			if seed == 0 {
				seed = 1
			}
			res, err := Run(st.Top(), model.Options{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if got := modeltest.FormatOutcomes(modeltest.Outcomes(res)); got != modeltest.FormatOutcomes(want) {
				t.Errorf("latencies:\n got  %s\n want %s", got, modeltest.FormatOutcomes(want))
			}
			if !res.Requests.Conserved() {
				t.Errorf("requests not conserved: %+v", res.Requests)
			}
			if st.Check != nil {
				for _, m := range st.Check(res, 0) {
					t.Error(m)
				}
			}
		})
	}
}
