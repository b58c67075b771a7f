package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testloop"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestServeRunAPI drives the real daemon's run API as ioprobe fleet does:
// the clock, a dry run, then two runs on two devices posted for one start
// instant; both results start at or after it, measured I/O, are
// ioprobe.result/v1 and `ioprobe report` reads them, alone and merged.
func TestServeRunAPI(t *testing.T) {
	besideOthers(t)
	devs := []string{testloop.Device(t, 16<<20), testloop.Device(t, 16<<20)}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf(
		"global: {snapshot_interval: 200ms}\napi: {runs: {max_duration: 1m}}\ntargets:\n  a: {path: %s}\n  b: {path: %s}\n", devs[0], devs[1])), 0o644))
	d := startDaemon(t, "--config", cfg, "--web.enable-admin-api")
	base := "http://" + d.addr

	post := func(req map[string]any) (int, []byte) {
		b, err := json.Marshal(req)
		require.NoError(t, err)
		resp, err := http.Post(base+"/api/v1/runs", "application/json; charset=utf-8", bytes.NewReader(b))
		require.NoError(t, err)
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, out
	}
	spec := map[string]any{"block_sizes": []map[string]any{{"bytes": 4096, "weight": 1}}, "read_pct": 100, "random_pct": 100, "queue_depth": 4}

	var clk struct {
		UnixNano int64 `json:"unix_nano"`
	}
	t0 := time.Now()
	require.NoError(t, json.Unmarshal([]byte(fetch(t, base+"/api/v1/clock")), &clk))
	t1 := time.Now()
	// One machine, one clock: the daemon's reading lies between ours.
	require.GreaterOrEqual(t, clk.UnixNano, t0.UnixNano())
	require.LessOrEqual(t, clk.UnixNano, t1.UnixNano())

	code, out := post(map[string]any{"target": "a", "specs": []any{spec}, "duration": "1s", "ramp": "0s", "dry_run": true})
	require.Equal(t, http.StatusOK, code, string(out))
	require.Contains(t, string(out), `"ok": true`)

	at := time.Now().Add(3 * time.Second).UTC()
	ids := map[string]string{}
	for _, tg := range []string{"a", "b"} {
		code, out := post(map[string]any{"target": tg, "specs": []any{spec}, "duration": "1s", "ramp": "200ms",
			"start_at": at.Format(time.RFC3339Nano), "label": "e2e", "pattern": "Random Read", "size": 4096})
		require.Equal(t, http.StatusAccepted, code, string(out))
		var a struct{ ID string }
		require.NoError(t, json.Unmarshal(out, &a))
		ids[tg] = a.ID
	}
	var files []string
	var ops uint64
	for tg, id := range ids {
		var st struct {
			State  string
			Error  string
			Result json.RawMessage
		}
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			require.NoError(c, json.Unmarshal([]byte(fetch(c, base+"/api/v1/runs/"+id)), &st))
			assert.Contains(c, []string{"done", "failed", "stopped"}, st.State, "the run has ended")
		}, time.Minute, 50*time.Millisecond)
		require.Equal(t, "done", st.State, st.Error)
		res := decodeResult(t, string(st.Result))
		require.True(t, res.StartAt.Equal(at))
		require.False(t, res.StartedAt.Before(at))
		require.Positive(t, res.Summary.Ops)
		require.Equal(t, result.StatusOK, res.Status)
		require.Equal(t, "Random Read", res.Point.Pattern)
		ops += res.Summary.Ops
		f := filepath.Join(dir, tg+".json")
		require.NoError(t, os.WriteFile(f, st.Result, 0o644))
		files = append(files, f)
	}
	o := ioprobe(t, dir, append([]string{"report"}, files...)...)
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, "IOPS")
	o = ioprobe(t, dir, append([]string{"report", "--merge", "--output", "json"}, files...)...)
	require.Equal(t, 0, o.code, o.stderr)
	// Results of a suite point (pattern and size given) merge into a
	// suite document of that one point.
	var suite result.Suite
	require.NoError(t, json.Unmarshal([]byte(o.stdout), &suite), o.stdout)
	require.Len(t, suite.Results, 1)
	merged := suite.Results[0]
	require.Equal(t, ops, merged.Summary.Ops, "the merged result counts both runs")
	require.True(t, merged.StartAt.Equal(at), "both asked for the same instant")
}

// A run the daemon's api.runs limits refuse is named by the key the client
// sent: the request's "duration" or "ramp" as given, a spec's
// "duration_seconds" or "ramp_seconds" as given, and the default the run
// would have taken when the client sent none. Nothing is created.
func TestRunAPILimitNamesTheKeySent(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.dat")
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("api: {runs: {max_duration: 30s, max_ramp: 5s}}\ntargets:\n  data: {path: "+data+", size: 16MiB}\n"), 0o644))
	d := startDaemon(t, "--config", cfg, "--web.enable-admin-api")
	spec := func(extra map[string]any) map[string]any {
		s := map[string]any{"block_sizes": []map[string]any{{"bytes": 4096, "weight": 1}}, "read_pct": 100, "random_pct": 100}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	for _, c := range []struct {
		req  map[string]any
		want string
	}{
		{map[string]any{"target": "data", "specs": []any{spec(nil)}, "duration": "1m", "ramp": "0s"},
			`duration "1m": ramp + duration 1m0s is more than api.runs.max_duration allows (30s)`},
		{map[string]any{"target": "data", "specs": []any{spec(map[string]any{"duration_seconds": 40})}},
			`specs[0].duration_seconds 40: ramp + duration 40s is more than api.runs.max_duration allows (30s)`},
		{map[string]any{"target": "data", "specs": []any{spec(nil)}, "ramp": "1s"},
			`duration (not given: the default, 1m0s): ramp + duration 1m1s is more than api.runs.max_duration allows (30s)`},
		{map[string]any{"target": "data", "specs": []any{spec(nil)}, "ramp": "10s", "duration": "1s"},
			`ramp "10s": more than api.runs.max_ramp allows (5s)`},
		{map[string]any{"target": "data", "specs": []any{spec(map[string]any{"ramp_seconds": 7, "duration_seconds": 1})}},
			`specs[0].ramp_seconds 7: more than api.runs.max_ramp allows (5s)`},
	} {
		b, err := json.Marshal(c.req)
		require.NoError(t, err)
		resp, err := http.Post("http://"+d.addr+"/api/v1/runs", "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(out))
		var e struct{ Error string }
		require.NoError(t, json.Unmarshal(out, &e), string(out))
		require.Equal(t, c.want, e.Error, "request %s", b)
	}
	require.NoFileExists(t, data, "a refused run touches nothing")
}
