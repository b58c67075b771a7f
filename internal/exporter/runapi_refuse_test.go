package exporter

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
)

// TestRunAPIRefusals: every refusal of the run API is its 4xx with one
// line naming what was wrong, and touches nothing: the target file is
// never created.
func TestRunAPIRefusals(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	data := filepath.Join(dir, "data.dat")
	past := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	far := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	spec := func(change func(s map[string]any)) func(req map[string]any) {
		return func(req map[string]any) {
			s := readSpec(100)
			change(s)
			req["specs"] = []any{s}
		}
	}
	for _, c := range []struct {
		name string
		body any
		code int
		want string
	}{
		{"unconfigured target", body("/etc/passwd", nil), http.StatusNotFound, `target "/etc/passwd" is not configured`},
		{"no target", body("", nil), http.StatusBadRequest, "target: required"},
		{"unknown field", body("data", func(r map[string]any) { r["path"] = data }), http.StatusBadRequest, `unknown field "path"`},
		{"unknown spec field", body("data", spec(func(s map[string]any) { s["bogus"] = 1 })), http.StatusBadRequest, `unknown field "bogus"`},
		{"too big", bytes.Repeat([]byte(" "), maxRunBody+1), http.StatusRequestEntityTooLarge, "larger than 65536 bytes"},
		{"trailing data", []byte(`{"target":"data"} {}`), http.StatusBadRequest, "trailing data"},
		{"empty", []byte(``), http.StatusBadRequest, "empty"},
		{"no specs", body("data", func(r map[string]any) { r["specs"] = []any{} }), http.StatusBadRequest, "specs: want 1 to 16"},
		{"no read_pct", body("data", spec(func(s map[string]any) { delete(s, "read_pct") })), http.StatusBadRequest, "specs[0]: read_pct and random_pct are required"},
		{"bad spec", body("data", spec(func(s map[string]any) { s["read_pct"] = 120 })), http.StatusBadRequest, "specs[0].read_pct 120: must be between 0 and 100"},
		{"bad block size", body("data", spec(func(s map[string]any) { s["block_sizes"] = []map[string]any{{"bytes": 1000}} })), http.StatusBadRequest, "specs[0].block_sizes"},
		{"bad duration", body("data", func(r map[string]any) { r["duration"] = "soon" }), http.StatusBadRequest, `duration "soon"`},
		// Each time is named by the key the client sent it with.
		{"max_duration", body("data", func(r map[string]any) { r["duration"] = "2m" }), http.StatusBadRequest,
			`duration "2m": ramp + duration 2m0s is more than api.runs.max_duration allows (1m0s)`},
		{"max_duration in a spec", body("data", func(r map[string]any) {
			delete(r, "duration")
			spec(func(s map[string]any) { s["duration_seconds"] = 120 })(r)
		}), http.StatusBadRequest, "specs[0].duration_seconds 120: ramp + duration 2m0s is more than api.runs.max_duration allows (1m0s)"},
		{"max_duration by default", body("data", func(r map[string]any) { delete(r, "duration"); r["ramp"] = "5s" }), http.StatusBadRequest,
			"duration (not given: the default, 1m0s): ramp + duration 1m5s is more than api.runs.max_duration allows (1m0s)"},
		{"max_ramp", body("data", func(r map[string]any) { r["ramp"] = "20s" }), http.StatusBadRequest, `ramp "20s": more than api.runs.max_ramp allows (10s)`},
		{"max_ramp in a spec", body("data", func(r map[string]any) {
			delete(r, "ramp")
			spec(func(s map[string]any) { s["ramp_seconds"] = 20 })(r)
		}), http.StatusBadRequest, "specs[0].ramp_seconds 20: more than api.runs.max_ramp allows (10s)"},
		{"max_queue_depth", body("data", spec(func(s map[string]any) { s["queue_depth"] = 9 })), http.StatusBadRequest, "specs[0].queue_depth 9: more than api.runs.max_queue_depth allows (8)"},
		{"max_workers", body("data", spec(func(s map[string]any) { s["workers"] = 3 })), http.StatusBadRequest, "specs[0].workers 3: more than api.runs.max_workers allows (2)"},
		{"max_start_delay", body("data", func(r map[string]any) { r["start_at"] = far }), http.StatusBadRequest, "api.runs.max_start_delay"},
		{"start_at in the past", body("data", func(r map[string]any) { r["start_at"] = past }), http.StatusBadRequest, "start_at " + past + ": is in the past"},
		{"start_at not a time", body("data", func(r map[string]any) { r["start_at"] = "tomorrow" }), http.StatusBadRequest, `start_at "tomorrow"`},
		{"region too large", body("data", spec(func(s map[string]any) { s["region_bytes"] = 8 << 20 })), http.StatusBadRequest, "larger than the target's configured size (4MiB)"},
		{"specs disagree", body("data", func(r map[string]any) {
			a, b := readSpec(100), readSpec(100)
			a["duration_seconds"], b["duration_seconds"] = 1, 2
			delete(r, "duration")
			r["specs"] = []any{a, b}
		}), http.StatusBadRequest, "specs[1]: its ramp and duration differ"},
		{"label", body("data", func(r map[string]any) { r["label"] = strings.Repeat("x", 200) }), http.StatusBadRequest, "label: at most 128"},
		// A spec given as lines has no read_pct of its own: lines that
		// say nothing would leave it 0, a write workload.
		{"lines empty", body("data", spec(lined())), http.StatusBadRequest, "specs[0].lines: empty"},
		{"lines null", body("data", spec(lined(nil))), http.StatusBadRequest, "specs[0].lines: empty"},
		{"lines empty beside read_pct", body("data", spec(func(s map[string]any) { s["lines"] = []any{} })), http.StatusBadRequest, "specs[0].lines: empty"},
		{"line share 0", body("data", spec(lined(line(0, 100), line(100, 100)))), http.StatusBadRequest, "specs[0].lines[0].share 0: must be at least 1"},
		{"line without share", body("data", spec(lined(without(line(100, 100), "share")))), http.StatusBadRequest, "specs[0].lines[0]: share, read_pct and random_pct are required"},
		{"line without read_pct", body("data", spec(lined(line(50, 100), without(line(50, 100), "read_pct")))), http.StatusBadRequest, "specs[0].lines[1]: share, read_pct and random_pct are required"},
		{"line shares sum", body("data", spec(lined(line(50, 100), line(40, 100)))), http.StatusBadRequest, "must sum to 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", c.body)
			require.Equal(t, c.code, code, string(b))
			require.Contains(t, errorOf(t, b), c.want)
			require.NoFileExists(t, data, "a refused run touches nothing")
		})
	}
	// Nothing was accepted: the history holds no API run.
	require.Empty(t, d.history.list(apiJob, 0))
}

