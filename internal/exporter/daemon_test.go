package exporter

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/testwait"
	"github.com/ioprobe/ioprobe/pkg/result"
)

// A canary on one target and an on-demand job on the same device: the
// canary pauses for the job; a run triggered through the API publishes its
// last-run gauges; every series is promlint-clean.
const canaryConfig = `
global:
  snapshot_interval: 100ms
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  canary:
    target: data
    profile: canary
    rate_iops: 200
    continuous: true
    duration: 1s
  adhoc:
    target: data
    profile: random-read
    queue_depth: 2
    duration: 500ms
    ramp: 100ms
modules:
  quick:
    profile: random-read
    queue_depth: 2
    max_duration: 300ms
`

func TestDaemonEndToEnd(t *testing.T) {
	d, _ := newDaemon(t, canaryConfig, WebOptions{EnableAdminAPI: true})
	base, stop := start(t, d)
	reg := d.Registry()
	canary := map[string]string{"ioprobe_job": "canary", "target": "data", "op": "read"}

	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Greater(c, value(c, reg, "ioprobe_io_operations_total", canary), 20.0)
	}, testwait.Patience, 50*time.Millisecond, "the canary feeds the live counters")
	require.Equal(t, 1.0, value(t, reg, "ioprobe_run_active", map[string]string{"ioprobe_job": "canary"}))
	require.Equal(t, 0.0, value(t, reg, "ioprobe_io_errors_total", map[string]string{"ioprobe_job": "canary", "error": "eio"}), "error series exist before any error")
	require.Equal(t, -1.0, value(t, reg, "ioprobe_io_operations_total", map[string]string{"ioprobe_job": "canary", "op": "write"}), "a read-only job has no write series")
	h := find(t, reg, "ioprobe_io_latency_seconds", canary).GetHistogram()
	require.NotNil(t, h)
	require.EqualValues(t, nativeSchema, h.GetSchema())
	require.NotEmpty(t, h.GetPositiveDelta(), "native buckets")
	require.Len(t, h.GetBucket(), len(classicBounds), "classic buckets")
	// The canary runs to a rate: its latency from the intended start is
	// exported beside the service time, with both layouts, one per I/O.
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m := find(c, reg, "ioprobe_io_intended_latency_seconds", canary)
		require.NotNil(c, m)
		assert.Positive(c, m.GetHistogram().GetSampleCount())
	}, testwait.Patience, 50*time.Millisecond, "the paced canary feeds the intended histogram")
	ih := find(t, reg, "ioprobe_io_intended_latency_seconds", canary).GetHistogram()
	require.EqualValues(t, nativeSchema, ih.GetSchema())
	require.NotEmpty(t, ih.GetPositiveDelta(), "native buckets")
	require.Len(t, ih.GetBucket(), len(classicBounds), "classic buckets")

	code, body := do(t, http.MethodPost, base+"/api/v1/jobs/adhoc/run")
	require.Equal(t, http.StatusAccepted, code, body)
	code, body = do(t, http.MethodPost, base+"/api/v1/jobs/adhoc/run")
	require.Equal(t, http.StatusConflict, code, body)
	require.Contains(t, body, `job \"adhoc\" is already`)
	shape := map[string]string{"ioprobe_job": "adhoc", "target": "data", "workload": "random-read", "block_size_bytes": "4096",
		"read_pct": "100", "random_pct": "100", "queue_depth": "2", "workers": "1"}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1.0, value(c, reg, "ioprobe_run_success", shape))
	}, testwait.Patience, 50*time.Millisecond, "the triggered run's last-run gauges")
	require.Greater(t, value(t, reg, "ioprobe_run_operations_per_second", shape), 0.0)
	lat := find(t, reg, "ioprobe_run_latency_seconds", shape).GetSummary()
	require.NotNil(t, lat, "the run's latency is a summary")
	var qs []float64
	for _, q := range lat.GetQuantile() {
		qs = append(qs, q.GetQuantile())
		require.Positive(t, q.GetValue(), "quantile %v", q.GetQuantile())
	}
	require.Equal(t, []float64{0.5, 0.9, 0.99, 0.999, 0.9999}, qs)
	require.Positive(t, lat.GetSampleCount())
	require.Nil(t, find(t, reg, "ioprobe_run_intended_latency_seconds", shape), "an unpaced run has no latency from an intended start")
	require.Nil(t, find(t, reg, "ioprobe_io_intended_latency_seconds", map[string]string{"ioprobe_job": "adhoc"}))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.NotNil(c, find(c, reg, "ioprobe_run_intended_latency_seconds", map[string]string{"ioprobe_job": "canary"}))
	}, testwait.Patience, 50*time.Millisecond, "a finished canary run publishes its latency from the intended start")
	il := find(t, reg, "ioprobe_run_intended_latency_seconds", map[string]string{"ioprobe_job": "canary"}).GetSummary()
	require.Len(t, il.GetQuantile(), len(result.PercentileKeys))
	// The measured window is never shorter than asked (however late the
	// timer fired on a loaded machine).
	require.GreaterOrEqual(t, value(t, reg, "ioprobe_run_duration_seconds", shape), 0.5)
	require.Equal(t, 1.0, value(t, reg, "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "adhoc", "status": "ok"}))
	require.Greater(t, value(t, reg, "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "canary", "status": "interrupted"}), 0.0,
		"the canary was stopped for the job")

	// The live counters went on through the pause and never went back.
	before := value(t, reg, "ioprobe_io_operations_total", canary)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Greater(c, value(c, reg, "ioprobe_io_operations_total", canary), before)
	}, testwait.Patience, 50*time.Millisecond, "the canary resumed")
	require.Equal(t, 0.0, value(t, reg, "ioprobe_canary_paused", map[string]string{"ioprobe_job": "canary"}))

	// The runs API lists the result documents.
	code, body = get(t, base+"/api/v1/runs?job=adhoc")
	require.Equal(t, http.StatusOK, code)
	var runs struct{ Runs []Run }
	require.NoError(t, json.Unmarshal([]byte(body), &runs))
	require.Len(t, runs.Runs, 1)
	require.Equal(t, "api", runs.Runs[0].Trigger)
	require.Equal(t, result.Schema, runs.Runs[0].Result.Schema)
	require.Equal(t, result.StatusOK, runs.Runs[0].Result.Status)
	require.Equal(t, runs.Runs[0].Result.Summary.ElapsedSeconds, value(t, reg, "ioprobe_run_duration_seconds", shape),
		"the gauge is the result's measured window")
	// The run says what it measured: the file, its filesystem and below.
	tg := runs.Runs[0].Result.Targets[0]
	require.NotEmpty(t, tg.Stack, "the storage under the target")
	require.Equal(t, result.LayerFile, tg.Stack[0].Kind)
	require.Equal(t, result.LayerFilesystem, tg.Stack[1].Kind)
	// A continuous job's runs load no BPF programs (one run a minute, each
	// load costing more CPU than the canary's I/O); other jobs' do, as
	// far as the machine lets them.
	const perRun = "not measured per run of a continuous job (list the device under devices: to watch it)"
	require.NotEqual(t, perRun, runs.Runs[0].Result.Summary.Device.LatencyUnavailable)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		code, body := get(c, base+"/api/v1/runs?job=canary")
		require.Equal(c, http.StatusOK, code)
		var canaryRuns struct{ Runs []Run }
		require.NoError(c, json.Unmarshal([]byte(body), &canaryRuns))
		var whole *result.Result
		for _, r := range canaryRuns.Runs {
			if r.Result != nil && r.Result.Status == result.StatusOK {
				whole = r.Result
				break
			}
		}
		require.NotNil(c, whole, "a whole canary run in the history")
		assert.Equal(c, perRun, whole.Summary.Device.LatencyUnavailable)
	}, testwait.Patience, 50*time.Millisecond)

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	require.Empty(t, problems)
	for name, c := range map[string]subCollector{"io": newLiveCollector(d.live), "runs": newRunCollector(d.lastRuns), "host_cpu": newHostCPUCollector("")} {
		problems, err := testutil.CollectAndLint(&scrapeCollector{collectors: map[string]subCollector{name: c}, logger: d.logger})
		require.NoError(t, err)
		require.Empty(t, problems, name)
	}
	require.Equal(t, 1.0, value(t, reg, "ioprobe_scrape_collector_success", map[string]string{"collector": "host_cpu"}))

	err, _ = stop()
	require.NoError(t, err)
	// The continuous canary was stopped, not waited for.
	require.Equal(t, 0.0, value(t, reg, "ioprobe_run_active", map[string]string{"ioprobe_job": "canary"}))
}

