package exporter

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/config"
	"github.com/ioprobe/ioprobe/internal/engine"
	"github.com/ioprobe/ioprobe/internal/engine/syncio"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

func TestFirstBase(t *testing.T) {
	now := time.Date(2025, 3, 1, 10, 17, 42, 5, time.UTC)
	require.Equal(t, now, firstBase(now, config.Schedule{Every: time.Hour}), "unaligned: start now")
	require.Equal(t, time.Date(2025, 3, 1, 11, 0, 0, 0, time.UTC), firstBase(now, config.Schedule{Every: time.Hour, Align: true}).UTC())
	require.Equal(t, time.Date(2025, 3, 1, 10, 20, 0, 0, time.UTC), firstBase(now, config.Schedule{Every: 5 * time.Minute, Align: true}).UTC())
	require.Equal(t, time.Date(2025, 3, 2, 0, 0, 0, 0, time.UTC), firstBase(now, config.Schedule{Every: 24 * time.Hour, Align: true}).UTC(),
		"days align on UTC midnight on every host")
	on := time.Date(2025, 3, 1, 11, 0, 0, 0, time.UTC)
	require.Equal(t, on, firstBase(on, config.Schedule{Every: time.Hour, Align: true}).UTC(), "a boundary is its own start")
}

// A suite job publishes one set of last-run gauges per point, told apart
// by their shape labels; a reload that changes the job restarts it and a
// reload that removes it drops its gauges; a bad file changes nothing.
func TestSuiteAndReload(t *testing.T) {
	suites := func(name string) ([]config.Point, error) {
		rr, _ := workload.LookupPreset("random-read")
		sr, _ := workload.LookupPreset("sequential-read")
		mixed := []workload.Spec{rr.Spec, sr.Spec}
		return []config.Point{
			{Name: "random-read", Specs: []workload.Spec{rr.Spec}},
			{Name: "sequential-read", Specs: []workload.Spec{sr.Spec}},
			{Name: "mixed", Specs: mixed},
		}, nil
	}
	doc := `
global: {snapshot_interval: 100ms}
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  suite:
    target: data
    suite: two
    duration: 200ms
    ramp: 0s
  canary:
    target: data
    profile: canary
    continuous: true
`
	dir := t.TempDir()
	cfg, load := loadConfig(t, dir, doc, config.Options{Suites: suites})
	d, err := New(Options{Config: cfg, Load: load, Engines: engine.NewRegistry(syncio.New()), Logger: testLogger(t), Web: WebOptions{EnableAdminAPI: true, EnableLifecycle: true}})
	require.NoError(t, err)
	base, _ := start(t, d)
	reg := d.Registry()
	code, body := do(t, http.MethodPost, base+"/api/v1/jobs/suite/run")
	require.Equal(t, http.StatusAccepted, code, body)
	point := func(name, bs, random, qd string) map[string]string {
		return map[string]string{"ioprobe_job": "suite", "workload": name, "block_size_bytes": bs, "random_pct": random, "queue_depth": qd}
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1.0, value(c, reg, "ioprobe_run_success", point("mixed", "4096+65536", "100+0", "16+16")))
	}, runPatience, 20*time.Millisecond)
	require.Equal(t, 1.0, value(t, reg, "ioprobe_run_success", point("random-read", "4096", "100", "16")))
	require.Equal(t, 1.0, value(t, reg, "ioprobe_run_success", point("sequential-read", "65536", "0", "16")))
	require.Greater(t, value(t, reg, "ioprobe_run_operations_per_second", point("sequential-read", "65536", "0", "16")), 0.0)

	suiteCounters := map[string]map[string]string{
		"ioprobe_job_runs_total":      {"ioprobe_job": "suite", "status": "ok"},
		"ioprobe_io_operations_total": {"ioprobe_job": "suite"},
	}
	for name, l := range suiteCounters {
		require.GreaterOrEqual(t, value(t, reg, name, l), 0.0, "%s%v", name, l)
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Positive(c, value(c, reg, "ioprobe_io_operations_total", map[string]string{"ioprobe_job": "canary"}))
	}, runPatience, 20*time.Millisecond)

	canaryRunner := d.sched.runner("canary")
	// A bad file: nothing changes.
	path := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(path, []byte("jobs: ["), 0o644))
	code, body = do(t, http.MethodPost, base+"/-/reload")
	require.Equal(t, http.StatusInternalServerError, code)
	require.Contains(t, body, "failed to reload config")
	require.Equal(t, 0.0, value(t, reg, "ioprobe_config_last_reload_successful", nil))
	require.Same(t, cfg, d.Config())

	// Remove the suite, keep the canary as it is.
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(`
global: {snapshot_interval: 100ms}
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  canary:
    target: data
    profile: canary
    continuous: true
`, "DIR", dir)), 0o644))
	code, body = do(t, http.MethodPost, base+"/-/reload")
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, 1.0, value(t, reg, "ioprobe_config_last_reload_successful", nil))
	require.Equal(t, -1.0, value(t, reg, "ioprobe_run_success", map[string]string{"ioprobe_job": "suite"}), "a removed job's gauges go")
	require.Equal(t, -1.0, value(t, reg, "ioprobe_run_active", map[string]string{"ioprobe_job": "suite"}))
	require.Same(t, canaryRunner, d.sched.runner("canary"), "an unchanged job is not restarted")
	for name, l := range suiteCounters {
		require.Equal(t, -1.0, value(t, reg, name, l), "a removed job's counters go: %s%v", name, l)
	}
	require.Greater(t, value(t, reg, "ioprobe_io_operations_total", map[string]string{"ioprobe_job": "canary"}), 0.0, "an unchanged job's stay")
	require.GreaterOrEqual(t, value(t, reg, "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "canary", "status": "ok"}), 0.0)
	code, _ = do(t, http.MethodPost, base+"/api/v1/jobs/suite/run")
	require.Equal(t, http.StatusNotFound, code)
}

// keep_files: false removes the files the daemon created when it stops.
func TestKeepFilesFalse(t *testing.T) {
	d, dir := newDaemon(t, `
global: {keep_files: false}
targets:
  data: {path: DIR/new.dat, size: 8MiB}
modules:
  quick: {profile: random-read, max_duration: 200ms}
`, WebOptions{})
	base, stop := start(t, d)
	code, body := get(t, base+"/probe?target=data&module=quick")
	require.Equal(t, http.StatusOK, code, body)
	_, err := os.Stat(filepath.Join(dir, "new.dat"))
	require.NoError(t, err)
	err, _ = stop()
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "new.dat"))
	require.True(t, os.IsNotExist(err), "the file the daemon created is removed")
}

