package test

import (
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/metrics.golden from this run")

// serveConfig is the daemon's config for the end-to-end test: a canary, a
// scheduled job, an on-demand job, a long job to interrupt, a module.
const serveConfig = `
global:
  snapshot_interval: 500ms
# The device the targets are on: its latency, measured in the kernel.
devices: ["BLOCKDEV"]
targets:
  data: {path: DIR/probe.dat, size: 32MiB}
jobs:
  canary:
    target: data
    profile: canary
    rate_iops: 100
    continuous: true
    duration: 10s
  # The write canary, faster than shipped so that its series fill quickly.
  canary-write:
    target: data
    profile: canary-write
    rate_iops: 50
    continuous: true
    duration: 2s
  # Counts of I/Os, the durations caps: a window beside load can complete
  # no I/O, and the test waits for each job's figures.
  scheduled:
    target: data
    profile: random-read
    queue_depth: 2
    number_ios: 200
    duration: 10s
    ramp: 0s
    every: 20s
  adhoc:
    target: data
    profile: sequential-read
    number_ios: 200
    duration: 10s
    ramp: 0s
  long:
    target: data
    profile: random-read
    queue_depth: 4
    duration: 10m
    ramp: 0s
modules:
  quick:
    profile: random-read
    queue_depth: 2
    max_duration: 1s
  # The module configs/prometheus/prometheus.yml's probe job runs.
  randread:
    profile: random-read
    queue_depth: 2
    max_duration: 1s
`

// TestPrometheusScrapesServe runs the daemon under Prometheus 3 with the
// shipped scrape config (native histograms and classic buckets both kept)
// and, when installed, Debian's Prometheus 2.42 with the config as its
// comment says for 2.x (native histograms only), and checks what a
// dashboard would query; then stops the daemon with SIGTERM mid-run.
func TestPrometheusScrapesServe(t *testing.T) {
	besideOtherPrometheusTests(t)
	v3 := needPrometheus3(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(withDirAndDevice(t, serveConfig, dir)), 0o644))
	o := ioprobe(t, dir, "serve", "--config.check", cfgPath)
	require.Equal(t, 0, o.code, o.stderr)
	require.Contains(t, o.stdout, "ok: 1 target(s), 5 job(s)")

	d := startDaemon(t, "--config", cfgPath, "--web.enable-admin-api")
	ioprobeURL := "http://" + d.addr
	native := startPrometheus(t, v3, shippedScrapeConfig(t, v3, "3s", d.addr))
	older, haveOlder := prometheus2()
	var prom2 string
	if haveOlder {
		// Its probes every minute, as shipped: both servers hash the same
		// target to the same scrape offset, so at the same interval their
		// probes would always collide and one would always get 503.
		prom2 = startPrometheus(t, older, shippedScrapeConfig(t, older, "", d.addr))
	} else {
		t.Log("no Prometheus 2.x installed: Prometheus 3 only")
	}

	// Live I/O, as a rate.
	eventually(t, native, `rate(ioprobe_io_operations_total{ioprobe_job="canary",op="read",target="data"}[1m]) > 0`, 20*time.Second)
	// The native histogram, and a quantile from it.
	s := eventually(t, native, `ioprobe_io_latency_seconds{ioprobe_job="canary"}`, 10*time.Second)
	require.NotEmpty(t, s[0].Histogram, "a native histogram sample: %+v", s[0])
	eventually(t, native, `histogram_count(rate(ioprobe_io_latency_seconds[1m])) > 0`, 10*time.Second)
	s = eventually(t, native, `histogram_quantile(0.99, rate(ioprobe_io_latency_seconds{ioprobe_job="canary"}[1m])) > 0`, 10*time.Second)
	p99, err := strconv.ParseFloat(s[0].Value[1].(string), 64)
	require.NoError(t, err)
	require.Less(t, p99, 1.0, "a p99 of a second or more on a local file")
	// The classic buckets too, on the same server (always_scrape_classic_histograms).
	eventually(t, native, `ioprobe_io_latency_seconds_bucket{ioprobe_job="canary",le="0.001"}`, 10*time.Second)
	eventually(t, native, `histogram_quantile(0.99, sum by (le) (rate(ioprobe_io_latency_seconds_bucket{ioprobe_job="canary"}[1m]))) > 0`, 10*time.Second)
	eventually(t, native, `sum(rate(ioprobe_host_cpu_seconds_total[1m])) > 0`, 10*time.Second)
	if haveOlder {
		// Prometheus 2.x with the feature flag: the native form, and only it.
		s = eventually(t, prom2, `ioprobe_io_latency_seconds{ioprobe_job="canary"}`, 20*time.Second)
		require.NotEmpty(t, s[0].Histogram, "%s: a native histogram sample: %+v", older.name, s[0])
		eventually(t, prom2, `histogram_count(rate(ioprobe_io_latency_seconds[1m])) > 0`, 10*time.Second)
		require.Empty(t, query(t, prom2, `ioprobe_io_latency_seconds_bucket`), "%s keeps the native form only", older.name)
	}

	// The write canary's flushes: a counter, a native histogram with
	// classic buckets beside it, and each finished run's summary.
	eventually(t, native, `rate(ioprobe_io_flush_operations_total{ioprobe_job="canary-write",target="data"}[1m]) > 0`, 20*time.Second)
	s = eventually(t, native, `ioprobe_io_flush_latency_seconds{ioprobe_job="canary-write"}`, 10*time.Second)
	require.NotEmpty(t, s[0].Histogram, "a native histogram sample: %+v", s[0])
	eventually(t, native, `histogram_quantile(0.99, sum by (le) (rate(ioprobe_io_flush_latency_seconds_bucket{ioprobe_job="canary-write"}[1m]))) > 0`, 10*time.Second)
	eventually(t, native, `ioprobe_run_flush_latency_seconds{ioprobe_job="canary-write",quantile="0.99",read_pct="0",queue_depth="1"} > 0`, 20*time.Second)
	require.Empty(t, query(t, native, `ioprobe_io_flush_operations_total{ioprobe_job="canary"}`), "a job that does not flush has no flush series")

	// Last-run gauges of the scheduled job (it first runs at start).
	eventually(t, native, `ioprobe_run_operations_per_second{ioprobe_job="scheduled",target="data",workload="random-read",block_size_bytes="4096",read_pct="100",random_pct="100",queue_depth="2",workers="1"} > 0`, 20*time.Second)
	eventually(t, native, `ioprobe_run_success{ioprobe_job="scheduled"} == 1`, 5*time.Second)
	eventually(t, native, `ioprobe_run_latency_seconds{ioprobe_job="scheduled",quantile="0.99"} > 0`, 5*time.Second)

	// The settings of the device under the target, as sysfs says them
	// (the whole disk's, for a partition).
	dev := blockDevOf(t, dir)
	if disk, err := filepath.EvalSymlinks("/sys/class/block/" + dev); err == nil {
		if _, err := os.Stat(filepath.Join(disk, "partition")); err == nil {
			dev = filepath.Base(filepath.Dir(disk))
		}
	}
	active := "" // a device without a request queue has no scheduler
	if sched, err := os.ReadFile("/sys/block/" + dev + "/queue/scheduler"); err == nil {
		if m := regexp.MustCompile(`\[(.+?)\]`).FindStringSubmatch(string(sched)); m != nil {
			active = m[1]
		} else {
			active = strings.TrimSpace(string(sched))
		}
	}
	eventually(t, native, `ioprobe_device_info{device="`+dev+`",kind="disk",scheduler="`+active+`"} == 1`, 20*time.Second)

	// A job triggered through the API.
	resp, err := http.Post(ioprobeURL+"/api/v1/jobs/adhoc/run", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	eventually(t, native, `ioprobe_run_throughput_bytes_per_second{ioprobe_job="adhoc",block_size_bytes="65536",random_pct="0"} > 0`, 20*time.Second)

	// /probe through the shipped multi-target relabelling: a job of its
	// own, the host as instance, the probed target as target.
	eventually(t, native, `ioprobe_probe_success{job="ioprobe-probe",instance="`+d.addr+`",target="data"} == 1`, 30*time.Second)
	// The two jobs' up series are apart.
	require.Len(t, eventually(t, native, `up{instance="`+d.addr+`"}`, 5*time.Second), 2)

	// Refusals.
	for _, q := range []string{"target=data&module=nope", "target=/etc/passwd&module=quick", "target=" + url.QueryEscape(dir+"/other.dat") + "&module=quick"} {
		resp, err := http.Get(ioprobeURL + "/probe?" + q)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, q)
	}

	// The exposition passes promtool and carries exactly the contracted names.
	metrics := fetch(t, ioprobeURL+"/metrics")
	for _, s := range promServers(t, false) {
		cmd := exec.Command(s.promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(metrics)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: promtool check metrics:\n%s", s.name, out)
	}
	checkGolden(t, metrics)

	// SIGHUP reloads: a bad file changes nothing and says so; a good one
	// swaps in (here: one more module).
	require.NoError(t, os.WriteFile(cfgPath, []byte("jobs: ["), 0o644))
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGHUP))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, fetch(c, ioprobeURL+"/metrics"), "ioprobe_config_last_reload_successful 0")
	}, promPatience*10*time.Second, 100*time.Millisecond)
	withModule := withDirAndDevice(t, serveConfig, dir) + "  again: {profile: random-read, max_duration: 200ms}\n"
	require.NoError(t, os.WriteFile(cfgPath, []byte(withModule), 0o644))
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGHUP))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Contains(c, fetch(c, ioprobeURL+"/metrics"), "ioprobe_config_last_reload_successful 1")
	}, promPatience*10*time.Second, 100*time.Millisecond)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := http.Get(ioprobeURL + "/probe?target=data&module=again")
		require.NoError(c, err)
		resp.Body.Close()
		assert.Equal(c, http.StatusOK, resp.StatusCode, "503 while a job holds the device")
	}, promPatience*10*time.Second, 100*time.Millisecond)

	// SIGTERM during a run: the run is interrupted, exit 0, the file
	// intact. (How soon it exits is not a test's to say on a loaded
	// machine: the minute is a liveness guard.)
	resp, err = http.Post(ioprobeURL+"/api/v1/jobs/long/run", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		m := fetch(c, ioprobeURL+"/metrics")
		assert.Contains(c, m, `ioprobe_run_active{ioprobe_job="long",target="data"} 1`)
		assert.Regexp(c, `(?m)^ioprobe_io_operations_total\{ioprobe_job="long",op="read",target="data"\} [1-9]`, m, "it is measuring")
	}, promPatience*20*time.Second, 100*time.Millisecond)
	require.NoError(t, d.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-d.exited:
	case <-time.After(time.Minute):
		t.Fatalf("ioprobe serve did not exit after SIGTERM:\n%s", d.log())
	}
	require.NoError(t, d.cmd.Wait(), "exit status after SIGTERM:\n%s", d.log())
	require.Contains(t, d.log(), "runs in progress are interrupted")
	require.Contains(t, d.log(), `msg=stopped`)

	st, err := os.Stat(filepath.Join(dir, "probe.dat"))
	require.NoError(t, err)
	require.EqualValues(t, 32<<20, st.Size())
	o = ioprobe(t, dir, "run", "--target", filepath.Join(dir, "probe.dat"), "--read-pct", "50", "--duration", "200ms", "--ramp", "0s", "--output", "json")
	require.Equal(t, 0, o.code, "the file is still ioprobe's (writable without --allow-destructive): %s", o.stderr)
	require.False(t, decodeResult(t, o.stdout).Targets[0].Created, "reused, not refilled")
}