// TestConcurrentTriggersRunOnce fires many POST /api/v1/jobs/NAME/run at
// once: exactly one is accepted and the job runs once. (Before the job
// was claimed ahead of the trigger, a request landing between the send and
// the job marking itself waiting was accepted too, and the job ran twice.)
func TestConcurrentTriggersRunOnce(t *testing.T) {
	d, _ := newDaemon(t, canaryConfig, WebOptions{EnableAdminAPI: true})
	base, stop := start(t, d)
	const n = 32
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			// Not do(t, …): its require would stop this goroutine, not the test.
			resp, err := client.Post(base+"/api/v1/jobs/adhoc/run", "", nil)
			if !assert.NoError(t, err) {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	require.Equal(t, map[int]int{http.StatusAccepted: 1, http.StatusConflict: n - 1}, got)
	ok := map[string]string{"ioprobe_job": "adhoc", "status": "ok"}
	require.EventuallyWithT(t, func(c *assert.CollectT) { assert.Equal(c, 1.0, value(c, d.Registry(), "ioprobe_job_runs_total", ok)) },
		time.Minute, 50*time.Millisecond)
	// Once its run is counted the job goes idle with no trigger pending: a
	// second, wrongly accepted request would still hold it (queued or
	// running) or wait in its channel. (Not a sleep "long enough for a
	// second run to finish".)
	jr := d.sched.runner("adhoc")
	require.Eventually(t, func() bool { return jr.state.Load() == stateIdle }, time.Minute, 10*time.Millisecond)
	require.Empty(t, jr.trigger, "a second trigger is pending")
	require.Equal(t, 1.0, value(t, d.Registry(), "ioprobe_job_runs_total", ok))
	code, body := do(t, http.MethodPost, base+"/api/v1/jobs/adhoc/run")
	require.Equal(t, http.StatusAccepted, code, "idle again after its run: %s", body)
	err, _ := stop()
	require.NoError(t, err)
}

// TestTriggerClaimsTheJob replays that race step by step: the job's loop
// takes the trigger out of the channel and has not yet marked itself
// waiting when a second request arrives. The second request is refused.
func TestTriggerClaimsTheJob(t *testing.T) {
	d, _ := newDaemon(t, canaryConfig, WebOptions{EnableAdminAPI: true})
	jr := &jobRunner{job: d.cfg.Load().Jobs["adhoc"], trigger: make(chan struct{}, 1)}
	d.sched.jobs["adhoc"] = jr
	post := func() int {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/api/v1/jobs/adhoc/run", nil)
		r.SetPathValue("name", "adhoc")
		d.handleTrigger(w, r)
		return w.Code
	}
	require.Equal(t, http.StatusAccepted, post())
	<-jr.trigger // the loop took it and is about to run
	require.Equal(t, http.StatusConflict, post())
	require.Equal(t, stateQueued, jr.state.Load())
	jr.state.Store(stateIdle) // the run ended
	require.Equal(t, http.StatusAccepted, post())
}

func TestHTTPRefusals(t *testing.T) {
	d, dir := newDaemon(t, canaryConfig, WebOptions{})
	base, _ := start(t, d)
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{"GET", "/probe?target=data&module=nope", 400, `unknown module "nope"`},
		{"GET", "/probe?target=data", 400, "module parameter is missing"},
		{"GET", "/probe?module=quick", 400, "target parameter is missing"},
		{"GET", "/probe?target=other&module=quick", 400, `unknown target "other": /probe measures only targets named in the config`},
		{"GET", "/probe?target=/etc/passwd&module=quick", 400, `unknown target "/etc/passwd"`},
		{"GET", "/probe?target=" + dir + "/elsewhere.dat&module=quick", 400, "unknown target"},
		{"POST", "/api/v1/jobs/adhoc/run", 403, "the admin API is disabled: start ioprobe serve with --web.enable-admin-api"},
		{"POST", "/-/reload", 403, "Lifecycle API is not enabled"},
		{"GET", "/-/reload", 405, ""},
		{"GET", "/api/v1/runs?limit=x", 400, `bad limit \"x\"`},
		{"GET", "/-/healthy", 200, "Healthy."},
		{"GET", "/", 200, "<html"},
		{"GET", "/nothing-here", 404, ""},
	} {
		code, body := do(t, tc.method, base+tc.path)
		require.Equal(t, tc.code, code, "%s %s: %s", tc.method, tc.path, body)
		require.Contains(t, body, tc.body, "%s %s", tc.method, tc.path)
	}
	_, err := os.Stat(filepath.Join(dir, "elsewhere.dat"))
	require.True(t, os.IsNotExist(err), "a refused probe created a file")
}

