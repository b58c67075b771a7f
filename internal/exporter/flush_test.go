package exporter

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/ioprobe/ioprobe/internal/runner"
	"github.com/ioprobe/ioprobe/pkg/result"
	"github.com/ioprobe/ioprobe/pkg/workload"
)

// flushSnapshot is a cumulative snapshot of a run that wrote len(flushes)
// blocks and flushed after each.
func flushSnapshot(path string, flushes []int64) *runner.Snapshot {
	s := &runner.Snapshot{Targets: []runner.TargetSnapshot{{Path: path}}}
	w, f := &s.Targets[0].Write, &s.Targets[0].Sync
	for _, v := range flushes {
		w.Latency.Record(100)
		f.Latency.Record(v)
	}
	w.Ops, w.Bytes = w.Latency.Count(), 4096*w.Latency.Count()
	f.Ops = f.Latency.Count()
	return s
}

// A run that flushes has flush series from its start, adds each snapshot's
// new flushes once, and a second run adds to the first; a run that does
// not flush creates none.
func TestFlushSeriesAccumulateAcrossRuns(t *testing.T) {
	store := newLiveStore()
	names := map[string]string{"/p": "data"}
	k := flushKey{"data", "canary-write"}

	plain := store.observer("writes", names, false, true)
	plain.Observe(flushSnapshot("/p", []int64{1000}))
	require.Empty(t, store.flush, "a run that does not flush has no flush series")

	o := store.observer("canary-write", names, false, true).flushing()
	require.Contains(t, store.flush, k, "created up front")
	require.Zero(t, store.flush[k].ops)
	o.Observe(flushSnapshot("/p", []int64{1e6, 2e6}))
	o.Observe(flushSnapshot("/p", []int64{1e6, 2e6, 3e6}))
	o.Observe(flushSnapshot("/elsewhere", []int64{5})) // not this run's target
	s := store.flush[k]
	require.EqualValues(t, 3, s.ops)
	require.EqualValues(t, 6e6, s.latency.Sum())
	require.Zero(t, s.bytes)
	require.EqualValues(t, 3, store.series[liveKey{"data", "canary-write", "write"}].ops, "the writes count as writes")

	o2 := store.observer("canary-write", names, false, true).flushing()
	o2.Observe(flushSnapshot("/p", []int64{4e6}))
	require.EqualValues(t, 4, s.ops)
	o2.Observe(flushSnapshot("/p", nil)) // backwards: ignored
	require.EqualValues(t, 4, s.ops)
	require.EqualValues(t, 10e6, s.latency.Sum())

	// Exported: a counter and a histogram per target and job, no op label.
	c := newLiveCollector(store)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(&scrapeCollector{collectors: map[string]subCollector{"io": c}, logger: testLogger(t)}))
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP ioprobe_io_flush_operations_total Flushes (fsync or fdatasync) completed in measured windows, since the daemon started; a failed flush counts in ioprobe_io_errors_total{op="write"}.
# TYPE ioprobe_io_flush_operations_total counter
ioprobe_io_flush_operations_total{ioprobe_job="canary-write",target="data"} 4
`), "ioprobe_io_flush_operations_total"))
	mf := family(t, reg, "ioprobe_io_flush_latency_seconds")
	require.Len(t, mf.Metric, 1)
	dh := mf.Metric[0].GetHistogram()
	require.EqualValues(t, 4, dh.GetSampleCount())
	require.InDelta(t, 0.010, dh.GetSampleSum(), 1e-12)
	require.NotEmpty(t, dh.GetPositiveSpan(), "native buckets")
	require.NotEmpty(t, dh.GetBucket(), "classic buckets")
}

// A finished run's flush latency is a summary beside its I/O latency, only
// for runs that flushed.
func TestRunFlushSummary(t *testing.T) {
	h := result.NewHistogram()
	for _, v := range []int64{1e6, 2e6, 3e6, 4e6} {
		h.Record(v)
	}
	res := &result.Result{Histogram: result.Histograms{Write: h, Sync: h}}
	res.Summary.Sync = &result.SyncSummary{Ops: h.Count(), Latency: result.LatencyOf(h)}
	res.Summary.Ops = h.Count()
	store := newRunStore()
	spec := workload.Spec{BlockSizes: []workload.BlockSize{{Bytes: 4096, Weight: 1}}, QueueDepth: 1, Workers: 1, Fdatasync: 1}
	store.set(shapeOf("data", "canary-write", "canary-write", []workload.Spec{spec}), &lastRun{success: true, res: res})
	store.set(shapeOf("data", "reads", "random-read", []workload.Spec{spec}), &lastRun{success: true, res: &result.Result{}})
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(&scrapeCollector{collectors: map[string]subCollector{"runs": newRunCollector(store)}, logger: testLogger(t)}))
	mf := family(t, reg, "ioprobe_run_flush_latency_seconds")
	require.Len(t, mf.Metric, 1, "only the run that flushed")
	sm := mf.Metric[0].GetSummary()
	require.EqualValues(t, 4, sm.GetSampleCount())
	require.InDelta(t, 0.010, sm.GetSampleSum(), 1e-9)
	q := map[float64]float64{}
	for _, x := range sm.GetQuantile() {
		q[x.GetQuantile()] = x.GetValue()
	}
	require.InDelta(t, res.Summary.Sync.Latency.Percentiles["99"], q[0.99], 1e-12)
	require.Len(t, q, len(result.PercentileKeys))
}