// checkGolden compares the ioprobe_ families of an exposition, with their
// types and label names, against testdata/metrics.golden: the contract
// with dashboards and rules. go_, process_ and promhttp_ series belong to
// client_golang and are left out.
func checkGolden(t *testing.T, exposition string) {
	t.Helper()
	types := map[string]string{}
	labels := map[string]map[string]bool{}
	seriesRE := regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s`)
	labelRE := regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)
	for _, line := range strings.Split(exposition, "\n") {
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
			continue
		}
		m := seriesRE.FindStringSubmatch(line)
		if m == nil || !strings.HasPrefix(m[1], "ioprobe_") {
			continue
		}
		var names []string
		for _, l := range labelRE.FindAllStringSubmatch(m[2], -1) {
			names = append(names, l[1])
		}
		sort.Strings(names)
		if labels[m[1]] == nil {
			labels[m[1]] = map[string]bool{}
		}
		labels[m[1]][strings.Join(names, ",")] = true
	}
	var out []string
	for name, sets := range labels {
		for set := range sets {
			family := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
			typ := types[name]
			if typ == "" {
				typ = types[family]
			}
			out = append(out, fmt.Sprintf("%s %s {%s}", name, typ, set))
		}
	}
	sort.Strings(out)
	got := strings.Join(out, "\n") + "\n"
	golden := filepath.Join("testdata", "metrics.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test ./test -run TestPrometheusScrapesServe -update to create it")
	require.Equal(t, string(want), got, "the metric names and labels changed: update docs/metrics.md, the dashboards and %s (-update) together", golden)
}

// The binary's other exits: a bad config is exit status 2 with every
// problem on stderr; with a web config, no credentials is 401.
func TestServeBadConfigAndAuth(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("targets:\n  data: {path: "+dir+"/p.dat}\njobs:\n  a: {target: data, evry: 1h}\n  b: {target: data, every: 60}\n"), 0o644))
	for _, args := range [][]string{{"serve", "--config.check", bad}, {"serve", "--config", bad}} {
		o := ioprobe(t, dir, args...)
		require.Equal(t, 2, o.code, "%v: %s", args, o.stderr)
		require.Equal(t, "ioprobe: "+bad+`:4: jobs.a: unknown key "evry" (did you mean "every"?)`+"\n"+
			"ioprobe: "+bad+`:5: jobs.b.every: want a duration like 30s or 1h, got 60`+"\n", o.stderr)
	}
	o := ioprobe(t, dir, "serve")
	require.Equal(t, 2, o.code)
	require.Contains(t, o.stderr, "--config is required")

	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("targets:\n  data: {path: "+dir+"/p.dat, size: 8MiB}\nmodules:\n  m: {profile: random-read}\n"), 0o644))
	web := filepath.Join(dir, "web.yml")
	// bcrypt of "s3cret"
	require.NoError(t, os.WriteFile(web, []byte("basic_auth_users:\n  prom: $2a$04$K2IKb5c4F3B1hAXn.WO6Be6ZTNc7TJCZMA8MM46zPP8o92MIrHa4W\n"), 0o600))
	d := startDaemon(t, "--config", good, "--web.config.file", web)
	for _, p := range []string{"/metrics", "/probe?target=data&module=m", "/api/v1/runs"} {
		resp, err := http.Get("http://" + d.addr + p)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, p)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+d.addr+"/metrics", nil)
	req.SetBasicAuth("prom", "s3cret")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = os.Stat(filepath.Join(dir, "p.dat"))
	require.True(t, os.IsNotExist(err), "an unauthenticated /probe touched the target")
}