// /probe measures a configured module on a configured target (by name or
// by its path), within the scrape timeout, in a fresh registry. The
// probes that must succeed get a scrape timeout far beyond what they
// measure: a budget of a second once failed a probe on a loaded machine
// (opening the target took longer than the allowance for setup).
func TestProbe(t *testing.T) {
	d, dir := newDaemon(t, `
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
modules:
  quick: {profile: random-read, queue_depth: 2, max_duration: 300ms}
  long: {profile: random-read, queue_depth: 2, max_duration: 5m}
`, WebOptions{})
	base, _ := start(t, d)
	code, body := get(t, base+"/probe?target=data&module=quick", "X-Prometheus-Scrape-Timeout-Seconds", "60")
	require.Equal(t, http.StatusOK, code, body)
	require.Regexp(t, `(?m)^ioprobe_probe_success 1$`, body)
	require.Contains(t, body, "ioprobe_probe_duration_seconds")
	require.Contains(t, body, `ioprobe_probe_latency_seconds{quantile="0.99"}`)
	require.NotContains(t, body, "ioprobe_io_operations_total", "a fresh registry per probe")

	code, body = get(t, base+"/probe?target="+dir+"/probe.dat&module=quick&debug=true", "X-Prometheus-Scrape-Timeout-Seconds", "60")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "Logs for the probe:")
	require.Contains(t, body, "probe succeeded")
	require.Contains(t, body, "measure_seconds=0.3\n", "the module's duration, well within the budget")
	require.Contains(t, body, "Metrics that would have been returned:")

	// The budget is the scrape timeout minus the offset (0.5 s); what it
	// leaves after setup (0.25 s) is measured, not the module's 5 minutes.
	// (Whether the probe then fits in it depends on the machine's load.)
	code, body = get(t, base+"/probe?target=data&module=long&debug=true", "X-Prometheus-Scrape-Timeout-Seconds", "2")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "budget_seconds=1.5 ")
	require.Contains(t, body, "measure_seconds=1.25\n")

	code, body = get(t, base+"/probe?target=data&module=quick", "X-Prometheus-Scrape-Timeout-Seconds", "0.6")
	require.Equal(t, http.StatusOK, code, "a failed probe is data, not an HTTP error")
	require.Contains(t, body, "ioprobe_probe_success 0")
	require.Equal(t, 0.0, value(t, d.Registry(), "ioprobe_probe_rejected_total", map[string]string{"reason": "concurrency"}))
}

