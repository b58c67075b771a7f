package exporter

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// A suite whose first point is refused (another run writes to the file,
// and a --verify point cannot share it) while its other points run has
// run: the refused point is counted as failed, and the scheduler neither
// reports a failed start nor tries the suite again, which would measure
// the other points twice (testinfra's Prometheus aggregate failure: the
// business suite ran again, and its gauges changed under the comparison).
func TestSuiteWithARefusedPointIsNotRunAgain(t *testing.T) {
	suites := func(string) ([]config.Point, error) {
		rw, _ := workload.LookupPreset("random-write")
		rr, _ := workload.LookupPreset("random-read")
		verify := rw.Spec
		verify.Verify = true
		return []config.Point{
			{Name: "verified-writes", Specs: []workload.Spec{verify}},
			{Name: "reads", Specs: []workload.Spec{rr.Spec}},
		}, nil
	}
	d, dir := newDaemonFor(t, `
global: {snapshot_interval: 100ms}
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  suite:
    target: data
    suite: two
    duration: 200ms
    ramp: 0s
    every: 1h
`, config.Options{Suites: suites}, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	reg := d.Registry()
	runs := func(t require.TestingT, status string) float64 {
		return value(t, reg, "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "suite", "status": status})
	}
	r := d.sched.runner("suite")
	idleAfter := func(ok float64) {
		t.Helper()
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			assert.Equal(c, ok, runs(c, "ok"))
			assert.Equal(c, stateIdle, r.state.Load())
		}, runPatience, 20*time.Millisecond)
	}
	idleAfter(2) // the scheduled start: both points

	// Another writer, as a plain write run holds it.
	f, err := os.OpenFile(filepath.Join(dir, "probe.dat"), os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB))

	code, body := do(t, http.MethodPost, base+"/api/v1/jobs/suite/run")
	require.Equal(t, http.StatusAccepted, code, body)
	idleAfter(3)
	require.Equal(t, 1.0, runs(t, "failed"), "the refused point")
	require.Zero(t, r.fail.get().streak, "the run started: no streak of failed starts")
	require.Equal(t, 0.0, value(t, reg, "ioprobe_job_consecutive_failures", map[string]string{"ioprobe_job": "suite"}))
	require.Equal(t, 0.0, value(t, reg, "ioprobe_job_next_attempt_timestamp_seconds", map[string]string{"ioprobe_job": "suite"}), "no retry planned")
}
