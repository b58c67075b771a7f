package test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/dashboards/dashquery"
)

// dashboardsConfig runs the characterize, business and peak-iops suites at
// short points, once each (every: 1h outlasts the test), and two canaries.
// peak-iops gives the request-size figures their points and the
// against-workers figure a job's points at several worker counts. The
// canaries pause while a suite holds the device, so the suites must leave
// it to them: with every: 2m, a round of the three suites (41 points) took
// longer than 2 minutes on a loaded machine, the next round started at
// once, and the canaries never ran again. A point ends after 64 I/Os of
// each worker (number_ios; duration is its cap), not after a window: a
// 250 ms window of writes to the file beside a loaded make test once
// completed no I/O (sequential-write-16k, 0 IOPS, which the product says),
// and a rate of 0 has no ratio to its median, so the characterize table's
// 20 ratios never came; a window of 1 s only makes that rarer. The
// business points, whose IOPS per CPU % the test counts, measure 1 s
// instead: the host's CPU is read in the kernel's ticks (100 a second a
// CPU), and a point of a few milliseconds (64 I/Os; a sequential one's
// count stops at one pass of the 32 MiB file: video-on-demand, 64 I/Os
// of 512 KiB in 12 ms) can fall between two of them: no busy tick, no
// ratio (the rule divides by busy cores > 0), and a table of 6 that
// stayed at 5 (make test beside helpers). A window that completed no I/O
// still has its ratio (0 IOPS per the host's busy CPU).
const dashboardsConfig = `
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
    duration: 5s
  canary-write:
    target: data
    profile: canary-write
    rate_iops: 50
    continuous: true
    duration: 5s
  characterize:
    target: data
    suite: characterize
    number_ios: 64
    duration: 1m
    ramp: 0s
    every: 1h
  business:
    target: data
    suite: business
    duration: 1s
    ramp: 0s
    every: 1h
  peak-iops:
    target: data
    suite: peak-iops
    number_ios: 64
    duration: 1m
    ramp: 0s
    every: 1h
`

// drawWithin bounds the wait for every dashboard query to return data,
// after the waits for the suites' and canaries' series (each up to
// promPatience times its quiet-machine figure): only a failing test waits
// that long.
const drawWithin = promPatience * 60 * time.Second

// classicOnly matches the queries that read the classic buckets of the
// latency histogram, which a Prometheus 2.x ingesting native histograms
// does not keep (Prometheus 3 with the shipped config keeps both).
var classicOnly = regexp.MustCompile(`ioprobe_io_(flush_)?latency_seconds_(bucket|sum|count)\b`)

