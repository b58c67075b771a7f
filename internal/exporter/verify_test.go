package exporter

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A job with verify: true checks every read of the file the daemon
// filled; sectors corrupted behind its back show in
// ioprobe_io_verify_failures_total (and in the errors by class).
func TestVerifyJobCountsCorruption(t *testing.T) {
	d, dir := newDaemon(t, `
global: {snapshot_interval: 100ms}
targets:
  data: {path: DIR/probe.dat, size: 4MiB}
jobs:
  check:
    target: data
    block_size: 64k
    random_pct: 0
    queue_depth: 2
    verify: true
    duration: 300ms
    ramp: 0s
`, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	reg := d.Registry()
	job := map[string]string{"ioprobe_job": "check", "target": "data"}
	runs := func(t require.TestingT, status string) float64 {
		return value(t, reg, "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "check", "status": status})
	}

	code, body := do(t, http.MethodPost, base+"/api/v1/jobs/check/run")
	require.Equal(t, http.StatusAccepted, code, body)
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, 1.0, runs(c, "ok")) }, runPatience, 50*time.Millisecond)
	require.Equal(t, 0.0, value(t, reg, "ioprobe_io_verify_failures_total", job), "a clean file fails nothing")
	// The run is counted before its job is idle again: asked to run in
	// between, the job would answer 409 (already running).
	require.Eventually(t, func() bool { return d.sched.runner("check").state.Load() == stateIdle }, runPatience, 10*time.Millisecond)

	f, err := os.OpenFile(filepath.Join(dir, "probe.dat"), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 512), 1<<20)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())

	code, body = do(t, http.MethodPost, base+"/api/v1/jobs/check/run")
	require.Equal(t, http.StatusAccepted, code, body)
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, 1.0, runs(c, "errors")) }, runPatience, 50*time.Millisecond)
	failures := value(t, reg, "ioprobe_io_verify_failures_total", job)
	require.GreaterOrEqual(t, failures, 1.0, "the zeroed sector was read at least once")
	require.Equal(t, failures, value(t, reg, "ioprobe_io_errors_total", map[string]string{"ioprobe_job": "check", "op": "read", "error": "verify"}))
}