// keep_files: false removes only the inode the daemon created: a user's
// file renamed over its name, or a symlink put there, is left as it is,
// and the log says so.
func TestKeepFilesFalseLeavesAReplacement(t *testing.T) {
	for _, how := range []string{"a user's file renamed onto it", "a symlink to a user's file"} {
		t.Run(how, func(t *testing.T) {
			d, dir := newDaemon(t, `
global: {keep_files: false}
targets:
  data: {path: DIR/new.dat, size: 8MiB}
modules:
  quick: {profile: random-read, max_duration: 200ms}
`, WebOptions{})
			logs := &syncBuffer{}
			d.logger = slog.New(slog.NewTextHandler(logs, nil))
			base, stop := start(t, d)
			code, body := get(t, base+"/probe?target=data&module=quick")
			require.Equal(t, http.StatusOK, code, body)
			path := filepath.Join(dir, "new.dat")
			user := filepath.Join(dir, "user.db")
			require.NoError(t, os.WriteFile(user, []byte("a user's rows\n"), 0o644))
			if how == "a user's file renamed onto it" {
				require.NoError(t, os.Rename(user, path))
			} else {
				require.NoError(t, os.Remove(path))
				require.NoError(t, os.Symlink(user, path))
			}
			err, _ := stop()
			require.NoError(t, err)
			got, err := os.ReadFile(path)
			require.NoError(t, err, "left in place")
			require.Equal(t, "a user's rows\n", string(got))
			require.Len(t, logs.lines("left a target file in place: it is no longer the file ioprobe created (keep_files: false)"), 1, logs.String())
			require.Empty(t, logs.lines("removed a target file"))
		})
	}
}