// lined makes a spec's change: Iometer's lines instead of its block
// sizes and mix; lined(nil) is "lines": null, lined() "lines": [].
func lined(lines ...map[string]any) func(s map[string]any) {
	return func(s map[string]any) {
		delete(s, "block_sizes")
		delete(s, "read_pct")
		delete(s, "random_pct")
		if len(lines) == 1 && lines[0] == nil {
			s["lines"] = nil
			return
		}
		s["lines"] = append([]map[string]any{}, lines...)
	}
}

// line is a 4 KiB line of a spec with its share and % read.
func line(share, readPct int) map[string]any {
	return map[string]any{"bytes": 4096, "share": share, "read_pct": readPct, "random_pct": 100}
}

func without(m map[string]any, key string) map[string]any {
	delete(m, key)
	return m
}

// TestRunAPILines: a spec given as lines runs as written, each line with
// its own mix; the dry run answers them.
func TestRunAPILines(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", body("data", func(r map[string]any) {
		s := readSpec(0)
		lined(line(70, 100), line(30, 0))(s)
		r["specs"], r["dry_run"] = []any{s}, true
	}))
	require.Equal(t, http.StatusOK, code, string(b))
	var dry struct{ Specs []map[string]any }
	require.NoError(t, json.Unmarshal(b, &dry))
	require.Len(t, dry.Specs, 1)
	require.Equal(t, []any{
		map[string]any{"bytes": 4096.0, "share": 70.0, "read_pct": 100.0, "random_pct": 100.0},
		map[string]any{"bytes": 4096.0, "share": 30.0, "read_pct": 0.0, "random_pct": 100.0},
	}, dry.Specs[0]["lines"])
	require.NoFileExists(t, filepath.Join(dir, "data.dat"))
}

