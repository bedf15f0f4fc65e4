package format

import (
	"strings"
	"testing"
	"time"
)

func TestWCFInstanceCosts(t *testing.T) {
	topo := loadTopo(t, `[load]
users = 1
[[tier]]
name = "a"
preset = "self-net35"
wcf.instancing = "Single"
wcf.instance_cpu = "50us"
wcf.single_lock_cpu = "10us"
[[tier]]
name = "b"
preset = "self-net35"
`)
	if w := topo.Tiers[0].WCF; w.InstanceCPU != 50*time.Microsecond || w.SingleLockCPU != 10*time.Microsecond {
		t.Errorf("a: instance_cpu %v, single_lock_cpu %v; want 50µs, 10µs", w.InstanceCPU, w.SingleLockCPU)
	}
	if w := topo.Tiers[1].WCF; w.InstanceCPU != 0 || w.SingleLockCPU != 0 {
		t.Errorf("b: instance_cpu %v, single_lock_cpu %v; want the defaults, 0", w.InstanceCPU, w.SingleLockCPU)
	}
	_, err := LoadExperiment("crack.toml", []byte(mut(`preset = "self-net35"`, `preset = "self-net35"
wcf.instance_cpu = "2s"`)), nil)
	if err == nil || !strings.Contains(err.Error(), "crack.toml:22: tier.be.wcf.instance_cpu: must be ≤ 1s") {
		t.Errorf("instance_cpu = 2s: error %v, want one at crack.toml:22 naming tier.be.wcf.instance_cpu", err)
	}
}

func TestWCFOneWay(t *testing.T) {
	topo := loadTopo(t, `[load]
users = 1
[[tier]]
name = "a"
preset = "self-net35"
wcf.one_way = true
[[tier]]
name = "b"
preset = "self-net35"
`)
	if !topo.Tiers[0].OneWay() || topo.Tiers[1].OneWay() {
		t.Errorf("one_way: a %v (want true), b %v (want false, the default)", topo.Tiers[0].OneWay(), topo.Tiers[1].OneWay())
	}
	_, err := LoadExperiment("crack.toml", []byte(mut(`preset = "self-net35"`, `preset = "self-net35"
wcf.one_way = "yes"`)), nil)
	if err == nil || !strings.Contains(err.Error(), "crack.toml:22: tier.be.wcf.one_way") {
		t.Errorf("one_way = \"yes\": error %v, want one at crack.toml:22 naming tier.be.wcf.one_way", err)
	}
}
