package exporter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/runapi"
	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// runAPIConfig has two file targets and no job: a daemon that serves the
// run API only. The files are on one device.
const runAPIConfig = `
global: {snapshot_interval: 100ms}
api:
  runs: {max_duration: 1m, max_ramp: 10s, max_queue_depth: 8, max_workers: 2, max_start_delay: 1m, keep: 3}
targets:
  data: {path: DIR/data.dat, size: 4MiB}
  logs: {path: DIR/logs.dat, size: 4MiB}
`

type accepted = runapi.Accepted

// TestRunAPIStartsTogether posts two runs on two targets for one start
// instant: both prepare first, then start at or after it, and both
// results are ioprobe.result/v1 with I/O.
func TestRunAPIStartsTogether(t *testing.T) {
	devs := map[string]string{"data": testloop.Device(t, 8<<20), "logs": testloop.Device(t, 8<<20)}
	d, _ := newDaemon(t, fmt.Sprintf(`
global: {snapshot_interval: 100ms}
api: {runs: {max_start_delay: 1m}}
targets:
  data: {path: %s}
  logs: {path: %s}
`, devs["data"], devs["logs"]), WebOptions{EnableAdminAPI: true})
	base, stop := start(t, d)

	code, body := postJSON(t, http.MethodGet, base+"/api/v1/clock", nil)
	require.Equal(t, http.StatusOK, code)
	var clk struct {
		UnixNano int64  `json:"unix_nano"`
		Time     string `json:"time"`
	}
	require.NoError(t, json.Unmarshal(body, &clk))
	ct, err := time.Parse(time.RFC3339Nano, clk.Time)
	require.NoError(t, err)
	require.Equal(t, clk.UnixNano, ct.UnixNano(), "the two forms say the same instant")

	require.Equal(t, 0.0, value(t, d.Registry(), "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "api", "status": "ok"}), "the counter exists before the first run")
	at := time.Now().Add(3 * time.Second).UTC()
	ids := map[string]string{}
	for _, tg := range []string{"data", "logs"} {
		code, body := postJSON(t, http.MethodPost, base+"/api/v1/runs", map[string]any{
			"target": tg, "specs": []any{readSpec(100)}, "ramp": "0s", "duration": "500ms",
			"start_at": at.Format(time.RFC3339Nano), "label": "fleet-test"})
		require.Equal(t, http.StatusAccepted, code, string(body))
		var a accepted
		require.NoError(t, json.Unmarshal(body, &a))
		require.Equal(t, result.RunAccepted, a.State)
		require.Equal(t, "/api/v1/runs/"+a.ID, a.URL)
		ids[tg] = a.ID
	}
	for tg, id := range ids {
		st := waitRun(t, base, id)
		require.Equal(t, result.RunDone, st.State, st.Error)
		require.Equal(t, tg, st.Target)
		require.Equal(t, "fleet-test", st.Label)
		require.NotEmpty(t, st.Host.Hostname)
		res := st.Result
		require.NotNil(t, res)
		require.Equal(t, result.Schema, res.Schema)
		require.True(t, res.StartAt.Equal(at), "start_at recorded: %s", res.StartAt)
		require.False(t, res.StartedAt.Before(at), "started %s before %s", res.StartedAt, at)
		require.Positive(t, res.Summary.Ops)
		require.Equal(t, devs[tg], res.Targets[0].Path)
	}
	// A result's workload entry is a spec as it stands: posted back (a
	// dry run), it is the same workload.
	var res *result.Result
	for _, id := range ids {
		res = waitRun(t, base, id).Result
	}
	code, body = postJSON(t, http.MethodPost, base+"/api/v1/runs", map[string]any{"target": "data", "specs": []any{res.Workload}, "dry_run": true})
	require.Equal(t, http.StatusOK, code, string(body))
	var dry struct{ Specs []runapi.SpecOut }
	require.NoError(t, json.Unmarshal(body, &dry))
	got := dry.Specs[0]
	require.Equal(t, res.Workload.EngineRequested, got.Engine, "what was asked, not what ran")
	require.Equal(t, res.Workload.QueueDepth, got.QueueDepth)
	require.Equal(t, res.Workload.BlockSizes[0].Bytes, got.BlockSizes[0].Bytes)
	require.Equal(t, res.Workload.DurationSeconds, got.DurationSeconds)
	require.Equal(t, res.Workload.RampSeconds, got.RampSeconds)

	// The history lists them under the api job, with their label.
	code, body = postJSON(t, http.MethodGet, base+"/api/v1/runs?job=api", nil)
	require.Equal(t, http.StatusOK, code)
	var runs struct{ Runs []Run }
	require.NoError(t, json.Unmarshal(body, &runs))
	require.Len(t, runs.Runs, 2)
	for _, r := range runs.Runs {
		require.Equal(t, "fleet-test", r.Label)
		require.Equal(t, ids[r.Target], r.RunID)
	}
	require.Positive(t, value(t, d.Registry(), "ioprobe_io_operations_total", map[string]string{"ioprobe_job": "api", "target": "data", "op": "read"}))
	require.Equal(t, 2.0, value(t, d.Registry(), "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "api", "status": "ok"}))
	err, _ = stop()
	require.NoError(t, err)
}
