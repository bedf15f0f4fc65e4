package realmode

import (
	"testing"
	"time"

	"github.com/tsim-dev/tsim/model"
)

// One-way operations for real (model/oneway_steps_test.go): the handler
// answers once the request holds a call slot and the operation runs on.
func TestStepOneWayEndsAtAcceptance(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	svc := tier("svc", 8, waitFor(5*time.Second))
	svc.WCF = &model.WCF{MaxCalls: 2, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencySingle, OneWay: true}
	s, r := table(t, "one-way", burst(3, 0, 12*time.Second, svc), "0 0 5", Options{})
	for _, res := range judged(s, r) {
		if tr := res.Tiers[0]; tr.Completed != 3 || tr.OutstandingMax > 2 {
			t.Errorf("service completed %d (want 3: the operations run on), calls outstanding max %v (want ≤ 2)", tr.Completed, tr.OutstandingMax)
		}
	}
}

func TestStepOneWayReleasesASPNetWorker(t *testing.T) {
	t.Parallel() // mostly asleep: two at a time cost the others little
	svc := tier("svc", 8, waitFor(5*time.Second))
	svc.Host = model.HostIISIntegrated
	svc.Admission = model.Admission{Kind: model.AdmitConcurrent, MaxExecuting: 2, QueueLimit: 5000, SyncModule: true}
	svc.WCF = &model.WCF{MaxCalls: 100, MaxSessions: 100, MaxInstances: 100, Instancing: model.PerCall, Concurrency: model.ConcurrencySingle, OneWay: true}
	s, r := table(t, "one-way behind the sync module", burst(4, 0, 8*time.Second, svc), "0 0 0 0", Options{})
	for _, res := range judged(s, r) {
		if tr := res.Tiers[0]; tr.Completed != 4 || tr.ExecutingMax > 2 {
			t.Errorf("completed %d (want 4), executing max %v (want ≤ 2)", tr.Completed, tr.ExecutingMax)
		}
	}
}