// /metrics and /probe answer OpenMetrics to a scraper that asks for it
// (the Accept header Prometheus 3 sends), the only text format that
// carries exemplars; without it, the classic text format as before.
func TestOpenMetrics(t *testing.T) {
	d, _ := newDaemon(t, `
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  adhoc: {target: data, profile: random-read, duration: 200ms, ramp: 0s}
modules:
  quick: {profile: random-read, queue_depth: 2, max_duration: 300ms}
`, WebOptions{})
	base, _ := start(t, d)
	const accept = "application/openmetrics-text;version=1.0.0;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
	for _, path := range []string{"/metrics", "/probe?target=data&module=quick"} {
		code, body := get(t, base+path, "Accept", accept, "X-Prometheus-Scrape-Timeout-Seconds", "60")
		require.Equal(t, http.StatusOK, code, body)
		require.True(t, strings.HasSuffix(body, "# EOF\n"), "%s: not OpenMetrics:\n%s", path, body)
		code, body = get(t, base+path, "X-Prometheus-Scrape-Timeout-Seconds", "60")
		require.Equal(t, http.StatusOK, code, body)
		require.NotContains(t, body, "# EOF", path)
	}
	_, body := get(t, base+"/metrics", "Accept", accept)
	// OpenMetrics names a counter's family without _total.
	require.Contains(t, body, "# TYPE ioprobe_job_runs counter\n")
	require.Contains(t, body, `ioprobe_job_runs_total{ioprobe_job="adhoc",status="ok"} 0`)
}