// TestPrometheusDrawsTheDashboards runs a daemon with the characterize,
// business and peak-iops suites and a canary under Prometheus 3 with the
// shipped scrape config and rules (native and classic buckets), and under
// Debian's 2.42 as its comment says for 2.x (native only) when installed,
// and runs every query of every dashboard in grafana/ through each one's
// HTTP API as Grafana would: each must parse and return data (on 2.x,
// all but the classic-bucket panel's).
func TestPrometheusDrawsTheDashboards(t *testing.T) {
	besideOtherPrometheusTests(t)
	v3 := needPrometheus3(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ioprobe.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(withDirAndDevice(t, dashboardsConfig, dir)), 0o644))
	start := time.Now().Add(-time.Second)
	// The servers scrape before the daemon starts: its suites run at once
	// and, a point ending on a count of I/Os, are over in seconds on a
	// quiet machine (8 s here); started after the daemon, a server could
	// first scrape it once they had ended, and the dashboards' "Runs"
	// annotation (a run active, canaries aside) had nothing to show.
	addr := freePort(t)
	native := startPrometheus(t, v3, shippedScrapeConfig(t, v3, "", addr))
	servers := []string{native}
	older, haveOlder := prometheus2()
	var prom2 string
	if haveOlder {
		prom2 = startPrometheus(t, older, shippedScrapeConfig(t, older, "", addr))
		servers = append(servers, prom2)
	} else {
		t.Log("no Prometheus 2.x installed: Prometheus 3 only")
	}
	d := startDaemon(t, "--web.listen-address", addr, "--config", cfg)
	require.Equal(t, addr, d.addr)

	// The suites have run, the rules have seen them, the canary has run
	// since (the rules read native or classic buckets, whichever the
	// server keeps).
	for _, prom := range servers {
		eventually(t, prom, `count(shape:ioprobe_run_operations_per_second:ratio_to_median_7d{ioprobe_job="characterize"}) == 20`, 60*time.Second)
		eventually(t, prom, `count(shape:ioprobe_run_operations_per_second_per_cpu_percent:ratio{ioprobe_job="business"}) == 6`, 30*time.Second)
		// 15 points, 13 shapes: the 8 KiB points at 1 worker over workers and
		// over targets are the request-size ones again.
		eventually(t, prom, `count(ioprobe_run_operations_per_second{ioprobe_job="peak-iops"}) == 13`, 30*time.Second)
		eventually(t, prom, `target:ioprobe_io_latency_seconds:quantile_rate1m{ioprobe_job="canary",quantile="0.99"}`, 30*time.Second)
		eventually(t, prom, `target:ioprobe_io_flush_latency_seconds:quantile_rate1m{ioprobe_job="canary-write",quantile="0.99"}`, 30*time.Second)
		eventually(t, prom, `target:ioprobe_io_intended_latency_seconds:slo_miss_ratio_rate1h{ioprobe_job="canary"}`, 30*time.Second)
		eventually(t, prom, `instance:ioprobe_process_cpu_seconds_per_io_operations:ratio_rate1m`, 10*time.Second)
		eventually(t, prom, `device:ioprobe_device_latency_seconds:quantile_rate1m{quantile="0.99"}`, 30*time.Second)
	}
	eventually(t, native, `ioprobe_io_latency_seconds_bucket{ioprobe_job="canary"}`, 10*time.Second)

	choose := map[string]string{
		"instance": d.addr, "target": "data", "ioprobe_job": "characterize",
		"baseline_instance": d.addr, "baseline_target": "data",
	}
	boards := loadDashboards(t)
	if haveOlder {
		// Every panel on the older server first; the checks below read
		// Prometheus 3's answers.
		old, _ := drawUntilData(t, func(end time.Time) *dashboardRun {
			r := newDashboardRun(prom2, "", start, end, "4s")
			r.choose = choose
			return r
		}, boards, drawWithin)
		t.Logf("ran %d queries on %s", old.queries[prom2], older.name)
	}
	run, results := drawUntilData(t, func(end time.Time) *dashboardRun {
		r := newDashboardRun(native, native, start, end, "4s")
		r.choose = choose
		return r
	}, boards, drawWithin)
	t.Logf("ran %d queries on %s", run.queries[native], v3.name)

	// The esx2 table: 5 data sizes × 4 access patterns, in the report's
	// column order, one cell each.
	iops := panelTitled(t, boards["ioprobe-characterization"], "I/O operations per second")
	res := results["ioprobe-characterization"]["I/O operations per second/A"]
	require.Len(t, res, 20, "the characterization table has 20 cells")
	cells := grid(t, iops, res)
	require.Len(t, cells, 20)
	rows, cols := map[string]bool{}, map[string]bool{}
	for c, v := range cells {
		rows[c.row], cols[c.col] = true, true
		require.Positive(t, v, "%v", c)
	}
	require.Equal(t, map[string]bool{"4096": true, "8192": true, "16384": true, "32768": true, "65536": true}, rows)
	var got []string
	for c := range cols {
		got = append(got, c)
	}
	sort.Strings(got)
	want := append([]string(nil), iops.Columns()...)
	sort.Strings(want)
	require.Equal(t, want, got, "the table's columns are the workloads its organize transformation orders")
	require.Len(t, want, 4)

	// vsphere5 Figure 3: the peak-iops random reads, 5 request sizes by 2
	// depths, summed over the one host; its 8 KiB points over workers left
	// out.
	cmp := boards["ioprobe-comparison"]
	raw, err := queryAt(native, `ioprobe_run_operations_per_second{ioprobe_job="peak-iops", workers="1"}`, run.end)
	require.NoError(t, err)
	wantIOPS := map[cell]float64{}
	for _, s := range raw.Result {
		c := cell{s.Metric["block_size_bytes"], "data peak-iops: " + s.Metric["workload"]}
		wantIOPS[c] = s.float(t)
	}
	require.Len(t, wantIOPS, 10)
	cells = grid(t, panelTitled(t, cmp, "Aggregate IOPS by request size"), results["ioprobe-comparison"]["Aggregate IOPS by request size/A"])
	require.Equal(t, wantIOPS, cells, "the aggregate of one host is its own IOPS")

	// esg Figure 10: the one job that ran a point at several worker counts,
	// against itself as the baseline.
	cells = grid(t, panelTitled(t, cmp, "IOPS relative to the baseline against workers (%)"),
		results["ioprobe-comparison"]["IOPS relative to the baseline against workers (%)/A"])
	line := "peak-iops: Random Read, 32 outstanding 8192 B on " + d.addr + " data"
	require.Len(t, cells, 4)
	for _, w := range []string{"1", "2", "4", "8"} {
		v, ok := cells[cell{w, line}]
		require.True(t, ok, "workers %s of %s in %v", w, line, cells)
		require.InDelta(t, 0, v, 1e-9, "the baseline against itself")
	}

	// esg Figure 11: a bar per business workload, the mixed run included.
	cells = grid(t, panelTitled(t, cmp, "Host CPU by business workload (%)"),
		results["ioprobe-comparison"]["Host CPU by business workload (%)/A"])
	require.Len(t, cells, 6)
	for c, v := range cells {
		require.Equal(t, d.addr+" data", c.col)
		require.True(t, v >= 0 && v <= 100, "%v: %v%%", c, v)
	}
}

// panelTitled is the panel of d with that title.
func panelTitled(t *testing.T, d *dashquery.Dashboard, title string) dashquery.Panel {
	t.Helper()
	for _, p := range d.Panels {
		if p.Title == title {
			return p
		}
	}
	t.Fatalf("%s has no panel %q", d.Title, title)
	return dashquery.Panel{}
}
