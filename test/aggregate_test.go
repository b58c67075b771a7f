package test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostConfig is one host of the multi-host test: the business suite (six
// points, one of them a mixed run) at short points, and a canary for live
// I/O that goes on while the test looks.
const hostConfig = `
global:
  snapshot_interval: 500ms
targets:
  data: {path: DIR/probe.dat, size: 16MiB}
jobs:
  canary:
    target: data
    profile: canary
    rate_iops: 100
    continuous: true
    duration: 5s
  business:
    target: data
    suite: business
    number_ios: 32
    duration: 1m
    ramp: 0s
    every: 1h
`

// pointKey is what a point is across hosts: the labels the aggregates keep.
func pointKey(m map[string]string) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%s", m["ioprobe_job"], m["workload"], m["block_size_bytes"],
		m["read_pct"], m["random_pct"], m["queue_depth"], m["workers"])
}

// TestPrometheusAggregatesHostsOnTheDashboards runs three daemons on their own loopback
// ports, scraped by one Prometheus (the reports' multi-VM tests: hosts
// loading storage together), and checks that the Comparison dashboard's
// aggregate panels and the aggregate recording rules are the sums over the
// instances of each instance's own values.
func TestPrometheusAggregatesHostsOnTheDashboards(t *testing.T) {
	besideOtherPrometheusTests(t)
	v3 := needPrometheus3(t)
	// Prometheus first, so that it sees the runs happen.
	addrs := []string{freePort(t), freePort(t), freePort(t)}
	start := time.Now().Add(-time.Second)
	prom := startPrometheus(t, v3, shippedScrapeConfig(t, v3, "", addrs...))
	for _, addr := range addrs {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "ioprobe.yaml")
		require.NoError(t, os.WriteFile(cfg, []byte(strings.ReplaceAll(hostConfig, "DIR", dir)), 0o644))
		require.Equal(t, addr, startDaemon(t, "--config", cfg, "--web.listen-address", addr).addr)
	}
	eventually(t, prom, `count(ioprobe_run_operations_per_second{ioprobe_job="business"}) == 18`, 60*time.Second)
	// The rules have evaluated since every host's last point landed.
	eventually(t, prom, `count(ioprobe_job:ioprobe_run_operations_per_second:count{ioprobe_job="business"} == 3) == 6`, 20*time.Second)
	// Every canary runs, seen over several scrapes.
	eventually(t, prom, `count(rate(ioprobe_io_operations_total{ioprobe_job="canary"}[1m]) > 0) == 3`, 20*time.Second)

	end := time.Now()
	run := newDashboardRun(prom, "", start, end, "1m")
	run.choose = map[string]string{"baseline_instance": addrs[0], "baseline_target": "data"}
	run.pick = map[string]string{"ioprobe_job": "business"}
	cmp := loadDashboards(t)["ioprobe-comparison"]
	values := run.variables(t, cmp)
	panel := func(title, ref string) []sample {
		for _, p := range cmp.Panels {
			for _, tg := range p.Targets {
				if p.Title == title && tg.RefID == ref {
					return run.query(t, title, tg.Expr, tg.Instant, values, cmp)
				}
			}
		}
		t.Fatalf("the Comparison dashboard has no panel %q with a query %s", title, ref)
		return nil
	}
	// raw is each instance's own value of a last-run gauge, by point.
	raw := func(metric string) map[string]map[string]float64 {
		res, err := queryAt(prom, metric+`{ioprobe_job="business"}`, run.end)
		require.NoError(t, err)
		out := map[string]map[string]float64{}
		for _, s := range res.Result {
			k := pointKey(s.Metric)
			if out[k] == nil {
				out[k] = map[string]float64{}
			}
			out[k][s.Metric["instance"]] = s.float(t)
		}
		require.Len(t, out, 6)
		return out
	}
	iops, tput, lat := raw("ioprobe_run_operations_per_second"), raw("ioprobe_run_throughput_bytes_per_second"), raw("ioprobe_run_latency_mean_seconds")
	type sums struct{ iops, tput, latency float64 }
	want := map[string]sums{}
	for k, byInstance := range iops {
		require.Len(t, byInstance, 3, "every host ran %s", k)
		var s sums
		for inst, v := range byInstance {
			s.iops += v
			s.tput += tput[k][inst]
			s.latency += lat[k][inst] * v
		}
		s.latency /= s.iops
		want[k] = s
	}
	near := func(want, got float64, what string) {
		t.Helper()
		require.InDelta(t, want, got, 1e-9*math.Max(1, math.Abs(want)), what)
	}
	byPoint := func(res []sample) map[string]float64 {
		out := map[string]float64{}
		for _, s := range res {
			out[pointKey(s.Metric)] = s.float(t)
		}
		return out
	}

	// The per-instance panel shows each instance's own value; its stack,
	// the sum over instances, is the aggregate.
	stacked := map[string]float64{}
	perInstance := panel("IOPS per instance", "A")
	require.Len(t, perInstance, 18)
	for _, s := range perInstance {
		k := pointKey(s.Metric)
		near(iops[k][s.Metric["instance"]], s.float(t), "IOPS per instance "+k)
		stacked[k] += s.float(t)
	}

	// The workers axis leaves out the mixed run (its workers are "1+1+1+1+1").
	agg := byPoint(panel("Aggregate IOPS against workers", "A"))
	aggTput := byPoint(panel("Aggregate throughput against workers (MB/s)", "A"))
	aggLat := byPoint(panel("Mean response time against workers (ms)", "A"))
	require.Len(t, agg, 5)
	for k, v := range agg {
		near(want[k].iops, v, "aggregate IOPS "+k)
		near(stacked[k], v, "aggregate IOPS against the per-instance stack "+k)
		near(want[k].tput/1e6, aggTput[k], "aggregate MB/s "+k)
		near(want[k].latency*1e3, aggLat[k], "IOPS-weighted mean latency "+k)
	}

	// The table of every point, the mixed run included.
	count, sumIOPS := byPoint(panel("Aggregate over hosts", "A")), byPoint(panel("Aggregate over hosts", "B"))
	sumTput, meanLat := byPoint(panel("Aggregate over hosts", "C")), byPoint(panel("Aggregate over hosts", "D"))
	require.Len(t, sumIOPS, 6)
	for k, w := range want {
		require.Equal(t, 3.0, count[k], "hosts in %s", k)
		near(w.iops, sumIOPS[k], "table IOPS "+k)
		near(stacked[k], sumIOPS[k], "table IOPS against the per-instance stack "+k)
		near(w.tput/1e6, sumTput[k], "table MB/s "+k)
		near(w.latency*1e3, meanLat[k], "table latency "+k)
	}

	// Host CPU by business workload (esg Figure 11): a bar per host, each
	// its own value.
	cpu := raw("ioprobe_run_host_cpu_utilization_ratio")
	bars := panel("Host CPU by business workload (%)", "A")
	require.Len(t, bars, 18)
	for _, s := range bars {
		near(100*cpu[pointKey(s.Metric)][s.Metric["instance"]], s.float(t), "host CPU % "+s.Metric["side"])
		require.Equal(t, s.Metric["instance"]+" data", s.Metric["side"])
	}

	// The recording rules hold the same sums.
	for rule, f := range map[string]func(sums) float64{
		"ioprobe_job:ioprobe_run_operations_per_second:sum":               func(s sums) float64 { return s.iops },
		"ioprobe_job:ioprobe_run_throughput_bytes_per_second:sum":         func(s sums) float64 { return s.tput },
		"ioprobe_job:ioprobe_run_latency_mean_seconds:iops_weighted_mean": func(s sums) float64 { return s.latency },
	} {
		res, err := queryAt(prom, rule+`{ioprobe_job="business"}`, run.end)
		require.NoError(t, err)
		got := byPoint(res.Result)
		require.Len(t, got, 6, rule)
		for k, w := range want {
			near(f(w), got[k], rule+" "+k)
		}
	}

	// Live: the aggregate IOPS of the canaries over the last minute is the
	// sum of each instance's.
	values["ioprobe_job"] = []string{"canary"}
	live := panel("Aggregate live IOPS", "A")
	require.Len(t, live, 1)
	res, err := queryAt(prom, `sum by (instance) (rate(ioprobe_io_operations_total{ioprobe_job="canary"}[1m]))`, run.end)
	require.NoError(t, err)
	require.Len(t, res.Result, 3, "%v", res.Result)
	total := 0.0
	for _, s := range res.Result {
		require.Positive(t, s.float(t), "the canary of %s runs", s.Metric["instance"])
		total += s.float(t)
	}
	last := live[0].Values[len(live[0].Values)-1]
	require.Equal(t, unixSeconds(run.end), fmt.Sprintf("%.3f", last[0].(float64)), "the range's last step is the instant")
	var got float64
	_, err = fmt.Sscan(last[1].(string), &got)
	require.NoError(t, err)
	near(total, got, "aggregate live IOPS")
}
