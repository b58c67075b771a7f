package exporter

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/suiterun"
	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// TestPeakIOPSMeasuresEachSpecificationOnce: of peak-iops' 15 points on
// one target, two repeat an earlier point's specification under the same
// last-run series; the daemon runs 13.
func TestPeakIOPSMeasuresEachSpecificationOnce(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := loadConfig(t, dir, `
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  peak:
    target: data
    suite: peak-iops
    every: 1h
`, config.Options{})
	pts := cfg.Jobs["peak"].Points
	require.Len(t, pts, 15)
	var again []string
	for i, j := range suiterun.SameAs(jobUnits(cfg.Jobs["peak"])) {
		if j >= 0 {
			again = append(again, pts[i].Name)
		}
	}
	require.Equal(t, []string{"workers-8k-qd32-w1", "targets-8k-qd16-t1"}, again)
}

// TestRepeatedPointPublishedUnderItsOwnLabel: a suite job whose second
// point runs the first one's specification under another name is measured
// once, and the measurement is published under both points' last-run
// series.
func TestRepeatedPointPublishedUnderItsOwnLabel(t *testing.T) {
	suites := func(string) ([]config.Point, error) {
		rr, _ := workload.LookupPreset("random-read")
		return []config.Point{{Name: "first", Specs: []workload.Spec{rr.Spec}}, {Name: "again", Specs: []workload.Spec{rr.Spec}}}, nil
	}
	d, _ := newDaemonFor(t, `
global: {snapshot_interval: 100ms}
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  twice: {target: data, suite: twice, duration: 200ms, ramp: 0s}
`, config.Options{Suites: suites}, WebOptions{EnableAdminAPI: true})
	require.Equal(t, []int{-1, 0}, suiterun.SameAs(jobUnits(d.Config().Jobs["twice"])))
	base, _ := start(t, d)
	reg := d.Registry()
	code, body := do(t, http.MethodPost, base+"/api/v1/jobs/twice/run")
	require.Equal(t, http.StatusAccepted, code, body)
	point := func(name string) map[string]string {
		return map[string]string{"ioprobe_job": "twice", "workload": name, "block_size_bytes": "4096", "random_pct": "100", "queue_depth": "16"}
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, 1.0, value(c, reg, "ioprobe_run_success", point("again"))) }, testwait.Patience, 20*time.Millisecond)
	require.Equal(t, 1.0, value(t, reg, "ioprobe_run_success", point("first")))
	require.Equal(t, value(t, reg, "ioprobe_run_operations_per_second", point("first")), value(t, reg, "ioprobe_run_operations_per_second", point("again")))
	require.Equal(t, 1.0, value(t, reg, "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "twice", "status": "ok"}), "measured once")
}
