package exporter

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// postRun posts a run and returns its id.
func postRun(t *testing.T, base string, req map[string]any) string {
	t.Helper()
	code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", req)
	require.Equal(t, http.StatusAccepted, code, string(b))
	var a accepted
	require.NoError(t, json.Unmarshal(b, &a))
	return a.ID
}

// waitState polls a run until it is in state.
func waitState(t *testing.T, base, id string, state result.RunState) {
	t.Helper()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, b := postJSON(c, http.MethodGet, base+"/api/v1/runs/"+id, nil)
		var st RunState
		require.NoError(c, json.Unmarshal(b, &st))
		assert.Equal(c, state, st.State)
	}, 30*time.Second, 20*time.Millisecond, "run %s %s", id, state)
}

// aheadBody is a read run that waits a minute for its start.
func aheadBody(target string) map[string]any {
	return body(target, func(r map[string]any) { r["start_at"] = time.Now().Add(time.Minute).UTC().Format(time.RFC3339Nano) })
}

// TestRunAPIHoldsTheDevice: from its acceptance, an API run keeps the
// device's canary paused (naming the run) and an on-demand job waiting;
// once it is stopped, both go on.
func TestRunAPIHoldsTheDevice(t *testing.T) {
	d, _ := newDaemon(t, canaryConfig, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	reg := d.Registry()
	canary := map[string]string{"ioprobe_job": "canary", "target": "data", "op": "read"}
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Positive(c, value(c, reg, "ioprobe_io_operations_total", canary)) }, 30*time.Second, 20*time.Millisecond)

	id := postRun(t, base, aheadBody("data"))
	waitState(t, base, id, result.RunWaiting)
	require.Equal(t, 1.0, value(t, reg, "ioprobe_canary_paused", map[string]string{"ioprobe_job": "canary"}))
	code, b := postJSON(t, http.MethodPost, base+"/api/v1/jobs/adhoc/run", nil)
	require.Equal(t, http.StatusAccepted, code, string(b))
	jobs := func(t require.TestingT) map[string]JobInfo {
		_, b := postJSON(t, http.MethodGet, base+"/api/v1/jobs", nil)
		var js struct{ Jobs []JobInfo }
		require.NoError(t, json.Unmarshal(b, &js))
		out := map[string]JobInfo{}
		for _, j := range js.Jobs {
			out[j.Name] = j
		}
		return out
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, "waiting", jobs(c)["adhoc"].State) }, testwait.Patience, 20*time.Millisecond)
	js := jobs(t)
	require.Equal(t, "paused", js["canary"].State)
	require.Contains(t, js["canary"].PausedBy, "API run "+id)
	paused := value(t, reg, "ioprobe_io_operations_total", canary)

	code, _ = postJSON(t, http.MethodDelete, base+"/api/v1/runs/"+id, nil)
	require.Equal(t, http.StatusOK, code)
	ok := map[string]string{"ioprobe_job": "adhoc", "status": string(result.StatusOK)}
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, 1.0, value(c, reg, "ioprobe_job_runs_total", ok)) }, 30*time.Second, 20*time.Millisecond, "the job ran once the device was free")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Greater(c, value(c, reg, "ioprobe_io_operations_total", canary), paused)
	}, 30*time.Second, 20*time.Millisecond, "the canary resumed")
}

// TestRunAPIShutdown: stopping the daemon stops its API runs: a running
// one keeps its partial result, a waiting one measured nothing; both are
// in the history and their devices are free.
func TestRunAPIShutdown(t *testing.T) {
	dev := testloop.Device(t, 8<<20)
	d, dir := newDaemon(t, runAPIConfig+"  raw: {path: "+dev+"}\n", WebOptions{EnableAdminAPI: true})
	base, stop := start(t, d)
	running := postRun(t, base, body("data", func(r map[string]any) { r["duration"] = "50s" }))
	waiting := postRun(t, base, aheadBody("raw"))
	live := map[string]string{"ioprobe_job": "api", "target": "data", "op": "read"}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Positive(c, value(c, d.Registry(), "ioprobe_io_operations_total", live))
	}, 30*time.Second, 20*time.Millisecond)
	waitState(t, base, waiting, result.RunWaiting)

	err, _ := stop()
	require.NoError(t, err)
	st := d.apiRuns.get(running).state(d.host)
	require.Equal(t, result.RunStopped, st.State)
	require.NotNil(t, st.Result)
	require.Equal(t, result.StatusInterrupted, st.Result.Status)
	require.Positive(t, st.Result.Summary.Ops)
	require.Contains(t, st.Error, "shutting down")
	st = d.apiRuns.get(waiting).state(d.host)
	require.Equal(t, result.RunStopped, st.State)
	require.Nil(t, st.Result)
	for _, p := range []string{filepath.Join(dir, "data.dat"), dev} {
		require.Empty(t, d.devices.holderOf(deviceKeyOf(p)), "the device of %s is free", p)
	}
	runs := d.history.list(apiJob, 0)
	require.Len(t, runs, 2)
	for _, r := range runs {
		require.Equal(t, result.StatusInterrupted, r.Status)
	}
}

// TestRunAPIReload: a reload that leaves a run's target as it was lets
// the run go on; one that changes it stops the run.
func TestRunAPIReload(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	id := postRun(t, base, aheadBody("data"))
	waitState(t, base, id, result.RunWaiting)
	require.NoError(t, d.Reload())
	require.Equal(t, result.RunWaiting, d.apiRuns.get(id).state(d.host).State, "an unchanged target: the run goes on")

	cfgFile := filepath.Join(dir, "ioprobe.yaml")
	doc, err := os.ReadFile(cfgFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfgFile, []byte(strings.Replace(string(doc), "data.dat, size: 4MiB", "data.dat, size: 8MiB", 1)), 0o644))
	require.NoError(t, d.Reload())
	waitState(t, base, id, result.RunStopped)
	st := d.apiRuns.get(id).state(d.host)
	require.Contains(t, st.Error, `a reload removed or changed target "data"`)
	require.Empty(t, d.devices.holderOf(deviceKeyOf(filepath.Join(dir, "data.dat"))))
}

// TestRunAPILatePreparation: a run whose preparation ends after its
// start_at fails, saying by how much, and measures nothing, rather than
// start late. (The request's check refuses a start_at already past; here
// the plan is given one directly, which any preparation overruns.)
func TestRunAPILatePreparation(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	req := body("data", nil)
	p, bad := d.planRun(d.Config(), &runRequest{Target: "data", Specs: []json.RawMessage{mustJSON(t, req["specs"].([]any)[0])}, Duration: "1s"}, time.Now())
	require.Nil(t, bad)
	p.startAt = time.Now()
	run, bad := d.apiRuns.start(d, p)
	require.Nil(t, bad)
	waitState(t, base, run.id, result.RunFailed)
	st := run.state(d.host)
	require.Regexp(t, `^start_at \S+: preparation finished \S+ after it \(start later\); nothing was measured$`, st.Error)
	require.Nil(t, st.Result)
	require.Empty(t, d.devices.holderOf(deviceKeyOf(filepath.Join(dir, "data.dat"))))
	require.Equal(t, 1.0, value(t, d.Registry(), "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "api", "status": string(result.StatusFailed)}))
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
