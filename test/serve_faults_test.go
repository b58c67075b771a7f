package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testdeps"
	"github.com/ioprobe/ioprobe/internal/testwait"
)

// The daemon on failing storage: every read of the canary fails with EIO
// (strace's fault injection). A daemon job counts failed I/Os and goes
// on (max_errors 0); each run is recorded as "errors", the error series
// grow, the last-run gauges say success 0, and the daemon keeps serving
// and stops cleanly. It never exits because the storage failed.
func TestServeOnFailingStorage(t *testing.T) {
	testdeps.Need(t, testdeps.Tool("strace"))
	if err := exec.Command("strace", "-o", "/dev/null", "true").Run(); err != nil {
		t.Skipf("strace cannot trace here: %v", err) //hygiene:skip ptrace refused by the machine (a container's seccomp)
	}
	dir := t.TempDir()
	// Prepared by a clean run, so that the faults hit measurement.
	tgt := prepared(t, dir)
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`
global: {snapshot_interval: 200ms}
targets:
  data: {path: `+tgt+`}
jobs:
  canary: {target: data, profile: canary, rate_iops: 200, continuous: true, duration: 1s, engine: sync}
`), 0o644))

	// Go reads files with read(2); only the sync engine's I/O is pread64
	// (io_uring reads are not system calls strace can fail).
	cmd := exec.Command("strace", "-f", "-o", "/dev/null", "-e", "trace=pread64", "-e", "inject=pread64:error=EIO:when=50+",
		binary, "serve", "--config", cfg, "--web.listen-address", "127.0.0.1:0")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	// A group of their own: killing strace alone would leave ioprobe
	// running, detached, with the pipe that Wait waits on.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	var waitErr error
	exited := make(chan struct{})
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("strace ioprobe serve stderr:\n%s", tail(stderr.String(), 30))
		}
	})
	var base string
	require.Eventually(t, func() bool {
		if m := listenRE.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
			return true
		}
		return false
	}, testwait.Patience, 20*time.Millisecond, "ioprobe serve did not listen")

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m := scrape(c, base)
		assert.Greater(c, metric(m, `ioprobe_io_errors_total{error="eio",ioprobe_job="canary",op="read",target="data"}`), 20.0)
		assert.GreaterOrEqual(c, metric(m, `ioprobe_job_runs_total{ioprobe_job="canary",status="errors"}`), 2.0)
	}, testwait.Patience, 100*time.Millisecond, "EIO is counted, run after run")
	m := scrape(t, base)
	require.Positive(t, metric(m, `ioprobe_io_operations_total{ioprobe_job="canary",op="read",target="data"}`), "the reads before the failure were counted")
	require.Regexp(t, `(?m)^ioprobe_run_success\{[^}]*ioprobe_job="canary"[^}]*\} 0$`, m)
	var runs struct{ Runs []struct{ Status string } }
	require.NoError(t, json.Unmarshal([]byte(fetch(t, base+"/api/v1/runs?job=canary&limit=1")), &runs))
	require.Equal(t, "errors", runs.Runs[0].Status)
	require.Equal(t, "Healthy.\n", fetch(t, base+"/-/healthy"))

	// SIGTERM to ioprobe itself (strace's child): it stops and exits 0.
	pid := childOf(t, cmd.Process.Pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	select {
	case <-exited:
		require.NoError(t, waitErr, "exit status 0:\n%s", tail(stderr.String(), 20))
	case <-time.After(testwait.Patience):
		t.Fatal("ioprobe serve on failing storage did not stop on SIGTERM")
	}
	require.Contains(t, stderr.String(), `msg=stopped`)
}
