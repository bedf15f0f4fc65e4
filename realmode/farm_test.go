package realmode

import (
	"fmt"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
	"github.com/tsim-dev/tsim/results"
)

// Farms for real: each machine of a farm its own listener, the balancer a
// listener of its own deciding with model.ChooseReplica, a PerHost caller
// picking with model.Pick. Their step tables, which both executors run,
// are modeltest's (model/modeltest/farm.go); this is the one farm case
// whose table real mode cannot give.

func TestFarmWithoutSessionAffinity(t *testing.T) {
	t.Parallel()
	// Four calls at t0 on one shared proxy of a sessionful binding into a
	// farm of 2 WCF machines, round robin without affinity: a call sent to
	// the machine without the session fails there and the proxy faults.
	// Which calls still hold the faulted proxy depends on when their
	// goroutines ran, so only the failures are checked (the simulator's
	// table is simmode's TestFarmWithoutSessionAffinity).
	be := tier("be", 8, waitFor(time.Second))
	be.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 200, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple}
	// Each ends 1–2 s (50–100 ms of real time) before the run: judged
	// as a table is (judgeReal).
	top := modeltest.FarmTop(4, 2, model.Balancer{Policy: model.BalanceRoundRobin}, model.Call{Binding: model.Binding{Sessionful: true}}, be, 4*time.Second)
	judgeReal(t, "no affinity", top, Options{Seed: 1, TimeScale: stepScale}, tableStall, func(res *results.Run, _ noise) string {
		if b := res.Balancers[0]; b.Refused < 1 || res.Requests.Failed != b.Refused || res.Requests.Completed+res.Requests.Failed != 4 {
			return fmt.Sprintf("balancer %+v, requests %+v", b, res.Requests)
		}
		return ""
	})
}
