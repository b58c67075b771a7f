package test

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// scrapeFamilies parses the daemon's exposition at path (/metrics, /probe?…).
func scrapeFamilies(t *testing.T, addr, path string) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := tryScrape(addr, path)
	require.NoError(t, err)
	return mfs
}

// tryScrape is scrapeFamilies for a condition that is polled: an error
// is returned, not a failed test.
func tryScrape(addr, path string) (map[string]*dto.MetricFamily, error) {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", path, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// ofJob is the one metric of family name labelled ioprobe_job=job (nil
// when there is none).
func ofJob(t *testing.T, mfs map[string]*dto.MetricFamily, name, job string) *dto.Metric {
	t.Helper()
	var out *dto.Metric
	for _, m := range mfs[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "ioprobe_job" && l.GetValue() == job {
				require.Nil(t, out, "one %s of job %s", name, job)
				out = m
			}
		}
	}
	return out
}

// TestLatencySummariesCountAcrossRuns: a summary's _count and _sum are
// counters (rate() and increase() are taken of them). Scraped across two
// runs of a job, the last-run summary's count grows by the second run's
// I/Os and its sum by their latencies, whichever run was longer; its
// quantiles are the second run's. /probe's summary adds up its probes
// alike. The job and the module end on a count of I/Os (number_ios), not
// a window of 1 s or 500 ms, which beside load can complete none.
func TestLatencySummariesCountAcrossRuns(t *testing.T) {
	besideOthers(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `targets:
  data: {path: %s/probe.dat, size: 16MiB}
jobs:
  adhoc: {target: data, profile: random-read, queue_depth: 2, number_ios: 200, duration: 50s, ramp: 0s}
modules:
  quick: {profile: random-read, queue_depth: 2, number_ios: 200, max_duration: 5s}
`, dir), 0o600))
	d := startDaemon(t, "--config", cfg, "--web.enable-admin-api")
	type seen struct {
		count     uint64
		sum, p99  float64
		iops, dur float64
	}
	run := func(n int) seen {
		resp, err := http.Post("http://"+d.addr+"/api/v1/jobs/adhoc/run", "", nil)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode)
		var mfs map[string]*dto.MetricFamily
		require.Eventually(t, func() bool {
			var err error
			if mfs, err = tryScrape(d.addr, "/metrics"); err != nil {
				return false
			}
			for _, m := range mfs["ioprobe_job_runs_total"].GetMetric() {
				if strings.Contains(m.String(), `value:"adhoc"`) && strings.Contains(m.String(), `value:"ok"`) {
					return m.GetCounter().GetValue() == float64(n)
				}
			}
			return false
		}, time.Minute, 50*time.Millisecond, "run %d of the job", n)
		sm := ofJob(t, mfs, "ioprobe_run_latency_seconds", "adhoc").GetSummary()
		s := seen{count: sm.GetSampleCount(), sum: sm.GetSampleSum(),
			iops: ofJob(t, mfs, "ioprobe_run_operations_per_second", "adhoc").GetGauge().GetValue(),
			dur:  ofJob(t, mfs, "ioprobe_run_duration_seconds", "adhoc").GetGauge().GetValue()}
		for _, q := range sm.GetQuantile() {
			if q.GetQuantile() == 0.99 {
				s.p99 = q.GetValue()
			}
		}
		mean := ofJob(t, mfs, "ioprobe_run_latency_mean_seconds", "adhoc").GetGauge().GetValue()
		require.Positive(t, mean)
		return s
	}
	first := run(1)
	require.Equal(t, uint64(math.Round(first.iops*first.dur)), first.count, "the first run's I/Os")
	second := run(2)
	ops := uint64(math.Round(second.iops * second.dur))
	require.Equal(t, first.count+ops, second.count, "the count grows by the second run's I/Os: a counter")
	require.Greater(t, second.sum, first.sum)

	var probes []uint64
	for range 2 {
		sm := scrapeFamilies(t, d.addr, "/probe?module=quick&target=data")["ioprobe_probe_latency_seconds"].GetMetric()[0].GetSummary()
		require.Positive(t, sm.GetSampleCount())
		probes = append(probes, sm.GetSampleCount())
	}
	require.Greater(t, probes[1], probes[0], "the second probe adds its I/Os to the first's")
}
