package simmode

import (
	"fmt"
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
	"github.com/tsim-dev/tsim/model/modeltest"
)

// The farms' step tables, which both executors run, are modeltest's
// (model/modeltest/farm.go). This is the one farm table the simulator
// alone gives exactly: real mode gives its outcomes in an order its
// goroutines decide (realmode's TestFarmWithoutSessionAffinity).

func TestFarmWithoutSessionAffinity(t *testing.T) {
	// Four calls at t0 on one shared proxy of a sessionful binding into a
	// farm of 2 WCF machines that wait 1 s, round robin without affinity:
	// the second and fourth are sent to be#2, which does not know the
	// session; they fail at once (and the proxy faults). The first and
	// third, on be#1, complete.
	be := modeltest.Tier("be", 8, modeltest.Wait(time.Second))
	be.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 200, Instancing: model.PerSession, Concurrency: model.ConcurrencyMultiple}
	top := modeltest.FarmTop(4, 2, model.Balancer{Policy: model.BalanceRoundRobin}, model.Call{Binding: model.Binding{Sessionful: true}}, be, 3*time.Second)
	res, err := Run(top, model.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := modeltest.FormatOutcomes(modeltest.Outcomes(res)), "0.000/failed 0.000/failed 1.000 1.000"; got != want {
		t.Errorf("latencies %s, want %s", got, want)
	}
	if b := res.Balancers[0]; fmt.Sprint(b.Sent) != "[2 0]" || b.Refused != 2 {
		t.Errorf("balancer sent %v, refused %d; want [2 0], 2", b.Sent, b.Refused)
	}
}
