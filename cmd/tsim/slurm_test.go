package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSlurmJobArray runs a sweep's shards as a Slurm job array on a
// single-node cluster it starts on 127.0.0.1 — munged, slurmctld and
// slurmd with a minimal slurm.conf in a temporary directory, from
// Debian's slurm-wlm and munge (.ci/slurm-install installs them) — then
// merges the shards with tsim merge and compares every file, byte for
// byte, with the unsharded run. It stops the daemons it started. Where
// Slurm is not installed, or cannot start here, it skips and says why.
// docs/scaling.md has the recipe it runs.
func TestSlurmJobArray(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Slurm cluster and builds tsim (-short)")
	}
	for _, p := range []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "sinfo"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("Slurm is not installed (no %s; .ci/slurm-install installs Debian's slurm-wlm and munge)", p)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("slurmd runs jobs as their user only when it runs as root; not root here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for _, d := range []string{"munge", "state", "spool"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}

	// tsim itself, for the jobs.
	bin := filepath.Join(dir, "tsim")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// munge: a key and a daemon of our own.
	key, sock := filepath.Join(dir, "munge", "munge.key"), filepath.Join(dir, "munge", "munge.socket")
	if out, err := exec.CommandContext(ctx, "mungekey", "-c", "-k", key).CombinedOutput(); err != nil {
		t.Skipf("mungekey: %v: %s", err, out)
	}
	start(t, dir, "munged", "munged", "-F", "-f", "--key-file="+key, "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munge", "munged.pid"), "--log-file="+filepath.Join(dir, "munge", "munged.log"),
		"--seed-file="+filepath.Join(dir, "munge", "munged.seed"))
	if !waitFor(5*time.Second, func() bool { _, err := os.Stat(sock); return err == nil }) {
		t.Skipf("munged did not start: %s", tail(filepath.Join(dir, "munge", "munged.log")))
	}

	// Slurm: one node, on loopback, on ports of our own.
	host, _ := os.Hostname()
	host, _, _ = strings.Cut(host, ".")
	conf := filepath.Join(dir, "slurm.conf")
	ports := freePorts(t, 2)
	slurmConf := fmt.Sprintf(`ClusterName=tsimtest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[5]s
CredType=cred/munge
StateSaveLocation=%[2]s/state
SlurmdSpoolDir=%[2]s/spool
SlurmctldPidFile=%[2]s/slurmctld.pid
SlurmdPidFile=%[2]s/slurmd.pid
SlurmctldLogFile=%[2]s/slurmctld.log
SlurmdLogFile=%[2]s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=tsimnode NodeHostname=%[1]s NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=tsim Nodes=tsimnode Default=YES MaxTime=INFINITE State=UP
`, host, dir, ports[0], ports[1], sock)
	if err := os.WriteFile(conf, []byte(slurmConf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", conf)
	start(t, dir, "slurmctld", "slurmctld", "-D", "-c", "-i", "-f", conf)
	start(t, dir, "slurmd", "slurmd", "-D", "-f", conf, "-N", "tsimnode")
	if !waitFor(60*time.Second, func() bool {
		out, _ := exec.CommandContext(ctx, "sinfo", "-h", "-o", "%T").Output()
		return strings.TrimSpace(string(out)) == "idle"
	}) {
		t.Skipf("Slurm did not start on 127.0.0.1 within a minute:\nslurmctld: %s\nslurmd: %s", tail(filepath.Join(dir, "slurmctld.log")), tail(filepath.Join(dir, "slurmd.log")))
	}

	// The sweep: unsharded, then three shards as a job array, merged.
	exp := filepath.Join(dir, "sweep.toml")
	if err := os.WriteFile(exp, []byte(sweep), 0o644); err != nil {
		t.Fatal(err)
	}
	whole, shards, merged := filepath.Join(dir, "whole"), filepath.Join(dir, "shards"), filepath.Join(dir, "merged")
	if out, err := exec.CommandContext(ctx, bin, "run", exp, "-o", whole, "--quiet").CombinedOutput(); err != nil {
		t.Fatalf("unsharded run: %v\n%s", err, out)
	}
	const n = 3
	script := fmt.Sprintf("#!/bin/sh\nexec %s run %s --shard \"$SLURM_ARRAY_TASK_ID/%d\" -o %s --quiet\n", bin, exp, n, shards)
	job := filepath.Join(dir, "shard.sh")
	if err := os.WriteFile(job, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	sb := exec.CommandContext(ctx, "sbatch", "--wait", fmt.Sprintf("--array=0-%d", n-1), "--job-name=tsim-sweep",
		"--output="+filepath.Join(dir, "slurm-%A_%a.out"), "--chdir="+dir, job)
	if out, err := sb.CombinedOutput(); err != nil {
		logs, _ := filepath.Glob(filepath.Join(dir, "slurm-*.out"))
		var b strings.Builder
		for _, l := range logs {
			b.WriteString(l + ": " + tail(l) + "\n")
		}
		t.Fatalf("sbatch --wait: %v\n%s\n%s\nslurmctld: %s", err, out, b.String(), tail(filepath.Join(dir, "slurmctld.log")))
	}
	for i := 0; i < n; i++ {
		if _, err := os.Stat(filepath.Join(shards, "sweep", fmt.Sprintf("shard-%d-of-%d", i, n), "shard.json")); err != nil {
			t.Errorf("array task %d: %v", i, err)
		}
	}
	if out, err := exec.CommandContext(ctx, bin, "merge", "-o", merged, "--quiet", shards).CombinedOutput(); err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	names := listDir(t, filepath.Join(whole, "sweep"))
	if got := listDir(t, filepath.Join(merged, "sweep")); strings.Join(got, " ") != strings.Join(names, " ") {
		t.Fatalf("merged files %v, unsharded %v", got, names)
	}
	for _, name := range names {
		if !bytes.Equal(readFile(t, filepath.Join(whole, "sweep", name)), readFile(t, filepath.Join(merged, "sweep", name))) {
			t.Errorf("%s differs between the unsharded run and the job array's merged shards", name)
		}
	}
	t.Logf("a job array of %d shards on Slurm (%s), merged: %d files byte-identical to the unsharded run", n, slurmVersion(ctx), len(names))
}

// start runs a daemon in the foreground of a process of its own; the
// test's cleanup stops it (SIGTERM, then SIGKILL after 10 s) and waits.
func start(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	out, err := os.Create(filepath.Join(dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		out.Close()
		t.Skipf("%s did not start: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); out.Close(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
}

func waitFor(d time.Duration, ok func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return false
}

// freePorts finds n ports free on 127.0.0.1.
func freePorts(t *testing.T, n int) []int {
	var out []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Skipf("no port on 127.0.0.1: %v", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return out
}

// tail is the last lines of a log, for a message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-6):], "\n")
}

func slurmVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "sinfo", "-V").Output()
	if err != nil {
		return "version unknown"
	}
	return strings.TrimSpace(string(out))
}
