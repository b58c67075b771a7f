package exporter

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "go test ./internal/exporter -run Golden -update creates it")
	require.Equal(t, string(want), string(got), "differs from %s (go test ./internal/exporter -run Golden -update rewrites it)", path)
}

// exposition is reg's text exposition, HELP and TYPE lines and values.
func exposition(t *testing.T, reg *prometheus.Registry) []byte {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		require.NoError(t, enc.Encode(mf))
	}
	return b.Bytes()
}

// goldenResult is a finished run with every optional part: reads and
// writes, flushes, a rate limit's intended latency.
func goldenResult() *result.Result {
	read, write, flush, intended := result.NewHistogram(), result.NewHistogram(), result.NewHistogram(), result.NewHistogram()
	for i := int64(0); i < 2000; i++ {
		read.Record(50_000 + i*37%90_000)
		if i%3 == 0 {
			write.Record(120_000 + i*53%400_000)
		}
		if i%50 == 0 {
			flush.Record(900_000 + i*101%2_000_000)
		}
		intended.Record(60_000 + i*41%300_000)
	}
	r := &result.Result{Schema: result.Schema, Status: result.StatusOK,
		StartedAt: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC),
		Host:      result.Host{Hostname: "db01", LogicalCPUs: 8, ClockHz: 3e9},
		Histogram: result.Histograms{Read: read, Write: write, Sync: flush, Intended: intended}}
	s := &r.Summary
	s.SetFromHistograms(r.Histogram)
	s.ReadBytes, s.WriteBytes = s.ReadOps*4096, s.WriteOps*4096
	s.Bytes = s.ReadBytes + s.WriteBytes
	s.ElapsedSeconds = 2.5
	s.SetRates()
	s.Errors = 1
	s.CPU = result.DeriveCPU(result.CPUWork{Ops: s.Ops, IOPS: s.IOPS, MBPerSecond: s.MBPerSecond, ElapsedSeconds: s.ElapsedSeconds,
		BusyCores: 0.75, UtilizationPct: 75, BusyHz: 0.75 * 3e9, ProcessUser: 0.125, ProcessSystem: 0.25, ProcessCPU: 0.375})
	return r
}

func TestLastRunGaugesGolden(t *testing.T) {
	store := newRunStore()
	spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}}, ReadPct: 67, RandomPct: 100, QueueDepth: 4, Workers: 2}
	end := time.Date(2025, 6, 1, 12, 0, 3, 0, time.UTC)
	store.set(shapeOf("data", "oltp", "oltp", []workload.Spec{spec}), &lastRun{success: true, end: end, res: goldenResult()})
	store.set(shapeOf("data", "broken", "broken", []workload.Spec{spec}), &lastRun{end: end})
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(newCollectorAdapter(newRunCollector(store))))
	golden(t, "lastrun.golden", exposition(t, reg))
}

func TestProbeMetricsGolden(t *testing.T) {
	reg := prometheus.NewRegistry()
	var totals probeTotals
	res := goldenResult()
	probeMetrics(reg, true, 1500*time.Millisecond, res, totals.add("quick", "data", &res.Summary))
	golden(t, "probe.golden", exposition(t, reg))
	reg = prometheus.NewRegistry()
	probeMetrics(reg, false, 250*time.Millisecond, nil, nil)
	golden(t, "probe_failed.golden", exposition(t, reg))
}

// TestLatencySummariesAreCounters: a summary's _count and _sum are
// counters. The last-run summaries and the probe's add up every run (or
// probe) of their series, so that they never go down when a shorter run
// follows a longer one; the quantiles are the last run's.
func TestLatencySummariesAreCounters(t *testing.T) {
	long, short := goldenResult(), goldenResult()
	short.Histogram.Read = result.NewHistogram()
	for i := int64(0); i < 10; i++ {
		short.Histogram.Read.Record(900_000 + i)
	}
	short.Summary.SetFromHistograms(short.Histogram)
	require.Less(t, short.Summary.Ops, long.Summary.Ops)

	store := newRunStore()
	sh := shapeOf("data", "oltp", "oltp", []workload.Spec{{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}}, QueueDepth: 1, Workers: 1}})
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(newCollectorAdapter(newRunCollector(store))))
	var counts []uint64
	var sums []float64
	var totals probeTotals
	var probeCounts []uint64
	for _, r := range []*result.Result{long, short, long} {
		store.set(sh, &lastRun{success: true, res: r})
		for _, name := range []string{"ioprobe_run_latency_seconds", "ioprobe_run_flush_latency_seconds", "ioprobe_run_intended_latency_seconds"} {
			require.Len(t, family(t, reg, name).Metric, 1, name)
		}
		sm := family(t, reg, "ioprobe_run_latency_seconds").Metric[0].GetSummary()
		counts = append(counts, sm.GetSampleCount())
		sums = append(sums, sm.GetSampleSum())
		for _, q := range sm.GetQuantile() {
			if q.GetQuantile() == 0.99 {
				require.Equal(t, r.Summary.Latency.Percentiles["99"], q.GetValue(), "the quantiles are the last run's")
			}
		}

		preg := prometheus.NewRegistry()
		probeMetrics(preg, true, time.Second, r, totals.add("quick", "data", &r.Summary))
		probeCounts = append(probeCounts, family(t, preg, "ioprobe_probe_latency_seconds").Metric[0].GetSummary().GetSampleCount())
	}
	l, s := long.Summary, short.Summary
	require.Equal(t, []uint64{l.Ops, l.Ops + s.Ops, 2*l.Ops + s.Ops}, counts)
	require.InDelta(t, 2*l.Latency.MeanSeconds*float64(l.Ops)+s.Latency.MeanSeconds*float64(s.Ops), sums[2], 1e-9)
	require.Less(t, sums[0], sums[1])
	require.Equal(t, counts, probeCounts, "each probe of a module on a target adds up too")

	// A shape the job no longer measures goes, and its counters with it.
	store.retain("oltp", 99)
	require.Empty(t, store.totals)
}

// collectorAdapter collects one subCollector alone (no scrape duration,
// which differs each time).
type collectorAdapter struct{ c subCollector }

func newCollectorAdapter(c subCollector) prometheus.Collector { return collectorAdapter{c} }

func (a collectorAdapter) Describe(ch chan<- *prometheus.Desc) { a.c.Describe(ch) }
func (a collectorAdapter) Collect(ch chan<- prometheus.Metric) {
	if err := a.c.Update(ch); err != nil {
		panic(err)
	}
}