// TestRunAPIAllowWrites: api.runs.allow_writes false accepts reads only,
// and an existing file ioprobe did not create is refused for writing as
// `ioprobe run` refuses it.
func TestRunAPIAllowWrites(t *testing.T) {
	d, dir := newDaemon(t, strings.Replace(runAPIConfig, "keep: 3}", "keep: 3, allow_writes: false}", 1), WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", body("data", func(r map[string]any) { r["specs"] = []any{readSpec(70)} }))
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, errorOf(t, b), "specs[0].read_pct 70: writes are refused (api.runs.allow_writes: false)")
	require.NoFileExists(t, filepath.Join(dir, "data.dat"))

	d, dir = newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	base, _ = start(t, d)
	theirs := filepath.Join(dir, "data.dat")
	content := bytes.Repeat([]byte("keep"), 1<<20) // 4 MiB, not ioprobe's
	require.NoError(t, os.WriteFile(theirs, content, 0o600))
	code, b = postJSON(t, http.MethodPost, base+"/api/v1/runs", body("data", func(r map[string]any) { r["specs"] = []any{readSpec(0)} }))
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, errorOf(t, b), theirs)
	got, err := os.ReadFile(theirs)
	require.NoError(t, err)
	require.True(t, bytes.Equal(content, got), "their file is unchanged")
}

// TestRunAPIAdminOnly: without --web.enable-admin-api nothing starts or
// stops; reading states and the clock stays open.
func TestRunAPIAdminOnly(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig, WebOptions{})
	base, _ := start(t, d)
	require.Equal(t, -1.0, value(t, d.Registry(), "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "api", "status": "ok"}), "no API series without the API")
	code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", body("data", nil))
	require.Equal(t, http.StatusForbidden, code)
	require.Contains(t, errorOf(t, b), "--web.enable-admin-api")
	code, b = postJSON(t, http.MethodPost, base+"/api/v1/runs", body("data", func(r map[string]any) { r["dry_run"] = true }))
	require.Equal(t, http.StatusForbidden, code, "not even a dry run: it would say which targets exist")
	require.Contains(t, errorOf(t, b), "--web.enable-admin-api")
	code, b = postJSON(t, http.MethodDelete, base+"/api/v1/runs/r-0011223344556677", nil)
	require.Equal(t, http.StatusForbidden, code, string(b))
	code, _ = postJSON(t, http.MethodGet, base+"/api/v1/runs/r-0011223344556677", nil)
	require.Equal(t, http.StatusNotFound, code)
	code, _ = postJSON(t, http.MethodGet, base+"/api/v1/clock", nil)
	require.Equal(t, http.StatusOK, code)
	require.NoFileExists(t, filepath.Join(dir, "data.dat"))
}

// TestRunAPIBasicAuth: with a web config's basic auth, the run API wants
// credentials like every endpoint.
func TestRunAPIBasicAuth(t *testing.T) {
	web := filepath.Join(t.TempDir(), "web.yml")
	// bcrypt of "s3cret"
	require.NoError(t, os.WriteFile(web, []byte("basic_auth_users:\n  prom: $2a$04$K2IKb5c4F3B1hAXn.WO6Be6ZTNc7TJCZMA8MM46zPP8o92MIrHa4W\n"), 0o600))
	d, dir := newDaemon(t, runAPIConfig, WebOptions{ConfigFile: web, EnableAdminAPI: true})
	base, _ := startNoReady(t, d)
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		url := base + "/api/v1/runs/r-0011223344556677"
		if m == http.MethodPost {
			url = base + "/api/v1/runs"
		}
		code, _ := postJSON(t, m, url, body("data", nil))
		require.Equal(t, http.StatusUnauthorized, code, m)
	}
	code, _ := postJSON(t, http.MethodGet, base+"/api/v1/clock", nil)
	require.Equal(t, http.StatusUnauthorized, code)
	require.NoFileExists(t, filepath.Join(dir, "data.dat"))

	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/runs", strings.NewReader(`{"target":"data","specs":[{"read_pct":100,"random_pct":100,"queue_depth":4}],"duration":"1s","ramp":"0s","dry_run":true}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("prom", "s3cret")
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
	}
	var dry struct {
		OK    bool
		Specs []map[string]any
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&dry))
	require.True(t, dry.OK)
	require.Len(t, dry.Specs, 1)
	require.EqualValues(t, 1, dry.Specs[0]["workers"], "run's defaults applied")
	require.Equal(t, "auto", dry.Specs[0]["engine"])
	require.Equal(t, []any{map[string]any{"bytes": 4096.0, "weight": 1.0}}, dry.Specs[0]["block_sizes"])
	require.EqualValues(t, 4<<20, dry.Specs[0]["region_bytes"], "the target's region")
	require.NoFileExists(t, filepath.Join(dir, "data.dat"), "a dry run touches nothing")
}

