package dotnetconfig

import (
	"strings"
	"testing"

	"github.com/tsim-dev/tsim/format"
	"github.com/tsim-dev/tsim/topologies"
)

// TestSettingConfig: the .NET form of the settings tsim explain proposes,
// on the crack story's system.
func TestSettingConfig(t *testing.T) {
	data, err := topologies.Get("crack-throttling")
	if err != nil {
		t.Fatal(err)
	}
	x, err := format.LoadExperiment("crack.toml", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := x.Scenario(0)
	if err != nil {
		t.Fatal(err)
	}
	top := &sc.Topology
	for _, tc := range []struct{ key, value, want string }{
		{"tier.web.calls.maxconnection", "17", `<add address="*" maxconnection="17"/> inside <system.net><connectionManagement> of the application's web.config`},
		{"tier.web.call.service.maxconnection_host", "17", `<add address="http://service" maxconnection="17"/>`},
		{"tier.web.calls.maxconnection_host", "17", `<add address="http://service" maxconnection="17"/>`},
		{"tier.web.step.2.maxconnection_host", "5", `<add address="http://service" maxconnection="5"/>`},
		{"tier.web.calls.connection_limit_code", "17", "System.Net.ServicePointManager.DefaultConnectionLimit = 17;"},
		{"tier.web.worker.max", "1200", `ThreadPool.SetMaxThreads(1200, 800); at start-up`},
		{"tier.web.worker.max", "1200", `<processModel autoConfig="false" maxWorkerThreads="150"/>`},
		{"tier.web.io.min", "16", `ThreadPool.SetMinThreads(8, 16)`},
		{"tier.service.wcf.max_calls", "200", `<serviceThrottling maxConcurrentCalls="200"/>`},
		{"tier.service.wcf.concurrency", "Multiple", "ConcurrencyMode = ConcurrencyMode.Multiple"},
		{"tier.web.step.2.timeout", "1m30s", `sendTimeout="00:01:30"`},
		{"tier.web.admission.queue_limit", "100", `<httpRuntime appRequestQueueLimit="100"/>`},
	} {
		got, ok := SettingConfig(top, tc.key, tc.value)
		if !ok || !strings.Contains(got, tc.want) {
			t.Errorf("%s = %s: %q (%v), want …%s…", tc.key, tc.value, got, ok, tc.want)
		}
	}
	for _, key := range []string{"tier.web.cores", "tier.web.replicas", "tier.nope.worker.max", "tier.web.admission.max_executing"} {
		if got, ok := SettingConfig(top, key, "4"); ok {
			t.Errorf("%s: %q, want no .NET form", key, got)
		}
	}
}