// With a web config, every endpoint wants credentials.
func TestBasicAuth(t *testing.T) {
	dir := t.TempDir()
	webCfg := filepath.Join(dir, "web.yml")
	// bcrypt of "s3cret"
	require.NoError(t, os.WriteFile(webCfg, []byte("basic_auth_users:\n  prom: $2a$04$K2IKb5c4F3B1hAXn.WO6Be6ZTNc7TJCZMA8MM46zPP8o92MIrHa4W\n"), 0o600))
	require.NoError(t, CheckWebConfig(webCfg))
	d, _ := newDaemon(t, canaryConfig, WebOptions{ConfigFile: webCfg, EnableAdminAPI: true})
	l := func() string {
		base, _ := startNoReady(t, d)
		return base
	}()
	for _, p := range []string{"/metrics", "/probe?target=data&module=quick", "/api/v1/runs", "/-/ready"} {
		code, _ := get(t, l+p)
		require.Equal(t, http.StatusUnauthorized, code, p)
	}
	code, _ := do(t, http.MethodPost, l+"/api/v1/jobs/adhoc/run")
	require.Equal(t, http.StatusUnauthorized, code, "no run without credentials")
	req, _ := http.NewRequest(http.MethodGet, l+"/metrics", nil)
	req.SetBasicAuth("prom", "s3cret")
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	req.SetBasicAuth("prom", "wrong")
	resp, err = client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	require.Error(t, CheckWebConfig(filepath.Join(dir, "none.yml")))
}

// SIGTERM (here: the context) during a run stops it at once, the
// file it measured stays intact and reusable, nothing is left running.
func TestShutdownDuringRun(t *testing.T) {
	baseline := runtime.NumGoroutine()
	d, dir := newDaemon(t, `
global: {snapshot_interval: 100ms}
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  long:
    target: data
    profile: random-read
    queue_depth: 4
    duration: 1h
    ramp: 0s
    every: 2h
`, WebOptions{})
	_, stop := start(t, d)
	reg := d.Registry()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Greater(c, value(c, reg, "ioprobe_io_operations_total", map[string]string{"ioprobe_job": "long"}), 100.0)
	}, testwait.Patience, 20*time.Millisecond)
	err, _ := stop()
	require.NoError(t, err)
	// Stopped, not waited for: the run was to last an hour.
	require.Equal(t, 1.0, value(t, reg, "ioprobe_job_runs_total", map[string]string{"ioprobe_job": "long", "status": "interrupted"}))
	require.Equal(t, -1.0, value(t, reg, "ioprobe_run_success", map[string]string{"ioprobe_job": "long"}), "an interrupted run is not a result")

	// EventuallyWithT runs its condition on a goroutine of its own: one more.
	if !assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.LessOrEqual(c, runtime.NumGoroutine()-1, baseline, "goroutines")
	}, time.Minute, 10*time.Millisecond) {
		t.Fatalf("goroutines left behind:\n%s", stacks())
	}

	st, err := os.Stat(filepath.Join(dir, "probe.dat"))
	require.NoError(t, err, "keep_files defaults to true")
	require.EqualValues(t, 16<<20, st.Size())

	// The next daemon reuses the file as it is, and with keep_files: false
	// removes it when it stops.
	cfg := strings.ReplaceAll(`
global: {keep_files: false}
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
modules:
  quick: {profile: random-read, max_duration: 200ms}
`, "DIR", dir)
	d2, _ := newDaemon(t, cfg, WebOptions{})
	base, stop2 := start(t, d2)
	code, body := get(t, base+"/api/v1/runs")
	require.Equal(t, http.StatusOK, code, body)
	code, body = get(t, base+"/probe?target=data&module=quick")
	require.Equal(t, http.StatusOK, code)
	require.Regexp(t, `(?m)^ioprobe_probe_success 1$`, body, "the interrupted daemon's file is intact and reusable")
	err, _ = stop2()
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(dir, "probe.dat"))
	require.NoError(t, err, "keep_files: false removes only files the daemon created")
}