// TestRunAPIOneRunPerDevice: an accepted run holds its device from
// acceptance: a second run on the same device (another file of the same
// filesystem) is 409 naming the holder; the bound on unfinished runs is
// 429; a run stopped before its start measured nothing and left the file
// as it was; the device is free again afterwards.
func TestRunAPIOneRunPerDevice(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	data := filepath.Join(dir, "data.dat")

	// A first run creates and fills the file.
	code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", body("data", func(r map[string]any) { r["duration"] = "200ms" }))
	require.Equal(t, http.StatusAccepted, code, string(b))
	var a accepted
	require.NoError(t, json.Unmarshal(b, &a))
	require.Equal(t, result.RunDone, waitRun(t, base, a.ID).State)

	// A write run that waits for a start a minute ahead.
	at := time.Now().Add(time.Minute).UTC()
	code, b = postJSON(t, http.MethodPost, base+"/api/v1/runs", body("data", func(r map[string]any) {
		r["specs"] = []any{readSpec(0)}
		r["start_at"] = at.Format(time.RFC3339Nano)
	}))
	require.Equal(t, http.StatusAccepted, code, string(b))
	require.NoError(t, json.Unmarshal(b, &a))
	var st RunState
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, b := postJSON(c, http.MethodGet, base+"/api/v1/runs/"+a.ID, nil)
		var now RunState
		require.NoError(c, json.Unmarshal(b, &now))
		require.Equal(c, result.RunWaiting, now.State)
		st = now
	}, 30*time.Second, 20*time.Millisecond, "prepared, waiting for its start")
	require.True(t, st.StartAt.Equal(at))
	before, err := os.ReadFile(data)
	require.NoError(t, err)
	fi, err := os.Stat(data)
	require.NoError(t, err)

	code, b = postJSON(t, http.MethodPost, base+"/api/v1/runs", body("logs", nil))
	require.Equal(t, http.StatusConflict, code)
	require.Contains(t, errorOf(t, b), "API run "+a.ID)
	require.NoFileExists(t, filepath.Join(dir, "logs.dat"))

	d.apiRuns.mu.Lock()
	d.apiRuns.limit = 1
	d.apiRuns.mu.Unlock()
	code, b = postJSON(t, http.MethodPost, base+"/api/v1/runs", body("logs", nil))
	require.Equal(t, http.StatusTooManyRequests, code)
	require.Contains(t, errorOf(t, b), "1 API runs are already accepted")

	code, b = postJSON(t, http.MethodDelete, base+"/api/v1/runs/"+a.ID, nil)
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal(b, &st))
	require.Equal(t, result.RunStopped, st.State)
	require.Nil(t, st.Result, "nothing measured")
	require.Contains(t, st.Error, "DELETE")
	after, err := os.ReadFile(data)
	require.NoError(t, err)
	require.True(t, bytes.Equal(before, after), "no write reached the file")
	fi2, err := os.Stat(data)
	require.NoError(t, err)
	require.Equal(t, fi.ModTime(), fi2.ModTime())

	// Idempotent on a finished run.
	code, b2 := postJSON(t, http.MethodDelete, base+"/api/v1/runs/"+a.ID, nil)
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, string(b), string(b2))

	// The device is free again.
	code, b = postJSON(t, http.MethodPost, base+"/api/v1/runs", body("logs", func(r map[string]any) { r["duration"] = "200ms" }))
	require.Equal(t, http.StatusAccepted, code, string(b))
	require.NoError(t, json.Unmarshal(b, &a))
	require.Equal(t, result.RunDone, waitRun(t, base, a.ID).State)
	require.Equal(t, 1.0, value(t, d.Registry(), "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "api", "status": string(result.StatusInterrupted)}))
}

// TestRunAPIDeleteWhileRunning: a run stopped mid-measurement keeps its
// partial result, marked interrupted.
func TestRunAPIDeleteWhileRunning(t *testing.T) {
	d, _ := newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	base, _ := start(t, d)
	code, b := postJSON(t, http.MethodPost, base+"/api/v1/runs", body("data", func(r map[string]any) { r["duration"] = "50s" }))
	require.Equal(t, http.StatusAccepted, code, string(b))
	var a accepted
	require.NoError(t, json.Unmarshal(b, &a))
	live := map[string]string{"ioprobe_job": "api", "target": "data", "op": "read"}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Positive(c, value(c, d.Registry(), "ioprobe_io_operations_total", live))
	}, 30*time.Second, 20*time.Millisecond, "measuring")
	require.Equal(t, 1.0, value(t, d.Registry(), "ioprobe_run_active", map[string]string{"ioprobe_job": "api", "target": "data"}))
	code, b = postJSON(t, http.MethodDelete, base+"/api/v1/runs/"+a.ID, nil)
	require.Equal(t, http.StatusOK, code)
	var st RunState
	require.NoError(t, json.Unmarshal(b, &st))
	require.Equal(t, result.RunStopped, st.State)
	require.NotNil(t, st.Result, "the partial result is kept")
	require.Equal(t, result.StatusInterrupted, st.Result.Status)
	require.Positive(t, st.Result.Summary.Ops)
	require.Less(t, st.Result.Summary.ElapsedSeconds, 50.0)
	require.Equal(t, 0.0, value(t, d.Registry(), "ioprobe_run_active", map[string]string{"ioprobe_job": "api", "target": "data"}))
}

// TestRunAPISilentBody: a client that announces a body and sends only
// part of it is answered 400 once the body's time is up, and hung up on;
// the run API reads no more of it and starts nothing.
func TestRunAPISilentBody(t *testing.T) {
	d, dir := newDaemon(t, runAPIConfig, WebOptions{EnableAdminAPI: true})
	d.bodyTimeout = 100 * time.Millisecond
	base, _ := start(t, d)
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "POST /api/v1/runs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"target\": \"data\", ")
	require.NoError(t, err)
	require.Equal(t, "400", readAnswer(c))
	require.Equal(t, "hung up", readAnswer(c))
	require.NoFileExists(t, filepath.Join(dir, "data.dat"))
}
